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
	"github.com/slotrecovery/slotrecovery/internal/sms"
	"github.com/slotrecovery/slotrecovery/internal/sms/twilio"
	"github.com/slotrecovery/slotrecovery/internal/webhooks"
)

// FuzzTwilioStatusHandler drives the status callback route with any body, content type
// and signature. Properties: never a panic or a 5xx (the recorder here never fails);
// a request that is not correctly signed is a 403 and reaches no recorder; a correctly
// signed one is either a 204 whose report carries exactly the form's first MessageSid
// (or SmsSid), To, From and ErrorCode, with a status and reason from the bounded sets,
// or a 400; every refusal is {error:{code,message}} JSON that does not leak the token.
// Signed bodies are signed here as Twilio signs them (twilio.Signature, first values).
func FuzzTwilioStatusHandler(f *testing.F) {
	const form = "application/x-www-form-urlencoded"
	f.Add("MessageSid=SM1&MessageStatus=delivered&To=%2B15555550167&From=%2B15555550100", form, "", true)
	f.Add("MessageSid=SM1&MessageStatus=undelivered&ErrorCode=30005&To=%2B15555550167", form, "", true)
	f.Add("MessageSid=SM1&MessageStatus=failed&ErrorCode=21612", form, "", true)
	f.Add("MessageSid=SM1&MessageStatus=failed&ErrorCode=21610", form, "", false)
	f.Add("SmsSid=SM2&SmsStatus=sent", form, "", true)
	f.Add("MessageSid=SM1&MessageStatus=delivered", form, "AAAA", false)
	f.Add("MessageSid=SM1&MessageStatus=delivered&ErrorCode=x", form, "", true)
	f.Add("MessageSid=SM1&MessageStatus=delivered&ErrorCode=-5", form, "", true)
	f.Add("MessageSid="+strings.Repeat("S", 65)+"&MessageStatus=sent", form, "", true)
	f.Add("MessageStatus=sent", form, "", true)
	f.Add("MessageSid=SM1&MessageStatus=sent&MessageStatus=failed&ErrorCode=1&ErrorCode=x", form, "", true)
	f.Add("MessageSid=%zz", form, "", true)
	f.Add("a=1;b=2", form, "sig", false)
	f.Add(`{"MessageSid":"SM1","MessageStatus":"delivered"}`, "application/json", "", true)
	f.Add("--x\r\nContent-Disposition: form-data; name=\"MessageSid\"\r\n\r\nSM1\r\n--x--\r\n", "multipart/form-data; boundary=x", "", true)

	const token = "fuzz-auth-token-0123456789"
	const publicURL = "https://slots.example.test"
	rec := &recorder{}
	h := &webhooks.TwilioStatus{
		Recorder: rec, Validator: twilio.NewValidator(token), PublicURL: publicURL,
		Logger: slog.New(slog.DiscardHandler),
	}
	e := echo.New()
	e.HTTPErrorHandler = httperr.Handler(nil)
	e.POST(webhooks.TwilioStatusPath, h.Handle)

	f.Fuzz(func(t *testing.T, body, contentType, sig string, signIt bool) {
		rec.mu.Lock()
		rec.reports = nil
		rec.mu.Unlock()

		parsed, parseErr := url.ParseQuery(body)
		signed := signIt && parseErr == nil && contentType == form
		var first url.Values
		if signed {
			first = url.Values{}
			for k, vs := range parsed {
				first.Set(k, vs[0])
			}
			sig = twilio.Signature(token, publicURL+webhooks.TwilioStatusPath, first)
		}
		req := httptest.NewRequest(http.MethodPost, webhooks.TwilioStatusPath, strings.NewReader(body))
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		if sig != "" {
			req.Header.Set(webhooks.SignatureHeader, sig)
		}
		res := httptest.NewRecorder()
		e.ServeHTTP(res, req)
		got := rec.got()

		switch {
		case res.Code == http.StatusNoContent:
			if !signed {
				t.Fatalf("an unsigned or forged request was accepted: body %q sig %q", body, sig)
			}
			if len(got) != 1 {
				t.Fatalf("204 with %d reports recorded", len(got))
			}
			want, err := twilio.ParseStatusCallback(first)
			if err != nil {
				t.Fatalf("204 for a form ParseStatusCallback refuses: %v", err)
			}
			r := got[0]
			if r != want {
				t.Fatalf("recorded %+v, want %+v", r, want)
			}
			sid := first.Get("MessageSid")
			if sid == "" {
				sid = first.Get("SmsSid")
			}
			if r.MessageID != sid || r.To != first.Get("To") || r.From != first.Get("From") {
				t.Fatalf("recorded %+v from form %q", r, first)
			}
			if r.Status == "" || (r.Status != sms.DeliveryUnknown && r.Status != sms.DeliveryStatus(first.Get("MessageStatus")) &&
				r.Status != sms.DeliveryStatus(first.Get("SmsStatus"))) {
				t.Fatalf("status %q from form %q", r.Status, first)
			}
			if r.Reason.String() == "" || (r.ErrorCode == 0 && r.Reason != sms.ReasonOther) {
				t.Fatalf("reason %v for code %d", r.Reason, r.ErrorCode)
			}
			return
		case res.Code == http.StatusForbidden:
			if signed {
				t.Fatalf("a correctly signed request was refused as forged: body %q", body)
			}
		case res.Code == http.StatusBadRequest:
			if sig == "" {
				t.Fatalf("an unsigned request was read (400) instead of refused (403)")
			}
		default:
			t.Fatalf("status %d for body %q content type %q: %s", res.Code, body, contentType, res.Body)
		}
		if len(got) != 0 {
			t.Fatalf("a refused request (%d) reached the recorder: %+v", res.Code, got)
		}
		var answer struct {
			Error struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		raw, _ := io.ReadAll(res.Body)
		if err := json.Unmarshal(raw, &answer); err != nil || answer.Error.Code == "" || answer.Error.Message == "" {
			t.Fatalf("error body %q is not {error:{code,message}}", raw)
		}
		if strings.Contains(string(raw), token) {
			t.Fatalf("the answer leaks the auth token")
		}
	})
}
