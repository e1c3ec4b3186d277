package twilio

import (
	"net/url"
	"testing"
)

// TestSignedAsGivenIsTheFastPath: the one-HMAC check accepts Twilio's signature of the
// URL as given (so twilio-go's double check runs only for the rare other URL forms) and
// nothing else; with a single value per field, Signature is that signature.
func TestSignedAsGivenIsTheFastPath(t *testing.T) {
	const token = "test-auth-token-0123456789"
	v := NewValidator(token)
	for _, u := range []string{
		"https://slots.example.test/webhooks/twilio/sms",
		"https://slots.example.test:443/webhooks/twilio/sms?a=1",
		"",
	} {
		for _, form := range []url.Values{
			{},
			{"From": {"+15555550123"}, "To": {"+15555550100"}, "Body": {"YES"}, "MessageSid": {"SM0123"}},
			{"Body": {"héllo\x00\xff"}, "": {"empty name"}, "a": {""}, "B": {"upper sorts first"}},
		} {
			good := Signature(token, u, form)
			if !v.signedAsGiven(u, form, good) {
				t.Errorf("url %q form %q: the signature of the URL as given is not accepted by the fast path", u, form)
			}
			for _, bad := range []string{Signature("another-token", u, form), Signature(token, u+"/", form), good[:27] + "A", ""} {
				if bad != good && v.signedAsGiven(u, form, bad) {
					t.Errorf("url %q form %q: signature %q accepted", u, form, bad)
				}
			}
			withExtra := url.Values{}
			for k, vs := range form {
				withExtra[k] = append([]string{vs[0]}, "a later value is not signed")
			}
			if !v.signedAsGiven(u, withExtra, good) {
				t.Errorf("url %q form %q: a later value of a field changed the verdict", u, withExtra)
			}
		}
	}
}

// TestValidFieldsIsValid: a form given as fields in the order sent, a name repeated,
// is judged as Valid judges it as url.Values (each name's first value signed).
func TestValidFieldsIsValid(t *testing.T) {
	const token = "test-auth-token-0123456789"
	const u = "https://slots.example.test/webhooks/twilio/sms"
	v := NewValidatorWithOverrides(token, "rc=3")
	fields := []Field{{"To", "+15555550100"}, {"Body", "YES"}, {"From", "+15555550123"}, {"Body", "later"}, {"", "x"}, {"MessageSid", "SM1"}}
	form := url.Values{}
	for _, f := range fields {
		form[f.Name] = append(form[f.Name], f.Value)
	}
	for _, sig := range []string{Signature(token, u, form), Signature(token, u+"#rc=3", form), Signature(token, u, url.Values{"Body": {"later"}}), Signature("other", u, form), ""} {
		if got, want := v.ValidFields(u, fields, sig), v.Valid(u, form, sig); got != want {
			t.Errorf("signature %q: ValidFields %v, Valid %v", sig, got, want)
		}
	}
	first := url.Values{}
	for k, vs := range form {
		first.Set(k, vs[0])
	}
	for _, sig := range []string{Signature(token, u, first), Signature(token, u+"#rc=3", first)} {
		if !v.ValidFields(u, fields, sig) || !v.Valid(u, form, sig) {
			t.Errorf("the signature of the first values %q refused", sig)
		}
	}
}
