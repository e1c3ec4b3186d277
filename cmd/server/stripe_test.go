package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/payments/stripe"
	"github.com/slotrecovery/slotrecovery/internal/testkit/stripetest"
	"github.com/slotrecovery/slotrecovery/internal/webhooks"
)

type stripeReply struct {
	Status   int
	Result   string
	Replayed bool
	Body     string
}

// postStripe posts a body with a Stripe-Signature header ("" sends none). It must run on
// the test's goroutine; others use tryPostStripe.
func (e *env) postStripe(base string, payload []byte, signature string) stripeReply {
	e.t.Helper()
	r, err := e.tryPostStripe(base, payload, signature)
	require.NoError(e.t, err)
	return r
}

// tryPostStripe is postStripe returning its error, for use off the test's goroutine.
func (e *env) tryPostStripe(base string, payload []byte, signature string) (stripeReply, error) {
	req, err := http.NewRequest(http.MethodPost, base+webhooks.StripePath, bytes.NewReader(payload))
	if err != nil {
		return stripeReply{}, err
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	if signature != "" {
		req.Header.Set("Stripe-Signature", signature)
	}
	res, err := e.client.Do(req)
	if err != nil {
		return stripeReply{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return stripeReply{}, fmt.Errorf("read answer: %w", err)
	}
	r := stripeReply{Status: res.StatusCode, Body: string(b)}
	if res.StatusCode == http.StatusOK {
		var a webhooks.StripeAnswer
		if err := json.Unmarshal(b, &a); err != nil {
			return r, fmt.Errorf("decode answer %q: %w", b, err)
		}
		r.Result, r.Replayed = a.Result, a.Replayed
	}
	return r, nil
}

// event is one Stripe event for a booking; zero fields take a realistic default.
type event struct {
	id, typ, booking, session, intent, paymentStatus string
}

func (ev event) payload() []byte {
	status := ev.paymentStatus
	if status == "" {
		status = stripe.PaymentUnpaid
		if ev.typ == stripe.EventCheckoutCompleted || ev.typ == stripe.EventCheckoutAsyncSucceeded {
			status = stripe.PaymentPaid
		}
	}
	return stripe.TestEventPayload(ev.id, ev.typ, ev.booking, ev.session, ev.intent, status, time.Now())
}

// send signs ev with the test secret, as Stripe would, and posts it. It must run on the
// test's goroutine; others use trySend.
func (e *env) send(base string, ev event) stripeReply {
	e.t.Helper()
	r, err := e.trySend(base, ev)
	require.NoError(e.t, err)
	return r
}

// trySend is send returning its error, for use off the test's goroutine.
func (e *env) trySend(base string, ev event) (stripeReply, error) {
	p := ev.payload()
	return e.tryPostStripe(base, p, stripe.SignedTestPayload(p, webhookSecret, time.Now()))
}

var eventSeq atomic.Int64

func evtID() string {
	return fmt.Sprintf("evt_test_%d_%d", time.Now().UnixNano(), eventSeq.Add(1))
}

// booked makes a checkout shop with one customer per phone, declares an opening, waits
// for the offers and has the first customer say YES. It returns the opening holding a
// pending booking.
func (e *env) booked(base string, phones ...string) (shopInfo, []customerInfo, openingInfo) {
	e.t.Helper()
	shop := e.newShop(base, "checkout", nil)
	var cs []customerInfo
	for _, p := range phones {
		cs = append(cs, e.newCustomer(base, shop, p, true))
	}
	op := e.newOpening(base, shop, 3*time.Hour)
	e.eventually("offers texted", func() bool {
		for _, c := range cs {
			if len(e.twilio.MessagesTo(c.Phone)) == 0 {
				return false
			}
		}
		return true
	})
	a := e.text(base, cs[0].Phone, shop.SMSNumber, "YES")
	require.Equal(e.t, "booked", a.Outcome, a.Body)
	got := e.opening(base, shop, op.ID)
	require.Equal(e.t, "filled", got.Status)
	require.NotNil(e.t, got.Booking)
	require.Equal(e.t, "pending_payment", got.Booking.Status)
	require.NotEmpty(e.t, got.Booking.SessionID)
	return shop, cs, got
}

// textsTo returns the bodies of the texts sent to phone through Twilio's API.
func (e *env) textsTo(phone string) []string {
	var out []string
	for _, m := range e.twilio.MessagesTo(phone) {
		out = append(out, m.Body)
	}
	return out
}

func (e *env) localStart(openingID string) string {
	e.t.Helper()
	var startsAt time.Time
	require.NoError(e.t, e.pool.QueryRow(context.Background(), `SELECT starts_at FROM slot_openings WHERE id = $1`, openingID).Scan(&startsAt))
	loc, err := time.LoadLocation("America/New_York")
	require.NoError(e.t, err)
	return startsAt.In(loc).Format("Mon Jan 2 3:04 PM") // a US shop writing English: the 12-hour clock
}

// TestPaymentLoop is the whole loop: opening → wave → YES → booking →
// checkout.session.expired → the opening is open again → the next wave texts the others
// and not the customer who failed → a second YES books it → checkout.session.completed
// confirms it. The owner's GET /api/openings/{id} shows each state on the way.
func TestPaymentLoop(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(nil, fastTune)
	shop, cs, got := e.booked(base, "+15551110001", "+15551110002", "+15551110003")
	alice, bob, carol := cs[0], cs[1], cs[2]
	require.Equal(t, alice.Phone, got.FilledBy.Phone)
	first := got.Booking

	r := e.send(base, event{id: evtID(), typ: stripe.EventCheckoutExpired, booking: first.ID, session: first.SessionID})
	require.Equal(t, http.StatusOK, r.Status, r.Body)
	require.Equal(t, "reopened", r.Result)

	got = e.opening(base, shop, got.ID)
	require.Equal(t, "open", got.Status)
	require.Nil(t, got.FilledBy)
	require.Equal(t, first.ID, got.Booking.ID)
	require.Equal(t, "payment_failed", got.Booking.Status)
	require.Equal(t, 2, e.count(`SELECT generation FROM slot_openings WHERE id = $1`, got.ID))
	require.Equal(t, 1, e.count(`SELECT count(*) FROM slot_offers WHERE customer_id = $1 AND status = 'failed'`, alice.ID))

	// The new generation texts Bob and Carol again; Alice hears that her hold lapsed,
	// and no new offer: she is cooling down from her YES.
	e.eventually("second wave and lapsed text", func() bool {
		return len(e.twilio.MessagesTo(bob.Phone)) == 2 && len(e.twilio.MessagesTo(carol.Phone)) == 2 &&
			len(e.twilio.MessagesTo(alice.Phone)) == 2
	})
	// The new generation's first wave is done and every queued text has gone: nothing
	// more is on its way to Alice.
	e.waveDone(got.ID, 2, 1)
	e.swept()
	e.settle("sms_text")
	aliceTexts := e.textsTo(alice.Phone)
	require.Len(t, aliceTexts, 2, "one offer and the lapsed notice: %q", aliceTexts)
	require.Contains(t, aliceTexts[1], "has lapsed")
	require.Contains(t, e.textsTo(bob.Phone)[1], "First to reply YES gets it")
	require.Equal(t, 0, e.count(`SELECT count(*) FROM slot_offers WHERE customer_id = $1 AND generation = 2`, alice.ID))

	a := e.text(base, bob.Phone, shop.SMSNumber, "YES")
	require.Equal(t, "booked", a.Outcome, a.Body)
	got = e.opening(base, shop, got.ID)
	require.Equal(t, "filled", got.Status)
	require.Equal(t, bob.Phone, got.FilledBy.Phone)
	require.Equal(t, "pending_payment", got.Booking.Status)
	second := got.Booking
	require.NotEqual(t, first.ID, second.ID)
	require.Equal(t, "taken", e.text(base, carol.Phone, shop.SMSNumber, "YES").Outcome)

	r = e.send(base, event{id: evtID(), typ: stripe.EventCheckoutCompleted, booking: second.ID, session: second.SessionID, intent: "pi_loop_bob"})
	require.Equal(t, http.StatusOK, r.Status, r.Body)
	require.Equal(t, "confirmed", r.Result)
	got = e.opening(base, shop, got.ID)
	require.Equal(t, "filled", got.Status)
	require.Equal(t, bob.Phone, got.FilledBy.Phone)
	require.Equal(t, "confirmed", got.Booking.Status)

	want := "Joe's Barbers: you're booked for Haircut " + e.localStart(got.ID) + ". See you then!"
	e.eventually("confirmation text", func() bool { return len(e.twilio.MessagesTo(bob.Phone)) == 3 })
	require.Equal(t, want, e.textsTo(bob.Phone)[2])
	require.Equal(t, 2, e.count(`SELECT count(*) FROM stripe_events WHERE result IS NOT NULL`))
}

// TestStripeEventsOutOfOrder: events arrive twice and in any order; a confirmed booking
// never moves back, a redelivery does nothing again, and a failure of another session
// does not fail the booking.
func TestStripeEventsOutOfOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(nil, fastTune)

	// Completed before expired: the late expiry changes nothing.
	shop, _, op := e.booked(base, "+15552220001")
	b := op.Booking
	require.Equal(t, "confirmed", e.send(base, event{id: evtID(), typ: stripe.EventCheckoutCompleted, booking: b.ID, session: b.SessionID, intent: "pi_a"}).Result)
	require.Equal(t, "kept_confirmed", e.send(base, event{id: evtID(), typ: stripe.EventCheckoutExpired, booking: b.ID, session: b.SessionID}).Result)
	require.Equal(t, "already_confirmed", e.send(base, event{id: evtID(), typ: stripe.EventCheckoutAsyncSucceeded, booking: b.ID, session: b.SessionID, intent: "pi_a"}).Result)
	got := e.opening(base, shop, op.ID)
	require.Equal(t, "filled", got.Status)
	require.Equal(t, "confirmed", got.Booking.Status)

	// Failure after confirmation: a declined card reported late neither expires the
	// session nor fails the booking.
	expires := e.stripe.Count(http.MethodPost, "/v1/checkout/sessions/"+b.SessionID+"/expire")
	r := e.send(base, event{id: evtID(), typ: stripe.EventPaymentFailed, booking: b.ID, intent: "pi_a"})
	require.Equal(t, "kept_confirmed", r.Result)
	require.Equal(t, expires, e.stripe.Count(http.MethodPost, "/v1/checkout/sessions/"+b.SessionID+"/expire"))
	require.Equal(t, "confirmed", e.opening(base, shop, op.ID).Booking.Status)

	// Expired twice: the same event id is a redelivery (same answer, nothing done), and
	// another expiry event for the failed booking does nothing either.
	shop, _, op = e.booked(base, "+15552220002")
	b = op.Booking
	expired := event{id: evtID(), typ: stripe.EventCheckoutExpired, booking: b.ID, session: b.SessionID}
	first := e.send(base, expired)
	require.Equal(t, stripeReply{Status: 200, Result: "reopened", Body: first.Body}, first)
	again := e.send(base, expired)
	require.Equal(t, http.StatusOK, again.Status)
	require.Equal(t, "reopened", again.Result)
	require.True(t, again.Replayed)
	require.Equal(t, "already_failed", e.send(base, event{id: evtID(), typ: stripe.EventCheckoutAsyncFailed, booking: b.ID, session: b.SessionID}).Result)
	require.Equal(t, 2, e.count(`SELECT generation FROM slot_openings WHERE id = $1`, op.ID), "reopened once")
	require.Equal(t, "open", e.opening(base, shop, op.ID).Status)
	require.Equal(t, 1, e.count(`SELECT count(*) FROM river_job WHERE kind = 'offer_wave' AND args->>'opening_id' = $1 AND (args->>'generation')::int = 2 AND (args->>'wave')::int = 1`, op.ID), "one first wave of the new generation")
	require.Equal(t, 1, e.count(`SELECT count(*) FROM river_job WHERE kind = 'sms_text' AND args->>'key' = $1`, "lapsed:"+b.ID))

	// A delayed payment method: completed but unpaid waits; its failure reopens.
	shop, _, op = e.booked(base, "+15552220003")
	b = op.Booking
	require.Equal(t, "awaiting_payment", e.send(base, event{id: evtID(), typ: stripe.EventCheckoutCompleted, booking: b.ID, session: b.SessionID, paymentStatus: stripe.PaymentUnpaid}).Result)
	require.Equal(t, "pending_payment", e.opening(base, shop, op.ID).Booking.Status)
	require.Equal(t, "reopened", e.send(base, event{id: evtID(), typ: stripe.EventCheckoutAsyncFailed, booking: b.ID, session: b.SessionID}).Result)

	// ... and its success confirms.
	shop, _, op = e.booked(base, "+15552220004")
	b = op.Booking
	require.Equal(t, "confirmed", e.send(base, event{id: evtID(), typ: stripe.EventCheckoutAsyncSucceeded, booking: b.ID, session: b.SessionID, intent: "pi_d"}).Result)
	require.Equal(t, "confirmed", e.opening(base, shop, op.ID).Booking.Status)

	// An orphan session (from an earlier attempt) expiring does not fail the booking.
	shop, _, op = e.booked(base, "+15552220005")
	b = op.Booking
	require.Equal(t, "ignored_other_session", e.send(base, event{id: evtID(), typ: stripe.EventCheckoutExpired, booking: b.ID, session: "cs_test_orphan"}).Result)
	require.Equal(t, "pending_payment", e.opening(base, shop, op.ID).Booking.Status)
}

// TestPaymentFailedExpiresSession: a declined card does not end a Checkout Session, so
// before the slot is reopened the session is expired through the API; if Stripe says
// the session completed meanwhile, the booking stands.
func TestPaymentFailedExpiresSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(nil, fastTune)

	shop, _, op := e.booked(base, "+15553330001")
	b := op.Booking
	expirePath := "/v1/checkout/sessions/" + b.SessionID + "/expire"
	r := e.send(base, event{id: evtID(), typ: stripe.EventPaymentFailed, booking: b.ID, intent: "pi_declined"})
	require.Equal(t, "reopened", r.Result, r.Body)
	require.Equal(t, 1, e.stripe.Count(http.MethodPost, expirePath))
	require.Equal(t, "open", e.opening(base, shop, op.ID).Status)

	shop, _, op = e.booked(base, "+15553330002")
	b = op.Booking
	expirePath = "/v1/checkout/sessions/" + b.SessionID + "/expire"
	e.stripe.Respond(http.MethodPost, expirePath, http.StatusBadRequest,
		`{"error":{"type":"invalid_request_error","message":"Only Checkout Sessions with a status in [\"open\"] can be expired."}}`)
	e.stripe.Respond(http.MethodGet, "/v1/checkout/sessions/"+b.SessionID, http.StatusOK, sessionJSON(b.SessionID, "complete", "paid", b.ID, "pi_paid"))
	r = e.send(base, event{id: evtID(), typ: stripe.EventPaymentFailed, booking: b.ID, intent: "pi_first_card"})
	require.Equal(t, "kept_completed", r.Result, r.Body)
	got := e.opening(base, shop, op.ID)
	require.Equal(t, "filled", got.Status)
	require.Equal(t, "pending_payment", got.Booking.Status)
	require.Equal(t, "confirmed", e.send(base, event{id: evtID(), typ: stripe.EventCheckoutCompleted, booking: b.ID, session: b.SessionID, intent: "pi_paid"}).Result)

	// A Stripe outage while expiring: 500, so Stripe retries; the retry applies it.
	shop, _, op = e.booked(base, "+15553330003")
	b = op.Booking
	e.stripe.FailNext(1, http.StatusServiceUnavailable)
	ev := event{id: evtID(), typ: stripe.EventPaymentFailed, booking: b.ID, intent: "pi_flaky"}
	require.Equal(t, http.StatusInternalServerError, e.send(base, ev).Status)
	require.Equal(t, "filled", e.opening(base, shop, op.ID).Status)
	r = e.send(base, ev)
	require.Equal(t, "reopened", r.Result, r.Body)
	require.False(t, r.Replayed)
}

// sessionJSON is a Checkout Session as Stripe's API renders it.
func sessionJSON(id, status, paymentStatus, bookingID, paymentIntent string) string {
	pi := "null"
	if paymentIntent != "" {
		pi = `"` + paymentIntent + `"`
	}
	return `{"id":"` + id + `","object":"checkout.session","status":"` + status + `","payment_status":"` + paymentStatus +
		`","client_reference_id":"` + bookingID + `","metadata":{"booking_id":"` + bookingID + `"},"payment_intent":` + pi +
		`,"expires_at":` + fmt.Sprint(time.Now().Add(-10*time.Minute).Unix()) + `,"amount_total":4500,"currency":"usd","mode":"payment","url":null}`
}

// TestStripeWebhookVerification: a forged, missing or stale signature, a tampered or
// non-event body and a body over 1 MiB are refused and store nothing; a large event
// under the cap, an event of another API version and both secrets of a rotation are
// accepted.
func TestStripeWebhookVerification(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(nil, fastTune)
	shop, _, op := e.booked(base, "+15554440001")
	b := op.Booking
	ev := event{id: evtID(), typ: stripe.EventCheckoutCompleted, booking: b.ID, session: b.SessionID, intent: "pi_v"}
	p := ev.payload()
	now := time.Now()

	tampered := bytes.Replace(p, []byte(`"paid"`), []byte(`"unpaid"`), 1)
	require.NotEqual(t, p, tampered)
	notEvent := []byte(`{"hello":"world"}`)
	huge := append([]byte(`{"pad":"`), bytes.Repeat([]byte("x"), 1<<20)...)
	huge = append(huge, `"}`...)
	for name, tc := range map[string]struct {
		body   []byte
		sig    string
		status int
	}{
		"missing signature": {p, "", http.StatusBadRequest},
		"forged":            {p, stripe.SignedTestPayload(p, "whsec_someone_else", now), http.StatusBadRequest},
		"garbage header":    {p, "t=1,v1=deadbeef", http.StatusBadRequest},
		"stale":             {p, stripe.SignedTestPayload(p, webhookSecret, now.Add(-6*time.Minute)), http.StatusBadRequest},
		"tampered body":     {tampered, stripe.SignedTestPayload(p, webhookSecret, now), http.StatusBadRequest},
		"signed non-event":  {notEvent, stripe.SignedTestPayload(notEvent, webhookSecret, now), http.StatusBadRequest},
		"over 1 MiB":        {huge, stripe.SignedTestPayload(huge, webhookSecret, now), http.StatusRequestEntityTooLarge},
	} {
		r := e.postStripe(base, tc.body, tc.sig)
		require.Equal(t, tc.status, r.Status, "%s: %s", name, r.Body)
		require.Contains(t, r.Body, `"error"`, name)
	}
	// The same without a Content-Length (chunked), so no middleware can refuse it up
	// front: the handler's own cap cuts it off (its message, not a generic one).
	req, err := http.NewRequest(http.MethodPost, base+webhooks.StripePath, io.MultiReader(bytes.NewReader(huge)))
	require.NoError(t, err)
	req.ContentLength, req.TransferEncoding = -1, []string{"chunked"}
	req.Header.Set("Stripe-Signature", stripe.SignedTestPayload(huge, webhookSecret, now))
	res, err := e.client.Do(req)
	require.NoError(t, err)
	answer, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode)
	require.Contains(t, string(answer), `"code":"body_too_large"`, "%s", answer)
	require.Contains(t, string(answer), "larger than 1 MiB", "the handler's cap answered: %s", answer)

	require.Zero(t, e.count(`SELECT count(*) FROM stripe_events`))
	require.Equal(t, "pending_payment", e.opening(base, shop, op.ID).Booking.Status)

	// An event rendered with a newer API version than stripe-go v76's, padded past the
	// 64 KiB limit of the other routes, is accepted and applied.
	var m map[string]any
	var big []byte
	require.NoError(t, json.Unmarshal(p, &m))
	m["api_version"] = "2025-03-31.basil"
	m["padding"] = strings.Repeat("x", 200<<10)
	big, err = json.Marshal(m)
	require.NoError(t, err)
	r := e.postStripe(base, big, stripe.SignedTestPayload(big, webhookSecret, now))
	require.Equal(t, http.StatusOK, r.Status, r.Body)
	require.Equal(t, "confirmed", r.Result)

	// During a rotation both secrets verify; anything else does not.
	rotated := e.start(map[string]string{"STRIPE_WEBHOOK_SECRET": "whsec_new_secret," + webhookSecret}, fastTune)
	for secret, status := range map[string]int{"whsec_new_secret": 200, webhookSecret: 200, "whsec_third": 400} {
		q := event{id: evtID(), typ: "customer.created"}.payload()
		require.Equal(t, status, e.postStripe(rotated, q, stripe.SignedTestPayload(q, secret, time.Now())).Status, secret)
	}
}

// TestStripeEventsIgnored: an unknown event type and an event for an unknown booking
// are stored and acknowledged with 200 (so Stripe stops retrying), and a redelivery
// gets the same answer.
func TestStripeEventsIgnored(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(nil, fastTune)

	unknownType := event{id: evtID(), typ: "invoice.paid", booking: "11111111-2222-3333-4444-555555555555"}
	r := e.send(base, unknownType)
	require.Equal(t, http.StatusOK, r.Status, r.Body)
	require.Equal(t, "ignored_type", r.Result)
	again := e.send(base, unknownType)
	require.Equal(t, "ignored_type", again.Result)
	require.True(t, again.Replayed)

	for _, booking := range []string{"11111111-2222-3333-4444-555555555555", "not-a-uuid", ""} {
		r := e.send(base, event{id: evtID(), typ: stripe.EventCheckoutExpired, booking: booking, session: "cs_test_x"})
		require.Equal(t, http.StatusOK, r.Status, r.Body)
		require.Equal(t, "ignored_unknown_booking", r.Result, booking)
	}
	r = e.send(base, event{id: evtID(), typ: stripe.EventPaymentFailed, booking: "11111111-2222-3333-4444-555555555555", intent: "pi_x"})
	require.Equal(t, "ignored_unknown_booking", r.Result)
	require.Equal(t, 5, e.count(`SELECT count(*) FROM stripe_events WHERE result IS NOT NULL AND payload ? 'id'`))
	require.Zero(t, e.stripe.Count("", "/v1/"), "nothing asked of Stripe")
}

// TestLatePayment: a payment that succeeds after its booking failed and the slot went
// to someone else is refunded once, however often it is reported, and the customer is
// told; if the slot is still free, the late payer gets it instead.
func TestLatePayment(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(nil, fastTune)

	shop, cs, op := e.booked(base, "+15555550001", "+15555550002")
	alice, bob := cs[0], cs[1]
	late := op.Booking
	require.Equal(t, "reopened", e.send(base, event{id: evtID(), typ: stripe.EventCheckoutExpired, booking: late.ID, session: late.SessionID}).Result)
	// The lapsed text is a job of its own, like the refund text below: wait for it, so
	// the texts alice gets are in the order the events came.
	e.eventually("second offer to bob and the lapsed text to alice", func() bool {
		texts := e.textsTo(alice.Phone)
		return len(e.twilio.MessagesTo(bob.Phone)) == 2 && len(texts) == 2 && strings.Contains(texts[1], "has lapsed")
	})
	require.Equal(t, "booked", e.text(base, bob.Phone, shop.SMSNumber, "YES").Outcome)

	paid := event{id: evtID(), typ: stripe.EventCheckoutCompleted, booking: late.ID, session: late.SessionID, intent: "pi_late_alice"}
	require.Equal(t, "refunded", e.send(base, paid).Result)
	r := e.send(base, paid)
	require.Equal(t, "refunded", r.Result)
	require.True(t, r.Replayed)
	require.Equal(t, "refunded", e.send(base, event{id: evtID(), typ: stripe.EventCheckoutAsyncSucceeded, booking: late.ID, session: late.SessionID, intent: "pi_late_alice"}).Result)
	require.Equal(t, "already_failed", e.send(base, event{id: evtID(), typ: stripe.EventCheckoutExpired, booking: late.ID, session: late.SessionID}).Result)

	e.eventually("refund stored", func() bool {
		return e.count(`SELECT count(*) FROM bookings WHERE id = $1 AND refund_id IS NOT NULL`, late.ID) == 1
	})
	e.eventually("refund text", func() bool {
		texts := e.textsTo(alice.Phone)
		return len(texts) == 3 && strings.Contains(texts[2], "refunded")
	})
	// Every refund job and the texts they queued have finished: any second refund
	// request would be in.
	e.settle("booking_refund", "sms_text")
	require.Len(t, e.textsTo(alice.Phone), 3)
	n, matches := 0, 0
	for _, q := range e.stripe.Requests() {
		if q.Method == http.MethodPost && q.Path == "/v1/refunds" {
			n++
			if q.IdempotencyKey == "refund:"+late.ID+":pi_late_alice" && q.Form.Get("payment_intent") == "pi_late_alice" {
				matches++
			}
		}
	}
	require.Equal(t, 1, n, "one refund requested")
	require.Equal(t, 1, matches, "the refund of alice's late payment, under its own key")
	got := e.opening(base, shop, op.ID)
	require.Equal(t, "filled", got.Status)
	require.Equal(t, bob.Phone, got.FilledBy.Phone, "bob keeps the slot")
	require.Equal(t, "pending_payment", got.Booking.Status)
	require.Equal(t, "payment_failed", bookingStatus(e, late.ID))

	// Nobody took the reopened slot: the late payer gets it after all.
	shop, cs, op = e.booked(base, "+15555550003")
	carol, b := cs[0], op.Booking
	require.Equal(t, "reopened", e.send(base, event{id: evtID(), typ: stripe.EventCheckoutExpired, booking: b.ID, session: b.SessionID}).Result)
	require.Equal(t, "open", e.opening(base, shop, op.ID).Status)
	// The lapsed text and the confirmation below are separate jobs that River may run
	// in either order when the payment comes within moments of the expiry (a real
	// late payment comes minutes later): wait for the first before the payment.
	e.eventually("lapsed text to carol", func() bool {
		texts := e.textsTo(carol.Phone)
		return len(texts) == 2 && strings.Contains(texts[1], "has lapsed")
	})
	require.Equal(t, "confirmed_late", e.send(base, event{id: evtID(), typ: stripe.EventCheckoutCompleted, booking: b.ID, session: b.SessionID, intent: "pi_late_carol"}).Result)
	got = e.opening(base, shop, op.ID)
	require.Equal(t, "filled", got.Status)
	require.Equal(t, carol.Phone, got.FilledBy.Phone)
	require.Equal(t, "confirmed", got.Booking.Status)
	require.Equal(t, "kept_confirmed", e.send(base, event{id: evtID(), typ: stripe.EventCheckoutExpired, booking: b.ID, session: b.SessionID}).Result)
	e.eventually("confirmation to carol", func() bool {
		texts := e.textsTo(carol.Phone)
		return len(texts) == 3 && strings.Contains(texts[2], "you're booked")
	})
	require.Equal(t, 1, e.stripe.Count(http.MethodPost, "/v1/refunds"))

	// Carol also paid through an orphan session: that second payment is refunded (its
	// own idempotency key), the first one keeps the booking.
	r = e.send(base, event{id: evtID(), typ: stripe.EventCheckoutCompleted, booking: b.ID, session: "cs_test_orphan", intent: "pi_dup_carol"})
	require.Equal(t, "refunded_duplicate", r.Result, r.Body)
	e.eventually("duplicate refunded and carol told", func() bool {
		texts := e.textsTo(carol.Phone)
		return e.stripe.Count(http.MethodPost, "/v1/refunds") == 2 && len(texts) == 4 && strings.Contains(texts[3], "paid twice")
	})
	e.settle("booking_refund", "sms_text")
	require.Equal(t, 2, e.stripe.Count(http.MethodPost, "/v1/refunds"))
	require.Len(t, e.textsTo(carol.Phone), 4)
	dup := 0
	for _, q := range e.stripe.Requests() {
		if q.Method == http.MethodPost && q.Path == "/v1/refunds" && q.Form.Get("payment_intent") == "pi_dup_carol" {
			require.Equal(t, "refund:"+b.ID+":pi_dup_carol", q.IdempotencyKey)
			dup++
		}
	}
	require.Equal(t, 1, dup, "one refund of the duplicate payment")
	require.Equal(t, "confirmed", bookingStatus(e, b.ID))
	require.Zero(t, e.count(`SELECT count(*) FROM bookings WHERE id = $1 AND refund_id IS NOT NULL`, b.ID))
}

func bookingStatus(e *env, id string) string {
	var s string
	require.NoError(e.t, e.pool.QueryRow(context.Background(), `SELECT status FROM bookings WHERE id = $1`, id).Scan(&s))
	return s
}

// TestFailureInsideCutoff: a hold that lapses when the start is already inside the
// shop's lead time expires the opening instead of reopening it; a late payment then
// still gets the free slot.
func TestFailureInsideCutoff(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(nil, fastTune)
	shop, _, op := e.booked(base, "+15556660001", "+15556660002")
	b := op.Booking
	// The shop's lead time is 30 minutes; the slot now starts in 10.
	_, err := e.pool.Exec(context.Background(), `UPDATE slot_openings SET starts_at = now() + interval '10 minutes' WHERE id = $1`, op.ID)
	require.NoError(t, err)
	require.Equal(t, "expired", e.send(base, event{id: evtID(), typ: stripe.EventCheckoutExpired, booking: b.ID, session: b.SessionID}).Result)
	got := e.opening(base, shop, op.ID)
	require.Equal(t, "expired", got.Status)
	require.Nil(t, got.FilledBy)
	require.Equal(t, "payment_failed", got.Booking.Status)
	require.Equal(t, 1, e.count(`SELECT generation FROM slot_openings WHERE id = $1`, op.ID), "no new generation")
	require.Zero(t, e.count(`SELECT count(*) FROM river_job WHERE kind = 'offer_wave' AND (args->>'generation')::int = 2`))

	require.Equal(t, "confirmed_late", e.send(base, event{id: evtID(), typ: stripe.EventCheckoutCompleted, booking: b.ID, session: b.SessionID, intent: "pi_cut"}).Result)
	got = e.opening(base, shop, op.ID)
	require.Equal(t, "filled", got.Status)
	require.Equal(t, "confirmed", got.Booking.Status)
}

// TestReconcileHealsLostWebhook: bookings whose session expired more than the grace
// period ago with no webhook are read back from Stripe by the reconciliation job, which
// applies the same transitions as the events.
func TestReconcileHealsLostWebhook(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(nil, fastTune)
	inserter, err := river.NewClient(riverpgxv5.New(e.pool), &river.Config{})
	require.NoError(t, err)
	reconcile := func() {
		t.Helper()
		// A run already under way (the periodic one) may have listed the bookings
		// before the test changed them: the job is unique in its minute while it waits
		// or runs, and a run that finds another under way returns at once ("skipped").
		// Wait for each and insert another until one ran on its own.
		for {
			res, err := inserter.Insert(context.Background(), jobs.Reconcile{}, nil)
			require.NoError(t, err)
			e.eventually("reconcile job done", func() bool {
				return e.count(`SELECT count(*) FROM river_job WHERE id = $1 AND state = 'completed'`, res.Job.ID) == 1
			})
			if !res.UniqueSkippedAsDuplicate && e.count(`SELECT count(*) FROM river_job WHERE id = $1 AND metadata->'output' ? 'reconciled'`, res.Job.ID) == 1 {
				return
			}
		}
	}
	stale := func(bookingID string, d time.Duration) {
		_, err := e.pool.Exec(context.Background(), `UPDATE bookings SET checkout_expires_at = $2 WHERE id = $1`, bookingID, time.Now().Add(-d))
		require.NoError(t, err)
	}

	// Expired, webhook lost: the slot reopens.
	shopA, _, opA := e.booked(base, "+15557770001")
	a := opA.Booking
	session := "/v1/checkout/sessions/" + a.SessionID
	e.stripe.Respond(http.MethodGet, session, http.StatusOK, sessionJSON(a.SessionID, "expired", "unpaid", a.ID, ""))
	stale(a.ID, 2*time.Minute) // within the grace period: left alone
	reconcile()
	require.Equal(t, "pending_payment", e.opening(base, shopA, opA.ID).Booking.Status)
	require.Zero(t, e.stripe.Count(http.MethodGet, session))
	stale(a.ID, 10*time.Minute)
	reconcile()
	got := e.opening(base, shopA, opA.ID)
	require.Equal(t, "open", got.Status)
	require.Equal(t, "payment_failed", got.Booking.Status)
	// The webhook arrives after all: nothing more happens.
	require.Equal(t, "already_failed", e.send(base, event{id: evtID(), typ: stripe.EventCheckoutExpired, booking: a.ID, session: a.SessionID}).Result)

	// Paid, webhook lost: confirmed.
	shopB, cs, opB := e.booked(base, "+15557770002")
	b := opB.Booking
	e.stripe.Respond(http.MethodGet, "/v1/checkout/sessions/"+b.SessionID, http.StatusOK, sessionJSON(b.SessionID, "complete", "paid", b.ID, "pi_reconciled"))
	stale(b.ID, 10*time.Minute)
	reconcile()
	got = e.opening(base, shopB, opB.ID)
	require.Equal(t, "filled", got.Status)
	require.Equal(t, "confirmed", got.Booking.Status)
	e.eventually("confirmation text", func() bool {
		texts := e.textsTo(cs[0].Phone)
		return len(texts) == 2 && strings.Contains(texts[1], "you're booked")
	})

	// Stripe still says open (clocks disagree): left alone, and not read again for a
	// while.
	shopC, _, opC := e.booked(base, "+15557770003")
	c := opC.Booking
	e.stripe.Respond(http.MethodGet, "/v1/checkout/sessions/"+c.SessionID, http.StatusOK, sessionJSON(c.SessionID, "open", "unpaid", c.ID, ""))
	stale(c.ID, 10*time.Minute)
	reconcile()
	require.Equal(t, "pending_payment", e.opening(base, shopC, opC.ID).Booking.Status)
	require.Equal(t, 1, e.count(`SELECT count(*) FROM bookings WHERE id = $1 AND reconcile_after > now() + interval '4 minutes'`, c.ID))

	// No session was ever made and the hold is long over: failed like an expiry.
	shopD, _, opD := e.booked(base, "+15557770004")
	d := opD.Booking
	_, err = e.pool.Exec(context.Background(), `UPDATE bookings SET stripe_checkout_session_id = NULL, payment_url = NULL WHERE id = $1`, d.ID)
	require.NoError(t, err)
	stale(d.ID, 10*time.Minute)
	gets := e.stripe.Count(http.MethodGet, "/v1/checkout/sessions/")
	reconcile()
	require.Equal(t, "open", e.opening(base, shopD, opD.ID).Status)
	require.Equal(t, "payment_failed", bookingStatus(e, d.ID))
	require.Equal(t, "pending_payment", bookingStatus(e, c.ID), "still open at Stripe")
	require.Equal(t, gets, e.stripe.Count(http.MethodGet, "/v1/checkout/sessions/"), "D has no session; C waits out its backoff")
}

// TestReconcileStuckAndMissingSessions: a session Stripe does not know (made under
// another key) fails its booking like one that never got a session; one Stripe refuses
// to show for another reason keeps its booking pending, but is not read back on every
// run.
func TestReconcileStuckAndMissingSessions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(nil, fastTune)
	inserter, err := river.NewClient(riverpgxv5.New(e.pool), &river.Config{})
	require.NoError(t, err)
	reconcile := func() {
		t.Helper()
		for {
			res, err := inserter.Insert(context.Background(), jobs.Reconcile{}, nil)
			require.NoError(t, err)
			e.eventually("reconcile job done", func() bool {
				return e.count(`SELECT count(*) FROM river_job WHERE id = $1 AND state = 'completed'`, res.Job.ID) == 1
			})
			// Not a duplicate, and not one that found another run under way.
			if !res.UniqueSkippedAsDuplicate && e.count(`SELECT count(*) FROM river_job WHERE id = $1 AND metadata->'output' ? 'reconciled'`, res.Job.ID) == 1 {
				return
			}
		}
	}
	shopA, _, opA := e.booked(base, "+15557780001")
	a := opA.Booking
	shopB, _, opB := e.booked(base, "+15557780002")
	b := opB.Booking
	e.stripe.Respond(http.MethodGet, "/v1/checkout/sessions/"+a.SessionID, http.StatusForbidden,
		stripetest.ErrorBody("invalid_request_error", "", "The provided key does not have access to this session."))
	e.stripe.Respond(http.MethodGet, "/v1/checkout/sessions/"+b.SessionID, http.StatusNotFound,
		stripetest.ErrorBody("invalid_request_error", "resource_missing", "No such checkout.session"))
	_, err = e.pool.Exec(context.Background(), `UPDATE bookings SET checkout_expires_at = now() - interval '10 minutes' WHERE id = ANY($1)`, []string{a.ID, b.ID})
	require.NoError(t, err)

	reconcile()
	require.Equal(t, "pending_payment", e.opening(base, shopA, opA.ID).Booking.Status)
	got := e.opening(base, shopB, opB.ID)
	require.Equal(t, "open", got.Status)
	require.Equal(t, "payment_failed", got.Booking.Status)
	require.Equal(t, 1, e.stripe.Count(http.MethodGet, "/v1/checkout/sessions/"+a.SessionID))

	reconcile()
	require.Equal(t, 1, e.stripe.Count(http.MethodGet, "/v1/checkout/sessions/"+a.SessionID), "backing off")
	require.Equal(t, 1, e.count(`SELECT reconcile_attempts FROM bookings WHERE id = $1`, a.ID))
}

// TestExpireRefused: a declined card, and Stripe refuses to expire the session for a
// reason a retry cannot fix: 200 with expire_refused (Stripe stops retrying), and the
// booking waits for the session's own expiry, whose event reopens the slot.
func TestExpireRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(nil, fastTune)
	shop, _, op := e.booked(base, "+15553340001")
	b := op.Booking
	e.stripe.Respond(http.MethodPost, "/v1/checkout/sessions/"+b.SessionID+"/expire", http.StatusBadRequest,
		stripetest.ErrorBody("invalid_request_error", "", "This Checkout Session cannot be expired."))
	e.stripe.Respond(http.MethodGet, "/v1/checkout/sessions/"+b.SessionID, http.StatusOK, sessionJSON(b.SessionID, "open", "unpaid", b.ID, ""))
	declined := event{id: evtID(), typ: stripe.EventPaymentFailed, booking: b.ID, intent: "pi_refused"}
	r := e.send(base, declined)
	require.Equal(t, http.StatusOK, r.Status, r.Body)
	require.Equal(t, "expire_refused", r.Result)
	got := e.opening(base, shop, op.ID)
	require.Equal(t, "filled", got.Status)
	require.Equal(t, "pending_payment", got.Booking.Status)
	again := e.send(base, declined)
	require.True(t, again.Replayed)
	require.Equal(t, "expire_refused", again.Result)
	require.Equal(t, 1, e.stripe.Count(http.MethodPost, "/v1/checkout/sessions/"+b.SessionID+"/expire"), "a redelivery asks nothing")

	require.Equal(t, "reopened", e.send(base, event{id: evtID(), typ: stripe.EventCheckoutExpired, booking: b.ID, session: b.SessionID}).Result)
}

// TestCheckoutRefusedFailsBooking: Stripe refuses to make the payment link for good (a
// 400, not an outage): the booking holds only until the booking sweep sees the refusal,
// which fails it at once (the slot reopens in a new generation, the customer is told)
// instead of retrying.
func TestCheckoutRefusedFailsBooking(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(nil, fastTune)
	shop := e.newShop(base, "checkout", nil)
	c := e.newCustomer(base, shop, "+15550000041", true)
	op := e.newOpening(base, shop, 3*time.Hour)
	e.eventually("offer texted", func() bool { return len(e.twilio.MessagesTo(c.Phone)) == 1 })
	e.stripe.Respond(http.MethodPost, "/v1/checkout/sessions", http.StatusBadRequest,
		stripetest.ErrorBody("invalid_request_error", "parameter_invalid_integer", "Invalid integer: amount"))

	a := e.text(base, c.Phone, shop.SMSNumber, "YES")
	require.Equal(t, "booked", a.Outcome, a.Body)
	e.eventually("booking failed", func() bool { return e.opening(base, shop, op.ID).Status == "open" })
	got := e.opening(base, shop, op.ID)
	require.Equal(t, "payment_failed", got.Booking.Status)
	require.Equal(t, 2, e.count(`SELECT generation FROM slot_openings WHERE id = $1`, op.ID))
	e.eventually("lapsed text", func() bool {
		texts := e.textsTo(c.Phone)
		return len(texts) == 2 && strings.Contains(texts[1], "has lapsed")
	})
	e.swept()
	require.Equal(t, 2, e.stripe.Count(http.MethodPost, "/v1/checkout/sessions"), "the YES path's attempt and the sweep's, no retries")
}

// TestStripeEventUnstorablePayload: a signed event whose JSON Postgres's jsonb refuses
// (a \u0000 escape) is stored cleaned and applied: 200, not a 500 Stripe would retry for
// days.
func TestStripeEventUnstorablePayload(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(nil, fastTune)
	shop, _, op := e.booked(base, "+15553350001")
	b := op.Booking
	id := evtID()
	p := event{id: id, typ: stripe.EventCheckoutCompleted, booking: b.ID, session: b.SessionID, intent: "pi_nul"}.payload()
	var m map[string]any
	require.NoError(t, json.Unmarshal(p, &m))
	// A NUL in a string is valid JSON (Go writes it \u0000); jsonb refuses it.
	// metadata is kept when the payload is stored (customer_details is personal data and
	// is dropped), so the NUL goes there.
	obj := m["data"].(map[string]any)["object"].(map[string]any)
	md, _ := obj["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
	}
	md["note"] = "Ana\x00 B"
	obj["metadata"] = md
	p, err := json.Marshal(m)
	require.NoError(t, err)
	require.Contains(t, string(p), `"Ana\u0000 B"`)
	r := e.postStripe(base, p, stripe.SignedTestPayload(p, webhookSecret, time.Now()))
	require.Equal(t, http.StatusOK, r.Status, r.Body)
	require.Equal(t, "confirmed", r.Result)
	require.Equal(t, "confirmed", e.opening(base, shop, op.ID).Booking.Status)
	require.Equal(t, 1, e.count(`SELECT count(*) FROM stripe_events WHERE event_id = $1 AND payload #>> '{data,object,metadata,note}' = $2`, id, "Ana\uFFFD B"))
}

// TestSimulateStripe: `server simulate stripe` signs an event with the configured
// secret and sends it to a running server.
func TestSimulateStripe(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(nil, fastTune)
	shop, _, op := e.booked(base, "+15558880001")
	getenv := func(k string) string {
		return map[string]string{"STRIPE_WEBHOOK_SECRET": webhookSecret + ",whsec_old"}[k]
	}
	var out bytes.Buffer
	err := run(context.Background(), []string{"simulate", "stripe", "--url", base, "--type", stripe.EventCheckoutExpired, "--booking", op.Booking.ID}, getenv, &out, io.Discard)
	require.NoError(t, err, out.String())
	require.Contains(t, out.String(), "HTTP 200")
	require.Contains(t, out.String(), `"result":"reopened"`)
	require.Equal(t, "open", e.opening(base, shop, op.ID).Status)

	out.Reset()
	err = run(context.Background(), []string{"simulate", "stripe", "--url", base, "--type", stripe.EventCheckoutCompleted, "--booking", op.Booking.ID, "--age", "10m"}, getenv, &out, io.Discard)
	require.Error(t, err, "a stale signature is refused")
	require.Contains(t, out.String(), "HTTP 400")

	out.Reset()
	err = run(context.Background(), []string{"simulate", "stripe", "--url", base, "--type", stripe.EventCheckoutCompleted, "--booking", op.Booking.ID, "--id", "evt_sim_fixed"}, getenv, &out, io.Discard)
	require.NoError(t, err, out.String())
	require.Contains(t, out.String(), `"result":"confirmed_late"`)

	// Signed with the real secret, an event is as good as Stripe's: the target is never
	// guessed from PUBLIC_URL outside DEV_MODE.
	before := e.count(`SELECT count(*) FROM stripe_events`)
	withPublic := func(k string) string {
		return map[string]string{"STRIPE_WEBHOOK_SECRET": webhookSecret, "PUBLIC_URL": base}[k]
	}
	out.Reset()
	err = run(context.Background(), []string{"simulate", "stripe", "--type", stripe.EventCheckoutExpired, "--booking", op.Booking.ID}, withPublic, &out, io.Discard)
	require.ErrorContains(t, err, "--url is required")
	require.Equal(t, before, e.count(`SELECT count(*) FROM stripe_events`), "nothing sent")
	devMode := func(k string) string {
		return map[string]string{"STRIPE_WEBHOOK_SECRET": webhookSecret, "PUBLIC_URL": base, "DEV_MODE": "1"}[k]
	}
	out.Reset()
	err = run(context.Background(), []string{"simulate", "stripe", "--type", stripe.EventCheckoutExpired, "--booking", op.Booking.ID}, devMode, &out, io.Discard)
	require.NoError(t, err, out.String())
	require.Contains(t, out.String(), "POST "+base+webhooks.StripePath)
	require.Contains(t, out.String(), `"result":"kept_confirmed"`)
}

// TestStripeEventsConcurrent: the same event delivered many times at once acts once,
// and a completion racing an expiry always ends with the customer who paid holding a
// confirmed booking (confirmed then kept, or failed then taken back).
func TestStripeEventsConcurrent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(nil, fastTune)

	shop, _, op := e.booked(base, "+15559990001")
	b := op.Booking
	dup := event{id: evtID(), typ: stripe.EventCheckoutExpired, booking: b.ID, session: b.SessionID}
	const n = 12
	replies := make([]stripeReply, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if i%2 == 0 {
				replies[i], errs[i] = e.trySend(base, dup)
			} else {
				replies[i], errs[i] = e.trySend(base, event{id: evtID(), typ: stripe.EventCheckoutExpired, booking: b.ID, session: b.SessionID})
			}
		})
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	reopened := 0
	for _, r := range replies {
		require.Equal(t, http.StatusOK, r.Status, r.Body)
		require.Contains(t, []string{"reopened", "already_failed"}, r.Result)
		if r.Result == "reopened" && !r.Replayed {
			reopened++
		}
	}
	require.Equal(t, 1, reopened, "one delivery reopened it")
	require.Equal(t, 2, e.count(`SELECT generation FROM slot_openings WHERE id = $1`, op.ID))
	require.Equal(t, "open", e.opening(base, shop, op.ID).Status)

	for round := range 5 {
		shop, cs, op := e.booked(base, fmt.Sprintf("+1555999%04d", 100+round))
		b := op.Booking
		var done, expired stripeReply
		var doneErr, expiredErr error
		wg.Go(func() {
			done, doneErr = e.trySend(base, event{id: evtID(), typ: stripe.EventCheckoutCompleted, booking: b.ID, session: b.SessionID, intent: "pi_race"})
		})
		wg.Go(func() {
			expired, expiredErr = e.trySend(base, event{id: evtID(), typ: stripe.EventCheckoutExpired, booking: b.ID, session: b.SessionID})
		})
		wg.Wait()
		require.NoError(t, doneErr)
		require.NoError(t, expiredErr)
		require.Equal(t, http.StatusOK, done.Status, done.Body)
		require.Equal(t, http.StatusOK, expired.Status, expired.Body)
		got := e.opening(base, shop, op.ID)
		require.Equal(t, "filled", got.Status, "round %d: %s / %s", round, done.Result, expired.Result)
		require.Equal(t, cs[0].Phone, got.FilledBy.Phone)
		require.Equal(t, "confirmed", got.Booking.Status)
		require.Equal(t, b.ID, got.Booking.ID)
	}
	require.Zero(t, e.stripe.Count(http.MethodPost, "/v1/refunds"))
}
