package twiliofake_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/testkit/twiliofake"
)

// post sends a form to the fake as twilio-go would and decodes the JSON answer.
func post(t *testing.T, ctx context.Context, s *twiliofake.Server, path, user, pass string, form url.Values) (int, map[string]any) {
	t.Helper()
	status, body, err := tryPost(ctx, s, path, user, pass, form)
	require.NoError(t, err)
	return status, body
}

// tryPost is post without require, for use off the test goroutine.
func tryPost(ctx context.Context, s *twiliofake.Server, path, user, pass string, form url.Values) (int, map[string]any, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+path, strings.NewReader(form.Encode()))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		return 0, nil, fmt.Errorf("content type %q", ct)
	}
	var body map[string]any
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		return 0, nil, err
	}
	return res.StatusCode, body, nil
}

const messagesPath = "/2010-04-01/Accounts/" + twiliofake.TestAccountSID + "/Messages.json"

func send(t *testing.T, s *twiliofake.Server, form url.Values) (int, map[string]any) {
	t.Helper()
	return post(t, t.Context(), s, messagesPath, twiliofake.TestAccountSID, twiliofake.TestAuthToken, form)
}

func offer(to string) url.Values {
	return url.Values{"From": {"+15555550100"}, "To": {to}, "Body": {"Reply YES to book."}}
}

func TestCreateMessage(t *testing.T) {
	t.Parallel()
	s := twiliofake.New(t)
	form := offer("+15555550167")
	form.Set("ValidityPeriod", "600")

	status, body := send(t, s, form)
	require.Equal(t, http.StatusCreated, status)
	require.Regexp(t, `^SM[0-9a-f]{32}$`, body["sid"])
	require.Equal(t, "queued", body["status"])
	require.Equal(t, twiliofake.TestAccountSID, body["account_sid"])
	require.Equal(t, "+15555550100", body["from"])
	require.Equal(t, "+15555550167", body["to"])
	require.Equal(t, "Reply YES to book.", body["body"])
	require.Equal(t, "outbound-api", body["direction"])
	require.Equal(t, "1", body["num_segments"])
	require.Nil(t, body["error_code"])
	require.Nil(t, body["messaging_service_sid"])
	created, err := time.Parse(time.RFC1123Z, body["date_created"].(string))
	require.NoError(t, err)
	require.WithinDuration(t, time.Now(), created, time.Minute)
	require.Equal(t, "/2010-04-01/Accounts/"+twiliofake.TestAccountSID+"/Messages/"+body["sid"].(string)+".json", body["uri"])

	msgs := s.Messages()
	require.Len(t, msgs, 1)
	require.Equal(t, body["sid"], msgs[0].SID)
	require.Equal(t, twiliofake.TestAccountSID, msgs[0].AccountSID)
	require.Equal(t, "+15555550167", msgs[0].To)
	require.Equal(t, "+15555550100", msgs[0].From)
	require.Equal(t, "Reply YES to book.", msgs[0].Body)
	require.Equal(t, 10*time.Minute, msgs[0].ValidityPeriod)
	require.Equal(t, 1, s.Count())
	require.Equal(t, 1, s.Attempts())
}

func TestCreateMessageWithMessagingService(t *testing.T) {
	t.Parallel()
	s := twiliofake.New(t)
	form := url.Values{"MessagingServiceSid": {"MG0123456789abcdef0123456789abcdef"}, "To": {"+15555550167"}, "Body": {"hi"}}

	status, body := send(t, s, form)
	require.Equal(t, http.StatusCreated, status)
	require.Equal(t, "accepted", body["status"])
	require.Equal(t, "MG0123456789abcdef0123456789abcdef", body["messaging_service_sid"])
	require.Equal(t, "MG0123456789abcdef0123456789abcdef", s.Messages()[0].MessagingServiceSID)
}

func TestAuth(t *testing.T) {
	t.Parallel()
	s := twiliofake.NewWithCreds(t, "ACc0ffee0123456789abcdef0123456789", "customtoken")
	path := "/2010-04-01/Accounts/ACc0ffee0123456789abcdef0123456789/Messages.json"

	cases := []struct {
		name       string
		user, pass string
		want       int
	}{
		{name: "no auth", want: http.StatusUnauthorized},
		{name: "wrong token", user: "ACc0ffee0123456789abcdef0123456789", pass: "wrong", want: http.StatusUnauthorized},
		{name: "wrong sid", user: twiliofake.TestAccountSID, pass: "customtoken", want: http.StatusUnauthorized},
		{name: "defaults are not accepted", user: twiliofake.TestAccountSID, pass: twiliofake.TestAuthToken, want: http.StatusUnauthorized},
		{name: "right", user: "ACc0ffee0123456789abcdef0123456789", pass: "customtoken", want: http.StatusCreated},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := post(t, t.Context(), s, path, tc.user, tc.pass, offer("+15555550167"))
			require.Equal(t, tc.want, status)
			if tc.want == http.StatusUnauthorized {
				require.EqualValues(t, 20003, body["code"])
				require.EqualValues(t, 401, body["status"])
				require.Equal(t, "Authenticate", body["message"])
				require.Equal(t, "https://www.twilio.com/docs/errors/20003", body["more_info"])
			}
		})
	}
	require.Equal(t, 1, s.Count())
	require.Equal(t, 1, s.Attempts(), "unauthenticated requests are not attempts")
}

func TestRouting(t *testing.T) {
	t.Parallel()
	s := twiliofake.New(t)
	cases := []struct {
		name, method, path string
		want, code         int
		violation          string // "" when the request is Twilio's
	}{
		{name: "other account", method: http.MethodPost, path: "/2010-04-01/Accounts/AC0be7e70123456789abcdef012345678a/Messages.json", want: 404, code: 20404},
		{name: "resource the fake does not serve", method: http.MethodPost, path: "/2010-04-01/Accounts/" + twiliofake.TestAccountSID + "/Calls.json", want: 404, code: 20404,
			violation: "CreateCall request: twiliofake does not serve this operation"},
		{name: "unknown path", method: http.MethodPost, path: "/", want: 404, code: 20404,
			violation: "POST / request: Twilio's API has no such path"},
		{name: "method Twilio has, the fake does not", method: http.MethodGet, path: messagesPath, want: 404, code: 20404,
			violation: "ListMessage request: twiliofake does not serve this operation"},
		{name: "method Twilio does not have", method: http.MethodPut, path: messagesPath, want: 404, code: 20404,
			violation: "request: Twilio's API has no PUT operation on this path, only GET (ListMessage), POST (CreateMessage)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Not parallel: each case takes the fake's violations.
			var body io.Reader
			if tc.method == http.MethodPost {
				body = strings.NewReader(offer("+15555550167").Encode())
			}
			req, err := http.NewRequestWithContext(t.Context(), tc.method, s.URL()+tc.path, body)
			require.NoError(t, err)
			if body != nil {
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
			req.SetBasicAuth(twiliofake.TestAccountSID, twiliofake.TestAuthToken)
			res, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer res.Body.Close()
			require.Equal(t, tc.want, res.StatusCode)
			var answer map[string]any
			require.NoError(t, json.NewDecoder(res.Body).Decode(&answer))
			require.EqualValues(t, tc.code, answer["code"])

			var got []string
			for _, v := range s.TakeViolations() {
				got = append(got, v.String())
			}
			if tc.violation == "" {
				require.Empty(t, got)
				return
			}
			require.NotEmpty(t, got)
			require.Contains(t, strings.Join(got, "\n"), tc.violation)
		})
	}
}

func TestValidation(t *testing.T) {
	t.Parallel()
	s := twiliofake.New(t)
	cases := []struct {
		name   string
		change func(url.Values)
		code   int
	}{
		{name: "no to", change: func(f url.Values) { f.Del("To") }, code: 21604},
		{name: "to not e164", change: func(f url.Values) { f.Set("To", "5555550167") }, code: 21211},
		{name: "no from", change: func(f url.Values) { f.Del("From") }, code: 21603},
		{name: "no body", change: func(f url.Values) { f.Del("Body") }, code: 21602},
		{name: "validity zero", change: func(f url.Values) { f.Set("ValidityPeriod", "0") }, code: 90007},
		{name: "validity too long", change: func(f url.Values) { f.Set("ValidityPeriod", "36001") }, code: 90007},
		{name: "validity not a number", change: func(f url.Values) { f.Set("ValidityPeriod", "1.5") }, code: 90007},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			form := offer("+15555550167")
			tc.change(form)
			status, body := send(t, s, form)
			require.Equal(t, http.StatusBadRequest, status)
			require.EqualValues(t, tc.code, body["code"])
			require.EqualValues(t, 400, body["status"])
		})
	}
	t.Cleanup(func() {
		require.Zero(t, s.Count())
		// Two of the cases break the documents as well as the fake's own rules; the
		// others (an E.164 check, a range) are rules the documents do not write.
		var got []string
		for _, v := range s.TakeViolations() {
			got = append(got, v.String())
		}
		require.ElementsMatch(t, []string{
			`CreateMessage request: required parameter "To" is missing`,
			`CreateMessage request: parameter "ValidityPeriod": "1.5" is not an integer`,
		}, got)
	})
}

func TestFailNumber(t *testing.T) {
	t.Parallel()
	s := twiliofake.New(t)
	s.FailNumber("+15555550167", 21610, 0)

	for range 2 {
		status, body := send(t, s, offer("+15555550167"))
		require.Equal(t, http.StatusBadRequest, status, "status 0 means 400")
		require.EqualValues(t, 21610, body["code"])
		require.EqualValues(t, 400, body["status"])
		require.Equal(t, "Attempt to send to unsubscribed recipient", body["message"])
		require.Equal(t, "https://www.twilio.com/docs/errors/21610", body["more_info"])
	}
	status, _ := send(t, s, offer("+15555550168"))
	require.Equal(t, http.StatusCreated, status)

	require.Empty(t, s.MessagesTo("+15555550167"))
	require.Len(t, s.MessagesTo("+15555550168"), 1)
	require.Equal(t, 3, s.Attempts())
}

func TestFailNext(t *testing.T) {
	t.Parallel()
	s := twiliofake.New(t)
	s.FailNext(2, 20500, 0)
	s.FailNumber("+15555550167", 21610, 400)

	for range 2 {
		status, body := send(t, s, offer("+15555550167"))
		require.Equal(t, http.StatusInternalServerError, status, "status 0 means 500")
		require.EqualValues(t, 20500, body["code"], "FailNext takes precedence over FailNumber")
	}
	status, body := send(t, s, offer("+15555550167"))
	require.Equal(t, http.StatusBadRequest, status)
	require.EqualValues(t, 21610, body["code"])

	status, _ = send(t, s, offer("+15555550168"))
	require.Equal(t, http.StatusCreated, status)
	require.Equal(t, 1, s.Count())
	require.Equal(t, 4, s.Attempts())
}

func TestReset(t *testing.T) {
	t.Parallel()
	s := twiliofake.New(t)
	send(t, s, offer("+15555550168"))
	s.FailNumber("+15555550167", 21610, 400)
	s.FailNext(5, 20500, 500)
	s.Delay(time.Hour)

	s.Reset()
	require.Zero(t, s.Count())
	require.Zero(t, s.Attempts())
	require.Empty(t, s.Messages())

	status, _ := send(t, s, offer("+15555550167"))
	require.Equal(t, http.StatusCreated, status)
	require.Equal(t, 1, s.Count())
}

func TestDelay(t *testing.T) {
	t.Parallel()
	s := twiliofake.New(t)
	s.Delay(200 * time.Millisecond)

	start := time.Now()
	status, _ := send(t, s, offer("+15555550167"))
	require.Equal(t, http.StatusCreated, status)
	require.GreaterOrEqual(t, time.Since(start), 200*time.Millisecond)

	// A client that gives up during the delay leaves no message behind.
	s.Delay(time.Minute)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+messagesPath, strings.NewReader(offer("+15555550168").Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(twiliofake.TestAccountSID, twiliofake.TestAuthToken)
	_, err = http.DefaultClient.Do(req)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Equal(t, 1, s.Count())
	// Cleanup must not wait for the minute's delay of the abandoned request.
}

func TestConcurrent(t *testing.T) {
	t.Parallel()
	s := twiliofake.New(t)
	s.FailNext(50, 20500, 500)
	const n = 300

	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	sids := map[string]bool{}
	var errs []error
	for range n {
		wg.Go(func() {
			status, body, err := tryPost(t.Context(), s, messagesPath, twiliofake.TestAccountSID, twiliofake.TestAuthToken, offer("+15555550167"))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			statuses[status]++
			if sid, ok := body["sid"].(string); ok {
				sids[sid] = true
			}
		})
	}
	wg.Wait()
	require.Empty(t, errs)

	require.Equal(t, map[int]int{http.StatusCreated: n - 50, http.StatusInternalServerError: 50}, statuses)
	require.Len(t, sids, n-50)
	require.Equal(t, n-50, s.Count())
	require.Len(t, s.MessagesTo("+15555550167"), n-50)
	require.Equal(t, n, s.Attempts())
}
