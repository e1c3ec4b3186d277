package twilio_test

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"net"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/twilio/twilio-go/client"

	"github.com/slotrecovery/slotrecovery/internal/sms/twilio"
)

// sign is Twilio's signature of u and the first value of each field, made independently
// of both validators.
func sign(token, u string, params url.Values) string {
	keys := make([]string, 0, len(params))
	for k, vs := range params {
		if len(vs) > 0 {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	s := u
	for _, k := range keys {
		s += k + params[k][0]
	}
	mac := hmac.New(sha1.New, []byte(token))
	mac.Write([]byte(s))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// twilioGo is twilio-go's own verdict, which Valid must match in every case.
func twilioGo(token, u string, params url.Values, sig string) bool {
	m := map[string]string{}
	for k, vs := range params {
		if len(vs) > 0 {
			m[k] = vs[0]
		}
	}
	rv := client.NewRequestValidator(token)
	return rv.Validate(u, m, sig)
}

// TestValidatorAgreesWithTwilioGo: Valid's fast path (the URL as given, one HMAC) never
// changes a verdict. Over URLs with and without default and other ports, with queries,
// and forms with odd names and values, each signed over every variant of its URL, with
// the wrong token, tampered or not base64 at all, Valid answers as twilio-go's
// RequestValidator.Validate does, and accepts what Twilio signs.
func TestValidatorAgreesWithTwilioGo(t *testing.T) {
	const token = "test-auth-token-0123456789"
	urls := []string{
		"https://slots.example.test/webhooks/twilio/sms",
		"https://slots.example.test:443/webhooks/twilio/sms",
		"https://slots.example.test:8443/webhooks/twilio/sms",
		"http://slots.example.test/webhooks/twilio/sms",
		"http://slots.example.test:80/webhooks/twilio/sms?a=1&b=%20",
		"https://slots.example.test/webhooks/twilio/sms?x=%zz",
		"https://user:pw@slots.example.test/webhooks/twilio/sms#frag",
		"https://[::1]/webhooks/twilio/sms",
		"https://[::1]:443/webhooks/twilio/sms",
		"not a url at all",
		"",
	}
	forms := []url.Values{
		{},
		{"From": {"+15555550123"}, "To": {"+15555550100"}, "Body": {"YES"}, "MessageSid": {"SM0123"}},
		{"Body": {"héllo\x00\xff"}, "": {"empty name"}, "a": {""}, "B": {"upper sorts first"}},
		{"Body": {"first", "second"}, "OptOutType": {"START"}},
		{"Empty": {}, "Body": {"a field with no value is not signed"}},
	}
	variants := func(u string) []string {
		out := []string{u}
		p, err := url.Parse(u)
		if err != nil || p.Host == "" {
			return out
		}
		host := p.Hostname()
		if p.Port() == "" {
			for _, port := range []string{"443", "80"} {
				q := *p
				q.Host = net.JoinHostPort(host, port)
				out = append(out, q.String())
			}
		} else {
			q := *p
			q.Host = host
			if strings.Contains(host, ":") {
				q.Host = "[" + host + "]"
			}
			out = append(out, q.String())
		}
		return out
	}
	v := twilio.NewValidator(token)
	cases, accepted := 0, 0
	for _, u := range urls {
		for _, form := range forms {
			var sigs []string
			for _, signed := range variants(u) {
				sigs = append(sigs, sign(token, signed, form), sign("another-token", signed, form))
			}
			good := sign(token, u, form)
			sigs = append(sigs, "", "AAAA", good[:27], good+"=", "not base64 at all, 28 chars!", twilio.Signature(token, u, form))
			for _, sig := range sigs {
				want := twilioGo(token, u, form, sig)
				if got := v.Valid(u, form, sig); got != want {
					t.Errorf("url %q form %q signature %q: Valid says %v, twilio-go %v", u, form, sig, got, want)
				}
				cases++
				if want {
					accepted++
				}
			}
			if !v.Valid(u, form, good) {
				t.Errorf("url %q form %q: Twilio's signature of the URL as given is refused", u, form)
			}
		}
	}
	if accepted == 0 || accepted == cases {
		t.Fatalf("the cases do not test both verdicts: %d of %d accepted", accepted, cases)
	}
	t.Logf("%d cases, %d accepted", cases, accepted)
}

// FuzzValidatorAgreesWithTwilioGo: for any URL, two fields and a signature, Valid
// answers as twilio-go's RequestValidator.Validate does, for that signature and for
// the signatures of the URL with its default port added and removed.
func FuzzValidatorAgreesWithTwilioGo(f *testing.F) {
	f.Add("https://slots.example.test/webhooks/twilio/sms", "Body", "YES", "From", "+15555550123", "")
	f.Add("https://slots.example.test:443/w?x=1", "", "", "To", "+1", "AAAA")
	f.Add("http://h:80/", "a", "\xff", "b", "\x00", "not base64!")
	f.Fuzz(func(t *testing.T, u, k1, v1, k2, v2, sig string) {
		const token = "fuzz-token"
		v := twilio.NewValidator(token)
		form := url.Values{}
		form.Set(k1, v1)
		form.Add(k2, v2)
		sigs := []string{sig, sign(token, u, form)}
		if p, err := url.Parse(u); err == nil && p.Host != "" {
			q := *p
			q.Host = p.Hostname()
			sigs = append(sigs, sign(token, q.String(), form))
			q.Host = p.Hostname() + ":443"
			sigs = append(sigs, sign(token, q.String(), form))
		}
		for _, s := range sigs {
			if got, want := v.Valid(u, form, s), twilioGo(token, u, form, s); got != want {
				t.Fatalf("url %q form %q signature %q: Valid says %v, twilio-go %v", u, form, s, got, want)
			}
		}
	})
}

// BenchmarkValidator: a real inbound text's form, signed over the configured URL.
func BenchmarkValidator(b *testing.B) {
	const token = "bench-auth-token-0123456789"
	u := "https://slots.example.test/webhooks/twilio/sms"
	form := url.Values{}
	for k, val := range map[string]string{
		"ToCountry": "US", "ToState": "CA", "SmsMessageSid": "SM0123456789abcdef0123456789abcdef",
		"NumMedia": "0", "ToCity": "", "FromZip": "", "SmsSid": "SM0123456789abcdef0123456789abcdef",
		"FromState": "CA", "SmsStatus": "received", "FromCity": "", "Body": "YES", "FromCountry": "US",
		"To": "+15555550100", "ToZip": "", "NumSegments": "1", "MessageSid": "SM0123456789abcdef0123456789abcdef",
		"AccountSid": "AC0123456789abcdef0123456789abcdef", "From": "+15555550123", "ApiVersion": "2010-04-01",
	} {
		form.Set(k, val)
	}
	sig := sign(token, u, form)
	b.Run("twilio-go", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !twilioGo(token, u, form, sig) {
				b.Fatal("refused")
			}
		}
	})
	b.Run("Valid", func(b *testing.B) {
		v := twilio.NewValidator(token)
		b.ReportAllocs()
		for b.Loop() {
			if !v.Valid(u, form, sig) {
				b.Fatal("refused")
			}
		}
	})
}
