package ledger_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/payments"
	"github.com/slotrecovery/slotrecovery/internal/slots"
)

// subscribe gives the world's shop a webhook endpoint subscribed to every event type,
// so that the changes record their events.
func (w *world) subscribe() {
	w.t.Helper()
	_, err := w.pool.Exec(context.Background(), `INSERT INTO webhook_endpoints (shop_id, url, enabled_events, secret, created_at, updated_at)
		VALUES ($1, 'https://crm.example.com/hooks', '{*}', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', now(), now())`, w.shop.ID)
	require.NoError(w.t, err)
}

// recorded is one event the outbox holds: its type and its subject's states.
type recorded struct {
	typ, opening, booking string
	bookingID             uuid.UUID
}

// events lists the events recorded for an opening, in the order they were recorded.
func (w *world) events(openingID uuid.UUID) []recorded {
	w.t.Helper()
	rows, err := w.pool.Query(context.Background(), `SELECT type, subject FROM webhook_events
		WHERE subject ->> 'id' = $1::text ORDER BY seq`, openingID)
	require.NoError(w.t, err)
	defer rows.Close()
	var out []recorded
	for rows.Next() {
		var typ string
		var raw []byte
		require.NoError(w.t, rows.Scan(&typ, &raw))
		s, err := hooks.DecodeOpening(raw)
		require.NoError(w.t, err)
		r := recorded{typ: typ, opening: s.Status}
		if s.Booking != nil {
			r.booking, r.bookingID = s.Booking.Status, s.Booking.ID
		}
		out = append(out, r)
	}
	require.NoError(w.t, rows.Err())
	return out
}

// TestPaymentTransitionsRecordTheirEvents: each payment transition records its event in
// its own transaction, with the opening and the booking as the change left them; a
// redelivered event, a replayed refund or a failure that changes nothing records none.
func TestPaymentTransitionsRecordTheirEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, worldOpts{})
	w.subscribe()

	// Paid: declared, filled (pending), confirmed; the redelivery adds nothing.
	paidOp, paid := w.book()
	require.Equal(t, ledger.ResultConfirmed, w.handle(w.event("evt_paid", payments.EventPaid, paid, "pi_paid")).Result)
	require.True(t, w.handle(w.event("evt_paid", payments.EventPaid, paid, "pi_paid")).Replayed)
	require.Equal(t, ledger.ResultAlreadyConfirmed, w.handle(w.event("evt_paid_again", payments.EventPaid, paid, "pi_paid")).Result)
	require.Equal(t, []recorded{
		{hooks.OpeningDeclared, slots.StatusOpen, "", uuid.Nil},
		{hooks.OpeningFilled, slots.StatusFilled, ledger.BookingPendingPayment, paid},
		{hooks.BookingConfirmed, slots.StatusFilled, ledger.BookingConfirmed, paid},
	}, w.events(paidOp.ID))

	// Expired: reopened, with the lapsed booking; filled again by the next taker; the
	// first customer's late payment is refunded (the slot is someone else's) once.
	op, first := w.book()
	require.Equal(t, ledger.ResultReopened, w.handle(w.event("evt_expired", payments.EventExpired, first, "")).Result)
	require.Equal(t, ledger.ResultAlreadyFailed, w.handle(w.event("evt_failed_again", payments.EventFailed, first, "pi_x")).Result)
	second, _ := w.claim(op.ID, 2)
	require.Equal(t, ledger.ResultRefunded, w.handle(w.event("evt_late", payments.EventPaid, first, "pi_late")).Result)
	require.NoError(t, w.pay.RefundBooking(ctx, first, "pi_late"))
	require.NoError(t, w.pay.RefundBooking(ctx, first, "pi_late"), "a second run of the refund job")
	require.Equal(t, []recorded{
		{hooks.OpeningDeclared, slots.StatusOpen, "", uuid.Nil},
		{hooks.OpeningFilled, slots.StatusFilled, ledger.BookingPendingPayment, first},
		{hooks.OpeningReopened, slots.StatusOpen, ledger.BookingPaymentFailed, first},
		{hooks.OpeningFilled, slots.StatusFilled, ledger.BookingPendingPayment, second.BookingID},
		{hooks.BookingRefunded, slots.StatusFilled, ledger.BookingPaymentFailed, first},
	}, w.events(op.ID))

	// A second payment of a confirmed booking is refunded too: booking.refunded, the
	// booking still confirmed (paid once).
	require.Equal(t, ledger.ResultRefundedDuplicate, w.handle(w.event("evt_dup", payments.EventPaid, paid, "pi_dup")).Result)
	require.NoError(t, w.pay.RefundBooking(ctx, paid, "pi_dup"))
	got := w.events(paidOp.ID)
	require.Equal(t, recorded{hooks.BookingRefunded, slots.StatusFilled, ledger.BookingConfirmed, paid}, got[len(got)-1])

	// A late payment while the slot is free again: the late payer has it after all.
	freeOp, late := w.book()
	require.Equal(t, ledger.ResultReopened, w.handle(w.event("evt_free_expired", payments.EventExpired, late, "")).Result)
	require.Equal(t, ledger.ResultConfirmedLate, w.handle(w.event("evt_free_paid", payments.EventPaid, late, "pi_free")).Result)
	require.Equal(t, []recorded{
		{hooks.OpeningDeclared, slots.StatusOpen, "", uuid.Nil},
		{hooks.OpeningFilled, slots.StatusFilled, ledger.BookingPendingPayment, late},
		{hooks.OpeningReopened, slots.StatusOpen, ledger.BookingPaymentFailed, late},
		{hooks.OpeningFilled, slots.StatusFilled, ledger.BookingConfirmed, late},
		{hooks.BookingConfirmed, slots.StatusFilled, ledger.BookingConfirmed, late},
	}, w.events(freeOp.ID))

	// Inside the cutoff a lapsed hold expires the opening.
	cutOp, cut := w.book()
	w.clk.Set(w.start.Add(2*time.Hour + 30*time.Minute))
	require.Equal(t, ledger.ResultExpired, w.handle(w.event("evt_cut", payments.EventExpired, cut, "")).Result)
	got = w.events(cutOp.ID)
	require.Equal(t, recorded{hooks.OpeningExpired, slots.StatusExpired, ledger.BookingPaymentFailed, cut}, got[len(got)-1])
	require.Len(t, got, 3)
}

// TestDisconnectedAccountCancelsOpenOpenings: when a shop's connected account leaves the
// platform, its open checkout openings are cancelled with their queued offers in the
// event's transaction (opening.cancelled recorded): a YES to them would get a hold
// whose payment link cannot be made. A hold made before runs its course; if it lapses,
// the opening expires instead of being offered again.
func TestDisconnectedAccountCancelsOpenOpenings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, worldOpts{connect: true})
	w.subscribe()
	_, err := w.pay.Onboard(ctx, w.shop.ID)
	require.NoError(t, err)
	w.reload()
	acct := w.shop.Stripe.ID
	t0 := w.start.Add(time.Minute)
	ready := payments.Account{ID: acct, ChargesEnabled: true, PayoutsEnabled: true, DetailsSubmitted: true}
	require.Equal(t, ledger.ResultAccountUpdated, w.handle(accountEvent("evt_ready", ready, t0)).Result)
	w.reload()

	open, err := w.declare()
	require.NoError(t, err)
	c, err := w.customers.Add(ctx, w.shop.ID, customers.NewCustomer{Phone: "+15551009999", SMSOptIn: true})
	require.NoError(t, err)
	_, err = w.pool.Exec(ctx, `INSERT INTO slot_offers (opening_id, customer_id, shop_id, generation, wave, status, created_at)
		VALUES ($1, $2, $3, 1, 1, 'queued', now())`, open.ID, c.ID, w.shop.ID)
	require.NoError(t, err)
	held, err := w.declare()
	require.NoError(t, err)
	claim, _ := w.claim(held.ID, 1)

	gone := accountEvent("evt_deauth", payments.Account{ID: acct, Disconnected: true}, t0.Add(time.Minute))
	require.Equal(t, ledger.ResultAccountDisconnected, w.handle(gone).Result)
	require.Equal(t, slots.StatusCancelled, w.openingStatus(open.ID))
	require.Equal(t, "lost", w.query(`SELECT status FROM slot_offers WHERE opening_id = $1`, open.ID), "its queued offer is closed")
	require.Equal(t, slots.StatusFilled, w.openingStatus(held.ID), "the hold runs its course")
	require.Equal(t, []recorded{
		{hooks.OpeningDeclared, slots.StatusOpen, "", uuid.Nil},
		{hooks.OpeningCancelled, slots.StatusCancelled, "", uuid.Nil},
	}, w.events(open.ID))
	require.True(t, w.handle(gone).Replayed, "the redelivery changes nothing")
	require.Len(t, w.events(open.ID), 2)

	// The hold lapses: the opening is not offered again by a shop that cannot take payments.
	expired := from(w.event("evt_hold_expired", payments.EventExpired, claim.BookingID, ""), acct)
	require.Equal(t, ledger.ResultExpired, w.handle(expired).Result)
	require.Equal(t, slots.StatusExpired, w.openingStatus(held.ID))
	require.Equal(t, "0", w.query(`SELECT count(*)::text FROM river_job WHERE kind = 'offer_wave' AND args->>'opening_id' = $1
		AND (args->>'generation')::int > 1`, held.ID.String()), "no new generation")
	got := w.events(held.ID)
	require.Equal(t, recorded{hooks.OpeningExpired, slots.StatusExpired, ledger.BookingPaymentFailed, claim.BookingID}, got[len(got)-1])
}
