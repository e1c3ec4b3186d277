package webhooks_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/httperr"
	"github.com/slotrecovery/slotrecovery/internal/metrics"
	"github.com/slotrecovery/slotrecovery/internal/sms"
	"github.com/slotrecovery/slotrecovery/internal/sms/twilio"
	"github.com/slotrecovery/slotrecovery/internal/testkit/twiliofake"
	"github.com/slotrecovery/slotrecovery/internal/webhooks"
)

const testToken = "webhooktesttoken0123456789abcdef"

// recorder is a webhooks.DeliveryRecorder that keeps what it is given.
type recorder struct {
	mu      sync.Mutex
	reports []sms.DeliveryReport
	err     error // returned by RecordDelivery when set
}

func (r *recorder) RecordDelivery(_ context.Context, rep sms.DeliveryReport) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reports = append(r.reports, rep)
	return r.err
}

func (r *recorder) got() []sms.DeliveryReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]sms.DeliveryReport(nil), r.reports...)
}

// bodySpy notes whether anything read the request body.
type bodySpy struct {
	io.ReadCloser
	read *atomic.Bool
}

func (b bodySpy) Read(p []byte) (int, error) {
	b.read.Store(true)
	return b.ReadCloser.Read(p)
}

// statusServer serves the status route (and the inbound route, for its error answers)
// over real HTTP, behind the server's error handler. Every request body is wrapped so
// the test can tell whether the handler read it.
type statusServer struct {
	srv      *httptest.Server
	url      string // srv.URL + TwilioStatusPath, what Twilio would be configured with
	rec      *recorder
	reg      *prometheus.Registry
	bodyRead atomic.Bool
}

func newStatusServer(t *testing.T, verify bool, rec *recorder) *statusServer {
	t.Helper()
	s := &statusServer{rec: rec, reg: prometheus.NewRegistry()}
	var v *twilio.Validator
	if verify {
		v = twilio.NewValidator(testToken)
	}
	h := &webhooks.TwilioStatus{Validator: v, Metrics: metrics.New(s.reg)}
	if rec != nil {
		h.Recorder = rec // a nil *recorder must stay a nil interface
	}
	in := &webhooks.Twilio{Validator: v} // Inbound is nil: only its refusals are tested here
	e := echo.New()
	e.HTTPErrorHandler = httperr.Handler(nil)
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			req.Body = bodySpy{ReadCloser: req.Body, read: &s.bodyRead}
			return next(c)
		}
	})
	e.POST(webhooks.TwilioStatusPath, h.Handle)
	e.POST(webhooks.TwilioPath, in.Handle)
	s.srv = httptest.NewServer(e)
	t.Cleanup(s.srv.Close)
	h.PublicURL, in.PublicURL = s.srv.URL, s.srv.URL
	s.url = s.srv.URL + webhooks.TwilioStatusPath
	return s
}

type answer struct {
	status int
	body   []byte
	err    struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
}

// post sends form to path with the signature header sig ("" sends none).
func (s *statusServer) post(t *testing.T, path string, form url.Values, sig string) answer {
	t.Helper()
	return s.postRaw(t, path, form.Encode(), sig)
}

func (s *statusServer) postRaw(t *testing.T, path, body, sig string) answer {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.srv.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if sig != "" {
		req.Header.Set(webhooks.SignatureHeader, sig)
	}
	res, err := s.srv.Client().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	var a answer
	a.status = res.StatusCode
	a.body, err = io.ReadAll(res.Body)
	require.NoError(t, err)
	if a.status >= 400 {
		require.Equal(t, "application/json", strings.Split(res.Header.Get("Content-Type"), ";")[0], "error answers are JSON")
		require.NoError(t, json.Unmarshal(a.body, &a.err), "error body %q", a.body)
	}
	return a
}

func statusCallback(status, code string) url.Values {
	f := url.Values{
		"AccountSid":    {twiliofake.TestAccountSID},
		"ApiVersion":    {"2010-04-01"},
		"MessageSid":    {"SM0123456789abcdef0123456789abcdef"},
		"SmsSid":        {"SM0123456789abcdef0123456789abcdef"},
		"MessageStatus": {status},
		"SmsStatus":     {status},
		"From":          {"+15555550100"},
		"To":            {"+15555550167"},
	}
	if code != "" {
		f.Set("ErrorCode", code)
	}
	return f
}

func TestTwilioStatusRecordsSignedReport(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		form   url.Values
		want   sms.DeliveryReport
		labels map[string]string // the delivery report series counted
	}{
		{
			name: "delivered",
			form: statusCallback("delivered", ""),
			want: sms.DeliveryReport{MessageID: "SM0123456789abcdef0123456789abcdef", Status: sms.DeliveryDelivered,
				To: "+15555550167", From: "+15555550100"},
			labels: map[string]string{"status": "delivered", "reason": "other"},
		},
		{
			name: "opted out at the carrier",
			form: statusCallback("undelivered", "21610"),
			want: sms.DeliveryReport{MessageID: "SM0123456789abcdef0123456789abcdef", Status: sms.DeliveryUndelivered,
				Reason: sms.ReasonOptedOut, ErrorCode: 21610, To: "+15555550167", From: "+15555550100"},
			labels: map[string]string{"status": "undelivered", "reason": "opted_out"},
		},
		{
			name: "our account",
			form: statusCallback("failed", "21612"),
			want: sms.DeliveryReport{MessageID: "SM0123456789abcdef0123456789abcdef", Status: sms.DeliveryFailed,
				Reason: sms.ReasonAccount, ErrorCode: 21612, To: "+15555550167", From: "+15555550100"},
			labels: map[string]string{"status": "failed", "reason": "account"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			s := newStatusServer(t, true, rec)
			a := s.post(t, webhooks.TwilioStatusPath, tc.form, twilio.Signature(testToken, s.url, tc.form))
			require.Equal(t, http.StatusNoContent, a.status, "%s", a.body)
			require.Empty(t, a.body)
			require.True(t, s.bodyRead.Load(), "the spy sees a read body (so its false elsewhere means something)")
			require.Equal(t, []sms.DeliveryReport{tc.want}, rec.got())
			require.Equal(t, 1.0, counterValue(t, s.reg, "slotrecovery_sms_delivery_reports_total", tc.labels))
			if tc.want.Reason == sms.ReasonAccount {
				require.Equal(t, 1.0, counterValue(t, s.reg, "slotrecovery_sms_account_errors_total",
					map[string]string{"stage": "delivery", "code": "21612"}))
			}
		})
	}
}

// TestTwilioStatusRefusesUnsigned: without a signature the handler answers 403 before
// it reads a byte of the body, and the recorder hears nothing.
func TestTwilioStatusRefusesUnsigned(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	s := newStatusServer(t, true, rec)
	a := s.post(t, webhooks.TwilioStatusPath, statusCallback("delivered", ""), "")
	require.Equal(t, http.StatusForbidden, a.status)
	require.Equal(t, "bad_signature", a.err.Error.Code)
	require.Equal(t, "X-Twilio-Signature is missing or wrong", a.err.Error.Message)
	require.False(t, s.bodyRead.Load(), "the body was read before the request was known to be signed")
	require.Empty(t, rec.got())
}

// TestTwilioStatusRefusesForged: a signature that does not cover exactly this URL and
// these fields is refused (403) before any field is used.
func TestTwilioStatusRefusesForged(t *testing.T) {
	t.Parallel()
	form := statusCallback("undelivered", "21610")
	cases := []struct {
		name string
		sig  func(s *statusServer) string
		form url.Values
	}{
		{name: "garbage", sig: func(*statusServer) string { return "not-a-signature" }, form: form},
		{name: "another token", sig: func(s *statusServer) string { return twilio.Signature("othertoken", s.url, form) }, form: form},
		{name: "another url", sig: func(*statusServer) string {
			return twilio.Signature(testToken, "https://evil.example"+webhooks.TwilioStatusPath, form)
		}, form: form},
		{name: "the inbound route's signature", sig: func(s *statusServer) string {
			return twilio.Signature(testToken, s.srv.URL+webhooks.TwilioPath, form)
		}, form: form},
		{name: "a field changed after signing", sig: func(s *statusServer) string { return twilio.Signature(testToken, s.url, form) },
			form: func() url.Values { f := statusCallback("undelivered", "21610"); f.Set("To", "+15555550199"); return f }()},
		{name: "a field added after signing", sig: func(s *statusServer) string { return twilio.Signature(testToken, s.url, form) },
			form: func() url.Values { f := statusCallback("undelivered", "21610"); f.Set("Extra", "1"); return f }()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			s := newStatusServer(t, true, rec)
			a := s.post(t, webhooks.TwilioStatusPath, tc.form, tc.sig(s))
			require.Equal(t, http.StatusForbidden, a.status, "%s", a.body)
			require.Equal(t, "bad_signature", a.err.Error.Code)
			require.Empty(t, rec.got(), "a forged report reached the recorder")
			require.Zero(t, counterValue(t, s.reg, "slotrecovery_sms_delivery_reports_total", nil))
		})
	}
}

func TestTwilioStatusBadForm(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		form url.Values
	}{
		{name: "no sid", form: func() url.Values {
			f := statusCallback("delivered", "")
			f.Del("MessageSid")
			f.Del("SmsSid")
			return f
		}()},
		{name: "no status", form: func() url.Values {
			f := statusCallback("delivered", "")
			f.Del("MessageStatus")
			f.Del("SmsStatus")
			return f
		}()},
		{name: "error code not a number", form: statusCallback("failed", "2161O")},
		{name: "sid too long", form: func() url.Values {
			f := statusCallback("delivered", "")
			f.Set("MessageSid", "SM"+strings.Repeat("a", 80))
			return f
		}()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			s := newStatusServer(t, true, rec)
			a := s.post(t, webhooks.TwilioStatusPath, tc.form, twilio.Signature(testToken, s.url, tc.form))
			require.Equal(t, http.StatusBadRequest, a.status, "%s", a.body)
			require.Equal(t, "bad_request", a.err.Error.Code)
			require.Empty(t, rec.got())
		})
	}

	t.Run("malformed body", func(t *testing.T) {
		t.Parallel()
		s := newStatusServer(t, true, &recorder{})
		a := s.postRaw(t, webhooks.TwilioStatusPath, "MessageSid=%zz", "c2lnbmF0dXJl")
		require.Equal(t, http.StatusBadRequest, a.status)
		require.Equal(t, "bad_request", a.err.Error.Code)
		require.Equal(t, "malformed form body", a.err.Error.Message)
	})
}

// TestTwilioStatusRecorderError: a report the domain could not record is a 500, so that
// Twilio may deliver it again; the answer says nothing of the cause.
func TestTwilioStatusRecorderError(t *testing.T) {
	t.Parallel()
	rec := &recorder{err: errors.New("postgres: connection refused at 10.0.0.7")}
	s := newStatusServer(t, true, rec)
	form := statusCallback("delivered", "")
	a := s.post(t, webhooks.TwilioStatusPath, form, twilio.Signature(testToken, s.url, form))
	require.Equal(t, http.StatusInternalServerError, a.status)
	require.Equal(t, "internal", a.err.Error.Code)
	require.NotContains(t, string(a.body), "10.0.0.7")
	require.Len(t, rec.got(), 1)
	require.Zero(t, counterValue(t, s.reg, "slotrecovery_sms_delivery_reports_total", nil), "counted once it is recorded, not per attempt")
}

func TestTwilioStatusWithoutRecorder(t *testing.T) {
	t.Parallel()
	s := newStatusServer(t, true, nil)
	form := statusCallback("sent", "")
	a := s.post(t, webhooks.TwilioStatusPath, form, twilio.Signature(testToken, s.url, form))
	require.Equal(t, http.StatusNoContent, a.status)

	a = s.post(t, webhooks.TwilioStatusPath, form, "")
	require.Equal(t, http.StatusForbidden, a.status, "no recorder still means verified")
}

// TestTwilioStatusDevMode: without a validator (DEV_MODE, no Twilio credentials)
// unsigned reports are taken, as inbound texts are.
func TestTwilioStatusDevMode(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	s := newStatusServer(t, false, rec)
	a := s.post(t, webhooks.TwilioStatusPath, statusCallback("delivered", ""), "")
	require.Equal(t, http.StatusNoContent, a.status)
	require.Len(t, rec.got(), 1)
}

// TestTwilioStatusFromTheFake: the sender's StatusCallback, the fake's signed report and
// the handler's check agree end to end, over real HTTP.
func TestTwilioStatusFromTheFake(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	fake := twiliofake.NewWithCreds(t, twiliofake.TestAccountSID, testToken)
	s := newStatusServer(t, true, rec)
	tw, err := twilio.New(twilio.Config{AccountSID: twiliofake.TestAccountSID, AuthToken: testToken, APIURL: fake.URL(), StatusCallbackURL: s.url})
	require.NoError(t, err)

	sid, err := tw.Text(t.Context(), sms.Message{From: "+15555550100", To: "+15555550167", Body: "Slot free 15:00. Reply YES."})
	require.NoError(t, err)
	answer, err := fake.Report(t.Context(), sid, "undelivered", 30034)
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, answer)
	require.Equal(t, []sms.DeliveryReport{{MessageID: sid, Status: sms.DeliveryUndelivered, Reason: sms.ReasonAccount,
		ErrorCode: 30034, To: "+15555550167", From: "+15555550100"}}, rec.got())
}

// TestTwilioInboundErrorAnswers: the inbound route's refusals go through httperr with
// the same statuses and JSON as before.
func TestTwilioInboundErrorAnswers(t *testing.T) {
	t.Parallel()
	s := newStatusServer(t, true, nil)
	inboundURL := s.srv.URL + webhooks.TwilioPath
	text := url.Values{"MessageSid": {"SM1"}, "From": {"+15555550167"}, "To": {"+15555550100"}, "Body": {"YES"}}

	a := s.post(t, webhooks.TwilioPath, text, "")
	require.Equal(t, http.StatusForbidden, a.status)
	require.JSONEq(t, `{"error":{"code":"bad_signature","message":"X-Twilio-Signature is missing or wrong"}}`, string(a.body))
	require.False(t, s.bodyRead.Load(), "an unsigned text is refused unread")

	a = s.post(t, webhooks.TwilioPath, text, twilio.Signature("othertoken", inboundURL, text))
	require.Equal(t, http.StatusForbidden, a.status)
	require.JSONEq(t, `{"error":{"code":"bad_signature","message":"X-Twilio-Signature is missing or wrong"}}`, string(a.body))

	noSID := url.Values{"From": {"+15555550167"}, "To": {"+15555550100"}, "Body": {"YES"}}
	a = s.post(t, webhooks.TwilioPath, noSID, twilio.Signature(testToken, inboundURL, noSID))
	require.Equal(t, http.StatusBadRequest, a.status)
	require.JSONEq(t, `{"error":{"code":"bad_request","message":"MessageSid, From and To are required"}}`, string(a.body))

	a = s.postRaw(t, webhooks.TwilioPath, "Body=%zz", "c2lnbmF0dXJl")
	require.Equal(t, http.StatusBadRequest, a.status)
	require.JSONEq(t, `{"error":{"code":"bad_request","message":"malformed form body"}}`, string(a.body))
}

// counterValue sums the counter name's series whose labels include labels (nil: all).
func counterValue(t *testing.T, g prometheus.Gatherer, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := g.Gather()
	require.NoError(t, err)
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if want, ok := labels[lp.GetName()]; ok && want != lp.GetValue() {
					continue next
				}
			}
			sum += m.GetCounter().GetValue()
		}
	}
	return sum
}
