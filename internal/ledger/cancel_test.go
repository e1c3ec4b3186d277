package ledger_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/payments"
	"github.com/slotrecovery/slotrecovery/internal/slots"
)

// cancel runs CancelByCustomer in its own transaction.
func (w *world) cancel(b uuid.UUID) (ledger.Cancellation, error) {
	var c ledger.Cancellation
	err := pgx.BeginFunc(context.Background(), w.pool, func(tx pgx.Tx) error {
		var err error
		c, err = w.pay.CancelByCustomer(context.Background(), tx, b, w.clk.Now())
		return err
	})
	return c, err
}

// TestCustomerCancelsAPaidBooking: a confirmed, paid booking cancelled by its customer is
// cancelled, its payment refunded (the refund job, then the provider, then a text that
// says the cancelled booking's payment came back), and its opening offered again at once
// in a new generation (its first wave enqueued with the change). A second cancellation
// changes nothing.
func TestCustomerCancelsAPaidBooking(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, worldOpts{})
	op, b := w.book()
	require.Equal(t, ledger.ResultConfirmed, w.handle(w.event("evt_paid", payments.EventPaid, b, "pi_paid")).Result)

	c, err := w.cancel(b)
	require.NoError(t, err)
	require.True(t, c.Cancelled)
	require.True(t, c.Refunded, "a paid booking's payment goes back")
	require.Equal(t, ledger.ResultReopened, c.Result)
	require.Equal(t, "Cut", c.Service)
	require.Equal(t, ledger.BookingCancelled, w.bookingStatus(b))
	require.Equal(t, slots.StatusOpen, w.openingStatus(op.ID))
	require.Equal(t, "2", w.query(`SELECT generation::text FROM slot_openings WHERE id = $1`, op.ID))
	require.Equal(t, "1", w.query(`SELECT count(*)::text FROM river_job WHERE kind = 'offer_wave' AND (args->>'generation')::int = 2`),
		"the new generation's first wave")
	require.Equal(t, "pi_paid", w.query(`SELECT string_agg(args->>'payment_intent_id', ',') FROM river_job WHERE kind = 'booking_refund'`))

	_, err = w.cancel(b)
	require.ErrorIs(t, err, ledger.ErrNotCancellable)
	require.Equal(t, "1", w.query(`SELECT count(*)::text FROM river_job WHERE kind = 'offer_wave' AND (args->>'generation')::int = 2`))

	require.NoError(t, w.pay.RefundBooking(ctx, b, "pi_paid"))
	require.Equal(t, []string{"pi_paid"}, w.stripe.refunded())
	text := w.query(`SELECT args->>'body' FROM river_job WHERE kind = 'sms_text' AND args->>'key' = $1`, "refunded:"+b.String()+":pi_paid")
	require.Contains(t, text, "cancelled")
	require.Contains(t, text, "refunded in full")

	// Another customer takes the reopened slot: one live booking on the opening.
	claim, _ := w.claim(op.ID, 2)
	require.Equal(t, slots.Booked, claim.Outcome)
	require.Equal(t, "1", w.query(`SELECT count(*)::text FROM bookings WHERE opening_id = $1 AND status IN ('pending_payment', 'confirmed')`, op.ID))
}

// TestCancellationsRaceOnce: many cancellations of one pending booking at once (a
// customer's text delivered twice, two texts) cancel it once: one of them cancels, the
// others find it cancelled; one new generation, one wave. The payment that arrives after
// is refunded: the cancelled booking never takes the slot back.
func TestCancellationsRaceOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{})
	op, b := w.book()
	const n = 8
	results := make([]ledger.Cancellation, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { results[i], errs[i] = w.cancel(b) })
	}
	wg.Wait()
	cancelled := 0
	for i := range n {
		switch {
		case errs[i] == nil:
			require.True(t, results[i].Cancelled)
			require.False(t, results[i].Refunded, "nothing was paid")
			cancelled++
		case !errors.Is(errs[i], ledger.ErrNotCancellable):
			t.Fatalf("cancellation %d: %v", i, errs[i])
		}
	}
	require.Equal(t, 1, cancelled, "cancelled once: %v", errs)
	require.Equal(t, "2", w.query(`SELECT generation::text FROM slot_openings WHERE id = $1`, op.ID))
	require.Equal(t, "1", w.query(`SELECT count(*)::text FROM river_job WHERE kind = 'offer_wave' AND (args->>'generation')::int = 2`))
	require.Equal(t, "0", w.query(`SELECT count(*)::text FROM river_job WHERE kind = 'booking_refund'`))

	open := 0
	for i := range n {
		if results[i].OpenCheckout {
			open++
		}
	}
	require.Equal(t, 1, open, "the pending booking's link is to be ended")
	w.pay.EndCheckout(context.Background(), b)
	require.Contains(t, w.stripe.callLog(), "expire  cs_"+b.String(), "the link can no longer be paid")

	require.Equal(t, ledger.ResultRefunded, w.handle(w.event("evt_paid_late", payments.EventPaid, b, "pi_late")).Result)
	require.Equal(t, ledger.BookingCancelled, w.bookingStatus(b))
	require.Equal(t, slots.StatusOpen, w.openingStatus(op.ID))
}

// TestCancelInsideTheCutoff: a booking cancelled inside the shop's lead time is
// cancelled, but its opening expires: too late to offer it again.
func TestCancelInsideTheCutoff(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{})
	op, b := w.book()
	w.clk.Set(op.StartsAt.Add(-30 * time.Minute)) // the lead time is 1 hour
	c, err := w.cancel(b)
	require.NoError(t, err)
	require.Equal(t, ledger.ResultExpired, c.Result)
	require.Equal(t, slots.StatusExpired, w.openingStatus(op.ID))

	// Once the opening has started, the booking is kept: nothing to cancel any more.
	w = newWorld(t, worldOpts{})
	op, b = w.book()
	w.clk.Set(op.StartsAt.Add(time.Minute))
	_, err = w.cancel(b)
	require.ErrorIs(t, err, ledger.ErrNotCancellable)
	require.Equal(t, ledger.BookingPendingPayment, w.bookingStatus(b))
}
