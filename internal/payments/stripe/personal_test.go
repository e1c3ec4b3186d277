package stripe_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/payments"
	"github.com/slotrecovery/slotrecovery/internal/payments/stripe"
)

// TestStoredPayloadHoldsNoCustomerDetails: what Checkout collected of the customer (name,
// email, phone, address: customer_details and the like, an expanded payment intent's
// receipt email and its charges' billing details) is not in the payload kept with the
// stored event (an erasure, which finds a person by their customer row, could not find
// them there, and the server never reads those fields). What is kept is what
// ParseEvent reads: an allow-list, not a list of what to drop.
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
	requireKeptIsWhatIsRead(t, payload, got)
	var kept map[string]any
	require.NoError(t, json.Unmarshal(got.Payload, &kept))
	require.Equal(t, "pi_test_1", kept["data"].(map[string]any)["object"].(map[string]any)["payment_intent"],
		"an expanded payment intent is kept as its id")
}

// allowed are the fields a stored event may keep (the spec of storedEvent), by where
// they stand: the envelope, and data.object by the event's type.
var allowed = map[string][]string{
	"event":            {"id", "object", "type", "created", "api_version", "livemode", "account", "data"},
	"data":             {"object"},
	"checkout.session": {"id", "object", "client_reference_id", "metadata", "payment_intent", "payment_status", "amount_total", "currency"},
	"payment_intent":   {"id", "object", "metadata", "amount", "currency"},
	"account":          {"id", "object", "charges_enabled", "payouts_enabled", "details_submitted", "requirements"},
	"requirements":     {"currently_due"},
	"other":            {"id", "object"},
}

// requireKeptIsWhatIsRead checks the payload kept with ev, parsed from received: it
// holds no field but the allowed ones, an expanded payment intent is its id alone, and
// it reads as ev (requireKeptReadsTheSame): nothing read was left out.
func requireKeptIsWhatIsRead(t *testing.T, received []byte, ev payments.Event) {
	t.Helper()
	var kept map[string]any
	require.NoError(t, json.Unmarshal(ev.Payload, &kept), "%s", ev.Payload)
	only := func(m map[string]any, where string) {
		t.Helper()
		for k := range m {
			require.Contains(t, allowed[where], k, "%s keeps %q: %s (received %s)", where, k, ev.Payload, received)
		}
	}
	only(kept, "event")
	if data, ok := kept["data"].(map[string]any); ok {
		only(data, "data")
		if obj, ok := data["object"].(map[string]any); ok {
			where := "other"
			switch {
			case strings.HasPrefix(ev.Type, "checkout.session."):
				where = "checkout.session"
				if pi, ok := obj["payment_intent"]; ok && pi != nil {
					require.IsType(t, "", pi, "an expanded payment intent is kept as its id: %s", ev.Payload)
				}
			case strings.HasPrefix(ev.Type, "payment_intent."):
				where = "payment_intent"
			case ev.Type == stripe.EventAccountUpdated:
				where = "account"
				if r, ok := obj["requirements"].(map[string]any); ok {
					only(r, "requirements")
				}
			}
			only(obj, where)
		}
	}
	requireKeptReadsTheSame(t, received, ev)
}

// TestStoredAccountEventKeepsNoOwnerDetails: an account.updated event (a real one's
// shape: a custom account run by one person) carries the owner's name, date of birth,
// home address, phone, email, identity documents, bank account and the IP that accepted
// Stripe's terms, in data.object and in data.previous_attributes. The payload kept with
// the stored event, for RETENTION_DAYS, holds only what ParseEvent reads: the event's
// envelope and the account's id, charges_enabled, payouts_enabled, details_submitted and
// requirements.currently_due.
func TestStoredAccountEventKeepsNoOwnerDetails(t *testing.T) {
	t.Parallel()
	payload, err := os.ReadFile(filepath.Join("testdata", "account.updated.json"))
	require.NoError(t, err)
	got, err := stripe.ParseEvent(payload, sign(payload, whsecNew, time.Now()), []string{whsecNew}, 0)
	require.NoError(t, err)
	require.Equal(t, &payments.Account{ID: "acct_1OTAZ2Qe8yLkHn4c", ChargesEnabled: true, PayoutsEnabled: true, DetailsSubmitted: true,
		RequirementsDue: []string{"individual.verification.additional_document"}}, got.AccountState)
	for _, personal := range []string{"Ada", "Lovelace", "Augusta", "Byron", "1985", "Analytical", "N1 9GU", "7700900123",
		"ada.lovelace", "Grooming", "routing_number", "10-88-00", "2345", "STRIPE TEST BANK", "81.2.69.142", "Mozilla",
		"person_", "file_", "ba_", "dob", "individual\":", "company", "external_accounts", "tos_acceptance", "previous_attributes"} {
		require.NotContains(t, string(got.Payload), personal, "stored: %s", got.Payload)
	}
	require.JSONEq(t, `{
		"id": "evt_1OTAcQLkdIwHu7ixq2mH6Fv1", "object": "event", "account": "acct_1OTAZ2Qe8yLkHn4c",
		"api_version": "2023-10-16", "created": 1704715002, "livemode": false, "type": "account.updated",
		"data": {"object": {"id": "acct_1OTAZ2Qe8yLkHn4c", "object": "account", "charges_enabled": true,
			"payouts_enabled": true, "details_submitted": true,
			"requirements": {"currently_due": ["individual.verification.additional_document"]}}}
	}`, string(got.Payload))
	requireKeptReadsTheSame(t, payload, got)
}

// requireKeptReadsTheSame checks that the payload kept with an event reads, through
// ParseEvent, as the event it was kept from: nothing ParseEvent reads was left out.
func requireKeptReadsTheSame(t *testing.T, received []byte, ev payments.Event) {
	t.Helper()
	again, err := stripe.ParseEvent(ev.Payload, sign(ev.Payload, whsecNew, time.Now()), []string{whsecNew}, 0)
	require.NoError(t, err, "the kept payload parses: %s (received %s)", ev.Payload, received)
	again.Payload = ev.Payload
	require.Equal(t, ev, again, "the kept payload reads as the received one: %s (received %s)", ev.Payload, received)
}
