package twiliofake_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/sms"
	"github.com/slotrecovery/slotrecovery/internal/sms/twilio"
	"github.com/slotrecovery/slotrecovery/internal/testkit/twiliofake"
)

const statusPath = "/webhooks/twilio/status"

// receiver is a status callback endpoint that checks signatures with twilio-go's
// validator (against its own URL, as the server checks against PUBLIC_URL) and keeps
// the reports it accepted.
type receiver struct {
	srv    *httptest.Server
	v      *twilio.Validator
	answer int // what to answer a valid report with; 0 means 204

	mu      sync.Mutex
	reports []sms.DeliveryReport
	refused int
}

func newReceiver(t *testing.T, token string) *receiver {
	t.Helper()
	r := &receiver{v: twilio.NewValidator(token)}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != statusPath || req.Method != http.MethodPost {
			http.NotFound(w, req)
			return
		}
		if err := req.ParseForm(); err != nil {
			http.Error(w, "bad form", http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if !r.v.Valid(r.srv.URL+req.URL.RequestURI(), req.PostForm, req.Header.Get("X-Twilio-Signature")) {
			r.refused++
			http.Error(w, "bad signature", http.StatusForbidden)
			return
		}
		rep, err := twilio.ParseStatusCallback(req.PostForm)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.reports = append(r.reports, rep)
		if r.answer != 0 {
			w.WriteHeader(r.answer)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) URL() string { return r.srv.URL + statusPath }

func (r *receiver) got() ([]sms.DeliveryReport, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]sms.DeliveryReport(nil), r.reports...), r.refused
}

// sender returns a real Twilio sender pointed at fake whose texts carry callback.
func sender(t *testing.T, fake *twiliofake.Server, sid, token, callback string) *twilio.Sender {
	t.Helper()
	tw, err := twilio.New(twilio.Config{AccountSID: sid, AuthToken: token, APIURL: fake.URL(), StatusCallbackURL: callback})
	require.NoError(t, err)
	return tw
}

func TestRecordsStatusCallbackAndValidityPeriod(t *testing.T) {
	t.Parallel()
	fake := twiliofake.New(t)
	form := offer("+15555550167")
	form.Set("StatusCallback", "https://slots.example.test/webhooks/twilio/status")
	form.Set("ValidityPeriod", "900")
	status, _ := send(t, fake, form)
	require.Equal(t, http.StatusCreated, status)
	status, _ = send(t, fake, offer("+15555550168"))
	require.Equal(t, http.StatusCreated, status)

	msgs := fake.Messages()
	require.Len(t, msgs, 2)
	require.Equal(t, "https://slots.example.test/webhooks/twilio/status", msgs[0].StatusCallback)
	require.Equal(t, 15*time.Minute, msgs[0].ValidityPeriod)
	require.Empty(t, msgs[1].StatusCallback)
	require.Zero(t, msgs[1].ValidityPeriod)

	// Twilio refuses a callback that is not an absolute http(s) URL.
	bad := offer("+15555550169")
	bad.Set("StatusCallback", "ftp://slots.example.test/x")
	status, body := send(t, fake, bad)
	require.Equal(t, http.StatusBadRequest, status)
	require.EqualValues(t, 21609, body["code"])
	require.Equal(t, 2, fake.Count())
}

func TestReportPostsASignedStatusCallback(t *testing.T) {
	t.Parallel()
	fake := twiliofake.New(t)
	rcv := newReceiver(t, twiliofake.TestAuthToken)
	tw := sender(t, fake, twiliofake.TestAccountSID, twiliofake.TestAuthToken, rcv.URL())

	sid, err := tw.Text(t.Context(), sms.Message{From: "+15555550100", To: "+15555550167", Body: "Reply YES to book."})
	require.NoError(t, err)

	answer, err := fake.Report(t.Context(), sid, "sent", 0)
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, answer)
	answer, err = fake.Report(t.Context(), sid, "undelivered", 30005)
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, answer)

	reports, refused := rcv.got()
	require.Zero(t, refused)
	require.Equal(t, []sms.DeliveryReport{
		{MessageID: sid, Status: sms.DeliverySent, To: "+15555550167", From: "+15555550100"},
		{MessageID: sid, Status: sms.DeliveryUndelivered, Reason: sms.ReasonUnreachable, ErrorCode: 30005, To: "+15555550167", From: "+15555550100"},
	}, reports)

	cbs := fake.Callbacks()
	require.Len(t, cbs, 2)
	require.Equal(t, rcv.URL(), cbs[1].URL)
	require.Equal(t, "undelivered", cbs[1].Form.Get("MessageStatus"))
	require.Equal(t, "30005", cbs[1].Form.Get("ErrorCode"))
	require.Equal(t, twiliofake.TestAccountSID, cbs[1].Form.Get("AccountSid"))
	_, hasCode := cbs[0].Form["ErrorCode"]
	require.False(t, hasCode, "no ErrorCode without an error")
	require.Equal(t, twilio.Signature(twiliofake.TestAuthToken, rcv.URL(), cbs[1].Form), cbs[1].Signature)

	// The receiver's answer comes back as it is.
	rcv.mu.Lock()
	rcv.answer = http.StatusInternalServerError
	rcv.mu.Unlock()
	answer, err = fake.Report(t.Context(), sid, "delivered", 0)
	require.NoError(t, err)
	require.Equal(t, http.StatusInternalServerError, answer)
}

func TestReportIsSignedWithTheFakesToken(t *testing.T) {
	t.Parallel()
	const sid, token = "AC0be7e70123456789abcdef012345678a", "othertoken0123456789abcdef01234"
	fake := twiliofake.NewWithCreds(t, sid, token)
	rcv := newReceiver(t, twiliofake.TestAuthToken) // expects the default token
	tw := sender(t, fake, sid, token, rcv.URL())

	msid, err := tw.Text(t.Context(), sms.Message{From: "+15555550100", To: "+15555550167", Body: "hi"})
	require.NoError(t, err)
	answer, err := fake.Report(t.Context(), msid, "delivered", 0)
	require.NoError(t, err)
	require.Equal(t, http.StatusForbidden, answer)
	reports, refused := rcv.got()
	require.Empty(t, reports)
	require.Equal(t, 1, refused)
}

func TestReportWithoutCallback(t *testing.T) {
	t.Parallel()
	fake := twiliofake.New(t)
	tw := sender(t, fake, twiliofake.TestAccountSID, twiliofake.TestAuthToken, "")
	sid, err := tw.Text(t.Context(), sms.Message{From: "+15555550100", To: "+15555550167", Body: "hi"})
	require.NoError(t, err)

	_, err = fake.Report(t.Context(), sid, "delivered", 0)
	require.ErrorIs(t, err, twiliofake.ErrNoCallback)
	_, err = fake.Report(t.Context(), "SMnosuchmessage", "delivered", 0)
	require.ErrorIs(t, err, twiliofake.ErrNoCallback)
	require.Empty(t, fake.Callbacks())
}

func TestReportToAClosedReceiver(t *testing.T) {
	t.Parallel()
	fake := twiliofake.New(t)
	rcv := newReceiver(t, twiliofake.TestAuthToken)
	tw := sender(t, fake, twiliofake.TestAccountSID, twiliofake.TestAuthToken, rcv.URL())
	sid, err := tw.Text(t.Context(), sms.Message{From: "+15555550100", To: "+15555550167", Body: "hi"})
	require.NoError(t, err)
	rcv.srv.Close()

	answer, err := fake.Report(t.Context(), sid, "delivered", 0)
	require.Error(t, err)
	require.False(t, errors.Is(err, twiliofake.ErrNoCallback))
	require.Zero(t, answer)
	cbs := fake.Callbacks()
	require.Len(t, cbs, 1)
	require.Error(t, cbs[0].Err)
}

func TestAutoReport(t *testing.T) {
	t.Parallel()
	fake := twiliofake.New(t)
	rcv := newReceiver(t, twiliofake.TestAuthToken)
	tw := sender(t, fake, twiliofake.TestAccountSID, twiliofake.TestAuthToken, rcv.URL())
	fake.AutoReport(true)
	fake.UndeliverNumber("+15555550168", 30003)

	ok, err := tw.Text(t.Context(), sms.Message{From: "+15555550100", To: "+15555550167", Body: "hi"})
	require.NoError(t, err)
	off, err := tw.Text(t.Context(), sms.Message{From: "+15555550100", To: "+15555550168", Body: "hi"})
	require.NoError(t, err)

	// The fake records a callback after the receiver has answered it: wait for both, so
	// no report is still in flight when Reset runs.
	require.Eventually(t, func() bool { r, _ := rcv.got(); return len(r) == 4 && len(fake.Callbacks()) == 4 }, 10*time.Second, 10*time.Millisecond)
	reports, _ := rcv.got()
	bySID := map[string][]sms.DeliveryReport{}
	for _, r := range reports {
		bySID[r.MessageID] = append(bySID[r.MessageID], r)
	}
	require.Equal(t, []sms.DeliveryStatus{sms.DeliverySent, sms.DeliveryDelivered},
		[]sms.DeliveryStatus{bySID[ok][0].Status, bySID[ok][1].Status}, "sent, then delivered, in order")
	require.Equal(t, []sms.DeliveryStatus{sms.DeliverySent, sms.DeliveryUndelivered},
		[]sms.DeliveryStatus{bySID[off][0].Status, bySID[off][1].Status})
	require.Equal(t, 30003, bySID[off][1].ErrorCode)

	// Off again (Reset turns it off too): no more reports.
	fake.Reset()
	_, err = tw.Text(t.Context(), sms.Message{From: "+15555550100", To: "+15555550167", Body: "hi"})
	require.NoError(t, err)
	time.Sleep(100 * time.Millisecond)
	reports, _ = rcv.got()
	require.Len(t, reports, 4)
	require.Empty(t, fake.Callbacks(), "Reset forgets the callbacks made")
}

// TestAutoReportStopsAtCleanup: a receiver that never answers does not keep the fake's
// cleanup waiting for Twilio's 15 s.
func TestAutoReportStopsAtCleanup(t *testing.T) {
	t.Parallel()
	hang := make(chan struct{})
	stuck := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(stuck.Close)
	t.Cleanup(func() { close(hang) })

	start := time.Now()
	t.Run("fake", func(t *testing.T) {
		fake := twiliofake.New(t)
		fake.AutoReport(true)
		tw := sender(t, fake, twiliofake.TestAccountSID, twiliofake.TestAuthToken, stuck.URL+statusPath)
		_, err := tw.Text(t.Context(), sms.Message{From: "+15555550100", To: "+15555550167", Body: "hi"})
		require.NoError(t, err)
	})
	require.Less(t, time.Since(start), 10*time.Second)
}
