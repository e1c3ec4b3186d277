package stripe_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/slotrecovery/slotrecovery/internal/payments"
	"github.com/slotrecovery/slotrecovery/internal/payments/stripe"
)

// FuzzParseEvent: any body, signed as Stripe signs, either decodes into an event whose
// id and type are the body's own, or fails with payments.ErrBadPayload (a 400, never a
// panic or a 500); the same body under a wrong secret or a stale timestamp fails with
// payments.ErrBadSignature. A decoded event has one of the ledger's kinds and carries, as
// its payload, what was read of the body and nothing else, which reads as the same
// event. Error texts stay short: they are logged.
func FuzzParseEvent(f *testing.F) {
	kinds := []payments.EventKind{payments.EventPaid, payments.EventPending, payments.EventFailed,
		payments.EventExpired, payments.EventAccountChanged, payments.EventOther}
	created := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	f.Add(stripe.TestEventPayload("evt_1", stripe.EventCheckoutCompleted, "bk_1", "cs_1", "pi_1", stripe.PaymentPaid, created))
	f.Add(stripe.TestEventPayload("evt_2", stripe.EventPaymentFailed, "bk_2", "", "pi_2", "", created))
	for _, name := range []string{"checkout.session.completed.json", "payment_intent.payment_failed.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		``, `null`, `{}`, `[]`, `{"id":"evt_x","type":"checkout.session.completed"}`,
		`{"id":"evt_x","type":"checkout.session.completed","data":{"object":null}}`,
		`{"id":"evt_x","type":"checkout.session.expired","data":{"object":{"payment_intent":{"id":7}}}}`,
		`{"id":"evt_x","type":"payment_intent.payment_failed","data":{"object":{"metadata":{"booking_id":1}}}}`,
		`{"id":"evt_x","type":"customer.created","data":{"object":"\u0000"}}`,
		`{"id":"evt_x","id":"evt_y","type":"checkout.session.completed","data":{"object":{"metadata":{"booking_id":"a","booking_id":"b"}}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		const secret = "whsec_fuzz_secret"
		now := time.Now()
		ev, err := stripe.ParseEvent(payload, sign(payload, secret, now), []string{"whsec_other", secret}, 0)
		if err != nil {
			if !errors.Is(err, payments.ErrBadPayload) || errors.Is(err, payments.ErrBadSignature) {
				t.Fatalf("a signed body failed with %v, want only ErrBadPayload", err)
			}
			if len(err.Error()) > 1024 {
				t.Fatalf("error text of %d bytes", len(err.Error()))
			}
		} else {
			var head struct {
				ID   string `json:"id"`
				Type string `json:"type"`
			}
			if jerr := json.Unmarshal(payload, &head); jerr != nil {
				t.Fatalf("accepted a body encoding/json refuses (%v): %q", jerr, payload)
			}
			if ev.ID == "" || ev.Type == "" || ev.ID != head.ID || ev.Type != head.Type {
				t.Fatalf("event %q/%q, body says %q/%q", ev.ID, ev.Type, head.ID, head.Type)
			}
			if !slices.Contains(kinds, ev.Kind) {
				t.Fatalf("event %q of type %q has kind %q", ev.ID, ev.Type, ev.Kind)
			}
			// What was read of the body, and nothing else: it reads the same.
			requireKeptIsWhatIsRead(t, payload, ev)
		}
		for name, header := range map[string]string{
			"wrong secret": sign(payload, "whsec_attacker", now),
			"stale":        sign(payload, secret, now.Add(-10*time.Minute)),
			"garbage":      string(payload),
		} {
			if _, err := stripe.ParseEvent(payload, header, []string{secret}, 0); !errors.Is(err, payments.ErrBadSignature) {
				t.Fatalf("%s: err = %v, want ErrBadSignature", name, err)
			}
		}
	})
}
