package twilio_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/sms"
	"github.com/slotrecovery/slotrecovery/internal/sms/twilio"
	"github.com/slotrecovery/slotrecovery/internal/testkit/twiliofake"
)

const (
	shopNumber = "+15555550100"
	customer   = "+15555550167"
)

var sidRE = regexp.MustCompile(`^SM[0-9a-f]{32}$`)

// newSender returns a sender pointed at a fresh fake.
func newSender(t *testing.T) (*twilio.Sender, *twiliofake.Server) {
	t.Helper()
	fake := twiliofake.New(t)
	tw, err := twilio.New(twilio.Config{
		AccountSID: twiliofake.TestAccountSID,
		AuthToken:  twiliofake.TestAuthToken,
		APIURL:     fake.URL(),
	})
	require.NoError(t, err)
	return tw, fake
}

func TestTwilioTextRecordsMessage(t *testing.T) {
	t.Parallel()
	tw, fake := newSender(t)

	sid, err := tw.Text(t.Context(), sms.Message{
		From:           shopNumber,
		To:             customer,
		Body:           "Slot free today 15:00. Reply YES to book.",
		ValidityPeriod: 10 * time.Minute,
	})
	require.NoError(t, err)
	require.Regexp(t, sidRE, sid)

	msgs := fake.Messages()
	require.Len(t, msgs, 1)
	got := msgs[0]
	require.Equal(t, sid, got.SID)
	require.Equal(t, twiliofake.TestAccountSID, got.AccountSID)
	require.Equal(t, shopNumber, got.From)
	require.Equal(t, customer, got.To)
	require.Equal(t, "Slot free today 15:00. Reply YES to book.", got.Body)
	require.Equal(t, 10*time.Minute, got.ValidityPeriod)
	require.Equal(t, "600", got.Form.Get("ValidityPeriod"))
}

func TestTwilioTextStatusCallback(t *testing.T) {
	t.Parallel()
	fake := twiliofake.New(t)
	const hook = "https://slots.example.com/webhooks/twilio/status"
	with, err := twilio.New(twilio.Config{
		AccountSID: twiliofake.TestAccountSID, AuthToken: twiliofake.TestAuthToken,
		APIURL: fake.URL(), StatusCallbackURL: hook,
	})
	require.NoError(t, err)
	without, err := twilio.New(twilio.Config{
		AccountSID: twiliofake.TestAccountSID, AuthToken: twiliofake.TestAuthToken, APIURL: fake.URL(),
	})
	require.NoError(t, err)

	for i := range 3 {
		_, err := with.Text(t.Context(), sms.Message{From: shopNumber, To: customer, Body: fmt.Sprintf("offer %d", i), ValidityPeriod: time.Minute})
		require.NoError(t, err)
	}
	_, err = without.Text(t.Context(), sms.Message{From: shopNumber, To: "+15555550168", Body: "no hook"})
	require.NoError(t, err)

	for _, m := range fake.MessagesTo(customer) {
		require.Equal(t, hook, m.Form.Get("StatusCallback"), "every text carries the callback")
		require.Equal(t, "60", m.Form.Get("ValidityPeriod"), "alongside its validity period")
	}
	_, sent := fake.MessagesTo("+15555550168")[0].Form["StatusCallback"]
	require.False(t, sent, "no callback configured, none sent")
}

func TestTwilioTextValidityPeriod(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		in   time.Duration
		want string // the ValidityPeriod form field; "" means not sent
	}{
		{name: "zero is not sent", in: 0, want: ""},
		{name: "sub-second rounds up to 1", in: time.Millisecond, want: "1"},
		{name: "fraction rounds up", in: 1200 * time.Millisecond, want: "2"},
		{name: "whole seconds", in: 90 * time.Second, want: "90"},
		{name: "ten hours", in: 10 * time.Hour, want: "36000"},
		{name: "longer clamps to ten hours", in: 48 * time.Hour, want: "36000"},
	}
	tw, fake := newSender(t)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			to := fmt.Sprintf("+1555555%04d", i)
			_, err := tw.Text(t.Context(), sms.Message{From: shopNumber, To: to, Body: "hi", ValidityPeriod: tc.in})
			require.NoError(t, err)
			msgs := fake.MessagesTo(to)
			require.Len(t, msgs, 1)
			require.Equal(t, tc.want, msgs[0].Form.Get("ValidityPeriod"))
			_, sent := msgs[0].Form["ValidityPeriod"]
			require.Equal(t, tc.want != "", sent)
		})
	}
}

func TestTwilioTextInvalidMessage(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		msg  sms.Message
	}{
		{name: "no from", msg: sms.Message{To: customer, Body: "hi"}},
		{name: "no to", msg: sms.Message{From: shopNumber, Body: "hi"}},
		{name: "no body", msg: sms.Message{From: shopNumber, To: customer}},
		{name: "negative validity", msg: sms.Message{From: shopNumber, To: customer, Body: "hi", ValidityPeriod: -time.Second}},
	}
	tw, fake := newSender(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := tw.Text(t.Context(), tc.msg)
			require.ErrorIs(t, err, sms.ErrInvalidMessage)
			require.False(t, sms.Permanent(err))
		})
	}
	t.Cleanup(func() { require.Zero(t, fake.Attempts(), "invalid messages must not reach Twilio") })
}

func TestTwilioTextPermanentError(t *testing.T) {
	t.Parallel()
	tw, fake := newSender(t)
	fake.FailNumber(customer, 21610, http.StatusBadRequest)

	sid, err := tw.Text(t.Context(), sms.Message{From: shopNumber, To: customer, Body: "hi"})
	require.Error(t, err)
	require.Empty(t, sid)
	require.True(t, sms.Permanent(err))
	require.True(t, sms.OptedOut(err))

	var e *sms.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, sms.ReasonOptedOut, e.Reason)
	require.Equal(t, 21610, e.Code)
	require.Equal(t, http.StatusBadRequest, e.Status)
	require.Equal(t, "Attempt to send to unsubscribed recipient", e.Message)
	require.NotContains(t, err.Error(), customer, "error strings reach logs: no full phone numbers")
	require.Zero(t, fake.Count())

	// Other numbers are unaffected.
	_, err = tw.Text(t.Context(), sms.Message{From: shopNumber, To: "+15555550168", Body: "hi"})
	require.NoError(t, err)
}

func TestTwilioTextErrorClasses(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name         string
		code, status int
		reason       sms.Reason
	}{
		{name: "unsubscribed", code: 21610, status: 400, reason: sms.ReasonOptedOut},
		{name: "invalid to", code: 21211, status: 400, reason: sms.ReasonUnreachable},
		{name: "not mobile", code: 21614, status: 400, reason: sms.ReasonUnreachable},
		{name: "landline", code: 21635, status: 400, reason: sms.ReasonUnreachable},
		{name: "unknown handset", code: 30005, status: 400, reason: sms.ReasonUnreachable},
		{name: "landline or unreachable carrier", code: 30006, status: 400, reason: sms.ReasonUnreachable},
		// Our account or sender, not the customer.
		{name: "region not enabled", code: 21408, status: 400, reason: sms.ReasonAccount},
		{name: "to/from pair cannot be connected", code: 21612, status: 400, reason: sms.ReasonAccount},
		{name: "from not sms-capable", code: 21606, status: 400, reason: sms.ReasonAccount},
		{name: "trial account", code: 21608, status: 400, reason: sms.ReasonAccount},
		{name: "carrier filtered", code: 30007, status: 400, reason: sms.ReasonAccount},
		{name: "unregistered 10dlc", code: 30034, status: 400, reason: sms.ReasonAccount},
		// A handset that is off is temporary: it must not end the customer.
		{name: "unreachable handset", code: 30003, status: 400, reason: sms.ReasonOther},
		{name: "message blocked", code: 30004, status: 400, reason: sms.ReasonOther},
		{name: "server error", code: 20500, status: 500, reason: sms.ReasonOther},
		{name: "service unavailable", code: 20503, status: 503, reason: sms.ReasonOther},
		{name: "rate limited", code: 20429, status: 429, reason: sms.ReasonOther},
		{name: "queue overflow", code: 30001, status: 400, reason: sms.ReasonOther},
		{name: "unknown code", code: 99999, status: 400, reason: sms.ReasonOther},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tw, fake := newSender(t)
			fake.FailNext(1, tc.code, tc.status)

			_, err := tw.Text(t.Context(), sms.Message{From: shopNumber, To: customer, Body: "hi"})
			var e *sms.Error
			require.ErrorAs(t, err, &e)
			require.Equal(t, tc.code, e.Code)
			require.Equal(t, tc.status, e.Status)
			require.Equal(t, tc.reason, e.Reason)
			require.Equal(t, tc.reason, sms.ReasonOf(err))
			require.Equal(t, tc.reason == sms.ReasonOptedOut || tc.reason == sms.ReasonUnreachable, sms.Permanent(err))
			require.Equal(t, tc.reason == sms.ReasonOptedOut, sms.OptedOut(err))
			require.Equal(t, tc.reason == sms.ReasonAccount, sms.AccountProblem(err))
			require.NotContains(t, err.Error(), "twilio error", "the neutral error names the provider only in its detail")

			// FailNext fails once: the retry goes through.
			_, err = tw.Text(t.Context(), sms.Message{From: shopNumber, To: customer, Body: "hi"})
			require.NoError(t, err)
			require.Equal(t, 2, fake.Attempts())
			require.Equal(t, 1, fake.Count())
		})
	}
}

// TestAccountIssueOf: the account codes that say what to change are read as the neutral
// issue the dashboard explains; every other code, account or not, says no more.
func TestAccountIssueOf(t *testing.T) {
	t.Parallel()
	for code, want := range map[int]sms.AccountIssue{
		21408: sms.AccountIssueRegion,
		21612: sms.AccountIssueSender,
		21606: sms.AccountIssueOther,
		30034: sms.AccountIssueOther,
		21610: sms.AccountIssueOther,
		0:     sms.AccountIssueOther,
	} {
		require.Equal(t, want, twilio.AccountIssueOf(code), "code %d", code)
	}
}

func TestTwilioTextWrongCredentials(t *testing.T) {
	t.Parallel()
	fake := twiliofake.NewWithCreds(t, "ACother0123456789abcdef012345678a", "othertoken0123456789abcdef01234")
	tw, err := twilio.New(twilio.Config{
		AccountSID: twiliofake.TestAccountSID,
		AuthToken:  twiliofake.TestAuthToken,
		APIURL:     fake.URL(),
	})
	require.NoError(t, err)

	_, err = tw.Text(t.Context(), sms.Message{From: shopNumber, To: customer, Body: "hi"})
	var e *sms.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, 20003, e.Code)
	require.Equal(t, http.StatusUnauthorized, e.Status)
	require.False(t, sms.Permanent(err))
	require.Zero(t, fake.Count())
}

func TestTwilioTextContextDeadline(t *testing.T) {
	t.Parallel()
	tw, fake := newSender(t)
	// The fake answers only after a minute: a call that ends well before that was cut
	// by ctx. The bound leaves a busy machine seconds of slack.
	fake.Delay(time.Minute)

	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := tw.Text(ctx, sms.Message{From: shopNumber, To: customer, Body: "hi"})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.False(t, sms.Permanent(err))
	require.Less(t, time.Since(start), 20*time.Second, "the request must be abandoned when ctx ends")
	require.Zero(t, fake.Count())
}

func TestTwilioTextContextCancelled(t *testing.T) {
	t.Parallel()
	tw, fake := newSender(t)

	t.Run("before the call", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := tw.Text(ctx, sms.Message{From: shopNumber, To: customer, Body: "hi"})
		require.ErrorIs(t, err, context.Canceled)
		require.Zero(t, fake.Attempts())
	})

	t.Run("during the call", func(t *testing.T) {
		fake.Delay(time.Minute)
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		_, err := tw.Text(ctx, sms.Message{From: shopNumber, To: customer, Body: "hi"})
		require.ErrorIs(t, err, context.Canceled)
		require.Less(t, time.Since(start), 20*time.Second, "abandoned when ctx ends, not after the fake's minute")
		require.Zero(t, fake.Count())
	})
}

func TestTwilioTimeout(t *testing.T) {
	t.Parallel()
	fake := twiliofake.New(t)
	fake.Delay(time.Minute)
	tw, err := twilio.New(twilio.Config{
		AccountSID: twiliofake.TestAccountSID,
		AuthToken:  twiliofake.TestAuthToken,
		APIURL:     fake.URL(),
		Timeout:    100 * time.Millisecond,
	})
	require.NoError(t, err)

	start := time.Now()
	_, err = tw.Text(t.Context(), sms.Message{From: shopNumber, To: customer, Body: "hi"})
	require.Error(t, err)
	require.False(t, sms.Permanent(err))
	require.Less(t, time.Since(start), 20*time.Second, "Config.Timeout must bound the call, not the fake's minute")
}

func TestTwilioAPIURLWithPathPrefix(t *testing.T) {
	t.Parallel()
	fake := twiliofake.New(t)
	target, err := url.Parse(fake.URL())
	require.NoError(t, err)

	// A proxy that serves the fake under /twilio/, as a gateway would.
	var mu sync.Mutex
	var paths []string
	proxy := httputil.NewSingleHostReverseProxy(target)
	gateway := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		http.StripPrefix("/twilio", proxy).ServeHTTP(w, r)
	}))
	t.Cleanup(gateway.Close)

	for _, apiURL := range []string{gateway.URL + "/twilio", gateway.URL + "/twilio/"} {
		tw, err := twilio.New(twilio.Config{
			AccountSID: twiliofake.TestAccountSID,
			AuthToken:  twiliofake.TestAuthToken,
			APIURL:     apiURL,
		})
		require.NoError(t, err)
		sid, err := tw.Text(t.Context(), sms.Message{From: shopNumber, To: customer, Body: "via gateway"})
		require.NoError(t, err)
		require.Regexp(t, sidRE, sid)
	}

	require.Equal(t, 2, fake.Count())
	want := "/twilio/2010-04-01/Accounts/" + twiliofake.TestAccountSID + "/Messages.json"
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{want, want}, paths)
}

func TestNewTwilioConfig(t *testing.T) {
	t.Parallel()
	ok := twilio.Config{AccountSID: twiliofake.TestAccountSID, AuthToken: twiliofake.TestAuthToken}
	cases := []struct {
		name    string
		change  func(*twilio.Config)
		wantErr string // "" means valid
	}{
		{name: "minimal", change: func(*twilio.Config) {}},
		{name: "https api url", change: func(c *twilio.Config) { c.APIURL = "https://twilio-proxy.internal:8443/base" }},
		{name: "timeout", change: func(c *twilio.Config) { c.Timeout = 3 * time.Second }},
		{name: "status callback", change: func(c *twilio.Config) { c.StatusCallbackURL = "https://slots.example.com/webhooks/twilio/status" }},
		{name: "status callback with query", change: func(c *twilio.Config) { c.StatusCallbackURL = "http://127.0.0.1:8080/webhooks/twilio/status?x=1" }},
		{name: "relative status callback", change: func(c *twilio.Config) { c.StatusCallbackURL = "/webhooks/twilio/status" }, wantErr: "status callback url"},
		{name: "status callback without host", change: func(c *twilio.Config) { c.StatusCallbackURL = "https:///x" }, wantErr: "absolute"},
		{name: "status callback with user", change: func(c *twilio.Config) { c.StatusCallbackURL = "https://u:p@slots.example.com/x" }, wantErr: "user info"},
		{name: "status callback with fragment", change: func(c *twilio.Config) { c.StatusCallbackURL = "https://slots.example.com/x#y" }, wantErr: "fragment"},
		{name: "unparsable status callback", change: func(c *twilio.Config) { c.StatusCallbackURL = "http://[::1" }, wantErr: "parse status callback url"},
		{name: "no sid", change: func(c *twilio.Config) { c.AccountSID = "" }, wantErr: "account sid is required"},
		{name: "no token", change: func(c *twilio.Config) { c.AuthToken = "" }, wantErr: "auth token is required"},
		{name: "sid not alphanumeric", change: func(c *twilio.Config) { c.AccountSID = "AC-123" }, wantErr: "alphanumeric"},
		{name: "token not alphanumeric", change: func(c *twilio.Config) { c.AuthToken = "tok en" }, wantErr: "alphanumeric"},
		{name: "relative api url", change: func(c *twilio.Config) { c.APIURL = "/twilio" }, wantErr: "absolute"},
		{name: "host only api url", change: func(c *twilio.Config) { c.APIURL = "127.0.0.1:8080" }, wantErr: "api url"},
		{name: "ftp api url", change: func(c *twilio.Config) { c.APIURL = "ftp://example.com" }, wantErr: "absolute"},
		{name: "api url without host", change: func(c *twilio.Config) { c.APIURL = "http://" }, wantErr: "absolute"},
		{name: "api url with query", change: func(c *twilio.Config) { c.APIURL = "http://127.0.0.1:1/?a=b" }, wantErr: "query"},
		{name: "unparsable api url", change: func(c *twilio.Config) { c.APIURL = "http://[::1" }, wantErr: "parse api url"},
		{name: "negative timeout", change: func(c *twilio.Config) { c.Timeout = -time.Second }, wantErr: "negative"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := ok
			tc.change(&cfg)
			tw, err := twilio.New(cfg)
			if tc.wantErr == "" {
				require.NoError(t, err)
				require.NotNil(t, tw)
				return
			}
			require.ErrorContains(t, err, tc.wantErr)
			require.Nil(t, tw)
			require.NotContains(t, err.Error(), twiliofake.TestAuthToken)
		})
	}
}

func TestTwilioTextConcurrent(t *testing.T) {
	t.Parallel()
	tw, fake := newSender(t)
	const n = 200

	sids := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			sids[i], errs[i] = tw.Text(t.Context(), sms.Message{
				From: shopNumber,
				To:   fmt.Sprintf("+1555556%04d", i),
				Body: fmt.Sprintf("offer %d", i),
			})
		})
	}
	wg.Wait()

	seen := make(map[string]bool, n)
	for i := range n {
		require.NoError(t, errs[i])
		require.False(t, seen[sids[i]], "duplicate sid %s", sids[i])
		seen[sids[i]] = true
		msgs := fake.MessagesTo(fmt.Sprintf("+1555556%04d", i))
		require.Len(t, msgs, 1)
		require.Equal(t, sids[i], msgs[0].SID)
		require.Equal(t, fmt.Sprintf("offer %d", i), msgs[0].Body)
	}
	require.Equal(t, n, fake.Count())
	require.Equal(t, n, fake.Attempts())
}

// TestTwilioAPIURLIgnoresEdge shows that twilio-go's TWILIO_EDGE/TWILIO_REGION, which
// rewrite api.twilio.com to api.<edge>.<region>.twilio.com, cannot send texts past
// APIURL. It sets the environment, so it cannot run in parallel.
func TestTwilioAPIURLIgnoresEdge(t *testing.T) {
	t.Setenv("TWILIO_EDGE", "sydney")
	t.Setenv("TWILIO_REGION", "au1")
	tw, fake := newSender(t)

	_, err := tw.Text(t.Context(), sms.Message{From: shopNumber, To: customer, Body: "hi"})
	require.NoError(t, err)
	require.Equal(t, 1, fake.Count())
}
