package slots_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/payments"
	"github.com/slotrecovery/slotrecovery/internal/pgtest"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
)

// clock is a settable time source.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *clock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.now = t }

// fakeCheckouts makes one session per booking, named after it.
type fakeCheckouts struct{}

func (fakeCheckouts) CreateCheckout(_ context.Context, r slots.CheckoutRequest) (slots.Checkout, error) {
	return slots.Checkout{SessionID: "cs_" + r.BookingID, URL: "https://pay.example/" + r.BookingID, ExpiresAt: r.ExpiresAt}, nil
}

// fakeStripe answers GetCheckout from a table and counts the reads. Stripe's API runs
// in stripe-mock in the end-to-end tests; here only the clock matters.
type fakeStripe struct {
	mu       sync.Mutex
	sessions map[string]payments.Session
	reads    int
}

func (f *fakeStripe) ExpireCheckout(context.Context, string) error { return nil }

func (f *fakeStripe) GetCheckout(_ context.Context, id string) (payments.Session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	return f.sessions[id], nil
}

func (f *fakeStripe) Refund(context.Context, string, string) (string, error) { return "re_1", nil }

func (f *fakeStripe) set(id, status, paymentStatus string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sessions[id] = payments.Session{ID: id, Status: status, PaymentStatus: paymentStatus, PaymentIntentID: "pi_" + id}
}

type grantLock struct{}

func (grantLock) TryLock(context.Context, string, time.Duration) (func(), error) {
	return func() {}, nil
}

type noCooling struct{}

func (noCooling) Start(context.Context, string, time.Duration) error { return nil }

// paymentFixture books an opening starting in 3 hours (lead time 1 hour) for one
// customer, through Book, with the clock at start.
func paymentFixture(t *testing.T, start time.Time) (*slots.Payments, *fakeStripe, *clock, *pgxpool.Pool, slots.Opening, uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	pool, _ := pgtest.New(t)
	queue, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	require.NoError(t, err)
	clk := &clock{now: start}
	shopsSvc := shops.New(pool, shops.Config{PaymentsEnabled: true, Now: clk.Now})
	svc := slots.New(pool, queue, grantLock{}, noCooling{}, fakeCheckouts{}, slots.Config{Now: clk.Now})
	stripe := &fakeStripe{sessions: map[string]payments.Session{}}
	pay := slots.NewPayments(svc, stripe, slots.PaymentsConfig{})

	shop, _, err := shopsSvc.Create(ctx, shops.NewShop{Name: "Clockwork", Timezone: "UTC", SMSNumber: "+15550002000",
		Currency: "usd", PaymentMode: shops.PaymentCheckout})
	require.NoError(t, err)
	op, err := svc.Declare(ctx, shop, slots.NewOpening{StartsAt: start.Add(3 * time.Hour), DurationMinutes: 30, Service: "Cut", PriceCents: 1000})
	require.NoError(t, err)
	c, err := shopsSvc.AddCustomer(ctx, shop.ID, shops.NewCustomer{Phone: "+15551002000", SMSOptIn: true})
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO slot_offers (opening_id, customer_id, shop_id, generation, wave, status, created_at, sent_at)
		VALUES ($1, $2, $3, 1, 1, 'sent', $4, $4)`, op.ID, c.ID, shop.ID, start)
	require.NoError(t, err)
	claim, err := svc.Book(ctx, shop, c.ID)
	require.NoError(t, err)
	require.Equal(t, slots.Booked, claim.Outcome)
	return pay, stripe, clk, pool, op, claim.BookingID
}

// TestReconcileUsesTheClock: a pending booking is read back from Stripe only once its
// session has been expired for longer than the grace period; an expired session then
// reopens the opening in a new generation, with its first wave enqueued in the same
// transaction; past the lead-time cutoff the opening expires instead.
func TestReconcileUsesTheClock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	start := time.Now().Truncate(time.Second)
	pay, stripe, clk, pool, op, bookingID := paymentFixture(t, start)
	session := "cs_" + bookingID.String()
	stripe.set(session, payments.SessionExpired, payments.PaymentUnpaid)

	// The hold is 31 minutes; the grace 5 more.
	clk.Set(start.Add(34 * time.Minute))
	n, err := pay.Reconcile(ctx)
	require.NoError(t, err)
	require.Zero(t, n)
	require.Zero(t, stripe.reads, "inside the grace period Stripe is not asked")

	clk.Set(start.Add(37 * time.Minute))
	n, err = pay.Reconcile(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	var status string
	var generation, waves int
	require.NoError(t, pool.QueryRow(ctx, `SELECT status, generation FROM slot_openings WHERE id = $1`, op.ID).Scan(&status, &generation))
	require.Equal(t, slots.StatusOpen, status)
	require.Equal(t, 2, generation)
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'offer_wave' AND (args->>'generation')::int = 2`).Scan(&waves))
	require.Equal(t, 1, waves)
	require.NoError(t, pool.QueryRow(ctx, `SELECT status FROM bookings WHERE id = $1`, bookingID).Scan(&status))
	require.Equal(t, slots.BookingPaymentFailed, status)

	// Nothing is pending any more: a second run changes nothing.
	n, err = pay.Reconcile(ctx)
	require.NoError(t, err)
	require.Zero(t, n)
}

// TestReconcileInsideCutoffExpires: a lost webhook noticed when the start is already
// inside the lead time expires the opening; the customer's late payment still gets the
// free slot, and its redelivery changes nothing.
func TestReconcileInsideCutoffExpires(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	start := time.Now().Truncate(time.Second)
	pay, stripe, clk, pool, op, bookingID := paymentFixture(t, start)
	stripe.set("cs_"+bookingID.String(), payments.SessionExpired, payments.PaymentUnpaid)

	// The webhook was lost and nobody noticed until 2h30 later: the start (3h) is
	// inside the shop's 1h lead time.
	clk.Set(start.Add(150 * time.Minute))
	n, err := pay.Reconcile(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	var status string
	var generation int
	require.NoError(t, pool.QueryRow(ctx, `SELECT status, generation FROM slot_openings WHERE id = $1`, op.ID).Scan(&status, &generation))
	require.Equal(t, slots.StatusExpired, status)
	require.Equal(t, 1, generation)

	// A completed session found by the reconciliation is a payment: paid late, and the
	// slot is still free and not started, so the payer gets it.
	res, err := pay.HandleEvent(ctx, slots.PaymentEvent{ID: "evt_1", Type: payments.EventCheckoutCompleted,
		BookingID: bookingID.String(), SessionID: "cs_" + bookingID.String(), PaymentIntentID: "pi_1",
		PaymentStatus: payments.PaymentPaid, Payload: []byte(`{"id":"evt_1"}`)})
	require.NoError(t, err)
	require.Equal(t, slots.ResultConfirmedLate, res.Result)
	require.NoError(t, pool.QueryRow(ctx, `SELECT status FROM slot_openings WHERE id = $1`, op.ID).Scan(&status))
	require.Equal(t, slots.StatusFilled, status)

	res, err = pay.HandleEvent(ctx, slots.PaymentEvent{ID: "evt_1", Type: payments.EventCheckoutCompleted,
		BookingID: bookingID.String(), Payload: []byte(`{"id":"evt_1"}`)})
	require.NoError(t, err)
	require.True(t, res.Replayed)
}
