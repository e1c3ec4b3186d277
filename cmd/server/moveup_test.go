package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/payments/stripe"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
)

// TestMoveUpOfAPaidBookingOverHTTP: a customer who asked to move up pays for a booking
// made by her YES (a signed Stripe event); an earlier opening's first wave texts her the
// move-up; her signed YES moves her: the answer names both times and carries no payment
// link, no checkout is made, the new booking holds her payment (the same payment
// intent), the old one is moved, and the time she left is open again.
func TestMoveUpOfAPaidBookingOverHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(nil, fastTune)
	shop := e.newShop(base, "checkout", map[string]any{"cooldown_seconds": 0})
	var kim customerInfo
	require.Equal(t, http.StatusCreated, e.api(base, http.MethodPost, "/api/customers", shop.APIKey, map[string]any{
		"phone": "+15555550771", "name": "Kim", "sms_opt_in": true, "move_up": true,
	}, &kim))

	later := e.newOpening(base, shop, 72*time.Hour)
	e.eventually("the offer texted", func() bool { return len(e.twilio.MessagesTo(kim.Phone)) == 1 })
	a := e.text(base, kim.Phone, shop.SMSNumber, "YES")
	require.Equal(t, "booked", a.Outcome, a.Body)
	held := e.opening(base, shop, later.ID)
	require.NotNil(t, held.Booking)
	paid := event{id: evtID(), typ: stripe.EventCheckoutCompleted, booking: held.Booking.ID, session: held.Booking.SessionID, intent: "pi_kim_moves"}
	require.Equal(t, "confirmed", e.send(base, paid).Result)

	earlier := e.newOpening(base, shop, 24*time.Hour)
	e.eventually("the move-up texted", func() bool {
		for _, body := range e.textsTo(kim.Phone) {
			if strings.Contains(body, "instead of your") {
				return true
			}
		}
		return false
	})
	checkouts := e.stripe.Count(http.MethodPost, "/v1/checkout/sessions")
	a = e.text(base, kim.Phone, shop.SMSNumber, "YES")
	require.Equal(t, "booked", a.Outcome, a.Body)
	require.Contains(t, a.Body, "moved!")
	message := a.Body[strings.Index(a.Body, "moved!"):]
	require.NotContains(t, message, "http", "no payment link: the payment moved")
	require.NotContains(t, message, "payment")
	require.Equal(t, checkouts, e.stripe.Count(http.MethodPost, "/v1/checkout/sessions"), "no second checkout")

	got := e.opening(base, shop, earlier.ID)
	require.Equal(t, "filled", got.Status)
	require.NotNil(t, got.Booking)
	require.Equal(t, "confirmed", got.Booking.Status)
	require.Equal(t, held.Booking.SessionID, got.Booking.SessionID, "the payment's session moved with it")
	require.Equal(t, 1, e.count("SELECT count(*) FROM bookings WHERE id = $1 AND stripe_payment_intent_id = 'pi_kim_moves'", got.Booking.ID))
	require.Equal(t, "moved", bookingStatus(e, held.Booking.ID))
	require.Equal(t, "open", e.opening(base, shop, later.ID).Status, "the time she left is offered again")
	// Her payment's event delivered again changes nothing: no refund.
	paid.id = evtID()
	require.Equal(t, "already_confirmed", e.send(base, paid).Result)
	require.Zero(t, e.stripe.Count(http.MethodPost, "/v1/refunds"))
}

// TestCancelTextRacingAMoveOverHTTP (the review of issue 44's work): Kim's "cancel my
// booking" reads the booking she holds while her YES to a move-up is moving it (held
// in its transaction by a pause point), then waits for it. The move commits first: the
// booking she read is moved, and the cancellation is of the booking it became, with
// the payment it carried refunded once, never a text silently dropped while she keeps
// a paid booking she asked to cancel.
func TestCancelTextRacingAMoveOverHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(nil, fastTune)
	shop := e.newShop(base, "checkout", map[string]any{"cooldown_seconds": 0})
	var kim customerInfo
	require.Equal(t, http.StatusCreated, e.api(base, http.MethodPost, "/api/customers", shop.APIKey, map[string]any{
		"phone": "+15555550772", "name": "Kim", "sms_opt_in": true, "move_up": true,
	}, &kim))
	later := e.newOpening(base, shop, 72*time.Hour)
	e.eventually("the offer texted", func() bool { return len(e.twilio.MessagesTo(kim.Phone)) == 1 })
	require.Equal(t, "booked", e.text(base, kim.Phone, shop.SMSNumber, "YES").Outcome)
	held := e.opening(base, shop, later.ID)
	paid := event{id: evtID(), typ: stripe.EventCheckoutCompleted, booking: held.Booking.ID, session: held.Booking.SessionID, intent: "pi_kim_races"}
	require.Equal(t, "confirmed", e.send(base, paid).Result)
	earlier := e.newOpening(base, shop, 24*time.Hour)
	e.eventually("the move-up texted", func() bool {
		for _, body := range e.textsTo(kim.Phone) {
			if strings.Contains(body, "instead of your") {
				return true
			}
		}
		return false
	})

	release := pgtest.PausePoint(t, e.pool, "AFTER INSERT", "bookings")
	yes := pgtest.Async(func() (smsAnswer, error) { return e.text(base, kim.Phone, shop.SMSNumber, "YES"), nil })
	pgtest.WaitUntilWaiting(t, e.pool, pgtest.AtPause, "the move", yes)
	cancel := pgtest.Async(func() (smsAnswer, error) {
		return e.text(base, kim.Phone, shop.SMSNumber, "I need to cancel my booking"), nil
	})
	pgtest.WaitUntilWaiting(t, e.pool, pgtest.OnARowLock, "the cancellation", cancel)
	release()
	moved, cancelled := <-yes, <-cancel
	require.Equal(t, "booked", moved.V.Outcome, moved.V.Body)
	require.Contains(t, moved.V.Body, "moved!")
	require.Contains(t, strings.ToLower(cancelled.V.Body), "cancelled", "she is told her cancellation: %s", cancelled.V.Body)

	got := e.opening(base, shop, earlier.ID)
	require.Equal(t, "open", got.Status, "the time she moved to is offered again")
	require.Equal(t, "moved", bookingStatus(e, held.Booking.ID))
	require.Equal(t, 1, e.count("SELECT count(*) FROM bookings WHERE opening_id = $1 AND status = 'cancelled' AND stripe_payment_intent_id = 'pi_kim_races'", earlier.ID),
		"the booking she moved to, with her payment, is cancelled")
	e.eventually("her payment refunded", func() bool { return e.stripe.Count(http.MethodPost, "/v1/refunds") == 1 })
}
