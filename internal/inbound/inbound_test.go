package inbound_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/cooldown"
	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/inbound"
	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/redislock"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/testkit/customertest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/redistest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// world is a payment-free shop whose customers each hold a sent offer for one opening,
// with the real services on the test's own database and Redis prefix. River does not
// run: the tests call the jobs' work and read the jobs they enqueue.
type world struct {
	pool      *pgxpool.Pool
	queue     *river.Client[pgx.Tx]
	shops     *shops.Service
	customers *customers.Service
	slots     *slots.Service
	ledger    *ledger.Service // the booking notices
	inbound   *inbound.Service
	shop      shops.Shop
	phones    []string
	opening   uuid.UUID
}

func newWorld(t *testing.T, n int) *world {
	t.Helper()
	ctx := context.Background()
	pool, _ := pgtest.New(t)
	rdb, prefix := redistest.New(t)
	queue, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	require.NoError(t, err)
	cool, err := cooldown.New(rdb, cooldown.Config{Prefix: prefix})
	require.NoError(t, err)
	watcher := redislock.NewWatcher(rdb, prefix+slots.LockChannel)
	t.Cleanup(func() { _ = watcher.Close() })
	shopsSvc := shops.New(pool, shops.Config{})
	w := &world{pool: pool, queue: queue, shops: shopsSvc, customers: customertest.New(t, pool)}
	w.slots = slots.New(pool, queue, slots.RedisLocker(redislock.New(rdb), watcher, prefix+slots.LockChannel, nil), cool, slots.Config{KeyPrefix: prefix})
	w.ledger = ledger.New(pool, queue, nil, ledger.Config{})
	w.inbound = inbound.New(pool, queue, shopsSvc, w.customers, w.slots, nil, inbound.Config{})
	w.shop, _, err = shopsSvc.Create(ctx, shops.NewShop{Name: "Ana's Salon", Timezone: "Europe/London", SMSNumber: "+447700900001",
		Currency: "gbp", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	op, err := w.slots.Declare(ctx, w.shop, slots.NewOpening{StartsAt: time.Now().Add(5 * time.Hour), DurationMinutes: 30, Service: "Cut", PriceCents: 2500})
	require.NoError(t, err)
	w.opening = op.ID
	for i := range n {
		c, err := w.customers.Add(ctx, w.shop.ID, customers.NewCustomer{Phone: fmt.Sprintf("+4477009%05d", i), SMSOptIn: true})
		require.NoError(t, err)
		_, err = pool.Exec(ctx, `INSERT INTO slot_offers (opening_id, customer_id, shop_id, generation, wave, status, created_at, sent_at)
			VALUES ($1, $2, $3, 1, 1, 'sent', now(), now())`, op.ID, c.ID, w.shop.ID)
		require.NoError(t, err)
		w.phones = append(w.phones, c.Phone)
	}
	return w
}

func (w *world) yes(t *testing.T, sid, from string) inbound.Answer {
	t.Helper()
	ans, err := w.inbound.Reply(context.Background(), inbound.Message{MessageSID: sid, From: from, To: w.shop.SMSNumber, Body: "YES"})
	require.NoError(t, err)
	return ans
}

// texts returns the bodies of the transactional texts enqueued under key.
func (w *world) texts(t *testing.T, key string) []string {
	t.Helper()
	rows, err := w.pool.Query(context.Background(), `SELECT args->>'body' FROM river_job WHERE kind = 'sms_text' AND args->>'key' = $1`, key)
	require.NoError(t, err)
	bodies, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return bodies
}

// storeUnanswered stores a text as its handler would have just before dying: received
// at, no answer (and, as the server stores it, not marked as answered).
func (w *world) storeUnanswered(t *testing.T, sid, from, body string, at time.Time) {
	t.Helper()
	_, err := w.pool.Exec(context.Background(), `INSERT INTO inbound_messages (message_sid, shop_id, from_phone, to_phone, body, received_at, answered_at)
		VALUES ($1, $2, $3, $4, $5, $6, NULL)`, sid, w.shop.ID, from, w.shop.SMSNumber, body, at)
	require.NoError(t, err)
}

// TestBookedCustomerIsToldOnce: when the booked answer was recorded as delivered, the
// notice texts nothing; when it was not, the notice texts the outcome, once. (When the
// booking sweep sends it: ledger's TestSweepTellsAnUntoldCustomerOnce.)
func TestBookedCustomerIsToldOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	w := newWorld(t, 1)
	ans := w.yes(t, "SMdelivered", w.phones[0])
	require.Equal(t, inbound.OutcomeBooked, ans.Outcome)
	require.NotEqual(t, uuid.Nil, ans.BookingID)
	require.NoError(t, w.taken(ctx, "SMdelivered", ans))
	require.NoError(t, w.ledger.Notify(ctx, ans.BookingID))
	require.Empty(t, w.texts(t, "booking_notice:"+ans.BookingID.String()), "the answer reached the customer")

	w = newWorld(t, 1)
	ans = w.yes(t, "SMlost", w.phones[0])
	require.Equal(t, inbound.OutcomeBooked, ans.Outcome)
	// The answer was never recorded as delivered (the process died, the connection
	// dropped): the notice texts the confirmation, and only once.
	require.NoError(t, w.ledger.Notify(ctx, ans.BookingID))
	require.NoError(t, w.ledger.Notify(ctx, ans.BookingID))
	bodies := w.texts(t, "booking_notice:"+ans.BookingID.String())
	require.Len(t, bodies, 1)
	require.Contains(t, bodies[0], "you're booked")
}

// TestUnansweredTextsAreFinished: a text whose handler died after storing it is finished
// by its redelivery (answered in TwiML) or, without one, by the sweeper (answered by
// text); a text still being handled is left alone.
func TestUnansweredTextsAreFinished(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, 3)
	long := time.Now().Add(-2 * time.Minute)
	w.storeUnanswered(t, "SMredelivered", w.phones[0], "YES", long)
	w.storeUnanswered(t, "SMswept", w.phones[1], "NO", long)
	w.storeUnanswered(t, "SMinflight", w.phones[2], "YES", time.Now())

	// The redelivery takes over and books.
	ans := w.yes(t, "SMredelivered", w.phones[0])
	require.Equal(t, inbound.OutcomeBooked, ans.Outcome)
	require.False(t, ans.Replayed)
	// A second redelivery repeats the stored answer.
	again := w.yes(t, "SMredelivered", w.phones[0])
	require.Equal(t, inbound.OutcomeBooked, again.Outcome)
	require.True(t, again.Replayed)

	n, err := w.inbound.Sweep(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n, "only the stale, unanswered text is swept")
	var outcome, status string
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT outcome FROM inbound_messages WHERE message_sid = 'SMswept'`).Scan(&outcome))
	require.Equal(t, string(inbound.OutcomeDeclined), outcome)
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT o.status FROM slot_offers o JOIN customers c ON c.id = o.customer_id WHERE c.phone = $1`, w.phones[1]).Scan(&status))
	require.Equal(t, "lost", status, "declined, then lost to the booking")
	bodies := w.texts(t, "reply:SMswept")
	require.Len(t, bodies, 1, "the sweeper's answer goes by text")
	require.Contains(t, bodies[0], "no problem")
	var unanswered int
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT count(*) FROM inbound_messages WHERE outcome IS NULL`).Scan(&unanswered))
	require.Equal(t, 1, unanswered, "the text still in its handler's hands is left alone")

	n, err = w.inbound.Sweep(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "nothing is finished twice")
	require.Len(t, w.texts(t, "reply:SMswept"), 1)
}

// TestSweptYesBooksAndTellsTheCustomer: a YES whose handler died before deciding is
// decided by the sweeper, and the customer gets the outcome by text.
func TestSweptYesBooksAndTellsTheCustomer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, 1)
	w.storeUnanswered(t, "SMyes", w.phones[0], "yes please", time.Now().Add(-time.Minute))
	n, err := w.inbound.Sweep(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	bodies := w.texts(t, "reply:SMyes")
	require.Len(t, bodies, 1)
	require.Contains(t, bodies[0], "you're booked")
	var told *time.Time
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT customer_told_at FROM bookings WHERE opening_id = $1`, w.opening).Scan(&told))
	require.NotNil(t, told, "the text told them: no notice follows")
}

// TestOneBadTextDoesNotFailItsBatch: texts of concurrent requests are stored in one
// statement; a text Postgres would refuse (a NUL byte, invalid UTF-8) is cleaned before
// it is stored, and had one still failed, the others of its batch are stored one by
// one. Every text is stored and none is answered retry_later.
func TestOneBadTextDoesNotFailItsBatch(t *testing.T) {
	w := newWorld(t, 1)
	const n = 200
	var mu sync.Mutex
	retry := 0
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			body := "HELP"
			if i%50 == 0 {
				body = "YES\x00\xff" // a NUL and invalid UTF-8 every 50
			}
			ans, _ := w.inbound.Reply(context.Background(), inbound.Message{
				MessageSID: fmt.Sprintf("SMpoison%04d", i), From: fmt.Sprintf("+1555300%04d", i), To: w.shop.SMSNumber, Body: body})
			if ans.Outcome == inbound.OutcomeRetryLater {
				mu.Lock()
				retry++
				mu.Unlock()
			}
		}()
	}
	close(start)
	wg.Wait()
	var stored int
	require.NoError(t, w.pool.QueryRow(context.Background(), `SELECT count(*) FROM inbound_messages`).Scan(&stored))
	t.Logf("texts answered retry_later: %d of %d; stored: %d", retry, n, stored)
	require.Zero(t, retry, "no text is answered retry_later because of another in its batch")
	require.Equal(t, n, stored, "every text is stored")
}

// TestSweptYesOfAToldBookingIsNotTextedAgain (found by the soak): a YES books and its
// instance dies before answering; the checkout job (or the notice) then texts the
// customer their booking. When the sweeper later finishes the stored YES, the answer is
// the same booking: it is recorded, not texted a second time. A booking nobody has
// told the customer of yet is texted once.
func TestSweptYesOfAToldBookingIsNotTextedAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, 2)
	long := time.Now().Add(-2 * time.Minute)

	// Customer 0's YES was handled (booked) but its answer never reached Twilio; the
	// customer has since been told (the link or the notice text).
	first := w.yes(t, "SMfirst", w.phones[0])
	require.Equal(t, inbound.OutcomeBooked, first.Outcome)
	require.NoError(t, ledger.MarkTold(ctx, w.pool, time.Now(), first.BookingID))
	// A second YES of theirs was stored and its handler died.
	w.storeUnanswered(t, "SMsecond", w.phones[0], "YES", long)

	n, err := w.inbound.Sweep(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	var outcome string
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT outcome FROM inbound_messages WHERE message_sid = 'SMsecond'`).Scan(&outcome))
	require.Equal(t, string(inbound.OutcomeBooked), outcome, "the answer is recorded")
	require.Empty(t, w.texts(t, "reply:SMsecond"), "the customer already knows: no second text of the same booking")
}

// TestAShopChangeIsSeenByTheNextText: the shop a text is sent to is cached for minutes,
// but the statement that stores each text reads the shop row's version, so a change made
// on another instance (another shops.Service, with a cache of its own) applies from the
// very next text here: its answer, and whether a YES may book.
func TestAShopChangeIsSeenByTheNextText(t *testing.T) {
	w := newWorld(t, 1)
	ctx := context.Background()
	help := func(sid string) inbound.Answer {
		ans, err := w.inbound.Reply(ctx, inbound.Message{MessageSID: sid, From: w.phones[0], To: w.shop.SMSNumber, Body: "HELP"})
		require.NoError(t, err)
		return ans
	}
	require.Contains(t, help("SMhelp1").Message, "Ana's Salon")

	elsewhere := shops.New(w.pool, shops.Config{})
	name, lead := "Bea's Barbers", 6*time.Hour
	_, err := elsewhere.Update(ctx, w.shop.ID, shops.ShopChange{Name: &name, Policy: shops.PolicyFields{MinLead: &lead}})
	require.NoError(t, err)

	got := help("SMhelp2").Message
	require.Contains(t, got, name, "the text after the change was answered from the copy cached before it: %q", got)
	// The opening starts in 5 h, inside the new 6 h lead time: it can no longer be booked.
	ans := w.yes(t, "SMyes1", w.phones[0])
	require.Equal(t, inbound.OutcomeTaken, ans.Outcome, "a YES was handled with the old lead time: %+v", ans)
	var bookings int
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT count(*) FROM bookings WHERE opening_id = $1`, w.opening).Scan(&bookings))
	require.Zero(t, bookings)
}
