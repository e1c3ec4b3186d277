package inbound_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/inbound"
	"github.com/slotrecovery/slotrecovery/internal/redislock"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/testkit/customertest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
	"github.com/slotrecovery/slotrecovery/internal/texts"
)

type noCooldown struct{}

func (noCooldown) Start(context.Context, string, time.Duration) error { return nil }

// TestASweptYesThatFailsIsSweptAgain: the sweeper finishes a YES whose handler died. If
// Redis is down at that moment the answer would be retry_later, which nobody would text:
// the sweep leaves the text unanswered instead, so a later sweep finishes it.
func TestASweptYesThatFailsIsSweptAgain(t *testing.T) {
	ctx := context.Background()
	w := newRedisDownWorld(t)
	pool := w.pool
	_, err := pool.Exec(ctx, `INSERT INTO inbound_messages (message_sid, shop_id, from_phone, to_phone, body, received_at)
		VALUES ('SMorphan', $1, $2, $3, 'YES', $4)`, w.shop.ID, w.phones[0], w.shop.SMSNumber, time.Now().Add(-2*time.Minute))
	require.NoError(t, err)

	_, err = w.inbound.Sweep(ctx) // Redis is down: the claim fails closed
	require.NoError(t, err)

	var outcome *string
	require.NoError(t, pool.QueryRow(ctx, `SELECT outcome FROM inbound_messages WHERE message_sid = 'SMorphan'`).Scan(&outcome))
	var texts int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'sms_text' AND args->>'key' = 'reply:SMorphan'`).Scan(&texts))
	t.Logf("stored outcome: %v; reply texts enqueued: %d", deref(outcome), texts)
	require.Nil(t, outcome, "the YES stays unanswered for the next sweep, got outcome %s", deref(outcome))
	require.Zero(t, texts, "nothing is texted while the answer is only 'try again'")
}

// TestUnheardRetryLaterIsTexted: a YES answered "try again" (Redis was down, the claim
// failed closed) whose answer never reached Twilio is texted like any other stored
// answer: nothing was done, and the customer is told to reply again.
func TestUnheardRetryLaterIsTexted(t *testing.T) {
	ctx := context.Background()
	w := newRedisDownWorld(t)
	ans, err := w.inbound.Reply(ctx, inbound.Message{MessageSID: "SMretry", From: w.phones[0], To: w.shop.SMSNumber, Body: "YES"})
	require.Error(t, err)
	require.Equal(t, inbound.OutcomeRetryLater, ans.Outcome)
	n, err := w.sweeperAt(time.Minute).Sweep(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, []string{texts.English.RetryLaterAt(&w.shop)}, w.texts(t, "reply:SMretry"), "the shop named, as every text once its shop is known")
}

// newRedisDownWorld is newWorld's one customer with an offer, with a Redis that cannot
// be reached: every claim fails closed.
func newRedisDownWorld(t *testing.T) *world {
	t.Helper()
	ctx := context.Background()
	pool, _ := pgtest.New(t)
	queue, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	require.NoError(t, err)
	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", DialTimeout: 100 * time.Millisecond, MaxRetries: -1})
	watcher := redislock.NewWatcher(dead, "sweeptest:"+slots.LockChannel)
	t.Cleanup(func() { _ = watcher.Close() })
	w := &world{pool: pool, queue: queue, shops: shops.New(pool, shops.Config{}), customers: customertest.New(t, pool)}
	w.slots = slots.New(pool, queue, slots.RedisLocker(redislock.New(dead), watcher, "sweeptest:"+slots.LockChannel, nil), noCooldown{}, slots.Config{})
	w.inbound = inbound.New(pool, queue, w.shops, w.customers, w.slots, nil, inbound.Config{})
	w.shop, _, err = w.shops.Create(ctx, shops.NewShop{Name: "Ana's Salon", Timezone: "Europe/London", SMSNumber: "+447700900001",
		Currency: "gbp", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	op, err := w.slots.Declare(ctx, w.shop, slots.NewOpening{StartsAt: time.Now().Add(5 * time.Hour), DurationMinutes: 30, Service: "Cut", PriceCents: 2500})
	require.NoError(t, err)
	w.opening = op.ID
	c, err := w.customers.Add(ctx, w.shop.ID, customers.NewCustomer{Phone: "+447700900123", SMSOptIn: true})
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO slot_offers (opening_id, customer_id, shop_id, generation, wave, status, created_at, sent_at)
		VALUES ($1, $2, $3, 1, 1, 'sent', now(), now())`, op.ID, c.ID, w.shop.ID)
	require.NoError(t, err)
	w.phones = []string{c.Phone}
	return w
}

func deref(s *string) string {
	if s == nil {
		return "<null>"
	}
	return *s
}

// TestOneSweepFinishesABacklog: after an outage hundreds of texts wait for the sweeper;
// one sweep goes on batch after batch (it read 100 a minute before, so customers heard
// minutes late): 250 texts without an answer and 150 answers never written back are all
// finished by one run.
func TestOneSweepFinishesABacklog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, 1)
	long := time.Now().Add(-2 * time.Minute)
	for i := range 250 {
		w.storeUnanswered(t, fmt.Sprintf("SMbacklog%03d", i), w.phones[0], "HELP", long)
	}
	_, err := w.pool.Exec(ctx, `INSERT INTO inbound_messages (message_sid, shop_id, from_phone, to_phone, body, received_at, outcome, reply, handled_at, answered_at)
		SELECT 'SMunheard' || g, $1, $2, $3, 'NO', $4, 'declined', 'No problem.', $4, NULL FROM generate_series(1, 150) g`,
		w.shop.ID, w.phones[0], w.shop.SMSNumber, long)
	require.NoError(t, err)

	n, err := w.inbound.Sweep(ctx)
	require.NoError(t, err)
	require.Equal(t, 400, n, "every text of the backlog in one sweep")
	var left int
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT count(*) FROM inbound_messages WHERE outcome IS NULL OR (answered_at IS NULL AND retold_at IS NULL)`).Scan(&left))
	require.Zero(t, left)
	n, err = w.inbound.Sweep(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "nothing left for the next")
}
