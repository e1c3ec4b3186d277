package stripe_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/payments/stripe"
)

// TestStoredPayloadHoldsNoCustomerDetails: what Checkout collected of the customer (name,
// email, phone, address: customer_details and the like) is not in the payload kept with
// the stored event (issue 29.6: an erasure, which finds a person by their customer row,
// could not find them there; the server never reads those fields). Everything else is
// kept as received.
func TestStoredPayloadHoldsNoCustomerDetails(t *testing.T) {
	t.Parallel()
	var ev map[string]any
	require.NoError(t, json.Unmarshal(stripe.TestEventPayload("evt_pii", stripe.EventCheckoutCompleted, "bk_1", "cs_test_1",
		"pi_test_1", stripe.PaymentPaid, time.Now()), &ev))
	obj := ev["data"].(map[string]any)["object"].(map[string]any)
	obj["customer_details"] = map[string]any{"email": "ada@example.test", "name": "Ada Lovelace", "phone": "+15557310042",
		"address": map[string]any{"line1": "12 Analytical Row", "postal_code": "10001"}}
	obj["customer_email"] = "ada@example.test"
	obj["shipping_details"] = map[string]any{"name": "Ada Lovelace", "address": map[string]any{"line1": "12 Analytical Row"}}
	obj["payment_intent"] = map[string]any{"id": "pi_test_1", "object": "payment_intent", "receipt_email": "ada@example.test",
		"charges": map[string]any{"data": []any{map[string]any{"billing_details": map[string]any{"name": "Ada Lovelace"}}}}}
	payload, err := json.Marshal(ev)
	require.NoError(t, err)

	got, err := stripe.ParseEvent(payload, sign(payload, whsecNew, time.Now()), []string{whsecNew}, 0)
	require.NoError(t, err)
	for _, personal := range []string{"Ada", "Lovelace", "ada@example.test", "5557310042", "Analytical", "10001"} {
		require.NotContains(t, string(got.Payload), personal)
	}
	require.Equal(t, "bk_1", got.BookingID)
	require.Equal(t, "pi_test_1", got.PaymentIntentID)

	// The rest is as received.
	for _, k := range []string{"customer_details", "customer_email", "shipping_details"} {
		delete(obj, k)
	}
	pi := obj["payment_intent"].(map[string]any)
	delete(pi, "receipt_email")
	delete(pi["charges"].(map[string]any)["data"].([]any)[0].(map[string]any), "billing_details")
	var want, have any
	b, err := json.Marshal(ev)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &want))
	require.NoError(t, json.NewDecoder(bytes.NewReader(got.Payload)).Decode(&have))
	require.Equal(t, want, have)
}

// requireReceivedLessPersonal checks that kept is received with every non-null personal
// field left out (customer_details, customer_email, collected_information,
// shipping_details, shipping, billing_details, receipt_email; and a customer object's
// name, email, phone, address, description), and nothing else changed.
func requireReceivedLessPersonal(t *testing.T, received, kept []byte) {
	t.Helper()
	var want, have any
	require.NoError(t, json.Unmarshal(received, &want))
	require.NoError(t, json.Unmarshal(kept, &have))
	var strip func(v any)
	strip = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for _, k := range []string{"customer_details", "customer_email", "collected_information", "shipping_details",
				"shipping", "billing_details", "receipt_email"} {
				if x[k] != nil {
					delete(x, k)
				}
			}
			if x["object"] == "customer" {
				for _, k := range []string{"name", "email", "phone", "address", "description"} {
					if x[k] != nil {
						delete(x, k)
					}
				}
			}
			for _, c := range x {
				strip(c)
			}
		case []any:
			for _, c := range x {
				strip(c)
			}
		}
	}
	strip(want)
	require.Equal(t, want, have)
}

// holdsPersonal reports whether a JSON body holds a non-null personal field anywhere.
func holdsPersonal(body []byte) bool {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return false
	}
	var walk func(v any) bool
	walk = func(v any) bool {
		switch x := v.(type) {
		case map[string]any:
			for _, k := range []string{"customer_details", "customer_email", "collected_information", "shipping_details",
				"shipping", "billing_details", "receipt_email"} {
				if x[k] != nil {
					return true
				}
			}
			if x["object"] == "customer" {
				return true // its name, email, phone or address may go
			}
			for _, c := range x {
				if walk(c) {
					return true
				}
			}
		case []any:
			for _, c := range x {
				if walk(c) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}
