package webhooks_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/slotrecovery/slotrecovery/internal/httperr"
	"github.com/slotrecovery/slotrecovery/internal/sms/twilio"
	"github.com/slotrecovery/slotrecovery/internal/webhooks"
)

// FuzzTwilioHandler drives the inbound-text handler with any body, content type and
// signature. Everything that must be refused before the domain is reached is refused
// cleanly: a bad or missing signature is 403, a body that is not a form or lacks
// MessageSid/From/To is 400, both as {error:{code,message}} JSON, never a panic or a
// 5xx. Correctly signed bodies are signed here as Twilio signs them; the ones that
// would reach the domain (which needs Postgres) are left to the end-to-end tests.
func FuzzTwilioHandler(f *testing.F) {
	f.Add("MessageSid=SM1&From=%2B15555550123&To=%2B15555550100&Body=YES", "application/x-www-form-urlencoded", "", false)
	f.Add("MessageSid=SM1&From=%2B15555550123&To=%2B15555550100&Body=YES", "application/x-www-form-urlencoded", "", true)
	f.Add("From=%2B15555550123&To=%2B15555550100&Body=YES", "application/x-www-form-urlencoded", "", true)
	f.Add("MessageSid="+strings.Repeat("S", 65)+"&From=x&To=y", "application/x-www-form-urlencoded", "", true)
	f.Add("Body=%zz&MessageSid=SM1", "application/x-www-form-urlencoded", "", true)
	f.Add("a=1;b=2", "application/x-www-form-urlencoded", "AAAA", false)
	f.Add(`{"MessageSid":"SM1"}`, "application/json", "", true)
	f.Add("--x\r\nContent-Disposition: form-data; name=\"Body\"\r\n\r\nYES\r\n--x--\r\n", "multipart/form-data; boundary=x", "", true)
	f.Add("SmsSid=SM2&From=&To=%2B1", "", "sig", true)

	const token = "fuzz-auth-token-0123456789"
	const publicURL = "https://slots.example.test"
	h := &webhooks.Twilio{
		Validator: twilio.NewValidator(token), PublicURL: publicURL,
		Logger: slog.New(slog.DiscardHandler), // Offers is nil: reaching it would panic
	}
	e := echo.New()
	e.HTTPErrorHandler = httperr.Handler(nil)
	e.POST(webhooks.TwilioPath, h.Handle)

	f.Fuzz(func(t *testing.T, body, contentType, sig string, signIt bool) {
		form, formErr := url.ParseQuery(body)
		isForm := contentType == "application/x-www-form-urlencoded"
		if signIt && formErr == nil && isForm {
			first := url.Values{}
			for k, vs := range form {
				first.Set(k, vs[0])
			}
			sig = twilio.Signature(token, publicURL+webhooks.TwilioPath, first)
			sid := cmpOr(form.Get("MessageSid"), form.Get("SmsSid"))
			if sid != "" && form.Get("From") != "" && form.Get("To") != "" && len(sid) <= 64 {
				return // a valid, signed text: the domain's to answer
			}
		}
		req := httptest.NewRequest(http.MethodPost, webhooks.TwilioPath, strings.NewReader(body))
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		req.Header.Set("X-Twilio-Signature", sig)
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)

		if rec.Code != http.StatusBadRequest && rec.Code != http.StatusForbidden {
			t.Fatalf("status %d for body %q content type %q: %s", rec.Code, body, contentType, rec.Body)
		}
		if rec.Header().Get(webhooks.OutcomeHeader) != "" {
			t.Fatalf("a refused request got an outcome")
		}
		var got struct {
			Error struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		raw, _ := io.ReadAll(rec.Body)
		if err := json.Unmarshal(raw, &got); err != nil || got.Error.Code == "" || got.Error.Message == "" {
			t.Fatalf("error body %q is not {error:{code,message}}", raw)
		}
		if strings.Contains(string(raw), token) {
			t.Fatalf("the answer leaks the auth token")
		}
	})
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
