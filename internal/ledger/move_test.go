package ledger_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/payments"
	"github.com/slotrecovery/slotrecovery/internal/slots"
)

// moveUp moves the customer's confirmed booking up to earlier (a move-up offer texted
// to them), as internal/book's MoveUp does in one transaction: LockForMove, the YES's
// ClaimTx, MoveTx. It returns the new booking.
func (s *refundScene) moveUp(customerID, bookingID uuid.UUID, earlier slots.Opening) uuid.UUID {
	s.t.Helper()
	ctx := context.Background()
	var offerID uuid.UUID
	require.NoError(s.t, s.pool.QueryRow(ctx, `INSERT INTO slot_offers (opening_id, customer_id, shop_id, generation, wave, status,
		created_at, sent_at, move_from_booking) VALUES ($1, $2, $3, 1, 1, 'sent', $4, $4, $5) RETURNING id`,
		earlier.ID, customerID, s.shop.ID, s.clk.Now(), bookingID).Scan(&offerID))
	cl, err := s.svc.Claimable(ctx, &s.shop, customerID)
	require.NoError(s.t, err)
	require.NotEmpty(s.t, cl.Live)
	offer := cl.Live[0]
	require.Equal(s.t, offerID, offer.OfferID)
	require.Equal(s.t, bookingID, offer.MoveFrom.UUID, "the claim reads the booking to move")
	var moved uuid.UUID
	require.NoError(s.t, pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		m, err := ledger.LockForMove(ctx, tx, s.shop, customerID, bookingID)
		if err != nil {
			return err
		}
		c, err := s.svc.ClaimTx(ctx, tx, s.shop, customerID, offer)
		if err != nil {
			return err
		}
		require.Equal(s.t, slots.Booked, c.Outcome)
		res, err := ledger.MoveTx(ctx, tx, s.queue, m, c.BookingID, offer.OfferID,
			slots.Chain{ID: earlier.ID, Position: 1, MovedFrom: bookingID}, s.clk.Now())
		if err != nil {
			return err
		}
		require.Equal(s.t, ledger.ResultReopened, res.Result)
		moved = res.Booking.ID
		return nil
	}))
	return moved
}

// TestMovedPaymentIsRefundedOnce: a paid booking moved up to an earlier opening takes
// its payment with it. The payment's events still name the old booking: a redelivery
// of its checkout changes nothing (no refund: the money holds the new booking), and the
// refund job asked for that payment on the old booking refuses it; a second payment on
// the old booking (an orphan checkout) goes back as a duplicate. The customer's
// cancellation of the new booking refunds the moved payment once, through Stripe
// (stripe-mock), and the moved booking cannot be cancelled.
func TestMovedPaymentIsRefundedOnce(t *testing.T) {
	t.Parallel()
	s := newRefundScene(t)
	ctx := context.Background()
	_, kim := s.book()
	pi := "pi_moved_" + kim.String()[:8]
	require.Equal(t, ledger.ResultConfirmed, s.handle(s.event("evt_paid_"+kim.String(), payments.EventPaid, kim, pi)).Result)
	customerID := uuid.MustParse(s.query("SELECT customer_id::text FROM bookings WHERE id = $1", kim))
	earlier, err := s.svc.Declare(ctx, s.shop, slots.NewOpening{StartsAt: s.start.Add(2 * time.Hour), DurationMinutes: 30,
		Service: "Cut", PriceCents: 800})
	require.NoError(t, err)
	created := s.co.count()

	moved := s.moveUp(customerID, kim, earlier)
	require.Equal(t, created, s.co.count(), "no checkout for the new booking")
	require.Equal(t, ledger.BookingMoved, s.bookingStatus(kim))
	require.Equal(t, ledger.BookingConfirmed, s.bookingStatus(moved))
	require.Equal(t, pi, s.query("SELECT stripe_payment_intent_id FROM bookings WHERE id = $1", moved))
	require.Equal(t, "1000", s.query("SELECT amount_cents::text FROM bookings WHERE id = $1", moved), "the old booking's price")

	// The payment's checkout, delivered again: applied already.
	require.Equal(t, ledger.ResultAlreadyConfirmed, s.handle(s.event("evt_paid_again_"+kim.String(), payments.EventPaid, kim, pi)).Result)
	require.Equal(t, ledger.ResultKeptConfirmed, s.handle(s.event("evt_expired_"+kim.String(), payments.EventExpired, kim, "")).Result)
	require.Equal(t, "0", s.query("SELECT count(*)::text FROM river_job WHERE kind = 'booking_refund'"))
	// A refund of it asked on the old booking is refused: no call to Stripe.
	require.NoError(t, s.work(kim, pi, 1, 5))
	require.Zero(t, s.rec.Count(http.MethodPost, "/v1/refunds"))
	// A second payment on the old booking goes back, with the platform's fee it paid
	// (the fee the moved payment carries: the moved row keeps none of its own).
	orphan := "pi_orphan_" + kim.String()[:8]
	require.Equal(t, ledger.ResultRefundedDuplicate,
		s.handle(s.event("evt_paid_orphan_"+kim.String(), payments.EventPaid, kim, orphan)).Result)
	_, err = s.pool.Exec(ctx, `UPDATE bookings SET stripe_account = 'acct_kims_shop' WHERE id IN ($1, $2)`, kim, moved)
	require.NoError(t, err)
	_, err = s.pool.Exec(ctx, `UPDATE bookings SET application_fee_cents = 75 WHERE id = $1`, moved)
	require.NoError(t, err)
	require.NoError(t, s.work(kim, orphan, 1, 5))
	duplicates := 0
	for _, r := range s.rec.Requests() {
		if r.Method == http.MethodPost && r.Path == "/v1/refunds" && r.Form.Get("payment_intent") == orphan {
			require.Equal(t, "true", r.Form.Get("refund_application_fee"), "the duplicate's platform fee goes back too")
			duplicates++
		}
	}
	require.Equal(t, 1, duplicates)

	// Cancelling: the moved booking is not live; the new one refunds the payment once.
	cancel := func(id uuid.UUID) (ledger.Cancellation, error) {
		var c ledger.Cancellation
		err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			var err error
			c, err = s.refund.CancelByCustomer(ctx, tx, id, s.clk.Now())
			return err
		})
		return c, err
	}
	_, err = cancel(kim)
	require.ErrorIs(t, err, ledger.ErrNotCancellable)
	c, err := cancel(moved)
	require.NoError(t, err)
	require.True(t, c.Refunded)
	require.Equal(t, "1", s.query("SELECT count(*)::text FROM river_job WHERE kind = 'booking_refund' AND args->>'payment_intent_id' = $1", pi))
	require.NoError(t, s.work(moved, pi, 1, 5))
	refunds := 0
	for _, r := range s.rec.Requests() {
		if r.Method == http.MethodPost && r.Path == "/v1/refunds" && r.Form.Get("payment_intent") != orphan {
			require.Equal(t, pi, r.Form.Get("payment_intent"))
			refunds++
		}
	}
	require.Equal(t, 1, refunds, "the moved payment refunded once")
	require.Equal(t, ledger.BookingMoved, s.bookingStatus(kim), "the moved booking is never refunded")
}
