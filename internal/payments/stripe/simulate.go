package stripe

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v76/webhook"

	"github.com/slotrecovery/slotrecovery/internal/payments"
)

// testEventAmount and testEventCurrency price the objects in TestEventPayload.
const (
	testEventAmount   = 2500
	testEventCurrency = "usd"
)

// SignedTestPayload returns the Stripe-Signature header Stripe would send
// for payload signed with secret at ts (now when ts is zero). It is for
// tests and for simulating Stripe against a running server.
func SignedTestPayload(payload []byte, secret string, ts time.Time) string {
	return webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{
		Payload:   payload,
		Secret:    secret,
		Timestamp: ts,
	}).Header
}

// TestEventPayload returns the JSON body of a realistic test-mode Stripe
// event (API version 2023-10-16) of type typ. For checkout.session.* types
// data.object is a Checkout Session and for payment_intent.* types a
// PaymentIntent; both carry metadata.booking_id, and the session also
// client_reference_id, as CreateCheckout sets them. paymentStatus is the
// session's payment_status ("paid", "unpaid"); an empty paymentIntentID
// gives a session whose payment_intent is null. The amount is 2500 usd.
func TestEventPayload(id, typ, bookingID, sessionID, paymentIntentID, paymentStatus string, created time.Time) []byte {
	var object map[string]any
	switch {
	case strings.HasPrefix(typ, "payment_intent."):
		object = testPaymentIntent(typ, bookingID, paymentIntentID, created)
	default:
		object = testSession(typ, bookingID, sessionID, paymentIntentID, paymentStatus, created)
	}
	event := map[string]any{
		"id":               id,
		"object":           "event",
		"api_version":      "2023-10-16",
		"created":          created.Unix(),
		"data":             map[string]any{"object": object},
		"livemode":         false,
		"pending_webhooks": 1,
		"request":          map[string]any{"id": nil, "idempotency_key": nil},
		"type":             typ,
	}
	b, err := json.MarshalIndent(event, "", "  ")
	if err != nil {
		// Only maps, strings and numbers above: Marshal cannot fail.
		panic("payments: marshal test event: " + err.Error())
	}
	return b
}

func testSession(typ, bookingID, sessionID, paymentIntentID, paymentStatus string, created time.Time) map[string]any {
	status := sessionOpen
	switch typ {
	case EventCheckoutCompleted, EventCheckoutAsyncSucceeded, EventCheckoutAsyncFailed:
		status = sessionComplete
	case EventCheckoutExpired:
		status = sessionExpired
	}
	var payURL any
	if status == sessionOpen {
		payURL = "https://checkout.stripe.com/c/pay/" + sessionID
	}
	var pi any
	if paymentIntentID != "" {
		pi = paymentIntentID
	}
	return map[string]any{
		"id":                   sessionID,
		"object":               "checkout.session",
		"amount_subtotal":      testEventAmount,
		"amount_total":         testEventAmount,
		"cancel_url":           nil,
		"client_reference_id":  bookingID,
		"created":              created.Add(-10 * time.Minute).Unix(),
		"currency":             testEventCurrency,
		"customer":             nil,
		"customer_details":     nil,
		"expires_at":           created.Add(21 * time.Minute).Unix(),
		"livemode":             false,
		"metadata":             map[string]string{"booking_id": bookingID},
		"mode":                 "payment",
		"payment_intent":       pi,
		"payment_method_types": []string{"card"},
		"payment_status":       paymentStatus,
		"status":               status,
		"success_url":          "https://example.com/paid",
		"url":                  payURL,
	}
}

func testPaymentIntent(typ, bookingID, paymentIntentID string, created time.Time) map[string]any {
	status := "processing"
	var lastErr any
	var received int64
	switch typ {
	case EventPaymentFailed:
		status = "requires_payment_method"
		lastErr = map[string]any{
			"code":         "card_declined",
			"decline_code": "generic_decline",
			"message":      "Your card was declined.",
			"type":         "card_error",
		}
	case "payment_intent.succeeded":
		status = "succeeded"
		received = testEventAmount
	case "payment_intent.canceled":
		status = "canceled"
	}
	return map[string]any{
		"id":                   paymentIntentID,
		"object":               "payment_intent",
		"amount":               testEventAmount,
		"amount_received":      received,
		"created":              created.Add(-time.Minute).Unix(),
		"currency":             testEventCurrency,
		"last_payment_error":   lastErr,
		"livemode":             false,
		"metadata":             map[string]string{"booking_id": bookingID},
		"payment_method_types": []string{"card"},
		"status":               status,
	}
}

// OnAccount returns payload (an event's JSON) as a connected account's event: with
// "account" set, as Stripe sends events to a Connect endpoint. It is for tests and
// simulations; a payload that is not a JSON object is returned unchanged.
func OnAccount(payload []byte, account string) []byte {
	var ev map[string]json.RawMessage
	if err := json.Unmarshal(payload, &ev); err != nil || ev == nil {
		return payload
	}
	ev["account"], _ = json.Marshal(account)
	b, err := json.MarshalIndent(ev, "", "  ")
	if err != nil {
		return payload
	}
	return b
}

// TestAccountEventPayload returns the JSON body of a connected account's event of type
// typ (EventAccountUpdated or EventAccountDeauthorized), as Stripe sends it to a Connect
// endpoint: account.updated carries the account in the state st (st.ID is the account),
// account.application.deauthorized the platform's application.
func TestAccountEventPayload(id, typ string, st payments.Account, created time.Time) []byte {
	var object map[string]any
	if typ == EventAccountDeauthorized {
		object = map[string]any{"id": "ca_test_platform", "object": "application", "name": "Slot recovery"}
	} else {
		due := st.RequirementsDue
		if due == nil {
			due = []string{}
		}
		object = map[string]any{
			"id":                st.ID,
			"object":            "account",
			"type":              "standard",
			"charges_enabled":   st.ChargesEnabled,
			"payouts_enabled":   st.PayoutsEnabled,
			"details_submitted": st.DetailsSubmitted,
			"requirements": map[string]any{
				"currently_due": due, "eventually_due": due, "past_due": []string{}, "disabled_reason": nil,
			},
			"metadata": map[string]string{},
		}
	}
	event := map[string]any{
		"id":               id,
		"object":           "event",
		"account":          st.ID,
		"api_version":      "2023-10-16",
		"created":          created.Unix(),
		"data":             map[string]any{"object": object},
		"livemode":         false,
		"pending_webhooks": 1,
		"request":          map[string]any{"id": nil, "idempotency_key": nil},
		"type":             typ,
	}
	b, err := json.MarshalIndent(event, "", "  ")
	if err != nil {
		panic("payments: marshal test event: " + err.Error())
	}
	return b
}
