package stripetest_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/testkit/stripetest"
)

func TestMain(m *testing.M) {
	defer stripetest.Stop()
	m.Run()
}

// call makes one Stripe-style request and returns the status and body.
func call(t *testing.T, c *http.Client, method, u string, form url.Values, idemKey string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, u, strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer sk_test_stripetest")
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// field returns a top-level string field of a JSON object.
func field(t *testing.T, body, key string) string {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &m), body)
	v, _ := m[key].(string)
	return v
}

func TestMock(t *testing.T) {
	t.Parallel()
	u := stripetest.Mock(t)
	require.True(t, strings.HasPrefix(u, "http://127.0.0.1:"), u)
	require.Equal(t, u, stripetest.Mock(t), "one stripe-mock per test binary")

	status, body := call(t, http.DefaultClient, http.MethodGet, u+"/v1/checkout/sessions/cs_test_mock", nil, "")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "cs_test_mock", field(t, body, "id"))
}

func TestRecorder(t *testing.T) {
	t.Parallel()
	rec := stripetest.NewRecorder(t, stripetest.Mock(t))

	form := url.Values{"payment_intent": {"pi_1"}, "metadata[booking_id]": {"bk_1"}}
	status, body := call(t, http.DefaultClient, http.MethodPost, rec.URL+"/v1/refunds", form, "refund:bk_1")
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, "refund", field(t, body, "object"))
	status, _ = call(t, http.DefaultClient, http.MethodGet, rec.URL+"/v1/checkout/sessions/cs_1?expand[]=payment_intent", nil, "")
	require.Equal(t, http.StatusOK, status)

	reqs := rec.Requests()
	require.Len(t, reqs, 2)
	require.Equal(t, http.MethodPost, reqs[0].Method)
	require.Equal(t, "/v1/refunds", reqs[0].Path)
	require.Equal(t, "refund:bk_1", reqs[0].IdempotencyKey)
	require.Equal(t, "bk_1", reqs[0].Form.Get("metadata[booking_id]"))
	require.Equal(t, http.StatusOK, reqs[0].Status)
	require.Equal(t, "payment_intent", reqs[1].Query.Get("expand[]"))
	require.Nil(t, reqs[1].Form)

	require.Equal(t, 1, rec.Count(http.MethodPost, "/v1/refunds"))
	require.Equal(t, 0, rec.Count(http.MethodGet, "/v1/refunds"))
	require.Equal(t, 1, rec.Count("", "/v1/checkout/"))
	require.Equal(t, 2, rec.Count("", "/"))
}

// TestRecorderConnect: stripe-mock accepts a Stripe-Account header and ignores it, so the
// recorder is where a test sees which connected account each request named, and the fee
// a checkout asked for.
func TestRecorderConnect(t *testing.T) {
	t.Parallel()
	rec := stripetest.NewRecorder(t, stripetest.Mock(t))
	post := func(path string, form url.Values, account string) int {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, rec.URL+path, strings.NewReader(form.Encode()))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer sk_test_stripetest")
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if account != "" {
			req.Header.Set("Stripe-Account", account)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	checkout := url.Values{
		"mode": {"payment"}, "success_url": {"https://example.com/ok"},
		"line_items[0][quantity]": {"1"}, "line_items[0][price_data][currency]": {"usd"},
		"line_items[0][price_data][unit_amount]": {"4500"}, "line_items[0][price_data][product_data][name]": {"Haircut"},
		"payment_intent_data[application_fee_amount]": {"113"},
	}
	require.Equal(t, http.StatusOK, post("/v1/checkout/sessions", checkout, "acct_1ShopA"))
	require.Equal(t, http.StatusOK, post("/v1/refunds", url.Values{"payment_intent": {"pi_1"}, "refund_application_fee": {"true"}}, "acct_1ShopB"))
	require.Equal(t, http.StatusOK, post("/v1/refunds", url.Values{"payment_intent": {"pi_2"}}, ""))

	reqs := rec.Requests()
	require.Len(t, reqs, 3)
	require.Equal(t, "acct_1ShopA", reqs[0].Account)
	fee, ok := reqs[0].ApplicationFee()
	require.True(t, ok)
	require.EqualValues(t, 113, fee)
	require.Equal(t, "acct_1ShopB", reqs[1].Account)
	require.True(t, reqs[1].RefundsApplicationFee())
	require.Empty(t, reqs[2].Account, "the platform's own request names no account")
	require.False(t, reqs[2].RefundsApplicationFee())
	_, ok = reqs[2].ApplicationFee()
	require.False(t, ok)
}

func TestRecorderFailNext(t *testing.T) {
	t.Parallel()
	rec := stripetest.NewRecorder(t, stripetest.Mock(t))
	rec.FailNext(2, http.StatusServiceUnavailable)

	for range 2 {
		status, body := call(t, http.DefaultClient, http.MethodGet, rec.URL+"/v1/balance", nil, "")
		require.Equal(t, http.StatusServiceUnavailable, status)
		require.JSONEq(t, `{"error":{"type":"api_error","message":"stripetest: injected 503"}}`, body)
	}
	status, _ := call(t, http.DefaultClient, http.MethodGet, rec.URL+"/v1/balance", nil, "")
	require.Equal(t, http.StatusOK, status)

	reqs := rec.Requests()
	require.Len(t, reqs, 3, "injected failures are recorded too")
	require.Equal(t, []int{503, 503, 200}, []int{reqs[0].Status, reqs[1].Status, reqs[2].Status})
}

func TestRecorderRespond(t *testing.T) {
	t.Parallel()
	rec := stripetest.NewRecorder(t, stripetest.Mock(t))
	rec.Respond(http.MethodPost, "/v1/checkout/sessions/cs_done/expire", http.StatusBadRequest,
		stripetest.ErrorBody("invalid_request_error", "", "not open"))
	rec.Respond(http.MethodGet, "/v1/checkout/sessions/cs_done", http.StatusOK, `{"id":"cs_done","status":"complete"}`)

	status, body := call(t, http.DefaultClient, http.MethodPost, rec.URL+"/v1/checkout/sessions/cs_done/expire", url.Values{}, "")
	require.Equal(t, http.StatusBadRequest, status)
	require.JSONEq(t, `{"error":{"type":"invalid_request_error","message":"not open"}}`, body)
	for range 2 {
		status, body = call(t, http.DefaultClient, http.MethodGet, rec.URL+"/v1/checkout/sessions/cs_done", nil, "")
		require.Equal(t, http.StatusOK, status)
		require.JSONEq(t, `{"id":"cs_done","status":"complete"}`, body)
	}
	// Other paths still reach stripe-mock.
	status, body = call(t, http.DefaultClient, http.MethodGet, rec.URL+"/v1/checkout/sessions/cs_other", nil, "")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "cs_other", field(t, body, "id"))
	require.Equal(t, 3, rec.Count(http.MethodGet, "/v1/checkout/sessions/cs_"))
}

func TestRecorderDelay(t *testing.T) {
	t.Parallel()
	rec := stripetest.NewRecorder(t, stripetest.Mock(t))
	// The delay is far longer than any bound below, so each check tells "delayed" from
	// "not delayed" with seconds of slack for a busy machine.
	rec.Delay(time.Minute)

	c := &http.Client{Timeout: 50 * time.Millisecond}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, rec.URL+"/v1/balance", nil)
	require.NoError(t, err)
	_, err = c.Do(req)
	var ue *url.Error
	require.ErrorAs(t, err, &ue)
	require.True(t, ue.Timeout())

	rec.Delay(0)
	start := time.Now()
	status, _ := call(t, http.DefaultClient, http.MethodGet, rec.URL+"/v1/balance", nil, "")
	require.Equal(t, http.StatusOK, status)
	require.Less(t, time.Since(start), 20*time.Second, "the delay is off")
}

// TestMockDiesWithTestBinary runs this test binary again as a helper that
// starts stripe-mock and is then killed with SIGKILL, so neither TestMain nor
// Stop runs: the parent-death signal must still take stripe-mock down.
func TestMockDiesWithTestBinary(t *testing.T) {
	if os.Getenv("STRIPETEST_HELPER") == "1" {
		os.Stdout.WriteString("MOCK_URL=" + stripetest.Mock(t) + "\n")
		time.Sleep(time.Minute)
		return
	}
	if runtime.GOOS != "linux" {
		t.Skip("the parent-death signal is Linux-only; elsewhere Stop in TestMain does it")
	}
	if os.Getenv("STRIPE_MOCK_URL") != "" {
		t.Skip("STRIPE_MOCK_URL points at an external stripe-mock")
	}
	t.Parallel()

	cmd := exec.Command(os.Args[0], "-test.run=^TestMockDiesWithTestBinary$", "-test.count=1")
	cmd.Env = append(os.Environ(), "STRIPETEST_HELPER=1")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	mockURL := ""
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "MOCK_URL="); ok {
			mockURL = u
			break
		}
	}
	require.NotEmpty(t, mockURL, "helper did not report a stripe-mock url")
	status, _ := call(t, http.DefaultClient, http.MethodGet, mockURL+"/v1/balance", nil, "")
	require.Equal(t, http.StatusOK, status)

	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()

	// Only dial: stripe-mock logs every HTTP request to its stdout, and a
	// write to the dead helper's pipe would kill it with SIGPIPE and hide a
	// missing parent-death signal. An idle mock must die too.
	host := strings.TrimPrefix(mockURL, "http://")
	require.Eventually(t, func() bool {
		conn, err := net.DialTimeout("tcp", host, 200*time.Millisecond)
		if err == nil {
			_ = conn.Close()
			return false
		}
		return true
	}, 30*time.Second, 50*time.Millisecond, "stripe-mock outlived the test binary that started it")
}
