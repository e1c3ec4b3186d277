package webhooks

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/slotrecovery/slotrecovery/internal/sms/twilio"
)

// BenchmarkVerifyTwilio: decoding and checking a real inbound text's form (the fields
// Twilio sends) as verifyTwilio does, against http.Request.ParseForm and Valid.
func BenchmarkVerifyTwilio(b *testing.B) {
	const token = "bench-auth-token-0123456789"
	const publicURL = "https://slots.example.test"
	form := url.Values{}
	for k, v := range map[string]string{
		"ToCountry": "US", "ToState": "CA", "SmsMessageSid": "SM0123456789abcdef0123456789abcdef",
		"NumMedia": "0", "ToCity": "SAN FRANCISCO", "FromZip": "94105", "SmsSid": "SM0123456789abcdef0123456789abcdef",
		"FromState": "CA", "SmsStatus": "received", "FromCity": "SAN FRANCISCO", "Body": "YES",
		"FromCountry": "US", "To": "+15555550100", "MessagingServiceSid": "MG0123456789abcdef0123456789abcdef",
		"ToZip": "94105", "NumSegments": "1", "MessageSid": "SM0123456789abcdef0123456789abcdef",
		"AccountSid": "AC0123456789abcdef0123456789abcdef", "From": "+15555550123", "ApiVersion": "2010-04-01",
	} {
		form.Set(k, v)
	}
	body := form.Encode()
	sig := twilio.Signature(token, publicURL+TwilioPath, form)
	v := twilio.NewValidator(token)
	e := echo.New()
	newReq := func() *http.Request {
		r := httptest.NewRequest(http.MethodPost, TwilioPath, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set(SignatureHeader, sig)
		return r
	}
	b.Run("readForm", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			c := e.NewContext(newReq(), httptest.NewRecorder())
			b.StartTimer()
			if _, f, err := verifyTwilio(c, v, publicURL, nil); err != nil || f.get("Body") != "YES" {
				b.Fatal(err)
			}
		}
	})
	b.Run("ParseForm", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			r := newReq()
			b.StartTimer()
			if err := r.ParseForm(); err != nil || !v.Valid(publicURL+r.URL.RequestURI(), r.PostForm, sig) || r.PostForm.Get("Body") != "YES" {
				b.Fatal("refused")
			}
		}
	})
}
