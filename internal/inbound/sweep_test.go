package inbound_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/inbound"
	"github.com/slotrecovery/slotrecovery/internal/pgtest"
	"github.com/slotrecovery/slotrecovery/internal/redislock"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
)

type noCooldown struct{}

func (noCooldown) Start(context.Context, string, time.Duration) error { return nil }

// TestASweptYesThatFailsIsSweptAgain: the sweeper finishes a YES whose handler died. If
// Redis is down at that moment the answer would be retry_later, which nobody would text:
// the sweep leaves the text unanswered instead, so a later sweep finishes it.
func TestASweptYesThatFailsIsSweptAgain(t *testing.T) {
	ctx := context.Background()
	pool, _ := pgtest.New(t)
	queue, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	require.NoError(t, err)
	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", DialTimeout: 100 * time.Millisecond, MaxRetries: -1})
	watcher := redislock.NewWatcher(dead, "sweeptest:"+slots.LockChannel)
	t.Cleanup(func() { _ = watcher.Close() })
	shopsSvc := shops.New(pool, shops.Config{})
	slotsSvc := slots.New(pool, queue, slots.RedisLocker(redislock.New(dead), watcher, "sweeptest:"+slots.LockChannel, nil), noCooldown{}, nil, slots.Config{})
	in := inbound.New(pool, queue, shopsSvc, slotsSvc, inbound.Config{})
	shop, _, err := shopsSvc.Create(ctx, shops.NewShop{Name: "Ana's Salon", Timezone: "Europe/London", SMSNumber: "+447700900001",
		Currency: "gbp", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	op, err := slotsSvc.Declare(ctx, shop, slots.NewOpening{StartsAt: time.Now().Add(5 * time.Hour), DurationMinutes: 30, Service: "Cut", PriceCents: 2500})
	require.NoError(t, err)
	c, err := shopsSvc.AddCustomer(ctx, shop.ID, shops.NewCustomer{Phone: "+447700900123", SMSOptIn: true})
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO slot_offers (opening_id, customer_id, shop_id, generation, wave, status, created_at, sent_at)
		VALUES ($1, $2, $3, 1, 1, 'sent', now(), now())`, op.ID, c.ID, shop.ID)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO inbound_messages (message_sid, shop_id, from_phone, to_phone, body, received_at)
		VALUES ('SMorphan', $1, $2, $3, 'YES', $4)`, shop.ID, c.Phone, shop.SMSNumber, time.Now().Add(-2*time.Minute))
	require.NoError(t, err)

	_, err = in.Sweep(ctx) // Redis is down: the claim fails closed
	require.NoError(t, err)

	var outcome *string
	require.NoError(t, pool.QueryRow(ctx, `SELECT outcome FROM inbound_messages WHERE message_sid = 'SMorphan'`).Scan(&outcome))
	var texts int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'sms_text' AND args->>'key' = 'reply:SMorphan'`).Scan(&texts))
	t.Logf("stored outcome: %v; reply texts enqueued: %d", deref(outcome), texts)
	require.Nil(t, outcome, "the YES stays unanswered for the next sweep, got outcome %s", deref(outcome))
	require.Zero(t, texts, "nothing is texted while the answer is only 'try again'")
}

func deref(s *string) string {
	if s == nil {
		return "<null>"
	}
	return *s
}
