package loadkit

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/sms/twilio"
)

// TestFireRetriesAndReportsAsTwilio: the driver behaves as Twilio does with connection
// overrides on the inbound URL. A text whose instance dies with the request in it (the
// connection closed, no answer) or answers 500 is sent again, to the next instance, as
// rp=all allows and up to rc retries; without overrides it is not (Twilio's default).
// An answer whose <Message> has an action URL is reported there once, signed as Twilio
// signs (the URL without its fragment), with the answer message's own MessageSid,
// MessageStatus and the numbers, and a report the instance fails is tried again.
func TestFireRetriesAndReportsAsTwilio(t *testing.T) {
	t.Parallel()
	const token = "loadkit-test-token"
	action := PublicURL + "/webhooks/twilio/answered?for=SM1&outcome=taken#rc=5&rp=all"
	var mu sync.Mutex
	var reports []url.Values
	var reportFails atomic.Int64
	reportFails.Store(1)
	v := twilio.NewValidator(token)
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.NoError(t, r.ParseForm())
		if r.URL.Path == "/webhooks/twilio/answered" {
			if reportFails.Add(-1) >= 0 {
				http.Error(w, "down", http.StatusServiceUnavailable)
				return
			}
			if !v.Valid(PublicURL+r.URL.RequestURI(), r.PostForm, r.Header.Get("X-Twilio-Signature")) {
				http.Error(w, "bad signature", http.StatusForbidden)
				return
			}
			mu.Lock()
			reports = append(reports, r.PostForm)
			mu.Unlock()
			return
		}
		w.Header().Set("X-Slot-Outcome", "taken")
		_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<Response><Message action="` +
			strings.ReplaceAll(action, "&", "&amp;") + `" method="POST">It&#39;s taken</Message></Response>`))
	}))
	t.Cleanup(ok.Close)
	dies := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := http.NewResponseController(w).Hijack()
		require.NoError(t, err)
		_ = conn.Close() // killed with the request in it
	}))
	t.Cleanup(dies.Close)
	fails := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "internal error", http.StatusInternalServerError)
	}))
	t.Cleanup(fails.Close)

	o, err := ParseOverrides("#rc=3&rp=all&rt=5000")
	require.NoError(t, err)
	d := &Driver{Client: NewClient(), AccountSID: "AC0123", AuthToken: token, Overrides: &o}
	text := d.Yes("+16660000001", "+15550000001")
	answers, _ := d.Fire(t.Context(), []string{dies.URL, fails.URL, ok.URL}, []url.Values{text}, 1, true)
	require.NoError(t, answers[0].Err)
	require.Equal(t, "taken", answers[0].Outcome)
	require.Equal(t, 3, answers[0].Attempts, "killed, then 500, then answered")
	require.Equal(t, action, answers[0].Action)
	require.Equal(t, int64(1), d.Reported.Load())
	require.Zero(t, d.ReportsLost.Load())
	require.Len(t, reports, 1)
	r := reports[0]
	require.Equal(t, "sent", r.Get("MessageStatus"))
	require.Equal(t, r.Get("MessageSid"), r.Get("SmsSid"))
	require.NotEqual(t, text.Get("MessageSid"), r.Get("MessageSid"), "the answer's own message")
	require.Equal(t, text.Get("To"), r.Get("From"))
	require.Equal(t, text.Get("From"), r.Get("To"))

	// Twilio's default: a request that left is not sent again.
	plain := &Driver{Client: NewClient(), AccountSID: "AC0123", AuthToken: token}
	answers, _ = plain.Fire(t.Context(), []string{dies.URL, ok.URL}, []url.Values{plain.Yes("+16660000002", "+15550000001")}, 1, true)
	require.Error(t, answers[0].Err)
	require.Equal(t, 1, answers[0].Attempts)
	// rc bounds the retries.
	one, err := ParseOverrides("rc=1&rp=all")
	require.NoError(t, err)
	plain.Overrides = &one
	answers, _ = plain.Fire(t.Context(), []string{dies.URL, fails.URL, ok.URL}, []url.Values{plain.Yes("+16660000003", "+15550000001")}, 1, true)
	require.Equal(t, "http_500", answers[0].Outcome)
	require.Equal(t, 2, answers[0].Attempts)
}
