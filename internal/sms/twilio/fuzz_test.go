package twilio_test

import (
	"net/url"
	"testing"

	"github.com/slotrecovery/slotrecovery/internal/sms/twilio"
)

// FuzzValidator: whatever the URL's query, the form fields and the signature header,
// Valid never panics; a signature made as Twilio makes it (twilio.Signature) over the
// first value of each field is accepted, extra values of a field change nothing (the
// handler reads first values too); and changing the URL, a value or the signature
// makes it fail.
func FuzzValidator(f *testing.F) {
	f.Add("", "From", "+15555550123", "Body", "YES", "", false)
	f.Add("a=1&b=2", "Body", "Yes please!", "OptOutType", "START", "Body", true)
	f.Add("x=%zz", "", "", "MessageSid", "SM0123", "AAAA", false)
	f.Add("", "Body", "héllo\x00\xff", "To", "+15555550100", "not base64!", true)
	f.Fuzz(func(t *testing.T, query, k1, v1, k2, v2, sig string, dup bool) {
		const token = "test-auth-token-0123456789"
		v := twilio.NewValidator(token)
		u := "https://slots.example.test/webhooks/twilio/sms"
		if query != "" {
			u += "?" + query
		}
		params := url.Values{}
		params.Set(k1, v1)
		params.Set(k2, v2)

		_ = v.Valid(u, params, sig) // arbitrary input: no panic

		good := twilio.Signature(token, u, params)
		if !v.Valid(u, params, good) {
			t.Fatalf("a correct signature is refused: url %q params %q", u, params)
		}
		if sig != good && v.Valid(u, params, sig) {
			t.Fatalf("signature %q accepted for url %q params %q", sig, u, params)
		}
		if dup {
			withDup := url.Values{}
			for k, vs := range params {
				withDup[k] = append([]string{vs[0]}, "injected", vs[0]+"x")
			}
			if !v.Valid(u, withDup, good) {
				t.Fatalf("extra values after the signed first one changed the verdict")
			}
		}
		tampered := url.Values{}
		for k, vs := range params {
			tampered[k] = []string{vs[0] + "!"}
		}
		if v.Valid(u, tampered, good) {
			t.Fatalf("a changed value kept its signature valid: %q", tampered)
		}
		if v.Valid(u+"&more=1", params, good) {
			t.Fatalf("a changed URL kept its signature valid")
		}
	})
}
