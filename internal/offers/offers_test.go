package offers_test

import (
	"cmp"
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
	"github.com/slotrecovery/slotrecovery/internal/delivery"
	"github.com/slotrecovery/slotrecovery/internal/erasure"
	"github.com/slotrecovery/slotrecovery/internal/inbound"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/offers"
	"github.com/slotrecovery/slotrecovery/internal/outbox"
	"github.com/slotrecovery/slotrecovery/internal/pacing"
	"github.com/slotrecovery/slotrecovery/internal/redislock"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/sms"
	"github.com/slotrecovery/slotrecovery/internal/sms/twilio"
	"github.com/slotrecovery/slotrecovery/internal/testkit/customertest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/redistest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/twiliofake"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// clock is a settable time source shared by the services under test.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

type world struct {
	queue   *river.Client[pgx.Tx]
	pool    *pgxpool.Pool
	shops   *shops.Service
	cust    *customers.Service
	erasure *erasure.Service
	slots   *slots.Service
	offers  *offers.Service
	inbound *inbound.Service
	outbox  *outbox.Service
	reports *delivery.Service // the status callback's recorder, as the server wires it
	twilio  *twiliofake.Server
	texter  offers.Texter
	cool    *cooldown.Store
	clock   *clock
}

func newWorld(t *testing.T) *world {
	t.Helper()
	pool, _ := pgtest.New(t)
	rdb, prefix := redistest.New(t)
	queue, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	require.NoError(t, err)
	fake := twiliofake.New(t)
	texter, err := twilio.New(twilio.Config{AccountSID: twiliofake.TestAccountSID, AuthToken: twiliofake.TestAuthToken, APIURL: fake.URL()})
	require.NoError(t, err)
	cool, err := cooldown.New(rdb, cooldown.Config{Prefix: prefix})
	require.NoError(t, err)
	clk := &clock{t: time.Now()}
	w := &world{pool: pool, queue: queue, twilio: fake, texter: texter, cool: cool, clock: clk}
	w.shops = shops.New(pool, shops.Config{Now: clk.Now})
	w.cust = customertest.NewWith(t, pool, customers.Config{Now: clk.Now})
	w.erasure = erasure.New(pool, w.cust, queue, erasure.Config{Now: clk.Now})
	watcher := redislock.NewWatcher(rdb, prefix+slots.LockChannel)
	t.Cleanup(func() { _ = watcher.Close() })
	w.slots = slots.New(pool, queue, slots.RedisLocker(redislock.New(rdb), watcher, prefix+slots.LockChannel, nil), cool, slots.Config{Now: clk.Now, KeyPrefix: prefix})
	w.offers = offers.New(pool, queue, texter, cool, w.shops, w.cust, w.slots, offers.Config{Now: clk.Now})
	w.inbound = inbound.New(pool, queue, w.shops, w.cust, w.slots, nil, inbound.Config{Now: clk.Now})
	w.outbox = outbox.New(pool, texter, w.cust, ledger.New(pool, queue, nil, ledger.Config{Now: clk.Now}), outbox.Config{Now: clk.Now})
	w.reports = delivery.New(pool, w.offers, w.shops, w.cust, clk.Now)
	return w
}

func (w *world) shop(t *testing.T, p shops.Policy) shops.Shop {
	t.Helper()
	p.SendRate = cmp.Or(p.SendRate, shops.DefaultPolicy.SendRate)
	s, _, err := w.shops.Create(context.Background(), shops.NewShop{
		Name: "Ana's Salon", Timezone: "Europe/London", SMSNumber: "+447700900001", Currency: "gbp",
		PaymentMode: shops.PaymentNone, Policy: p.Fields(),
	})
	require.NoError(t, err)
	return s
}

func (w *world) customers(t *testing.T, shop shops.Shop, n int) []customers.Customer {
	t.Helper()
	var out []customers.Customer
	for i := range n {
		c, err := w.cust.Add(context.Background(), shop.ID, customers.NewCustomer{
			Phone: fmt.Sprintf("+4477009%05d", 10000+i), Name: fmt.Sprint("C", i), SMSOptIn: true, Priority: n - i,
		})
		require.NoError(t, err)
		out = append(out, c)
	}
	return out
}

func (w *world) declare(t *testing.T, shop shops.Shop, in time.Duration) slots.Opening {
	t.Helper()
	o, err := w.slots.Declare(context.Background(), shop, slots.NewOpening{
		StartsAt: w.clock.Now().Add(in), DurationMinutes: 45, Service: "Colour", PriceCents: 6000,
	})
	require.NoError(t, err)
	return o
}

func (w *world) offerStatuses(t *testing.T, openingID uuid.UUID) map[string]int {
	t.Helper()
	rows, err := w.pool.Query(context.Background(), `SELECT status, count(*) FROM slot_offers WHERE opening_id = $1 GROUP BY status`, openingID)
	require.NoError(t, err)
	out := map[string]int{}
	for rows.Next() {
		var s string
		var n int
		require.NoError(t, rows.Scan(&s, &n))
		out[s] = n
	}
	return out
}

// waveScheduledAt returns when the opening's job for wave is scheduled to run.
func (w *world) waveScheduledAt(t *testing.T, openingID uuid.UUID, wave int) time.Time {
	t.Helper()
	var at time.Time
	require.NoError(t, w.pool.QueryRow(context.Background(), `SELECT scheduled_at FROM river_job
		WHERE kind = 'offer_wave' AND args->>'opening_id' = $1 AND (args->>'wave')::int = $2`, openingID.String(), wave).Scan(&at))
	return at
}

var policy = shops.Policy{WaveSize: 2, WaveInterval: 10 * time.Minute, MinLead: time.Hour, Cooldown: 24 * time.Hour}

// TestWavesInPriorityOrderAndScheduleTheNext: waves of wave_size, waitlist priority
// first, each scheduling the next while eligible customers remain.
func TestWavesInPriorityOrderAndScheduleTheNext(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	shop := w.shop(t, policy)
	cs := w.customers(t, shop, 5)
	op := w.declare(t, shop, 5*time.Hour)
	ctx := context.Background()

	for wave, want := range [][]int{{0, 1}, {2, 3}, {4}} {
		res, err := w.offers.RunWave(ctx, jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: wave + 1})
		require.NoError(t, err)
		require.Equal(t, len(want), res.Texted)
		for _, i := range want {
			require.Len(t, w.twilio.MessagesTo(cs[i].Phone), 1, "wave %d texts customer %d", wave+1, i)
		}
		// A wave that texted someone schedules the next one wave_interval later.
		require.WithinDuration(t, w.clock.Now().Add(policy.WaveInterval), w.waveScheduledAt(t, op.ID, wave+2), time.Second,
			"wave %d is scheduled wave_interval after wave %d", wave+2, wave+1)
	}
	require.Equal(t, 5, w.twilio.Count())
	rows, err := w.pool.Query(ctx, `SELECT (args->>'wave')::int FROM river_job WHERE kind = 'offer_wave' ORDER BY 1`)
	require.NoError(t, err)
	scheduled, err := pgx.CollectRows(rows, pgx.RowTo[int])
	require.NoError(t, err)
	require.Equal(t, []int{1, 2, 3, 4}, scheduled, "declare enqueues wave 1; each wave schedules the next")
	// Wave 4 finds nobody left; it still runs (new customers, cooldowns ending) and the
	// chain ends at the cutoff, where the opening expires.
	res, err := w.offers.RunWave(ctx, jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 4})
	require.NoError(t, err)
	require.Zero(t, res.Texted)
	var last time.Time
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT max(scheduled_at) FROM river_job WHERE kind = 'offer_wave'`).Scan(&last))
	require.WithinDuration(t, w.clock.Now().Add(time.Hour), last, time.Second, "a wave that found nobody looks again in an hour")
	w.clock.Set(op.StartsAt.Add(-policy.MinLead))
	res, err = w.offers.RunWave(ctx, jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 5})
	require.NoError(t, err)
	require.Equal(t, "expired", res.Stopped)
	msg := w.twilio.MessagesTo(cs[0].Phone)[0]
	require.Contains(t, msg.Body, "Ana's Salon")
	require.Contains(t, msg.Body, "£60.00")
	require.Equal(t, 1, sms.Segments(msg.Body), msg.Body)
}

// TestOffersStayClaimableAcrossWaves: a later wave adds customers without taking the
// slot away from those texted earlier; a YES to a wave-1 offer after wave 2 went out
// still books.
func TestOffersStayClaimableAcrossWaves(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	p := policy
	p.WaveSize = 1
	shop := w.shop(t, p)
	cs := w.customers(t, shop, 2)
	op := w.declare(t, shop, 5*time.Hour)
	ctx := context.Background()

	res, err := w.offers.RunWave(ctx, jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 1})
	require.NoError(t, err)
	require.Equal(t, 1, res.Texted)
	require.Len(t, w.twilio.MessagesTo(cs[0].Phone), 1, "wave 1 texts the first in priority")

	w.clock.Set(w.clock.Now().Add(p.WaveInterval))
	res, err = w.offers.RunWave(ctx, jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 2})
	require.NoError(t, err)
	require.Equal(t, 1, res.Texted)
	require.Len(t, w.twilio.MessagesTo(cs[1].Phone), 1, "wave 2 texts the next")
	require.Equal(t, map[string]int{"sent": 2}, w.offerStatuses(t, op.ID))

	claim, err := w.slots.Book(ctx, &shop, cs[0].ID)
	require.NoError(t, err)
	require.Equal(t, slots.Booked, claim.Outcome, "the wave-1 offer is still claimable after wave 2")
	require.Equal(t, op.ID, claim.OpeningID)
	require.Equal(t, map[string]int{"accepted": 1, "lost": 1}, w.offerStatuses(t, op.ID))
}

// TestRetriedWaveNeverTextsTwice: running a wave again, after a crash mid-send or a
// transient Twilio error, texts only what was not texted.
func TestRetriedWaveNeverTextsTwice(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	shop := w.shop(t, shops.Policy{WaveSize: 4, WaveInterval: time.Minute, MinLead: time.Hour, Cooldown: time.Hour})
	cs := w.customers(t, shop, 4)
	op := w.declare(t, shop, 5*time.Hour)
	ctx := context.Background()
	wave := jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 1}

	// A transient Twilio failure: the job fails, the offer returns to queued.
	w.twilio.FailNext(1, 20500, 500)
	res, err := w.offers.RunWave(ctx, wave)
	require.Error(t, err)
	require.Equal(t, 3, res.Texted)
	require.Equal(t, map[string]int{"sent": 3, "queued": 1}, w.offerStatuses(t, op.ID))

	// Simulate a crash between claim and send on another run: an offer stuck in sending
	// is not texted again.
	_, err = w.pool.Exec(ctx, `UPDATE slot_offers SET status = 'sending' WHERE status = 'queued'`)
	require.NoError(t, err)
	res, err = w.offers.RunWave(ctx, wave)
	require.NoError(t, err)
	require.Zero(t, res.Texted)
	require.Equal(t, 3, w.twilio.Count())

	// Put it back to queued (as the error path does) and retry: texted once.
	_, err = w.pool.Exec(ctx, `UPDATE slot_offers SET status = 'queued' WHERE status = 'sending'`)
	require.NoError(t, err)
	res, err = w.offers.RunWave(ctx, wave)
	require.NoError(t, err)
	require.Equal(t, 1, res.Texted)
	for _, c := range cs {
		require.Len(t, w.twilio.MessagesTo(c.Phone), 1, "each customer texted exactly once")
	}

	// Twenty runs of a new opening's wave at once (River retrying a job that was also
	// picked up again after a crash), while Twilio fails the first four sends: the
	// offers are recorded once, each is claimed by one run at a time, and the only
	// errors are the injected failures, whose offers go back to queued.
	op2 := w.declare(t, shop, 6*time.Hour)
	wave2 := jobs.Wave{OpeningID: op2.ID, Generation: 1, Wave: 1}
	sentBefore, attemptsBefore := w.twilio.Count(), w.twilio.Attempts()
	w.twilio.FailNext(4, 20500, 500)
	errs := make([]error, 20)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() { _, errs[i] = w.offers.RunWave(ctx, wave2) })
	}
	wg.Wait()
	succeeded := 0
	for _, err := range errs {
		if err == nil {
			succeeded++
			continue
		}
		var se *sms.Error
		require.ErrorAs(t, err, &se, "a run failed with something other than the injected Twilio error")
		require.Equal(t, 20500, se.Code, "a run failed with something other than the injected Twilio error: %v", err)
	}
	require.Positive(t, succeeded, "every run failed")
	// Every queued offer is tried by the first run that reaches it, so all four
	// failures are used up by now; River's next retry texts what they left queued.
	_, err = w.offers.RunWave(ctx, wave2)
	require.NoError(t, err)
	require.Equal(t, map[string]int{"sent": 4}, w.offerStatuses(t, op2.ID))
	for _, c := range cs {
		require.Len(t, w.twilio.MessagesTo(c.Phone), 2, "exactly one text per opening for %s", c.Name)
	}
	require.Equal(t, sentBefore+4, w.twilio.Count())
	require.Equal(t, attemptsBefore+4+4, w.twilio.Attempts(), "four injected failures and four texts, no other send")
	var next int
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'offer_wave'
		AND args->>'opening_id' = $1 AND (args->>'wave')::int = 2`, op2.ID.String()).Scan(&next))
	require.Equal(t, 1, next, "the runs schedule the next wave once")
}

// TestUnreachableNumberIsNotTriedAgain: a Twilio error that means the number cannot
// receive texts marks the customer; later waves and openings skip them.
func TestUnreachableNumberIsNotTriedAgain(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	shop := w.shop(t, shops.Policy{WaveSize: 10, WaveInterval: time.Minute, MinLead: time.Hour, Cooldown: time.Hour})
	cs := w.customers(t, shop, 3)
	w.twilio.FailNumber(cs[1].Phone, 21610, 400)
	ctx := context.Background()
	op := w.declare(t, shop, 5*time.Hour)
	res, err := w.offers.RunWave(ctx, jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 1})
	require.NoError(t, err, "a permanent error is not worth a retry")
	require.Equal(t, 2, res.Texted)
	require.Equal(t, 1, res.Failed)
	var code int
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT unreachable_code FROM customers WHERE id = $1`, cs[1].ID).Scan(&code))
	require.Equal(t, 21610, code)

	attempts := w.twilio.Attempts()
	op2 := w.declare(t, shop, 6*time.Hour)
	res, err = w.offers.RunWave(ctx, jobs.Wave{OpeningID: op2.ID, Generation: 1, Wave: 1})
	require.NoError(t, err)
	require.Equal(t, 2, res.Texted)
	require.Equal(t, attempts+2, w.twilio.Attempts(), "the unreachable number is not tried again")
}

// TestQuietHoursPostponeTheWave: inside the shop's quiet hours (its own time zone) a wave
// texts nobody and asks to run again at their end.
func TestQuietHoursPostponeTheWave(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	london, _ := time.LoadLocation("Europe/London")
	w.clock.Set(time.Date(2026, 11, 23, 22, 30, 0, 0, london))
	p := policy
	p.Quiet = &shops.QuietHours{Start: 21 * 60, End: 8 * 60}
	shop := w.shop(t, p)
	w.customers(t, shop, 2)
	op := w.declare(t, shop, 14*time.Hour)
	res, err := w.offers.RunWave(context.Background(), jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 1})
	require.NoError(t, err)
	require.Zero(t, res.Texted)
	require.Equal(t, time.Date(2026, 11, 24, 8, 0, 0, 0, london), res.SnoozeTo)
	require.Zero(t, w.twilio.Count())

	// At 08:00 the wave goes out.
	w.clock.Set(time.Date(2026, 11, 24, 8, 0, 0, 0, london))
	res, err = w.offers.RunWave(context.Background(), jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 1})
	require.NoError(t, err)
	require.Equal(t, 2, res.Texted)
}

// TestCutoffExpiresTheOpening: no wave runs inside min_lead of the start; the opening
// becomes expired, and a late YES is told it is taken.
func TestCutoffExpiresTheOpening(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	shop := w.shop(t, policy)
	cs := w.customers(t, shop, 4)
	op := w.declare(t, shop, 3*time.Hour)
	ctx := context.Background()
	_, err := w.offers.RunWave(ctx, jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 1})
	require.NoError(t, err)
	require.Equal(t, 2, w.twilio.Count())

	w.clock.Set(w.clock.Now().Add(2*time.Hour + time.Second)) // 59m59s before the start
	res, err := w.offers.RunWave(ctx, jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 2})
	require.NoError(t, err)
	require.Equal(t, "expired", res.Stopped)
	require.Equal(t, 2, w.twilio.Count(), "no texts inside the cutoff")
	got, err := w.slots.Get(ctx, shop.ID, op.ID)
	require.NoError(t, err)
	require.Equal(t, slots.StatusExpired, got.Status)

	claim, err := w.slots.Book(ctx, &shop, cs[0].ID)
	require.NoError(t, err)
	require.Equal(t, slots.Taken, claim.Outcome)
}

// TestBookRechecksTheCutoff: a YES that arrives after the cutoff but before any wave
// noticed it does not book.
func TestBookRechecksTheCutoff(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	shop := w.shop(t, policy)
	cs := w.customers(t, shop, 1)
	op := w.declare(t, shop, 3*time.Hour)
	_, err := w.offers.RunWave(context.Background(), jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 1})
	require.NoError(t, err)
	w.clock.Set(w.clock.Now().Add(2*time.Hour + time.Minute))
	claim, err := w.slots.Book(context.Background(), &shop, cs[0].ID)
	require.NoError(t, err)
	require.Equal(t, slots.Taken, claim.Outcome)
	var n int
	require.NoError(t, w.pool.QueryRow(context.Background(), `SELECT count(*) FROM bookings`).Scan(&n))
	require.Zero(t, n)
}

// TestCancelStopsTheWaves: a cancelled opening's pending waves find it cancelled and
// text nobody.
func TestCancelStopsTheWaves(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	shop := w.shop(t, policy)
	w.customers(t, shop, 4)
	op := w.declare(t, shop, 5*time.Hour)
	ctx := context.Background()
	_, err := w.offers.RunWave(ctx, jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 1})
	require.NoError(t, err)
	_, err = w.slots.Cancel(ctx, shop.ID, op.ID)
	require.NoError(t, err)
	res, err := w.offers.RunWave(ctx, jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 2})
	require.NoError(t, err)
	require.Equal(t, "not_open", res.Stopped)
	require.Equal(t, 2, w.twilio.Count())
}

// TestCoolingCustomersAreSkipped: the cooldown check leaves out customers who booked
// recently, in one round trip for the whole batch.
func TestCoolingCustomersAreSkipped(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	// The cooldowns live on a client of their own, so the hook counts only what the
	// wave's cooldown check sends (locks and the rest use the world's client).
	rdb, prefix := redistest.New(t)
	cool, err := cooldown.New(rdb, cooldown.Config{Prefix: prefix})
	require.NoError(t, err)
	svc := offers.New(w.pool, w.queue, w.texter, cool, w.shops, w.cust, w.slots, offers.Config{Now: w.clock.Now})

	shop := w.shop(t, shops.Policy{WaveSize: 10, WaveInterval: time.Minute, MinLead: time.Hour, Cooldown: time.Hour})
	cs := w.customers(t, shop, 3)
	require.NoError(t, cool.Start(ctx, cs[2].ID.String(), time.Hour))
	op := w.declare(t, shop, 5*time.Hour)

	h := redistest.CountRoundTrips(t, rdb)

	res, err := svc.RunWave(ctx, jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 1})
	require.NoError(t, err)
	require.Equal(t, 2, res.Texted)
	require.Empty(t, w.twilio.MessagesTo(cs[2].Phone))
	require.EqualValues(t, 1, h.Calls(), "redis round trips for the wave's cooldown check")
	require.EqualValues(t, 3, h.Pipelined(), "one pipeline checks every candidate")
	require.Zero(t, h.Dials(), "a new connection would be another round trip")
}

// TestNewGenerationSkipsDeclinersAndTheLapsedHolder: when a reopened opening starts a new
// generation, customers who were offered before hear it is open again, but not those who
// said NO to it, nor the one whose hold on it lapsed (even with no cooldown).
func TestNewGenerationSkipsDeclinersAndTheLapsedHolder(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	shop := w.shop(t, shops.Policy{WaveSize: 10, WaveInterval: time.Minute, MinLead: time.Hour, Cooldown: 0})
	cs := w.customers(t, shop, 4)
	op := w.declare(t, shop, 5*time.Hour)
	ctx := context.Background()
	_, err := w.offers.RunWave(ctx, jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 1})
	require.NoError(t, err)
	require.Equal(t, 4, w.twilio.Count())

	// cs[0] texts NO, which declines their newest claimable offer (this one); cs[1]
	// books, then the hold lapses and the opening reopens.
	ans, err := w.inbound.Reply(ctx, inbound.Message{MessageSID: "SMno1", From: cs[0].Phone, To: shop.SMSNumber, Body: "NO"})
	require.NoError(t, err)
	require.Equal(t, inbound.OutcomeDeclined, ans.Outcome)
	var status string
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT status FROM slot_offers WHERE opening_id = $1 AND customer_id = $2`, op.ID, cs[0].ID).Scan(&status))
	require.Equal(t, "declined", status, "NO declines the offer")
	claim, err := w.slots.Book(ctx, &shop, cs[1].ID)
	require.NoError(t, err)
	require.Equal(t, slots.Booked, claim.Outcome)
	_, err = w.pool.Exec(ctx, `UPDATE bookings SET status = 'payment_failed' WHERE id = $1`, claim.BookingID)
	require.NoError(t, err)
	_, err = w.pool.Exec(ctx, `UPDATE slot_openings SET status = 'open', filled_by = NULL, generation = 2 WHERE id = $1`, op.ID)
	require.NoError(t, err)

	res, err := w.offers.RunWave(ctx, jobs.Wave{OpeningID: op.ID, Generation: 2, Wave: 1})
	require.NoError(t, err)
	require.Equal(t, 2, res.Texted)
	require.Len(t, w.twilio.MessagesTo(cs[0].Phone), 1, "the decliner is not asked again")
	require.Len(t, w.twilio.MessagesTo(cs[1].Phone), 1, "the lapsed holder is not asked again")
	require.Len(t, w.twilio.MessagesTo(cs[2].Phone), 2, "others hear it is open again")
	require.Len(t, w.twilio.MessagesTo(cs[3].Phone), 2)
}

// TestStopAndCancelWinOverARetriedWave: offers recorded for a wave but not texted yet
// (Twilio was failing) are not texted after the customer says STOP, nor after the owner
// cancels the opening.
func TestStopAndCancelWinOverARetriedWave(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	shop := w.shop(t, shops.Policy{WaveSize: 10, WaveInterval: time.Minute, MinLead: time.Hour, Cooldown: time.Hour})
	cs := w.customers(t, shop, 3)
	ctx := context.Background()
	op := w.declare(t, shop, 5*time.Hour)
	wave := jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 1}
	w.twilio.FailNext(3, 20500, 500)
	_, err := w.offers.RunWave(ctx, wave)
	require.Error(t, err)
	require.Equal(t, map[string]int{"queued": 3}, w.offerStatuses(t, op.ID))

	_, err = w.inbound.Reply(ctx, inbound.Message{MessageSID: "SMstop1", From: cs[0].Phone, To: shop.SMSNumber, Body: "STOP"})
	require.NoError(t, err)
	res, err := w.offers.RunWave(ctx, wave)
	require.NoError(t, err)
	require.Equal(t, 2, res.Texted)
	require.Empty(t, w.twilio.MessagesTo(cs[0].Phone), "no text after STOP")

	op2 := w.declare(t, shop, 6*time.Hour)
	wave2 := jobs.Wave{OpeningID: op2.ID, Generation: 1, Wave: 1}
	w.twilio.FailNext(2, 20500, 500)
	_, err = w.offers.RunWave(ctx, wave2)
	require.Error(t, err)
	_, err = w.slots.Cancel(ctx, shop.ID, op2.ID)
	require.NoError(t, err)
	before := w.twilio.Count()
	res, err = w.offers.RunWave(ctx, wave2)
	require.NoError(t, err)
	require.Equal(t, "not_open", res.Stopped)
	require.Equal(t, before, w.twilio.Count(), "no text for a cancelled opening")
	require.Equal(t, map[string]int{"lost": 2}, w.offerStatuses(t, op2.ID))
}

// TestTwilioUnreachableIsRetriedNotCountedAsSent: when Twilio cannot be reached at all,
// nothing was sent: the offers stay queued and the wave fails so River retries it.
func TestTwilioUnreachableIsRetriedNotCountedAsSent(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	shop := w.shop(t, policy)
	w.customers(t, shop, 2)
	op := w.declare(t, shop, 5*time.Hour)
	down, err := twilio.New(twilio.Config{AccountSID: twiliofake.TestAccountSID, AuthToken: twiliofake.TestAuthToken, APIURL: "http://127.0.0.1:1"})
	require.NoError(t, err)
	svc := offers.New(w.pool, w.queue, down, w.cool, w.shops, w.cust, w.slots, offers.Config{Now: w.clock.Now})
	res, err := svc.RunWave(context.Background(), jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 1})
	require.Error(t, err)
	require.Zero(t, res.Texted)
	require.Equal(t, map[string]int{"queued": 2}, w.offerStatuses(t, op.ID))
}

// TestYesThatTwilioCountedAsOptInOptsIn: a YES that arrives with OptOutType=START from
// someone who had said STOP follows Twilio: they are opted in again.
func TestYesThatTwilioCountedAsOptInOptsIn(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	shop := w.shop(t, policy)
	cs := w.customers(t, shop, 1)
	ctx := context.Background()
	_, err := w.inbound.Reply(ctx, inbound.Message{MessageSID: "SMa", From: cs[0].Phone, To: shop.SMSNumber, Body: "stop"})
	require.NoError(t, err)
	ans, err := w.inbound.Reply(ctx, inbound.Message{MessageSID: "SMb", From: cs[0].Phone, To: shop.SMSNumber, Body: "YES", OptOutType: "START"})
	require.NoError(t, err)
	require.Equal(t, inbound.OutcomeNoOffer, ans.Outcome)
	var optedOut *time.Time
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT opted_out_at FROM customers WHERE id = $1`, cs[0].ID).Scan(&optedOut))
	require.Nil(t, optedOut)
}

// TestTransactionalTextsRespectStop: a queued confirmation or link is not sent to a
// customer who has said STOP since, nor when it has gone stale.
func TestTransactionalTextsRespectStop(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	shop := w.shop(t, policy)
	cs := w.customers(t, shop, 2)
	ctx := context.Background()
	_, err := w.inbound.Reply(ctx, inbound.Message{MessageSID: "SMs", From: cs[0].Phone, To: shop.SMSNumber, Body: "STOP"})
	require.NoError(t, err)
	text := func(to string, notAfter time.Time) jobs.Text {
		return jobs.Text{Key: "k:" + to, ShopID: shop.ID, From: shop.SMSNumber, To: to, Body: "You're booked", NotAfter: notAfter}
	}
	require.NoError(t, w.outbox.SendText(ctx, text(cs[0].Phone, time.Time{})))
	require.Empty(t, w.twilio.MessagesTo(cs[0].Phone))
	require.NoError(t, w.outbox.SendText(ctx, text(cs[1].Phone, w.clock.Now().Add(-time.Minute))))
	require.Empty(t, w.twilio.MessagesTo(cs[1].Phone), "stale")
	require.NoError(t, w.outbox.SendText(ctx, text(cs[1].Phone, w.clock.Now().Add(time.Minute))))
	require.Len(t, w.twilio.MessagesTo(cs[1].Phone), 1)
}

// TestLapsedTextNotSentAfterTheBookingMovedOn: a text queued for a booking's status (the
// lapsed hold) is not sent once a late payment has confirmed the booking, so the customer
// never reads "your hold lapsed" after "you're booked"; while the status holds, it is sent.
func TestLapsedTextNotSentAfterTheBookingMovedOn(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	shop := w.shop(t, policy)
	cs := w.customers(t, shop, 2)
	ctx := context.Background()
	op, err := w.slots.Declare(ctx, shop, slots.NewOpening{StartsAt: w.clock.Now().Add(5 * time.Hour), DurationMinutes: 30, Service: "Cut", PriceCents: 2500})
	require.NoError(t, err)
	booking := func(customer uuid.UUID, status string) uuid.UUID {
		var id uuid.UUID
		require.NoError(t, w.pool.QueryRow(ctx, `INSERT INTO bookings (opening_id, customer_id, shop_id, status, amount_cents, currency, created_at, updated_at)
			VALUES ($1, $2, $3, $4, 2500, 'usd', now(), now()) RETURNING id`, op.ID, customer, shop.ID, status).Scan(&id))
		return id
	}
	lapsed := func(to string, b uuid.UUID) jobs.Text {
		return jobs.Text{Key: "lapsed:" + b.String(), ShopID: shop.ID, From: shop.SMSNumber, To: to, Body: "Your hold lapsed",
			BookingID: b, WhileBookingStatus: ledger.BookingPaymentFailed}
	}

	confirmed := booking(cs[0].ID, ledger.BookingConfirmed) // the late payment came first
	require.NoError(t, w.outbox.SendText(ctx, lapsed(cs[0].Phone, confirmed)))
	require.Empty(t, w.twilio.MessagesTo(cs[0].Phone), "the booking is confirmed: no lapsed text after it")

	failed := booking(cs[1].ID, ledger.BookingPaymentFailed)
	require.NoError(t, w.outbox.SendText(ctx, lapsed(cs[1].Phone, failed)))
	require.Len(t, w.twilio.MessagesTo(cs[1].Phone), 1, "the hold did lapse: the text goes out")
}

// TestOffersClaimedByACrashedWaveAreSettled: a wave killed after claiming its offers
// (queued→sending) and before marking them sent leaves them in sending. The rescued run
// settles them as sent without texting them again (each may have gone out), and texts
// the offers still queued.
func TestOffersClaimedByACrashedWaveAreSettled(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	shop := w.shop(t, policy)
	cs := w.customers(t, shop, 2)
	op := w.declare(t, shop, 5*time.Hour)
	ctx := context.Background()
	wave := jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 1}
	// A first run records the wave but cannot text (Twilio unreachable): both queued.
	down, err := twilio.New(twilio.Config{AccountSID: twiliofake.TestAccountSID, AuthToken: twiliofake.TestAuthToken, APIURL: "http://127.0.0.1:1"})
	require.NoError(t, err)
	_, err = offers.New(w.pool, w.queue, down, w.cool, w.shops, w.cust, w.slots, offers.Config{Now: w.clock.Now}).RunWave(ctx, wave)
	require.Error(t, err)
	// A second run claimed the first customer's offer and was killed before the send's
	// answer came back.
	_, err = w.pool.Exec(ctx, `UPDATE slot_offers SET status = 'sending', claimed_at = $3 WHERE opening_id = $1 AND customer_id = $2`,
		op.ID, cs[0].ID, w.clock.Now())
	require.NoError(t, err)

	// While the claim is recent, its run may still be sending: it is left alone.
	w.clock.Set(w.clock.Now().Add(time.Minute))
	res, err := w.offers.RunWave(ctx, wave)
	require.NoError(t, err)
	require.Equal(t, 1, res.Texted, "only the queued offer is texted")
	require.Equal(t, map[string]int{"sent": 1, "sending": 1}, w.offerStatuses(t, op.ID))

	// River rescues the killed run after its timeout; by then the claim is stale.
	w.clock.Set(w.clock.Now().Add(15 * time.Minute))
	res, err = w.offers.RunWave(ctx, wave)
	require.NoError(t, err)
	require.Zero(t, res.Texted)
	require.Empty(t, w.twilio.MessagesTo(cs[0].Phone), "the crashed run's offer is not texted again")
	require.Len(t, w.twilio.MessagesTo(cs[1].Phone), 1)
	require.Equal(t, map[string]int{"sent": 2}, w.offerStatuses(t, op.ID), "nothing left claimed")
}

// TestAccountErrorDoesNotMarkTheCustomer: 21612 ('To' cannot be reached from this
// 'From') and 21408 (region not enabled) come from our account or number, not the
// customer: the offer fails, the wave does not retry it for ever, and the customer stays
// reachable for later openings. A real unreachable number (21614) still marks them.
func TestAccountErrorDoesNotMarkTheCustomer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		code            int
		wantUnreachable bool
	}{{21612, false}, {21408, false}, {21614, true}} {
		t.Run(fmt.Sprint(tc.code), func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			shop := w.shop(t, policy)
			cs := w.customers(t, shop, 1)
			op := w.declare(t, shop, 5*time.Hour)
			w.twilio.FailNext(1, tc.code, 400)
			res, err := w.offers.RunWave(context.Background(), jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 1})
			require.NoError(t, err, "a failure retrying cannot fix is not the job's error")
			require.Equal(t, 1, res.Failed)
			require.Equal(t, map[string]int{"failed": 1}, w.offerStatuses(t, op.ID))
			var unreachable bool
			require.NoError(t, w.pool.QueryRow(context.Background(), `SELECT unreachable_at IS NOT NULL FROM customers WHERE id = $1`, cs[0].ID).Scan(&unreachable))
			require.Equal(t, tc.wantUnreachable, unreachable)
			got, err := w.shops.Get(context.Background(), shop.ID)
			require.NoError(t, err)
			if tc.wantUnreachable {
				require.Nil(t, got.SMSProblem, "the customer's number, not the shop's")
			} else {
				require.NotNil(t, got.SMSProblem, "the owner is shown the shop's own problem")
				require.Equal(t, tc.code, got.SMSProblem.Code)
				require.Equal(t, 1, got.SMSProblem.Count)
				require.True(t, got.SMSProblem.Recent(w.clock.Now()))
			}
		})
	}
}

func (w *world) sidTo(t *testing.T, phone string) string {
	t.Helper()
	msgs := w.twilio.MessagesTo(phone)
	require.NotEmpty(t, msgs, "no text to %s", phone)
	return msgs[len(msgs)-1].SID
}

func (w *world) customerFlags(t *testing.T, id uuid.UUID) (optedOut, unreachable bool) {
	t.Helper()
	require.NoError(t, w.pool.QueryRow(context.Background(),
		`SELECT opted_out_at IS NOT NULL, unreachable_at IS NOT NULL FROM customers WHERE id = $1`, id).Scan(&optedOut, &unreachable))
	return optedOut, unreachable
}

// TestUndeliveredOfferIsReplacedByTheNextWave: a text the carrier did not deliver fails
// its offer (it no longer counts as offered), marks the customer as the carrier says
// (unreachable; opted out for a carrier-level STOP), and the next wave texts one more
// customer in its place. Reports repeat and come out of order without changing more.
func TestUndeliveredOfferIsReplacedByTheNextWave(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	shop := w.shop(t, shops.Policy{WaveSize: 2, WaveInterval: time.Minute, MinLead: time.Hour, Cooldown: time.Hour})
	cs := w.customers(t, shop, 7)
	op := w.declare(t, shop, 5*time.Hour)
	ctx := context.Background()
	res, err := w.offers.RunWave(ctx, jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 1})
	require.NoError(t, err)
	require.Equal(t, 2, res.Texted)

	undelivered := sms.DeliveryReport{MessageID: w.sidTo(t, cs[0].Phone), Status: sms.DeliveryUndelivered, Reason: sms.ReasonUnreachable, ErrorCode: 30005}
	require.NoError(t, w.reports.RecordDelivery(ctx, undelivered))
	require.NoError(t, w.reports.RecordDelivery(ctx, undelivered), "a repeated report")
	delivered := w.sidTo(t, cs[1].Phone)
	require.NoError(t, w.reports.RecordDelivery(ctx, sms.DeliveryReport{MessageID: delivered, Status: sms.DeliveryDelivered}))
	require.NoError(t, w.reports.RecordDelivery(ctx, sms.DeliveryReport{MessageID: delivered, Status: sms.DeliverySent}), "a late 'sent'")
	require.NoError(t, w.reports.RecordDelivery(ctx, sms.DeliveryReport{MessageID: "SMnotanoffer", Status: sms.DeliveryFailed}), "an outbox text's report")

	require.Equal(t, map[string]int{"failed": 1, "sent": 1}, w.offerStatuses(t, op.ID))
	var delivery string
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT delivery FROM slot_offers WHERE twilio_sid = $1`, delivered).Scan(&delivery))
	require.Equal(t, "delivered", delivery, "the most final word is kept")
	_, unreachable := w.customerFlags(t, cs[0].ID)
	require.True(t, unreachable)

	// Wave 2 texts its two and one more for the undelivered offer; wave 3 only its two.
	w.clock.Set(w.clock.Now().Add(time.Minute))
	res, err = w.offers.RunWave(ctx, jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 2})
	require.NoError(t, err)
	require.Equal(t, 3, res.Texted, "the wave makes up for the undelivered text")
	w.clock.Set(w.clock.Now().Add(time.Minute))
	res, err = w.offers.RunWave(ctx, jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 3})
	require.NoError(t, err)
	require.Equal(t, 2, res.Texted, "made up for once only")

	// A carrier-level opt-out (21610) opts the customer out.
	stop := sms.DeliveryReport{MessageID: w.sidTo(t, cs[2].Phone), Status: sms.DeliveryFailed, Reason: sms.ReasonOptedOut, ErrorCode: 21610}
	require.NoError(t, w.reports.RecordDelivery(ctx, stop))
	optedOut, _ := w.customerFlags(t, cs[2].ID)
	require.True(t, optedOut)
	// Our account's problem (21612 at delivery) fails the offer but leaves the customer.
	acct := sms.DeliveryReport{MessageID: w.sidTo(t, cs[3].Phone), Status: sms.DeliveryUndelivered, Reason: sms.ReasonAccount, ErrorCode: 21612}
	require.NoError(t, w.reports.RecordDelivery(ctx, acct))
	optedOut, unreachable = w.customerFlags(t, cs[3].ID)
	require.False(t, optedOut || unreachable, "not the customer's fault")
	got, err := w.shops.Get(ctx, shop.ID)
	require.NoError(t, err)
	require.NotNil(t, got.SMSProblem, "but the owner's")
	require.Equal(t, 21612, got.SMSProblem.Code)
	require.Equal(t, map[string]int{"failed": 3, "sent": 4}, w.offerStatuses(t, op.ID))
}

// TestTransactionalTextReportsFollowTheOneRule: a delivery report of a text that is no
// offer (a payment link, a confirmation) goes to the same failure rule as an offer's: an
// account problem raises the shop's banner and leaves the customer alone; an
// unreachable number marks its customer.
func TestTransactionalTextReportsFollowTheOneRule(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	shop := w.shop(t, shops.Policy{WaveSize: 4, WaveInterval: time.Minute, MinLead: time.Hour, Cooldown: time.Hour})
	cs := w.customers(t, shop, 2)
	acct := sms.DeliveryReport{MessageID: "SMlink1", Status: sms.DeliveryUndelivered, Reason: sms.ReasonAccount, ErrorCode: 21612,
		From: shop.SMSNumber, To: cs[0].Phone}
	require.NoError(t, w.reports.RecordDelivery(ctx, acct))
	optedOut, unreachable := w.customerFlags(t, cs[0].ID)
	require.False(t, optedOut || unreachable, "not the customer's fault")
	got, err := w.shops.Get(ctx, shop.ID)
	require.NoError(t, err)
	require.NotNil(t, got.SMSProblem, "the owner's: the banner is raised as for an offer")
	require.Equal(t, 21612, got.SMSProblem.Code)

	gone := sms.DeliveryReport{MessageID: "SMlink2", Status: sms.DeliveryFailed, Reason: sms.ReasonUnreachable, ErrorCode: 30006,
		From: shop.SMSNumber, To: cs[1].Phone}
	require.NoError(t, w.reports.RecordDelivery(ctx, gone))
	_, unreachable = w.customerFlags(t, cs[1].ID)
	require.True(t, unreachable)
}

// reportingTexter reports each text undelivered before its send returns, as a fast
// carrier's callback can: the report comes before the wave has stored the message id.
type reportingTexter struct {
	next   offers.Texter
	offers func() *offers.Service
	shops  *shops.Service
	cust   *customers.Service
	pool   *pgxpool.Pool
}

func (r reportingTexter) Text(ctx context.Context, m sms.Message) (string, error) {
	sid, err := r.next.Text(ctx, m)
	if err == nil {
		err = delivery.New(r.pool, r.offers(), r.shops, r.cust, nil).RecordDelivery(ctx, sms.DeliveryReport{MessageID: sid, Status: sms.DeliveryFailed, Reason: sms.ReasonUnreachable, ErrorCode: 30006})
	}
	return sid, err
}

// TestDeliveryReportBeforeTheIDIsStored: a report that arrives before the wave stored the
// message id is kept and applied when the id is stored.
func TestDeliveryReportBeforeTheIDIsStored(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	shop := w.shop(t, policy)
	cs := w.customers(t, shop, 1)
	op := w.declare(t, shop, 5*time.Hour)
	var svc *offers.Service
	svc = offers.New(w.pool, w.queue, reportingTexter{next: w.texter, offers: func() *offers.Service { return svc }, shops: w.shops, cust: w.cust, pool: w.pool}, w.cool, w.shops, w.cust, w.slots, offers.Config{Now: w.clock.Now})
	res, err := svc.RunWave(context.Background(), jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 1})
	require.NoError(t, err)
	require.Equal(t, 1, res.Texted)
	require.Equal(t, map[string]int{"failed": 1}, w.offerStatuses(t, op.ID))
	_, unreachable := w.customerFlags(t, cs[0].ID)
	require.True(t, unreachable)
}

// TestWavesArePacedToTheSendRate: a wave goes out no faster than the shop's number may
// send (here 2 a second: four texts take at least 1.5 s), and each text's validity ends
// at the offer's deadline, the opening's cutoff, so the provider drops a text that
// would land after it.
func TestWavesArePacedToTheSendRate(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rdb, prefix := redistest.New(t)
	paced := offers.New(w.pool, w.queue, w.texter, w.cool, w.shops, w.cust, w.slots, offers.Config{Now: time.Now, Pacer: pacing.New(rdb, prefix)})
	shop := w.shop(t, shops.Policy{WaveSize: 4, WaveInterval: time.Minute, MinLead: time.Hour, Cooldown: time.Hour, SendRate: 2})
	w.customers(t, shop, 4)
	op, err := w.slots.Declare(context.Background(), shop, slots.NewOpening{
		StartsAt: time.Now().Add(90 * time.Minute), DurationMinutes: 45, Service: "Colour", PriceCents: 6000,
	})
	require.NoError(t, err)
	start := time.Now()
	res, err := paced.RunWave(context.Background(), jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 1})
	require.NoError(t, err)
	require.Equal(t, 4, res.Texted)
	took := time.Since(start)
	require.GreaterOrEqual(t, took, 1500*time.Millisecond, "4 texts at 2 a second went out in %s", took)
	cutoff := op.StartsAt.Add(-time.Hour)
	for _, m := range w.twilio.Messages() {
		require.LessOrEqual(t, m.ValidityPeriod, time.Until(cutoff)+took+time.Second, "text to %s outlives the cutoff", m.To)
		require.Greater(t, m.ValidityPeriod, 25*time.Minute, "text to %s", m.To)
	}
}
