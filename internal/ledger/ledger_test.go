package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/payments"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/testkit/customertest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
	"github.com/slotrecovery/slotrecovery/internal/texts"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// clock is a settable time source.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *clock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.now = t }

// fakeCheckouts makes one session per booking, named after it, unless told to fail or
// to answer only once the caller's context is done.
type fakeCheckouts struct {
	mu    sync.Mutex
	err   error
	late  bool
	calls []payments.CheckoutRequest
	// onCreate runs before the answer, outside the lock, to act "meanwhile".
	onCreate func(bookingID string)
}

func (f *fakeCheckouts) CreateCheckout(ctx context.Context, r payments.CheckoutRequest) (payments.Checkout, error) {
	f.mu.Lock()
	f.calls = append(f.calls, r)
	err, late, hook := f.err, f.late, f.onCreate
	f.mu.Unlock()
	if hook != nil {
		hook(r.BookingID)
	}
	if err != nil {
		return payments.Checkout{}, err
	}
	if late {
		// Stripe's answer arrives just as the caller's timer fires.
		<-ctx.Done()
	}
	return payments.Checkout{SessionID: "cs_" + r.BookingID, URL: "https://pay.example/" + r.BookingID, ExpiresAt: r.ExpiresAt,
		Account: r.Account, ApplicationFeeCents: r.AmountCents * int64(r.FeeBPS) / 10000}, nil
}

func (f *fakeCheckouts) fail(err error) { f.mu.Lock(); defer f.mu.Unlock(); f.err = err }

func (f *fakeCheckouts) count() int { f.mu.Lock(); defer f.mu.Unlock(); return len(f.calls) }

// fakeStripe answers GetCheckout from a table and records the calls. Stripe's API runs
// in stripe-mock in the end-to-end tests; here only the clock and the interleavings
// matter. The on* hooks run before the answer, outside the lock, to act "meanwhile".
type fakeStripe struct {
	mu        sync.Mutex
	sessions  map[string]payments.Session
	getErrs   map[string]error
	reads     []string
	expireErr error
	refunds   []string // payment intents refunded
	onGet     func(sessionID string)
	onExpire  func()
	// calls lists every call with the account it named ("" for the platform's):
	// "expire acct cs", "get acct cs", "refund acct pi fee".
	calls []string
	// accounts lists the connected accounts asked for.
	accounts []payments.AccountRequest
}

func (f *fakeStripe) ExpireCheckout(_ context.Context, account, id string) error {
	f.mu.Lock()
	hook, err := f.onExpire, f.expireErr
	f.calls = append(f.calls, "expire "+account+" "+id)
	f.mu.Unlock()
	if hook != nil {
		hook()
	}
	return err
}

func (f *fakeStripe) GetCheckout(_ context.Context, account, id string) (payments.Session, error) {
	f.mu.Lock()
	f.reads = append(f.reads, id)
	f.calls = append(f.calls, "get "+account+" "+id)
	hook := f.onGet
	f.mu.Unlock()
	if hook != nil {
		hook(id)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.getErrs[id]; err != nil {
		return payments.Session{}, err
	}
	return f.sessions[id], nil
}

func (f *fakeStripe) Refund(_ context.Context, r payments.RefundRequest) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refunds = append(f.refunds, r.PaymentIntentID)
	f.calls = append(f.calls, fmt.Sprintf("refund %s %s %t", r.Account, r.PaymentIntentID, r.RefundApplicationFee))
	return "re_" + r.PaymentIntentID, nil
}

// The connected accounts' calls: the ledger's onboarding is tested against stripe-mock
// (accounts_test.go); these only make the fake a whole provider.
func (f *fakeStripe) CreateAccount(_ context.Context, r payments.AccountRequest) (payments.Account, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.accounts = append(f.accounts, r)
	return payments.Account{ID: fmt.Sprintf("acct_fake%d%s", len(f.accounts), strings.ReplaceAll(r.ShopID, "-", "")[:8]),
		RequirementsDue: []string{"external_account"}}, nil
}

func (f *fakeStripe) accountRequests() []payments.AccountRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]payments.AccountRequest(nil), f.accounts...)
}

func (f *fakeStripe) GetAccount(_ context.Context, account string) (payments.Account, error) {
	return payments.Account{ID: account}, nil
}

func (f *fakeStripe) CreateAccountLink(_ context.Context, r payments.AccountLinkRequest) (payments.AccountLink, error) {
	return payments.AccountLink{URL: "https://connect.example/" + r.Account, ExpiresAt: time.Now().Add(5 * time.Minute)}, nil
}

func (f *fakeStripe) callLog() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *fakeStripe) set(id string, state payments.SessionState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sessions[id] = payments.Session{ID: id, State: state, PaymentIntentID: "pi_" + id}
}

func (f *fakeStripe) failGet(id string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.getErrs[id] = err
}

func (f *fakeStripe) readCount(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, r := range f.reads {
		if r == id {
			n++
		}
	}
	return n
}

func (f *fakeStripe) refunded() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.refunds...)
}

type grantLock struct{}

func (grantLock) TryLock(context.Context, string, time.Duration) (func(string), error) {
	return func(string) {}, nil
}

func (grantLock) Watch(string) (<-chan string, func()) { return nil, func() {} }

func (grantLock) Recent(string) []string { return nil }

type noCooling struct{}

func (noCooling) Start(context.Context, string, time.Duration) error { return nil }

// world is one test's checkout shop (lead time 1 hour) with its own database, a
// settable clock and fake provider sides.
type world struct {
	t         *testing.T
	pool      *pgxpool.Pool
	url       string // the database's
	queue     *river.Client[pgx.Tx]
	clk       *clock
	start     time.Time
	shops     *shops.Service
	customers *customers.Service
	shop      shops.Shop
	svc       *slots.Service
	pay       *ledger.Service
	// linker makes the YES path's payment links (the provider's ledger, even when pay
	// has none).
	linker *ledger.Service
	// provider is the fake payment provider: co and stripe together.
	provider ledger.PaymentProvider
	stripe   *fakeStripe
	co       *fakeCheckouts
	phones   int
}

type worldOpts struct {
	payments ledger.Config
	// noStripe: the ledger that handles events, reconciles and sweeps has no payment
	// provider (the YES path's still makes links).
	noStripe bool
	// connect runs shops and the ledger with STRIPE_CONNECT=on.
	connect bool
}

func newWorld(t *testing.T, opts worldOpts) *world {
	t.Helper()
	pool, url := pgtest.New(t)
	queue, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	require.NoError(t, err)
	start := time.Now().Truncate(time.Second)
	w := &world{t: t, pool: pool, url: url, queue: queue, clk: &clock{now: start}, start: start,
		stripe: &fakeStripe{sessions: map[string]payments.Session{}, getErrs: map[string]error{}}, co: &fakeCheckouts{}}
	w.shops = shops.New(pool, shops.Config{PaymentsEnabled: true, Now: w.clk.Now, StripeConnect: opts.connect})
	w.customers = customertest.NewWith(t, pool, customers.Config{Now: w.clk.Now})
	opts.payments.Now = w.clk.Now
	opts.payments.Connect = opts.payments.Connect || opts.connect
	// One provider, as *stripe.Client is: the session maker and the rest of the API.
	var provider ledger.PaymentProvider = struct {
		*fakeCheckouts
		*fakeStripe
	}{w.co, w.stripe}
	w.provider = provider
	w.linker = ledger.New(pool, queue, provider, opts.payments)
	w.svc = slots.New(pool, queue, grantLock{}, noCooling{}, slots.Config{Now: w.clk.Now})
	w.pay = w.linker
	if opts.noStripe {
		w.pay = ledger.New(pool, queue, nil, opts.payments)
	}
	w.shop, _, err = w.shops.Create(context.Background(), shops.NewShop{Name: "Clockwork", Timezone: "UTC",
		SMSNumber: "+15550002000", Currency: "usd", PaymentMode: shops.PaymentCheckout})
	require.NoError(t, err)
	return w
}

// open declares an opening starting 3 hours after the world's start.
func (w *world) open() slots.Opening {
	w.t.Helper()
	op, err := w.svc.Declare(context.Background(), w.shop, slots.NewOpening{
		StartsAt: w.start.Add(3 * time.Hour), DurationMinutes: 30, Service: "Cut", PriceCents: 1000})
	require.NoError(w.t, err)
	return op
}

// claim gives a new customer an offer of the opening's generation and has them say YES.
func (w *world) claim(openingID uuid.UUID, generation int) (slots.Claim, uuid.UUID) {
	w.t.Helper()
	ctx := context.Background()
	w.phones++
	c, err := w.customers.Add(ctx, w.shop.ID, customers.NewCustomer{Phone: fmt.Sprintf("+1555100%04d", w.phones), SMSOptIn: true})
	require.NoError(w.t, err)
	_, err = w.pool.Exec(ctx, `INSERT INTO slot_offers (opening_id, customer_id, shop_id, generation, wave, status, created_at, sent_at)
		VALUES ($1, $2, $3, $4, 1, 'sent', $5, $5)`, openingID, c.ID, w.shop.ID, generation, w.clk.Now())
	require.NoError(w.t, err)
	claim, err := w.svc.Book(ctx, &w.shop, c.ID)
	require.NoError(w.t, err)
	require.Equal(w.t, slots.Booked, claim.Outcome)
	defer claim.Settle()
	return w.link(*claim), c.ID
}

// link makes and stores a new booking's payment link as the YES path does
// (internal/inbound): the claim says the link follows when it could not be made or a
// link was stored first.
func (w *world) link(claim slots.Claim) slots.Claim {
	w.t.Helper()
	if !claim.New() || claim.Confirmed {
		return claim
	}
	ctx := context.Background()
	claim.LinkFollows = true
	co, err := w.linker.Checkout(ctx, texts.English, w.shop, claim.Booking, claim.Service, claim.StartsAt)
	if err != nil {
		return claim
	}
	stored, err := ledger.StoreLink(ctx, w.pool, claim.BookingID, co, w.clk.Now())
	require.NoError(w.t, err)
	if stored {
		claim.PaymentURL, claim.LinkFollows = co.URL, false
	}
	return claim
}

// book declares an opening and books it for a new customer; it returns the booking id.
func (w *world) book() (slots.Opening, uuid.UUID) {
	w.t.Helper()
	op := w.open()
	claim, _ := w.claim(op.ID, 1)
	return op, claim.BookingID
}

func (w *world) query(q string, args ...any) string {
	w.t.Helper()
	var s string
	require.NoError(w.t, w.pool.QueryRow(context.Background(), q, args...).Scan(&s))
	return s
}

func (w *world) bookingStatus(id uuid.UUID) string {
	return w.query(`SELECT status FROM bookings WHERE id = $1`, id)
}

func (w *world) openingStatus(id uuid.UUID) string {
	return w.query(`SELECT status FROM slot_openings WHERE id = $1`, id)
}

// event is a verified payment event of kind for the booking: a checkout's event, or
// (EventFailed) a payment attempt's, which names no checkout.
func (w *world) event(id string, kind payments.EventKind, bookingID uuid.UUID, paymentIntent string) payments.Event {
	ev := payments.Event{ID: id, Kind: kind, Type: "test." + string(kind), BookingID: bookingID.String(), SessionID: "cs_" + bookingID.String(),
		PaymentIntentID: paymentIntent, Payload: []byte(`{"id":"` + id + `"}`)}
	if kind == payments.EventFailed {
		ev.SessionID = ""
	}
	return ev
}

func (w *world) handle(ev payments.Event) ledger.EventResult {
	w.t.Helper()
	res, err := w.pay.HandleEvent(context.Background(), ev)
	require.NoError(w.t, err)
	return res
}

func (w *world) reconcile() int {
	w.t.Helper()
	n, err := w.pay.Reconcile(context.Background())
	require.NoError(w.t, err)
	return n
}

// TestReconcileUsesTheClock: a pending booking is read back from Stripe only once its
// session has been expired for longer than the grace period; an expired session then
// reopens the opening in a new generation, with its first wave enqueued in the same
// transaction.
func TestReconcileUsesTheClock(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{})
	op, bookingID := w.book()
	session := "cs_" + bookingID.String()
	w.stripe.set(session, payments.SessionExpired)

	// The hold is 31 minutes; the grace 5 more.
	w.clk.Set(w.start.Add(34 * time.Minute))
	require.Zero(t, w.reconcile())
	require.Zero(t, w.stripe.readCount(session), "inside the grace period Stripe is not asked")

	w.clk.Set(w.start.Add(37 * time.Minute))
	require.Equal(t, 1, w.reconcile())
	require.Equal(t, slots.StatusOpen, w.openingStatus(op.ID))
	require.Equal(t, "2", w.query(`SELECT generation::text FROM slot_openings WHERE id = $1`, op.ID))
	require.Equal(t, "1", w.query(`SELECT count(*)::text FROM river_job WHERE kind = 'offer_wave' AND (args->>'generation')::int = 2`))
	require.Equal(t, ledger.BookingPaymentFailed, w.bookingStatus(bookingID))

	// Nothing is pending any more: a second run changes nothing.
	require.Zero(t, w.reconcile())
}

// TestReconcileInsideCutoffExpires: a lost webhook noticed when the start is already
// inside the lead time expires the opening; the customer's late payment still gets the
// free slot, and its redelivery changes nothing.
func TestReconcileInsideCutoffExpires(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{})
	op, bookingID := w.book()
	w.stripe.set("cs_"+bookingID.String(), payments.SessionExpired)

	// The webhook was lost and nobody noticed until 2h30 later: the start (3h) is
	// inside the shop's 1h lead time.
	w.clk.Set(w.start.Add(150 * time.Minute))
	require.Equal(t, 1, w.reconcile())
	require.Equal(t, slots.StatusExpired, w.openingStatus(op.ID))
	require.Equal(t, "1", w.query(`SELECT generation::text FROM slot_openings WHERE id = $1`, op.ID))

	// The payment, reported late: the slot is still free and not started, so the payer
	// gets it.
	paid := w.event("evt_1", payments.EventPaid, bookingID, "pi_1")
	require.Equal(t, ledger.ResultConfirmedLate, w.handle(paid).Result)
	require.Equal(t, slots.StatusFilled, w.openingStatus(op.ID))
	res := w.handle(paid)
	require.True(t, res.Replayed)
	require.Equal(t, ledger.ResultConfirmedLate, res.Result)
}

// TestReconcileStuckBookingsDoNotBlockNewer: bookings that stay pending (Stripe errs
// for good, or still reports the session open) are left alone for a while, longer each
// time, so newer stale bookings are reached even when the batch holds only one; a
// session Stripe does not know fails its booking like one that never got a session.
func TestReconcileStuckBookingsDoNotBlockNewer(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{payments: ledger.Config{ReconcileBatch: 1}})
	// Booked a minute apart, so they come up oldest first.
	_, broken := w.book()
	w.clk.Set(w.start.Add(time.Minute))
	_, open := w.book()
	w.clk.Set(w.start.Add(2 * time.Minute))
	missingOp, missing := w.book()
	w.clk.Set(w.start.Add(3 * time.Minute))
	expiredOp, expired := w.book()
	forbidden := &payments.Error{Type: "invalid_request_error", Status: 403, Msg: "this key may not read sessions"}
	w.stripe.failGet("cs_"+broken.String(), forbidden)
	w.stripe.set("cs_"+open.String(), payments.SessionOpen)
	w.stripe.failGet("cs_"+missing.String(), fmt.Errorf("get checkout: %w",
		&payments.Error{Type: "invalid_request_error", Code: "resource_missing", Status: 404, NotFound: true}))
	w.stripe.set("cs_"+expired.String(), payments.SessionExpired)

	now := w.start.Add(45 * time.Minute)
	w.clk.Set(now)
	require.Zero(t, w.reconcile(), "the broken one errs")
	require.Zero(t, w.reconcile(), "the open one is still open: not a change")
	require.Equal(t, 1, w.reconcile(), "the unknown session fails its booking")
	require.Equal(t, 1, w.reconcile(), "the newest, expired, is reached")
	require.Zero(t, w.reconcile(), "the stuck ones wait")
	for _, id := range []uuid.UUID{broken, open, missing, expired} {
		require.Equal(t, 1, w.stripe.readCount("cs_"+id.String()), "read once: %s", id)
	}
	require.Equal(t, ledger.BookingPendingPayment, w.bookingStatus(broken))
	require.Equal(t, ledger.BookingPendingPayment, w.bookingStatus(open))
	require.Equal(t, ledger.BookingPaymentFailed, w.bookingStatus(missing))
	require.Equal(t, slots.StatusOpen, w.openingStatus(missingOp.ID))
	require.Equal(t, ledger.BookingPaymentFailed, w.bookingStatus(expired))
	require.Equal(t, slots.StatusOpen, w.openingStatus(expiredOp.ID))
	require.Equal(t, now.Add(5*time.Minute).UTC().Format(time.RFC3339),
		w.query(`SELECT to_char(reconcile_after AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') FROM bookings WHERE id = $1`, broken))

	// Five minutes on, both are due again: one each run, and the backoff doubles.
	now = now.Add(5 * time.Minute)
	w.clk.Set(now)
	require.Zero(t, w.reconcile())
	require.Zero(t, w.reconcile())
	require.Zero(t, w.reconcile())
	require.Equal(t, 2, w.stripe.readCount("cs_"+broken.String()))
	require.Equal(t, 2, w.stripe.readCount("cs_"+open.String()))
	require.Equal(t, "2", w.query(`SELECT reconcile_attempts::text FROM bookings WHERE id = $1`, broken))
	require.Equal(t, now.Add(10*time.Minute).UTC().Format(time.RFC3339),
		w.query(`SELECT to_char(reconcile_after AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') FROM bookings WHERE id = $1`, open))

	// The backoff stops growing at an hour.
	_, err := w.pool.Exec(context.Background(), `UPDATE bookings SET reconcile_attempts = 30, reconcile_after = NULL WHERE id = $1`, broken)
	require.NoError(t, err)
	require.Zero(t, w.reconcile())
	require.Equal(t, now.Add(time.Hour).UTC().Format(time.RFC3339),
		w.query(`SELECT to_char(reconcile_after AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') FROM bookings WHERE id = $1`, broken))
}

// TestReconcileLeavesBookingChangedMeanwhile: the reconciliation decides from a read
// without locks. A booking it saw without a session, that got one while it was busy
// (the booking sweep stored it and moved the expiry), is left for a later run, not
// failed under the customer who is about to pay. A booking whose webhook confirmed it
// meanwhile is not counted as reconciled.
func TestReconcileLeavesBookingChangedMeanwhile(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{})
	firstOp, first := w.book()
	w.clk.Set(w.start.Add(time.Minute))
	secondOp, second := w.book()
	w.clk.Set(w.start.Add(2 * time.Minute))
	_, third := w.book()
	_, err := w.pool.Exec(context.Background(),
		`UPDATE bookings SET stripe_checkout_session_id = NULL, payment_url = NULL WHERE id = $1`, second)
	require.NoError(t, err)
	w.stripe.set("cs_"+first.String(), payments.SessionExpired)
	w.stripe.set("cs_"+third.String(), payments.SessionPaid)
	now := w.start.Add(40 * time.Minute)
	w.clk.Set(now)
	w.stripe.onGet = func(id string) {
		if id == "cs_"+third.String() {
			// Its webhook arrives while Stripe answers the reconciliation.
			require.Equal(t, ledger.ResultConfirmed, w.handle(w.event("evt_third", payments.EventPaid, third, "pi_"+id)).Result)
			return
		}
		// While Stripe answers about the first booking, the second gets its link.
		_, err := w.pool.Exec(context.Background(), `UPDATE bookings SET stripe_checkout_session_id = 'cs_late',
			payment_url = 'https://pay.example/late', checkout_expires_at = $2 WHERE id = $1`, second, now.Add(31*time.Minute))
		require.NoError(t, err)
	}
	require.Equal(t, 1, w.reconcile(), "only the first changed")
	require.Equal(t, ledger.BookingConfirmed, w.bookingStatus(third))
	require.Equal(t, ledger.BookingPaymentFailed, w.bookingStatus(first))
	require.Equal(t, slots.StatusOpen, w.openingStatus(firstOp.ID))
	require.Equal(t, ledger.BookingPendingPayment, w.bookingStatus(second), "changed since it was listed: left alone")
	require.Equal(t, slots.StatusFilled, w.openingStatus(secondOp.ID))
}

// TestReconcileReadsTheClockPerBooking: a run that takes long decides each booking at
// its own moment: the lead-time cutoff passing mid-run expires the later opening
// instead of offering it again.
func TestReconcileReadsTheClockPerBooking(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{})
	firstOp, first := w.book()
	w.clk.Set(w.start.Add(time.Minute))
	secondOp, second := w.book()
	w.stripe.set("cs_"+first.String(), payments.SessionExpired)
	w.stripe.set("cs_"+second.String(), payments.SessionExpired)
	w.clk.Set(w.start.Add(119 * time.Minute)) // the cutoff is at 2h
	w.stripe.onGet = func(id string) {
		if id == "cs_"+second.String() {
			w.clk.Set(w.start.Add(121 * time.Minute)) // a slow answer
		}
	}
	require.Equal(t, 2, w.reconcile())
	require.Equal(t, slots.StatusOpen, w.openingStatus(firstOp.ID))
	require.Equal(t, slots.StatusExpired, w.openingStatus(secondOp.ID))
}

// TestCheckoutRefusedFailsBookingAtOnce: when Stripe refuses to make the session for
// good, the safety net fails the booking at once (the slot reopens and the customer is
// told), instead of holding the slot through retries.
func TestCheckoutRefusedFailsBookingAtOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{})
	w.co.fail(&payments.Error{Type: "invalid_request_error", Status: 400}) // not transient
	op := w.open()
	claim, _ := w.claim(op.ID, 1)
	require.True(t, claim.LinkFollows)

	w.clk.Set(w.start.Add(15 * time.Second))
	err := w.pay.EnsureCheckout(context.Background(), claim.BookingID)
	require.ErrorIs(t, err, ledger.ErrCheckoutRefused, "retrying cannot help")
	require.Equal(t, ledger.BookingPaymentFailed, w.bookingStatus(claim.BookingID))
	require.Equal(t, slots.StatusOpen, w.openingStatus(op.ID))
	require.Equal(t, "2", w.query(`SELECT generation::text FROM slot_openings WHERE id = $1`, op.ID))
	require.Equal(t, "1", w.query(`SELECT count(*)::text FROM river_job WHERE kind = 'sms_text' AND args->>'key' = $1`, "lapsed:"+claim.BookingID.String()))
	require.Equal(t, "failed", w.query(`SELECT o.status FROM slot_offers o JOIN bookings b ON b.offer_id = o.id WHERE b.id = $1`, claim.BookingID))

	// A transient error is retried and changes nothing.
	op = w.open()
	w.co.fail(errors.New("stripe: connection reset"))
	claim, _ = w.claim(op.ID, 1)
	err = w.pay.EnsureCheckout(context.Background(), claim.BookingID)
	require.Error(t, err)
	require.NotErrorIs(t, err, ledger.ErrCheckoutRefused)
	require.Equal(t, ledger.BookingPendingPayment, w.bookingStatus(claim.BookingID))
}

// TestCheckoutHoldIsBounded: while Stripe is down, each retry may move the expiry later
// (Stripe refuses one less than 30 minutes ahead), but never past the hold plus
// ten minutes from the booking; then the booking fails instead of extending.
func TestCheckoutHoldIsBounded(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{})
	w.co.fail(errors.New("stripe: 503"))
	op := w.open()
	claim, _ := w.claim(op.ID, 1)
	expiry := func() time.Time {
		var t time.Time
		require.NoError(w.t, w.pool.QueryRow(context.Background(), `SELECT checkout_expires_at FROM bookings WHERE id = $1`, claim.BookingID).Scan(&t))
		return t
	}
	ensure := func(at time.Duration) error {
		w.clk.Set(w.start.Add(at))
		return w.pay.EnsureCheckout(context.Background(), claim.BookingID)
	}
	require.True(t, expiry().Equal(w.start.Add(31*time.Minute)))

	require.Error(t, ensure(time.Minute))
	require.True(t, expiry().Equal(w.start.Add(32*time.Minute)), "moved once Stripe would refuse the first")
	require.Error(t, ensure(10*time.Minute))
	require.True(t, expiry().Equal(w.start.Add(41*time.Minute)), "up to the bound")
	calls := w.co.count()

	require.NoError(t, ensure(11*time.Minute), "done: the booking failed")
	require.Equal(t, calls, w.co.count(), "Stripe not asked again")
	require.True(t, expiry().Equal(w.start.Add(41*time.Minute)), "not extended")
	require.Equal(t, ledger.BookingPaymentFailed, w.bookingStatus(claim.BookingID))
	require.Equal(t, slots.StatusOpen, w.openingStatus(op.ID))
}

// TestCheckoutNowStoresALateAnswer: the YES path's Stripe call is timed, but storing a
// session that arrived at the last moment is not cut off by that timer.
func TestCheckoutNowStoresALateAnswer(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{payments: ledger.Config{CheckoutTimeout: 50 * time.Millisecond}})
	w.co.late = true
	op := w.open()
	claim, _ := w.claim(op.ID, 1)
	require.False(t, claim.LinkFollows)
	require.Equal(t, "https://pay.example/"+claim.BookingID.String(), claim.PaymentURL)
	require.Equal(t, claim.PaymentURL, w.query(`SELECT payment_url FROM bookings WHERE id = $1`, claim.BookingID))
}

// TestRefundDecisionIsFinal: once a late payment's refund is decided, the booking never
// takes its slot back, even when the slot frees up later and the payment is reported
// again. Here the refund is decided by the reconciliation (which writes no event), the
// case a lookup in the event ledger missed.
func TestRefundDecisionIsFinal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, worldOpts{})
	op, alice := w.book()
	session := "cs_" + alice.String()
	w.stripe.set(session, payments.SessionPaid)
	w.clk.Set(w.start.Add(40 * time.Minute))
	var bob slots.Claim
	w.stripe.onGet = func(string) {
		w.stripe.onGet = nil
		// While the reconciliation reads Alice's paid session back, her expiry event
		// (sent before she paid) reopens the slot and Bob takes it.
		require.Equal(t, ledger.ResultReopened, w.handle(w.event("evt_expired", payments.EventExpired, alice, "")).Result)
		bob, _ = w.claim(op.ID, 2)
	}
	require.Equal(t, 1, w.reconcile())
	require.Equal(t, ledger.BookingPaymentFailed, w.bookingStatus(alice))
	require.Equal(t, "1", w.query(`SELECT count(*)::text FROM bookings WHERE id = $1 AND refund_requested_at IS NOT NULL`, alice))
	require.Equal(t, "1", w.query(`SELECT count(*)::text FROM river_job WHERE kind = 'booking_refund' AND args->>'booking_id' = $1`, alice.String()))

	// Bob's hold lapses: the slot is free again. Alice's payment webhook finally
	// arrives: it is refunded, not booked.
	require.Equal(t, ledger.ResultReopened, w.handle(w.event("evt_bob_expired", payments.EventExpired, bob.BookingID, "")).Result)
	require.Equal(t, slots.StatusOpen, w.openingStatus(op.ID))
	require.Equal(t, ledger.ResultRefunded, w.handle(w.event("evt_alice_paid", payments.EventPaid, alice, "pi_"+session)).Result)
	require.Equal(t, slots.StatusOpen, w.openingStatus(op.ID))
	require.Equal(t, ledger.BookingPaymentFailed, w.bookingStatus(alice))

	require.NoError(t, w.pay.RefundBooking(ctx, alice, "pi_"+session))
	require.Equal(t, []string{"pi_" + session}, w.stripe.refunded())
	require.Equal(t, "re_pi_"+session, w.query(`SELECT refund_id FROM bookings WHERE id = $1`, alice))

	// She paid a second time, with another card: that payment is refunded too, by a
	// job of its own.
	require.Equal(t, ledger.ResultRefunded, w.handle(w.event("evt_alice_paid_again", payments.EventPaid, alice, "pi_again")).Result)
	require.Equal(t, "pi_again,pi_"+session, w.query(`SELECT string_agg(args->>'payment_intent_id', ',' ORDER BY args->>'payment_intent_id')
		FROM river_job WHERE kind = 'booking_refund' AND args->>'booking_id' = $1`, alice.String()))
	require.NoError(t, w.pay.RefundBooking(ctx, alice, "pi_again"))
	require.Equal(t, []string{"pi_" + session, "pi_again"}, w.stripe.refunded())
}

// TestRefundGuard: the payment that holds a confirmed booking is never refunded; a
// second payment of a confirmed booking, through another PaymentIntent (an orphan
// session also paid), is refunded, and only that one.
func TestRefundGuard(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, worldOpts{})
	_, b := w.book()
	require.Equal(t, ledger.ResultConfirmed, w.handle(w.event("evt_paid", payments.EventPaid, b, "pi_first")).Result)
	require.Equal(t, ledger.ResultAlreadyConfirmed, w.handle(w.event("evt_paid_again", payments.EventPaid, b, "pi_first")).Result)
	orphan := w.event("evt_orphan_paid", payments.EventPaid, b, "pi_second")
	orphan.SessionID = "cs_orphan"
	require.Equal(t, ledger.ResultRefundedDuplicate, w.handle(orphan).Result)
	require.Equal(t, "pi_second", w.query(`SELECT string_agg(args->>'payment_intent_id', ',') FROM river_job WHERE kind = 'booking_refund'`))

	// The booking's own payment: never, whoever asks.
	require.NoError(t, w.pay.RefundBooking(ctx, b, "pi_first"))
	require.NoError(t, w.pay.RefundBooking(ctx, b, ""))
	require.Empty(t, w.stripe.refunded())

	require.NoError(t, w.pay.RefundBooking(ctx, b, "pi_second"))
	require.Equal(t, []string{"pi_second"}, w.stripe.refunded())
	require.Equal(t, ledger.BookingConfirmed, w.bookingStatus(b))
	require.Equal(t, "0", w.query(`SELECT count(*)::text FROM bookings WHERE id = $1 AND refund_id IS NOT NULL`, b))
	text := w.query(`SELECT args->>'body' FROM river_job WHERE kind = 'sms_text' AND args->>'key' = $1`, "refunded:"+b.String()+":pi_second")
	require.Contains(t, text, "paid twice")
}

// TestSettleAnswersWithTheStoredResult: when another delivery of the same event stored
// a result first, the answer is that result, not the one this delivery tried to store.
func TestSettleAnswersWithTheStoredResult(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, worldOpts{})
	_, b := w.book()
	ev := w.event("evt_declined", payments.EventFailed, b, "pi_declined")
	w.stripe.expireErr = fmt.Errorf("expire: %w", payments.ErrAlreadyCompleted)
	w.stripe.onExpire = func() {
		// The concurrent delivery finished first.
		_, err := w.pool.Exec(ctx, `UPDATE stripe_events SET result = 'reopened', handled_at = now() WHERE event_id = $1`, ev.ID)
		require.NoError(t, err)
	}
	res := w.handle(ev)
	require.Equal(t, ledger.ResultReopened, res.Result)
	require.True(t, res.Replayed)
}

// TestPaymentEventsWithoutStripe: a declined card needs Stripe (to expire the session);
// without it the event is stored with a result and answered, not retried forever.
func TestPaymentEventsWithoutStripe(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{noStripe: true})
	_, b := w.book()
	ev := w.event("evt_declined", payments.EventFailed, b, "pi_declined")
	require.Equal(t, ledger.ResultUnconfigured, w.handle(ev).Result)
	require.Equal(t, string(ledger.ResultUnconfigured), w.query(`SELECT result FROM stripe_events WHERE event_id = $1`, ev.ID))
	require.Equal(t, ledger.BookingPendingPayment, w.bookingStatus(b))
	res := w.handle(ev)
	require.True(t, res.Replayed)
	// The session's own expiry needs no Stripe call.
	require.Equal(t, ledger.ResultReopened, w.handle(w.event("evt_expired", payments.EventExpired, b, "")).Result)
}

// TestUnstorablePayloadIsStoredCleaned: Postgres's jsonb refuses a \u0000 escape that
// is valid JSON; the event is stored with it replaced, and applied.
func TestUnstorablePayloadIsStoredCleaned(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{})
	_, b := w.book()
	ev := w.event("evt_nul", payments.EventPaid, b, "pi_nul")
	ev.Payload = []byte(`{"id":"evt_nul","data":{"object":{"metadata":{"note":"a\u0000b","k\u0000":1}}}}`)
	require.Equal(t, ledger.ResultConfirmed, w.handle(ev).Result)
	stored := w.query(`SELECT payload::text FROM stripe_events WHERE event_id = 'evt_nul'`)
	require.Contains(t, stored, "a\uFFFDb")
	require.Contains(t, stored, `"k`+"\uFFFD"+`": 1`)
	require.False(t, strings.Contains(stored, `\u0000`))
}

// TestReconcileJobIsUnique: the periodic reconciliation never piles up: while one run
// waits or runs, another is not enqueued; and it runs on its own queue, away from
// checkouts and refunds.
func TestReconcileJobIsUnique(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	require.NoError(t, err)
	first, err := client.Insert(context.Background(), jobs.Reconcile{}, nil)
	require.NoError(t, err)
	require.False(t, first.UniqueSkippedAsDuplicate)
	require.Equal(t, jobs.QueueReconcile, first.Job.Queue)
	second, err := client.Insert(context.Background(), jobs.Reconcile{}, nil)
	require.NoError(t, err)
	require.True(t, second.UniqueSkippedAsDuplicate)
	require.Equal(t, first.Job.ID, second.Job.ID)
}

// queryNames records the names of the sqlc queries a pool runs (sqlc puts "-- name: X"
// at the head of each).
type queryNames struct {
	mu    sync.Mutex
	names []string
}

var sqlcName = regexp.MustCompile(`^-- name: (\w+)`)

func (q *queryNames) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if m := sqlcName.FindStringSubmatch(d.SQL); m != nil {
		q.mu.Lock()
		q.names = append(q.names, m[1])
		q.mu.Unlock()
	}
	return ctx
}

func (q *queryNames) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// of returns, in order, the recorded queries that are among names, and forgets all.
func (q *queryNames) of(names ...string) []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []string
	for _, n := range q.names {
		if slices.Contains(names, n) {
			out = append(out, n)
		}
	}
	q.names = nil
	return out
}

// TestAnEventReadsItsBookingOnce: a payment event reads its booking once, under the
// locks of its transition: the opening's, found through the booking in the same
// statement, then the booking's (the order a claim takes them in). Only a failed payment
// attempt reads the booking before the transaction too (the one read there), to end its
// checkout first. An unknown booking is found out by the lock itself.
func TestAnEventReadsItsBookingOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, worldOpts{})
	names := &queryNames{}
	cfg, err := pgxpool.ParseConfig(w.url)
	require.NoError(t, err)
	cfg.ConnConfig.Tracer = names
	traced, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(traced.Close)
	led := ledger.New(traced, w.queue, w.provider, ledger.Config{Now: w.clk.Now})
	bookingReads := []string{"BookingGet", "BookingLock", "OpeningLockForBooking"}
	handle := func(ev payments.Event) (ledger.Result, []string) {
		t.Helper()
		names.of()
		res, err := led.HandleEvent(ctx, ev)
		require.NoError(t, err)
		return res.Result, names.of(bookingReads...)
	}
	underLocks := []string{"OpeningLockForBooking", "BookingLock"}

	_, paid := w.book()
	res, reads := handle(w.event("evt_paid", payments.EventPaid, paid, "pi_paid"))
	require.Equal(t, ledger.ResultConfirmed, res)
	require.Equal(t, underLocks, reads)

	_, expired := w.book()
	res, reads = handle(w.event("evt_expired", payments.EventExpired, expired, ""))
	require.Equal(t, ledger.ResultReopened, res)
	require.Equal(t, underLocks, reads)

	_, declined := w.book()
	res, reads = handle(w.event("evt_declined", payments.EventFailed, declined, "pi_declined"))
	require.Equal(t, ledger.ResultReopened, res)
	require.Equal(t, append([]string{"BookingGet"}, underLocks...), reads)

	res, reads = handle(w.event("evt_nobody", payments.EventPaid, uuid.New(), "pi_nobody"))
	require.Equal(t, ledger.ResultUnknownBooking, res)
	require.Equal(t, []string{"OpeningLockForBooking"}, reads)
	require.Equal(t, string(ledger.ResultUnknownBooking), w.query(`SELECT result FROM stripe_events WHERE event_id = 'evt_nobody'`))
}
