package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/config"
)

// TestHTTPMetricsLabelsAreBounded: paths, hosts and methods chosen by clients never
// become label values, so random requests cannot grow /metrics without bound.
func TestHTTPMetricsLabelsAreBounded(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(nil, fastTune)
	methods := []string{http.MethodGet, http.MethodPost, "PROPFIND", "X" + randHex(t, 3)}
	for i := range 600 {
		req, err := http.NewRequest(methods[i%len(methods)], base+"/"+randHex(t, 8), nil)
		require.NoError(t, err)
		req.Host = randHex(t, 6) + ".example"
		if i%3 == 0 { // matched routes too: their template is the label, not the host
			req, err = http.NewRequest(http.MethodGet, base+"/healthz", nil)
			require.NoError(t, err)
			req.Host = randHex(t, 6) + ".example"
		}
		res, err := e.client.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	text := e.metricsText(base)
	series := 0
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "echo_requests_total{") {
			series++
			require.NotContains(t, line, ".example", "the Host header is not a label")
		}
	}
	require.Positive(t, series)
	require.LessOrEqual(t, series, 10, "series of echo_requests_total:\n%s", text)
	require.Less(t, len(text), 64<<10, "/metrics stays small")

	// A request refused by a handler's error is counted with the status it was sent.
	res, err := e.client.Post(base+"/webhooks/twilio/sms", "application/x-www-form-urlencoded", strings.NewReader("From=x"))
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusForbidden, res.StatusCode)
	require.Contains(t, e.metricsText(base), `echo_requests_total{code="403",host="",method="POST",url="/webhooks/twilio/sms"} 1`)
}

func randHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return hex.EncodeToString(b)
}

// startListening is env.start that also returns the private listeners' addresses.
func (e *env) startListening(extra map[string]string) (base string, private map[string]string) {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	var mu sync.Mutex
	private = map[string]string{}
	listening := func(name, addr string) { mu.Lock(); private[name] = "http://" + addr; mu.Unlock() }
	go func() {
		done <- serve(ctx, e.vars(extra), io.Discard, serveOptions{ready: ready, tune: fastTune, listening: listening})
	}()
	select {
	case addr := <-ready:
		e.t.Cleanup(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					e.t.Errorf("server stopped with: %v", err)
				}
			case <-time.After(30 * time.Second):
				e.t.Errorf("server did not stop in time")
			}
		})
		// The private listeners start right after the public one.
		require.Eventually(e.t, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(private) == countSet(extra, "METRICS_ADDR", "PPROF_ADDR")
		}, 10*time.Second, 10*time.Millisecond)
		mu.Lock()
		defer mu.Unlock()
		return "http://" + addr, maps.Clone(private)
	case err := <-done:
		cancel()
		e.t.Fatalf("server did not start: %v", err)
	case <-time.After(60 * time.Second):
		cancel()
		e.t.Fatalf("server did not start in time")
	}
	return "", nil
}

func countSet(m map[string]string, keys ...string) int {
	n := 0
	for _, k := range keys {
		if m[k] != "" {
			n++
		}
	}
	return n
}

// get sends GET url with the headers and returns the status and body.
func (e *env) getWith(url string, headers map[string]string) (int, string) {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(e.t, err)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := e.client.Do(req)
	require.NoError(e.t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(e.t, err)
	return res.StatusCode, string(b)
}

// TestMetricsAccess: GET /metrics on the public port answers only a direct loopback
// request, or the bearer of METRICS_TOKEN when one is set, or no one when METRICS_ADDR
// moves metrics to a private listener; pprof is never on the public port and only
// exists when PPROF_ADDR is set.
func TestMetricsAccess(t *testing.T) {
	t.Parallel()
	const token = "metrics-token-0123456789"

	t.Run("default: loopback only, no pprof", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		base, private := e.startListening(nil)
		require.Empty(t, private, "no private listener unless configured")
		status, body := e.getWith(base+"/metrics", nil)
		require.Equal(t, http.StatusOK, status)
		require.Contains(t, body, "go_goroutines")
		for _, h := range []string{"X-Forwarded-For", "X-Real-IP", "Forwarded"} {
			status, body = e.getWith(base+"/metrics", map[string]string{h: "203.0.113.9"})
			require.Equal(t, http.StatusForbidden, status, h)
			require.Contains(t, body, `"code":"forbidden"`)
			require.NotContains(t, body, "go_goroutines")
		}
		for _, p := range []string{"/debug/pprof/", "/debug/pprof/cmdline", "/debug/pprof/heap"} {
			status, _ = e.getWith(base+p, nil)
			require.Equal(t, http.StatusNotFound, status, p)
		}
	})

	t.Run("token", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		base, _ := e.startListening(map[string]string{"METRICS_TOKEN": token})
		for name, h := range map[string]map[string]string{
			"none":      nil,
			"wrong":     {"Authorization": "Bearer " + token + "x"},
			"basic":     {"Authorization": "Basic " + token},
			"forwarded": {"X-Forwarded-For": "203.0.113.9"},
		} {
			status, body := e.getWith(base+"/metrics", h)
			require.Equal(t, http.StatusUnauthorized, status, name)
			require.Contains(t, body, `"code":"unauthorized"`, name)
		}
		status, body := e.getWith(base+"/metrics", map[string]string{"Authorization": "Bearer " + token})
		require.Equal(t, http.StatusOK, status)
		require.Contains(t, body, "go_goroutines")
	})

	t.Run("private listeners", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		base, private := e.startListening(map[string]string{"METRICS_ADDR": "127.0.0.1:0", "PPROF_ADDR": "127.0.0.1:0"})
		status, _ := e.getWith(base+"/metrics", nil)
		require.Equal(t, http.StatusForbidden, status, "metrics moved to METRICS_ADDR")
		status, _ = e.getWith(base+"/healthz", nil)
		require.Equal(t, http.StatusOK, status)
		status, body := e.getWith(private["metrics"]+"/metrics", nil)
		require.Equal(t, http.StatusOK, status)
		require.Contains(t, body, `echo_requests_total{code="200",host="",method="GET",url="/healthz"}`)
		status, _ = e.getWith(private["metrics"]+"/debug/pprof/", nil)
		require.Equal(t, http.StatusNotFound, status)

		status, body = e.getWith(private["pprof"]+"/debug/pprof/", nil)
		require.Equal(t, http.StatusOK, status)
		require.Contains(t, body, "goroutine")
		status, _ = e.getWith(base+"/debug/pprof/", nil)
		require.Equal(t, http.StatusNotFound, status, "pprof is never on the public port")
	})
}

// TestRequestIDIsBounded: a client's X-Request-Id is kept only when it is short and made
// of [A-Za-z0-9._-]; anything else is replaced by a generated id, which is what the
// response carries and what handlers (and so the logs) see.
func TestRequestIDIsBounded(t *testing.T) {
	t.Parallel()
	e := echo.New()
	e.Use(requestID)
	var seen string
	e.GET("/", func(c echo.Context) error {
		seen = c.Request().Header.Get(echo.HeaderXRequestID)
		return c.NoContent(http.StatusOK)
	})
	generated := regexp.MustCompile(`^[0-9a-f]{32}$`)
	for name, tc := range map[string]struct {
		in   string
		keep bool
	}{
		"absent":            {"", false},
		"uuid":              {"0b6f4c1e-3d2a-4b8e-9f00-1234567890ab", true},
		"dotted":            {"lb.eu-1_abc.42", true},
		"64 characters":     {strings.Repeat("a", 64), true},
		"65 characters":     {strings.Repeat("a", 65), false},
		"huge":              {strings.Repeat("x", 8000), false},
		"log field forgery": {`x","level":"ERROR","msg":"forged`, false},
		"spaces":            {"a b", false},
		"newline escaped":   {"a%0Ab", false},
		"non-ascii":         {"é", false},
	} {
		t.Run(name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			if tc.in != "" {
				req.Header.Set(echo.HeaderXRequestID, tc.in)
			}
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, req)
			got := rec.Header().Get(echo.HeaderXRequestID)
			if tc.keep {
				require.Equal(t, tc.in, got)
			} else {
				require.Regexp(t, generated, got)
			}
			require.Equal(t, got, seen, "handlers see the same id the response carries")
		})
	}
}

// TestRescueHorizonAboveJobTimeouts: River retries a job still "running" after
// rescueStuckJobsAfter, taking its process for dead. Every registered worker's timeout
// must end a live run well before that (a minute's margin for the job to return and for
// its row to be updated), or a slow job would run twice at once; and the horizon must
// be far below River's default hour, so a killed instance's jobs resume soon.
func TestRescueHorizonAboveJobTimeouts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cfg, err := config.Load(e.vars(nil))
	require.NoError(t, err)
	a, err := build(context.Background(), cfg, slog.New(slog.DiscardHandler), serveOptions{})
	require.NoError(t, err)
	t.Cleanup(a.close)

	require.LessOrEqual(t, rescueStuckJobsAfter, 20*time.Minute)
	for _, kind := range []string{"offer_wave", "sms_text", "bookings_sweep", "booking_refund", "payments_reconcile", "openings_complete", "inbound_sweep", "webhook_delivery", "retention_purge"} {
		require.Contains(t, a.jobTimeouts, kind, "every job kind is registered through addWorker")
	}
	for kind, d := range a.jobTimeouts {
		require.Positive(t, d, "%s has no timeout: River could rescue it while it runs", kind)
		require.LessOrEqual(t, d+time.Minute, rescueStuckJobsAfter, "%s's timeout %s", kind, d)
		t.Logf("%-20s timeout %s", kind, d)
	}
}
