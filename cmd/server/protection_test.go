package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/api"
	"github.com/slotrecovery/slotrecovery/internal/payments/stripe"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/testkit/stripetest"
	"github.com/slotrecovery/slotrecovery/internal/webhooks"
)

// protectedBooking is one booking of TestNoShowProtectionOverHTTP.
type protectedBooking struct {
	opening, booking, session string
	// answer is the YES's answer.
	answer string
}

// bookProtected declares an opening of s starting in startsIn, has phone say YES to it,
// and returns the booking once its link is stored.
func (e *env) bookProtected(base string, s *connectShop, phone string, startsIn time.Duration) protectedBooking {
	e.t.Helper()
	e.declare(base, s, startsIn)
	op := s.openings[len(s.openings)-1]
	e.waveDone(op, 1, 1)
	yes := e.text(base, phone, s.SMSNumber, "YES")
	require.Equal(e.t, "booked", yes.Outcome)
	var o openingInfo
	e.eventually("link stored", func() bool {
		o = e.opening(base, s.shopInfo, op)
		return o.Booking != nil && o.Booking.SessionID != ""
	})
	return protectedBooking{opening: op, booking: o.Booking.ID, session: o.Booking.SessionID, answer: twimlMessage(e.t.(*testing.T), yes.Body)}
}

// keptCard makes the stand-in answer the read-back of b's checkout as one that kept card
// (a Stripe test payment method) for a customer on the shop's account.
func (e *env) keptCard(b protectedBooking, card string) {
	e.stripe.Respond(http.MethodGet, "/v1/checkout/sessions/"+b.session, http.StatusOK, `{"id":"`+b.session+
		`","object":"checkout.session","mode":"payment","status":"complete","customer":"cus_`+b.booking[:8]+
		`","payment_intent":{"id":"pi_dep_`+b.booking[:8]+`","object":"payment_intent","payment_method":"`+card+
		`","setup_future_usage":"off_session"}}`)
}

type attendanceAnswer struct {
	Attendance *string  `json:"attendance"`
	Fee        *api.Fee `json:"fee"`
}

// TestNoShowProtectionOverHTTP (issue 48), through the API and signed Connect events: a
// deposit shop's settings (refused when incomplete); a YES's checkout asks the deposit
// (20% of the price) on the shop's account with the platform's fee, keeps the card and
// shows the policy; the payment records the customer's acceptance of that policy
// version; marking the booking a no-show charges the accepted fee to the kept card, once
// however many clicks race over HTTP; a card that needs authentication answers
// requires_action and one without funds declined with Stripe's reason; a booking of a
// shop with no fee owes none.
func TestNoShowProtectionOverHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(connectVars, fastTune)
	s := e.newConnectShop(base, "usd")
	ctx := context.Background()

	var problem struct {
		Error struct{ Code, Message, Field string } `json:"error"`
	}
	require.Equal(t, http.StatusUnprocessableEntity, e.api(base, http.MethodPatch, "/api/shop", s.APIKey,
		map[string]any{"payment_mode": "deposit"}, &problem), "a deposit shop needs its deposit")
	require.Contains(t, problem.Error.Message, "deposit_cents or deposit_percent")
	require.Equal(t, http.StatusUnprocessableEntity, e.api(base, http.MethodPatch, "/api/shop", s.APIKey,
		map[string]any{"cancellation_policy": strings.Repeat("x", 501)}, nil))
	require.Equal(t, http.StatusUnprocessableEntity, e.api(base, http.MethodPatch, "/api/shop", s.APIKey,
		map[string]any{"payment_mode": "deposit", "deposit_cents": 10}, &problem), "below Stripe's smallest charge")
	require.Equal(t, "deposit_cents", problem.Error.Field)

	policy := "Free to cancel until 24 h before. After that, or if you do not come, $20 is charged to this card."
	var shop api.Shop
	require.Equal(t, http.StatusOK, e.api(base, http.MethodPatch, "/api/shop", s.APIKey, map[string]any{
		"payment_mode": "deposit", "deposit_percent": 20, "keep_card": true, "cancellation_policy": policy,
		"late_cancel_hours": 24, "no_show_fee_cents": 2000,
	}, &shop))
	require.Equal(t, "deposit", shop.PaymentMode)
	require.Equal(t, 20, *shop.DepositPercent)
	require.Nil(t, shop.DepositCents)
	require.True(t, shop.KeepCard)
	require.Equal(t, policy, shop.CancellationPolicy)
	require.Equal(t, int64(2000), shop.NoShowFeeCents)
	require.Equal(t, 1, shop.PolicyVersion)

	phones := []string{"+15550148001", "+15550148002", "+15550148003"}
	var customerIDs []string
	for _, p := range phones {
		customerIDs = append(customerIDs, e.newCustomer(base, s.shopInfo, p, true).ID)
	}

	// The deposit's checkout: 20% of $45.00 on the shop's account, 2.5% of it for the
	// platform, the card kept, the policy by the button.
	b := e.bookProtected(base, &s, phones[0], 3*time.Hour)
	var create *stripetest.Request
	for _, q := range e.stripe.Requests() {
		if q.Method == http.MethodPost && q.Path == "/v1/checkout/sessions" && q.Form.Get("metadata[booking_id]") == b.booking {
			create = &q
		}
	}
	require.NotNil(t, create)
	require.Equal(t, s.account, create.Account)
	require.Equal(t, "900", create.Form.Get("line_items[0][price_data][unit_amount]"))
	fee, ok := create.ApplicationFee()
	require.True(t, ok)
	require.Equal(t, int64(23), fee, "2.5% of $9.00, half up")
	require.Equal(t, "off_session", create.Form.Get("payment_intent_data[setup_future_usage]"))
	require.Equal(t, policy, create.Form.Get("custom_text[submit][message]"))
	require.True(t, strings.HasPrefix(create.Form.Get("line_items[0][price_data][product_data][name]"), "Deposit: Haircut"),
		create.Form.Get("line_items[0][price_data][product_data][name]"))

	// Paid: the acceptance is recorded with the booking.
	paid := event{id: evtID(), typ: stripe.EventCheckoutCompleted, booking: b.booking, session: b.session, intent: "pi_dep_1"}
	require.Equal(t, "confirmed", e.connectEvent(base, paid, s.account).Result)
	var prot api.BookingProtection
	require.Equal(t, http.StatusOK, e.api(base, http.MethodGet, "/api/bookings/"+b.booking+"/protection", s.APIKey, nil, &prot))
	require.Equal(t, "deposit", *prot.Mode)
	require.Equal(t, int64(4500), prot.PriceCents)
	require.Equal(t, int64(900), prot.DepositCents)
	require.Equal(t, int64(3600), prot.BalanceCents)
	require.True(t, prot.KeepCard)
	require.NotNil(t, prot.Policy)
	require.Equal(t, policy, prot.Policy.Text)
	require.Equal(t, shops.PolicySHA256(policy), prot.Policy.SHA256)
	require.Equal(t, 1, prot.Policy.Version)
	require.NotNil(t, prot.Policy.AcceptedAt)
	require.Equal(t, b.session, *prot.Policy.CheckoutSession)
	require.Nil(t, prot.Fee)
	require.Equal(t, http.StatusNotFound, e.api(base, http.MethodGet, "/api/bookings/"+b.booking+"/protection",
		e.newShop(base, "none", nil).APIKey, nil, nil), "another shop's booking")

	// The shop changes its fee afterwards: the booking keeps the one its customer accepted.
	require.Equal(t, http.StatusOK, e.api(base, http.MethodPatch, "/api/shop", s.APIKey, map[string]any{"no_show_fee_cents": 5000}, &shop))
	require.Equal(t, 2, shop.PolicyVersion)

	// Two more bookings, whose cards decline.
	needsAuth := e.bookProtected(base, &s, phones[1], 4*time.Hour)
	poor := e.bookProtected(base, &s, phones[2], 5*time.Hour)
	for _, x := range []protectedBooking{needsAuth, poor} {
		ev := event{id: evtID(), typ: stripe.EventCheckoutCompleted, booking: x.booking, session: x.session, intent: "pi_" + x.booking[:8]}
		require.Equal(t, "confirmed", e.connectEvent(base, ev, s.account).Result)
	}
	_, err := e.pool.Exec(ctx, `UPDATE slot_openings SET starts_at = now() - interval '2 hours' WHERE id = ANY($1::uuid[])`, s.openings)
	require.NoError(t, err)

	e.keptCard(needsAuth, stripetest.CardAuthenticationRequired)
	var a attendanceAnswer
	require.Equal(t, http.StatusOK, e.api(base, http.MethodPost, "/api/bookings/"+needsAuth.booking+"/no_show", s.APIKey, nil, &a))
	require.Equal(t, "no_show", *a.Attendance)
	require.NotNil(t, a.Fee)
	require.Equal(t, "requires_action", a.Fee.Outcome)
	require.Equal(t, int64(5000), a.Fee.AmountCents, "booked after the change: the new fee")
	// The customer is texted a page to pay it themselves: a Checkout of the fee on the
	// shop's account, whose payment is the fee's.
	var feePage *stripetest.Request
	for _, q := range e.stripe.Requests() {
		if q.Method == http.MethodPost && q.Path == "/v1/checkout/sessions" && q.Form.Get("metadata[fee]") == "no_show" {
			feePage = &q
		}
	}
	require.NotNil(t, feePage)
	require.Equal(t, needsAuth.booking, feePage.Form.Get("metadata[booking_id]"))
	require.Equal(t, "no_show", feePage.Form.Get("payment_intent_data[metadata][fee]"))
	require.Equal(t, "5000", feePage.Form.Get("line_items[0][price_data][unit_amount]"))
	require.Equal(t, s.account, feePage.Account)
	e.eventually("the fee's page texted", func() bool {
		for _, m := range e.twilio.MessagesTo(phones[1]) {
			if strings.Contains(m.Body, "your bank asks you to confirm the $50.00 fee") {
				return true
			}
		}
		return false
	})
	// They pay it: Stripe reports the fee's payment on the Connect endpoint.
	var paidFee map[string]any
	require.NoError(t, json.Unmarshal(stripe.TestEventPayload(evtID(), "payment_intent.succeeded", needsAuth.booking, "", "pi_fee_paid", "", time.Now()), &paidFee))
	paidFee["data"].(map[string]any)["object"].(map[string]any)["metadata"].(map[string]any)["fee"] = "no_show"
	body, err := json.Marshal(paidFee)
	require.NoError(t, err)
	r, err := e.postEvent(base, webhooks.StripeConnectPath, stripe.OnAccount(body, s.account), connectSecret)
	require.NoError(t, err)
	require.Equal(t, "fee_charged", r.Result)
	require.Equal(t, http.StatusOK, e.api(base, http.MethodGet, "/api/bookings/"+needsAuth.booking+"/protection", s.APIKey, nil, &prot))
	require.Equal(t, "charged", prot.Fee.Outcome)
	require.Equal(t, "pi_fee_paid", *prot.Fee.PaymentIntentID)
	r, err = e.postEvent(base, webhooks.StripeConnectPath, stripe.OnAccount(body, s.account), connectSecret)
	require.NoError(t, err)
	require.True(t, r.Replayed, "processed once")

	e.keptCard(poor, stripetest.CardInsufficientFunds)
	require.Equal(t, http.StatusOK, e.api(base, http.MethodPost, "/api/bookings/"+poor.booking+"/no_show", s.APIKey, nil, &a))
	require.Equal(t, "declined", a.Fee.Outcome)
	require.Equal(t, "insufficient_funds", *a.Fee.DeclineCode)
	require.Equal(t, "Your card has insufficient funds.", *a.Fee.Message)

	// The first booking: many clicks at once, one charge of the fee accepted ($20).
	e.keptCard(b, "pm_card_visa")
	e.stripe.Respond(http.MethodPost, "/v1/payment_intents", http.StatusOK,
		`{"id":"pi_fee_1","object":"payment_intent","status":"succeeded","amount":2000,"currency":"usd"}`)
	const clicks = 16
	var wg sync.WaitGroup
	answers := make([]attendanceAnswer, clicks)
	statuses := make([]int, clicks)
	for i := range clicks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i], answers[i] = e.tryMark(base, s.APIKey, b.booking)
		}()
	}
	wg.Wait()
	charged := 0
	for i := range clicks {
		require.Equal(t, http.StatusOK, statuses[i])
		require.NotNil(t, answers[i].Fee)
		require.Contains(t, []string{"charged", "pending"}, answers[i].Fee.Outcome)
		if answers[i].Fee.Outcome == "charged" {
			charged++
		}
	}
	require.GreaterOrEqual(t, charged, 1)
	n := 0
	for _, q := range e.stripe.Requests() {
		if q.Method == http.MethodPost && q.Path == "/v1/payment_intents" && q.Form.Get("metadata[booking_id]") == b.booking {
			n++
			require.Equal(t, s.account, q.Account)
			require.Equal(t, "2000", q.Form.Get("amount"))
			require.Equal(t, "50", q.Form.Get("application_fee_amount"), "2.5% of $20.00")
			require.Equal(t, "true", q.Form.Get("off_session"))
			require.Equal(t, "fee:no_show:"+b.booking+":"+s.account, q.IdempotencyKey)
		}
	}
	require.Equal(t, 1, n, "the fee is charged once")
	require.Equal(t, http.StatusOK, e.api(base, http.MethodGet, "/api/bookings/"+b.booking+"/protection", s.APIKey, nil, &prot))
	require.Equal(t, "charged", prot.Fee.Outcome)
	require.Equal(t, "pi_fee_1", *prot.Fee.PaymentIntentID)
	require.Equal(t, int64(50), prot.Fee.ApplicationFeeCents)

	// Taken back and marked again: still the one fee, no second charge.
	require.Equal(t, http.StatusOK, e.api(base, http.MethodDelete, "/api/bookings/"+b.booking+"/attendance", s.APIKey, nil, &a))
	require.Equal(t, "charged", a.Fee.Outcome, "taking the mark back refunds nothing")
	require.Equal(t, http.StatusOK, e.api(base, http.MethodPost, "/api/bookings/"+b.booking+"/no_show", s.APIKey, nil, &a))
	require.Equal(t, "charged", a.Fee.Outcome)
	require.Equal(t, 1, e.count(`SELECT count(*) FROM booking_fees WHERE booking_id = $1`, b.booking))
	total := 0
	for _, q := range e.stripe.Requests() {
		if q.Method == http.MethodPost && q.Path == "/v1/payment_intents" {
			total++
		}
	}
	require.Equal(t, 3, total, "one fee charge per booking")

	// The customer is erased: the proof of what they accepted is kept.
	require.Equal(t, http.StatusNoContent, e.api(base, http.MethodDelete, "/api/customers/"+customerIDs[0], s.APIKey, nil, nil))
	require.Equal(t, http.StatusOK, e.api(base, http.MethodGet, "/api/bookings/"+b.booking+"/protection", s.APIKey, nil, &prot))
	require.Equal(t, policy, prot.Policy.Text)
	require.Equal(t, shops.PolicySHA256(policy), prot.Policy.SHA256)
	require.NotNil(t, prot.Policy.AcceptedAt)
	require.Equal(t, "charged", prot.Fee.Outcome)
}

// tryMark posts a no-show mark off the test's goroutine.
func (e *env) tryMark(base, key, booking string) (int, attendanceAnswer) {
	req, err := http.NewRequest(http.MethodPost, base+"/api/bookings/"+booking+"/no_show", nil)
	if err != nil {
		return 0, attendanceAnswer{}
	}
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := e.client.Do(req)
	if err != nil {
		return 0, attendanceAnswer{}
	}
	defer res.Body.Close()
	var a attendanceAnswer
	if err := json.NewDecoder(res.Body).Decode(&a); err != nil {
		return res.StatusCode, attendanceAnswer{}
	}
	return res.StatusCode, a
}

// TestLateCancelOverHTTP (issue 48): a customer's "can't make it" applies the policy they
// accepted. Before late_cancel_hours the deposit is refunded in full (on the shop's
// account, with the platform's fee) and the answer says so; after it the deposit is kept,
// the late-cancel fee charged to the kept card once, and the answer says which. The
// owner's POST /api/bookings/{id}/late_cancel does the same for a customer who called:
// late inside the hours, refunded in full before them (no fee the accepted policy says
// is not owed); a fee left pending by a failed charge is charged when the owner asks
// again.
func TestLateCancelOverHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(connectVars, fastTune)
	s := e.newConnectShop(base, "usd")
	require.Equal(t, http.StatusOK, e.api(base, http.MethodPatch, "/api/shop", s.APIKey, map[string]any{
		"payment_mode": "deposit", "deposit_cents": 1000, "keep_card": true, "late_cancel_hours": 24, "late_cancel_fee_cents": 1500,
		"cancellation_policy": "Free to cancel until 24 h before; after that the deposit is kept and $15 charged.",
	}, nil))
	phones := []string{"+15550149001", "+15550149002", "+15550149003", "+15550149004", "+15550149005"}
	for _, p := range phones {
		e.newCustomer(base, s.shopInfo, p, true)
	}
	late := e.bookProtected(base, &s, phones[0], 3*time.Hour)
	early := e.bookProtected(base, &s, phones[1], 48*time.Hour)
	called := e.bookProtected(base, &s, phones[2], 5*time.Hour)
	calledEarly := e.bookProtected(base, &s, phones[3], 72*time.Hour)
	stuck := e.bookProtected(base, &s, phones[4], 6*time.Hour)
	require.Contains(t, early.answer, "Pay the deposit within")
	require.Contains(t, early.answer, "Free to cancel until ", "the booked answer says the policy in one line")
	require.True(t, strings.HasSuffix(early.answer, "; after, the deposit is kept and $15.00 charged."), early.answer)
	for _, x := range []protectedBooking{late, early, called, calledEarly, stuck} {
		ev := event{id: evtID(), typ: stripe.EventCheckoutCompleted, booking: x.booking, session: x.session, intent: "pi_" + x.booking[:8]}
		require.Equal(t, "confirmed", e.connectEvent(base, ev, s.account).Result)
	}
	e.stripe.Respond(http.MethodPost, "/v1/payment_intents", http.StatusOK,
		`{"id":"pi_late_fee","object":"payment_intent","status":"succeeded","amount":1500,"currency":"usd"}`)

	// Late: the deposit kept, the fee charged.
	e.keptCard(late, "pm_card_visa")
	a := e.text(base, phones[0], s.SMSNumber, "can't make it")
	require.Equal(t, "cancel_request", a.Outcome)
	require.Contains(t, twimlMessage(t, a.Body), "less than 24 h before: the deposit is kept and a $15.00 fee will be charged to your card")
	require.Equal(t, "cancelled", bookingStatus(e, late.booking))
	var prot api.BookingProtection
	require.Equal(t, http.StatusOK, e.api(base, http.MethodGet, "/api/bookings/"+late.booking+"/protection", s.APIKey, nil, &prot))
	require.NotNil(t, prot.Fee)
	require.Equal(t, "late_cancel", prot.Fee.Kind)
	require.Equal(t, "charged", prot.Fee.Outcome)
	require.Equal(t, int64(1500), prot.Fee.AmountCents)

	// Early: refunded in full.
	a = e.text(base, phones[1], s.SMSNumber, "can't make it")
	require.Equal(t, "cancel_request", a.Outcome)
	require.Contains(t, twimlMessage(t, a.Body), "refunded in full")
	require.Equal(t, http.StatusOK, e.api(base, http.MethodGet, "/api/bookings/"+early.booking+"/protection", s.APIKey, nil, &prot))
	require.Nil(t, prot.Fee)

	// The owner enters a late cancellation by phone.
	e.keptCard(called, "pm_card_visa")
	var lc api.LateCancellation
	require.Equal(t, http.StatusOK, e.api(base, http.MethodPost, "/api/bookings/"+called.booking+"/late_cancel", s.APIKey, nil, &lc))
	require.True(t, lc.Late)
	require.True(t, lc.DepositKept)
	require.False(t, lc.Refunded)
	require.Equal(t, "reopened", lc.Opening)
	require.Equal(t, "charged", lc.Fee.Outcome)
	require.Equal(t, http.StatusConflict, e.api(base, http.MethodPost, "/api/bookings/"+called.booking+"/late_cancel", s.APIKey, nil, nil),
		"cancelled already")

	// The owner enters a call three days ahead: the accepted policy says free, so the
	// deposit goes back and no fee is charged.
	e.keptCard(calledEarly, "pm_card_visa")
	lc = api.LateCancellation{}
	require.Equal(t, http.StatusOK, e.api(base, http.MethodPost, "/api/bookings/"+calledEarly.booking+"/late_cancel", s.APIKey, nil, &lc))
	require.False(t, lc.Late, "72 h ahead is before the policy's 24 h")
	require.False(t, lc.DepositKept)
	require.True(t, lc.Refunded)
	require.Nil(t, lc.Fee)

	// A charge that fails leaves the fee pending; the owner asking again charges it. Stripe
	// fails this booking's card read-back only (not the calls of the jobs running
	// beside: the early entry's refund).
	e.stripe.Respond(http.MethodGet, "/v1/checkout/sessions/"+stuck.session, http.StatusInternalServerError,
		`{"error":{"type":"api_error","message":"An unknown error occurred"}}`)
	lc = api.LateCancellation{}
	require.Equal(t, http.StatusOK, e.api(base, http.MethodPost, "/api/bookings/"+stuck.booking+"/late_cancel", s.APIKey, nil, &lc))
	require.True(t, lc.Late)
	require.NotNil(t, lc.Fee)
	require.Equal(t, "pending", lc.Fee.Outcome, "Stripe failed: the fee waits")
	// Stripe answers again, and the attempt grows stale (as after the provider's timeout
	// twice over).
	e.keptCard(stuck, "pm_card_visa")
	_, err := e.pool.Exec(context.Background(), `UPDATE booking_fees SET attempt_at = now() - interval '1 hour' WHERE booking_id = $1`, stuck.booking)
	require.NoError(t, err)
	lc = api.LateCancellation{}
	require.Equal(t, http.StatusOK, e.api(base, http.MethodPost, "/api/bookings/"+stuck.booking+"/late_cancel", s.APIKey, nil, &lc))
	require.NotNil(t, lc.Fee)
	require.Equal(t, "charged", lc.Fee.Outcome, "asked again: the pending fee is charged")
	lc = api.LateCancellation{}
	require.Equal(t, http.StatusConflict, e.api(base, http.MethodPost, "/api/bookings/"+stuck.booking+"/late_cancel", s.APIKey, nil, &lc),
		"charged: nothing left to do")

	e.settle("booking_refund")
	var refunds, fees []stripetest.Request
	for _, q := range e.stripe.Requests() {
		switch {
		case q.Method == http.MethodPost && q.Path == "/v1/refunds":
			refunds = append(refunds, q)
		case q.Method == http.MethodPost && q.Path == "/v1/payment_intents":
			fees = append(fees, q)
		}
	}
	require.Len(t, refunds, 2, "only the early cancellations' deposits go back (the text's and the owner's)")
	for _, r := range refunds {
		require.Equal(t, s.account, r.Account)
		require.True(t, r.RefundsApplicationFee())
	}
	charged := map[string]int{}
	for _, q := range fees {
		require.Equal(t, "1500", q.Form.Get("amount"))
		require.Equal(t, s.account, q.Account)
		charged[q.Form.Get("metadata[booking_id]")]++
	}
	require.Equal(t, map[string]int{late.booking: 1, called.booking: 1, stuck.booking: 1}, charged,
		"one late-cancel fee each for the late text and the owner's late entries (the stuck one's first try failed at Stripe before its charge); none for the early entry")
}

// TestCardModeOverHTTP (issue 48): a card shop's YES charges nothing: its page is
// Checkout in setup mode on the shop's account, the booked answer asks for a card, the
// completed page confirms the booking, and a no-show charges the fee to the card the
// setup kept.
func TestCardModeOverHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(connectVars, fastTune)
	s := e.newConnectShop(base, "usd")
	var shop api.Shop
	require.Equal(t, http.StatusOK, e.api(base, http.MethodPatch, "/api/shop", s.APIKey, map[string]any{
		"payment_mode": "card", "no_show_fee_cents": 2500, "cancellation_policy": "No-show: $25 charged to this card.",
	}, &shop))
	require.Equal(t, "card", shop.PaymentMode)
	phone := "+15550147001"
	e.newCustomer(base, s.shopInfo, phone, true)
	b := e.bookProtected(base, &s, phone, 3*time.Hour)
	require.Contains(t, b.answer, "Add a card within")

	var create *stripetest.Request
	for _, q := range e.stripe.Requests() {
		if q.Method == http.MethodPost && q.Path == "/v1/checkout/sessions" && q.Form.Get("metadata[booking_id]") == b.booking {
			create = &q
		}
	}
	require.NotNil(t, create)
	require.Equal(t, "setup", create.Form.Get("mode"))
	require.Empty(t, create.Form.Get("line_items[0][price_data][unit_amount]"), "nothing charged at the YES")
	require.Equal(t, s.account, create.Account)
	require.Equal(t, "No-show: $25 charged to this card.", create.Form.Get("custom_text[submit][message]"))

	done := event{id: evtID(), typ: stripe.EventCheckoutCompleted, booking: b.booking, session: b.session, paymentStatus: "no_payment_required"}
	require.Equal(t, "confirmed", e.connectEvent(base, done, s.account).Result)
	var prot api.BookingProtection
	require.Equal(t, http.StatusOK, e.api(base, http.MethodGet, "/api/bookings/"+b.booking+"/protection", s.APIKey, nil, &prot))
	require.Equal(t, "card", *prot.Mode)
	require.Zero(t, prot.ChargedCents)
	require.True(t, prot.KeepCard)
	require.NotNil(t, prot.Policy.AcceptedAt)

	_, err := e.pool.Exec(context.Background(), `UPDATE slot_openings SET starts_at = now() - interval '2 hours' WHERE id = $1`, b.opening)
	require.NoError(t, err)
	e.stripe.Respond(http.MethodGet, "/v1/checkout/sessions/"+b.session, http.StatusOK, `{"id":"`+b.session+
		`","object":"checkout.session","mode":"setup","status":"complete","customer":"cus_card",`+
		`"setup_intent":{"id":"seti_1","object":"setup_intent","payment_method":"pm_card_visa"}}`)
	e.stripe.Respond(http.MethodPost, "/v1/payment_intents", http.StatusOK,
		`{"id":"pi_card_fee","object":"payment_intent","status":"succeeded","amount":2500,"currency":"usd"}`)
	var a attendanceAnswer
	require.Equal(t, http.StatusOK, e.api(base, http.MethodPost, "/api/bookings/"+b.booking+"/no_show", s.APIKey, nil, &a))
	require.Equal(t, "charged", a.Fee.Outcome)
	require.Equal(t, int64(2500), a.Fee.AmountCents)
	var charge *stripetest.Request
	for _, q := range e.stripe.Requests() {
		if q.Method == http.MethodPost && q.Path == "/v1/payment_intents" {
			charge = &q
		}
	}
	require.NotNil(t, charge)
	require.Equal(t, "cus_card", charge.Form.Get("customer"))
	require.Equal(t, "pm_card_visa", charge.Form.Get("payment_method"))
	require.Equal(t, s.account, charge.Account)

	// A booking whose page was never completed kept no card: no_card, nothing charged.
	other := "+15550147002"
	e.newCustomer(base, s.shopInfo, other, true)
	unpaid := e.bookProtected(base, &s, other, 4*time.Hour)
	_, err = e.pool.Exec(context.Background(), `UPDATE slot_openings SET starts_at = now() - interval '1 hour' WHERE id = $1`, unpaid.opening)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, e.api(base, http.MethodPost, "/api/bookings/"+unpaid.booking+"/no_show", s.APIKey, nil, &a))
	require.Equal(t, "no_card", a.Fee.Outcome)
	require.Equal(t, 1, e.stripe.Count(http.MethodPost, "/v1/payment_intents"), "only the first booking's fee was charged")

	// A card booking took no money: its customer's cancellation refunds nothing, and
	// their answer does not promise a refund.
	third := "+15550147003"
	e.newCustomer(base, s.shopInfo, third, true)
	kept := e.bookProtected(base, &s, third, 48*time.Hour)
	done = event{id: evtID(), typ: stripe.EventCheckoutCompleted, booking: kept.booking, session: kept.session, paymentStatus: "no_payment_required"}
	require.Equal(t, "confirmed", e.connectEvent(base, done, s.account).Result)
	ans := e.text(base, third, s.SMSNumber, "can't make it")
	require.Equal(t, "cancel_request", ans.Outcome)
	require.NotContains(t, twimlMessage(t, ans.Body), "refund", "nothing was paid")
	require.Equal(t, "cancelled", bookingStatus(e, kept.booking))
	var asked *time.Time
	require.NoError(t, e.pool.QueryRow(context.Background(), `SELECT refund_requested_at FROM bookings WHERE id = $1`, kept.booking).Scan(&asked))
	require.Nil(t, asked, "no refund of a payment that was never made")
	require.Zero(t, e.stripe.Count(http.MethodPost, "/v1/refunds"))
}
