package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/config"
	"github.com/slotrecovery/slotrecovery/internal/connectors"
	"github.com/slotrecovery/slotrecovery/internal/dashboard"
	"github.com/slotrecovery/slotrecovery/internal/httperr"
	"github.com/slotrecovery/slotrecovery/internal/ratelimit"
	"github.com/slotrecovery/slotrecovery/internal/shopapi"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/testkit/redistest"
	"github.com/slotrecovery/slotrecovery/internal/webhooks"
)

// signIn signs in to base's dashboard with key through the real form and returns the
// session cookie's value.
func (e *env) signIn(base, key string) string {
	e.t.Helper()
	noRedirect := &http.Client{Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noRedirect.Get(base + "/dashboard/login")
	require.NoError(e.t, err)
	page, err := io.ReadAll(res.Body)
	res.Body.Close()
	require.NoError(e.t, err)
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(page)
	require.NotNil(e.t, m, "the sign-in form has a CSRF field")
	var loginCk string
	for _, c := range res.Cookies() {
		if c.Name == "sr_login" {
			loginCk = c.Value
		}
	}
	require.NotEmpty(e.t, loginCk)
	form := url.Values{"csrf": {html.UnescapeString(string(m[1]))}, "api_key": {key}}
	req, err := http.NewRequest(http.MethodPost, base+"/dashboard/login", strings.NewReader(form.Encode()))
	require.NoError(e.t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	// The cookies are Secure, which a client keeps off plain http: set them by hand.
	req.Header.Set("Cookie", "sr_login="+loginCk)
	res, err = noRedirect.Do(req)
	require.NoError(e.t, err)
	res.Body.Close()
	require.Equal(e.t, http.StatusSeeOther, res.StatusCode)
	for _, c := range res.Cookies() {
		if c.Name == "sr_session" {
			return c.Value
		}
	}
	e.t.Fatal("no session cookie after signing in")
	return ""
}

// memory is what the test process (which runs the instance) holds.
type memory struct {
	heapAlloc, totalAlloc uint64 // Go heap in use, and allocated since the start
	rss, hwm              string // VmRSS and VmHWM from /proc/self/status
}

func readMemory() memory {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m := memory{heapAlloc: ms.HeapAlloc, totalAlloc: ms.TotalAlloc, rss: "?", hwm: "?"}
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				m.rss = strings.TrimSpace(v)
			}
			if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				m.hwm = strings.TrimSpace(v)
			}
		}
	}
	return m
}

const mib = 1 << 20

// rawPost sends the head of a POST to base over a fresh connection, then body (if not
// nil) from another goroutine, and reads the answer within wait. It returns the answer
// and how many bytes of the body were written before the server stopped taking them.
func rawPost(t *testing.T, base, target string, head []string, body io.Reader, wait time.Duration) (*http.Response, int64) {
	t.Helper()
	u, err := url.Parse(base)
	require.NoError(t, err)
	conn, err := net.Dial("tcp", u.Host)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	_, err = fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\n%s\r\n\r\n", target, u.Host, strings.Join(head, "\r\n"))
	require.NoError(t, err)
	var written int64
	var wg sync.WaitGroup
	if body != nil {
		wg.Go(func() {
			// Write errors are expected: the server may refuse the body and close.
			written, _ = io.Copy(conn, body)
		})
	}
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(wait)))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err, "no answer within %s: the server is still reading (or waiting for) the body", wait)
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	conn.Close() // ends the writer if the server left the connection open
	wg.Wait()
	return res, written
}

// repeatReader reads n bytes of 'x': a file part of any size without holding it.
type repeatReader struct{ n int64 }

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	n := min(int64(len(p)), r.n)
	for i := range p[:n] {
		p[i] = 'x'
	}
	r.n -= n
	return int(n), nil
}

// chunked frames r's bytes as an HTTP/1.1 chunked body.
func chunked(r io.Reader) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				if _, werr := fmt.Fprintf(pw, "%x\r\n%s\r\n", n, buf[:n]); werr != nil {
					pw.CloseWithError(werr)
					return
				}
			}
			if err == io.EOF {
				_, _ = io.WriteString(pw, "0\r\n\r\n")
				pw.Close()
				return
			}
			if err != nil {
				pw.CloseWithError(err)
				return
			}
		}
	}()
	return pr
}

// TestEncodedImportPathIsLimited: echo routes on the raw path, so
// /dashboard/customers/%69mport is the route /dashboard/customers/:id, not the import:
// it takes that route's 64 KiB limit. A 40 MB body announced by its Content-Length is
// refused with 413 before a byte of it is read, and one sent without a length (chunked)
// is cut off at the limit: the instance's memory does not grow by the body.
//
// Not parallel: it measures the process's memory, which other tests would disturb.
func TestEncodedImportPathIsLimited(t *testing.T) {
	e := newEnv(t)
	base := e.start(nil, fastTune)
	shop := e.newShop(base, "none", nil)
	session := e.signIn(base, shop.APIKey)
	const size = 40_000_000
	head := []string{"Cookie: sr_session=" + session, "Content-Type: multipart/form-data; boundary=b0undary"}

	for _, target := range []string{"/dashboard/customers/%69mport", "/dashboard/customers/%69%6d%70%6f%72%74"} {
		res, written := rawPost(t, base, target, append(head, fmt.Sprintf("Content-Length: %d", size)), nil, 10*time.Second)
		require.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode, target)
		require.Zero(t, written)
	}

	// The same body without a length: only reading it can tell its size.
	before := readMemory()
	partHead := "--b0undary\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.csv\"\r\n\r\n"
	body := chunked(io.MultiReader(strings.NewReader(partHead), &repeatReader{n: size}))
	res, written := rawPost(t, base, "/dashboard/customers/%69mport", append(head, "Transfer-Encoding: chunked"), body, 60*time.Second)
	after := readMemory()
	t.Logf("40 MB chunked POST /dashboard/customers/%%69mport: %d, %d bytes written before the server stopped taking them", res.StatusCode, written)
	t.Logf("Go heap in use %.1f → %.1f MiB, allocated during the request %.1f MiB; VmRSS %s → %s, VmHWM %s → %s",
		float64(before.heapAlloc)/mib, float64(after.heapAlloc)/mib, float64(after.totalAlloc-before.totalAlloc)/mib,
		before.rss, after.rss, before.hwm, after.hwm)
	require.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode)
	require.Less(t, after.totalAlloc-before.totalAlloc, uint64(8*mib),
		"the instance allocated %.1f MiB for a body its route refuses past 64 KiB", float64(after.totalAlloc-before.totalAlloc)/mib)
}

// errorBody is the JSON of every error answer.
type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// TestGuessingIsLimitedAcrossInstances: wrong API keys and wrong admin tokens from one
// address are counted in Redis, so two instances together answer as many 401s as one
// would; past the limit the answer is 429 with Retry-After and the usual error body,
// even for a right key.
func TestGuessingIsLimitedAcrossInstances(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a, b := e.start(nil, fastTune), e.start(nil, fastTune)
	shop := e.newShop(a, "none", nil)

	guess := func(n int, method, path, token string) map[int]int {
		var mu sync.Mutex
		var wg sync.WaitGroup
		codes := map[int]int{}
		for i := range n {
			base := []string{a, b}[i%2]
			wg.Go(func() {
				req, err := http.NewRequest(method, base+path, strings.NewReader(`{}`))
				require.NoError(t, err)
				req.Header.Set("Authorization", "Bearer "+token)
				req.Header.Set("Content-Type", "application/json")
				res, err := e.client.Do(req)
				require.NoError(t, err)
				raw, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode == http.StatusTooManyRequests {
					var body errorBody
					require.NoError(t, json.Unmarshal(raw, &body), "%s", raw)
					require.Equal(t, "too_many_requests", body.Error.Code, "%s", raw)
					require.NotEmpty(t, body.Error.Message)
					require.NotEmpty(t, res.Header.Get("Retry-After"))
				}
				mu.Lock()
				codes[res.StatusCode]++
				mu.Unlock()
			})
		}
		wg.Wait()
		return codes
	}

	// A slow machine may see the API keys' bucket refill once or twice (one every 3 s).
	api, admin := apiKeyGuesses.limit, adminGuesses.limit
	start := time.Now()
	codes := guess(100, http.MethodGet, "/api/shop", "shop_not_a_key_0123456789")
	refills := int(time.Since(start) / api.Every)
	require.GreaterOrEqual(t, codes[http.StatusUnauthorized], api.Burst, "%v", codes)
	require.LessOrEqual(t, codes[http.StatusUnauthorized], api.Burst+refills, "wrong API keys answered on two instances: %v", codes)
	require.Equal(t, 100, codes[http.StatusUnauthorized]+codes[http.StatusTooManyRequests], "%v", codes)

	codes = guess(60, http.MethodPost, "/api/shops", "not-the-admin-token-0123456789")
	require.Equal(t, map[int]int{http.StatusUnauthorized: admin.Burst, http.StatusTooManyRequests: 60 - admin.Burst}, codes,
		"wrong admin tokens answered on two instances")

	// A right key from the limited address is not even looked at.
	require.Equal(t, http.StatusTooManyRequests, e.api(b, http.MethodGet, "/api/shop", shop.APIKey, nil, nil))
}

// TestReadyzAnswersFromACache: a flood of /readyz costs Postgres and Redis about one
// ping each a second, not one each per call.
func TestReadyzAnswersFromACache(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cfg, err := config.Load(e.vars(nil))
	require.NoError(t, err)
	a, err := build(t.Context(), cfg, slog.New(slog.DiscardHandler), serveOptions{tune: fastTune})
	require.NoError(t, err)
	t.Cleanup(a.close)
	srv := httptest.NewServer(a.routes())
	t.Cleanup(srv.Close)

	redisCalls := redistest.CountRoundTrips(t, a.redis)
	pgAcquires := a.pool.Stat().AcquireCount()
	start := time.Now()
	var wg sync.WaitGroup
	for range 200 {
		wg.Go(func() {
			res, err := e.client.Get(srv.URL + "/readyz")
			require.NoError(t, err)
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			require.Equal(t, http.StatusOK, res.StatusCode, "%s", body)
			require.JSONEq(t, `{"postgres":"ok","redis":"ok"}`, string(body))
		})
	}
	wg.Wait()
	seconds := int64(time.Since(start)/time.Second) + 1
	t.Logf("200 /readyz in %s: %d Redis round trips, %d Postgres acquires", time.Since(start).Round(time.Millisecond),
		redisCalls.Calls(), a.pool.Stat().AcquireCount()-pgAcquires)
	require.LessOrEqual(t, redisCalls.Calls(), seconds+1, "Redis pings for 200 probes")
	require.LessOrEqual(t, a.pool.Stat().AcquireCount()-pgAcquires, seconds+1, "Postgres pings for 200 probes")
}

// guessServer is one instance of a server whose one route, GET /api/thing, takes the
// key "good" and answers 401 to any other, behind limitGuesses(g). wrong counts the
// wrong keys its handler judged.
func guessServer(t *testing.T, l *ratelimit.Limiter, g guessLimit, wrong *atomic.Int64) string {
	t.Helper()
	e := echo.New()
	e.HTTPErrorHandler = httperr.Handler(nil)
	// routes' own extractor, with the test's loopback peer as the trusted proxy.
	e.IPExtractor = clientAddress([]netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("::1/128")})
	e.GET("/api/thing", func(c echo.Context) error {
		if c.Request().Header.Get("Authorization") != "Bearer good" {
			wrong.Add(1)
			return shops.ErrUnauthorized
		}
		return c.JSON(http.StatusOK, map[string]bool{"ok": true})
	}, limitGuesses(l, nil, g))
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestGuessLimitHoldsAcrossInstances: the guess limit on its own, on two instances
// (two echo servers, each with its own limiter) sharing one Redis, under many
// concurrent requests from one address: exactly the burst of 401s in all, 429s with
// Retry-After and the usual error body after, a right key refused too once the address
// is limited, and other addresses untouched. Both ways of counting are checked; with
// reserve, not one guess past the burst is even judged.
func TestGuessLimitHoldsAcrossInstances(t *testing.T) {
	t.Parallel()
	for _, reserve := range []bool{false, true} {
		t.Run(fmt.Sprintf("reserve=%v", reserve), func(t *testing.T) {
			t.Parallel()
			rdb, prefix := redistest.New(t)
			t.Cleanup(func() { _ = redistest.DeletePrefix(context.Background(), rdb, "rate:"+prefix) })
			g := guessLimit{name: "test", limit: ratelimit.Limit{Burst: 5, Every: time.Hour}, reserve: reserve}
			var wrong atomic.Int64
			// The test counts guesses, not Redis's speed: a limiter whose Redis call times out
			// lets the request through (the limit fails open), and 200 concurrent requests
			// under -race on a busy machine can wait past the server's 500 ms.
			patient := ratelimit.Config{Prefix: prefix, Timeout: 30 * time.Second}
			servers := []string{
				guessServer(t, ratelimit.New(rdb, patient), g, &wrong),
				guessServer(t, ratelimit.New(rdb, patient), g, &wrong),
			}
			client := newClient(100)
			call := func(i int, from, key string) int {
				req, err := http.NewRequest(http.MethodGet, servers[i%2]+"/api/thing", nil)
				require.NoError(t, err)
				req.Header.Set("X-Forwarded-For", from)
				req.Header.Set("Authorization", "Bearer "+key)
				res, err := client.Do(req)
				require.NoError(t, err)
				raw, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode == http.StatusTooManyRequests {
					var body errorBody
					require.NoError(t, json.Unmarshal(raw, &body), "%s", raw)
					require.Equal(t, "too_many_requests", body.Error.Code)
					require.Contains(t, body.Error.Message, "too many failed attempts")
					secs, err := strconv.Atoi(res.Header.Get("Retry-After"))
					require.NoError(t, err, "Retry-After %q", res.Header.Get("Retry-After"))
					require.InDelta(t, 3600, secs, 60, "the bucket refills in an hour")
				}
				return res.StatusCode
			}
			concurrently := func(n int, from, key string) map[int]int {
				var mu sync.Mutex
				var wg sync.WaitGroup
				codes := map[int]int{}
				for i := range n {
					wg.Go(func() {
						code := call(i, from, key)
						mu.Lock()
						codes[code]++
						mu.Unlock()
					})
				}
				wg.Wait()
				return codes
			}

			codes := concurrently(200, "198.51.100.1", "wrong")
			require.Equal(t, map[int]int{http.StatusUnauthorized: 5, http.StatusTooManyRequests: 195}, codes)
			if reserve {
				require.Equal(t, int64(5), wrong.Load(), "guesses judged")
			}
			judged := wrong.Load()
			require.Equal(t, http.StatusTooManyRequests, call(0, "198.51.100.1", "good"), "a right key from a limited address")
			require.Equal(t, http.StatusTooManyRequests, call(1, "198.51.100.1", "wrong"))
			require.Equal(t, judged, wrong.Load(), "a limited address's keys are not looked at")

			// Good requests from another address never count, and leave its whole burst.
			if reserve {
				for i := range 50 {
					require.Equal(t, http.StatusOK, call(i, "203.0.113.1", "good"))
				}
			} else {
				require.Equal(t, map[int]int{http.StatusOK: 100}, concurrently(100, "203.0.113.1", "good"))
			}
			require.Equal(t, map[int]int{http.StatusUnauthorized: 5, http.StatusTooManyRequests: 5}, concurrently(10, "203.0.113.1", "wrong"))
		})
	}
}

// TestGuessLimitWithoutRedis: the API's limit fails open (owners keep working while
// Redis is down), the admin token's fails closed (503 with Retry-After).
func TestGuessLimitWithoutRedis(t *testing.T) {
	t.Parallel()
	l := ratelimit.New(redistest.Unreachable(t), ratelimit.Config{})
	var wrong atomic.Int64
	open := guessServer(t, l, apiKeyGuesses, &wrong)
	closed := guessServer(t, l, adminGuesses, &wrong)
	call := func(base, key string) (int, string, http.Header) {
		req, err := http.NewRequest(http.MethodGet, base+"/api/thing", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return res.StatusCode, string(raw), res.Header
	}
	code, _, _ := call(open, "good")
	require.Equal(t, http.StatusOK, code)
	code, _, _ = call(open, "wrong")
	require.Equal(t, http.StatusUnauthorized, code)
	for _, key := range []string{"good", "wrong"} {
		code, body, h := call(closed, key)
		require.Equal(t, http.StatusServiceUnavailable, code, key)
		require.JSONEq(t, `{"error":{"code":"unavailable","message":"credentials cannot be checked right now; retry shortly"}}`, body)
		require.Equal(t, "5", h.Get("Retry-After"))
	}
}

// TestBodyLimitsByRoute: of every route the server answers, only the two CSV imports
// and the webhooks of Stripe, cal.com and Square take more than 64 KiB, and each of
// those a little more than its handler's own cap.
func TestBodyLimitsByRoute(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cfg, err := config.Load(e.vars(nil))
	require.NoError(t, err)
	a, err := build(t.Context(), cfg, slog.New(slog.DiscardHandler), serveOptions{tune: fastTune})
	require.NoError(t, err)
	t.Cleanup(a.close)
	large := map[string]int64{
		"POST " + shopapi.ImportPath:   shopapi.MaxImportBytes,
		"POST " + dashboard.ImportPath: dashboard.MaxImportBytes,
		"POST " + webhooks.StripePath:  webhooks.MaxStripeBody,
		"POST " + webhooks.CalcomPath:  connectors.MaxBody,
		"POST " + webhooks.SquarePath:  connectors.MaxBody,
	}
	seen := 0
	for _, r := range a.routes().(*echo.Echo).Routes() {
		limit := bodyLimitFor(r.Method, r.Path)
		if own, ok := large[r.Method+" "+r.Path]; ok {
			seen++
			require.Greater(t, limit, own, "%s %s: the handler's cap answers first", r.Method, r.Path)
			require.LessOrEqual(t, limit, own+64<<10, "%s %s", r.Method, r.Path)
			continue
		}
		require.Equal(t, int64(64<<10), limit, "%s %s", r.Method, r.Path)
	}
	require.Equal(t, len(large), seen, "the large routes exist")
	require.Equal(t, int64(64<<10), int64(dashboard.MaxFormBytes), "the dashboard reads no more form than its routes take")
}

// TestClientAddressTrustsOnlyConfiguredProxies: the address every per-client limit counts
// against is the TCP peer's unless the peer is one of TRUSTED_PROXIES. A client on the
// same host or network (behind a layer-4 balancer, which forwards no header of its own)
// that sends X-Forwarded-For does not get a fresh allowance per made-up address; behind a
// configured proxy, the address the proxy adds is the client's, and an untrusted hop it
// names (a private address included) is as far as the chain is believed.
func TestClientAddressTrustsOnlyConfiguredProxies(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// wrongKeys sends n requests with a wrong API key, the i-th forwarded for from(i),
	// and counts the answers; allowance is the burst plus what refilled meanwhile.
	wrongKeys := func(base string, n int, from func(i int) string) (codes map[int]int, allowance int) {
		codes = map[int]int{}
		start := time.Now()
		for i := range n {
			status, _ := e.getWith(base+"/api/shop", map[string]string{
				"Authorization": "Bearer shop_wrong", "X-Forwarded-For": from(i)})
			codes[status]++
		}
		return codes, apiKeyGuesses.limit.Burst + int(time.Since(start)/apiKeyGuesses.limit.Every) + 1
	}

	// No TRUSTED_PROXIES: the loopback peer is the client, whatever it claims.
	direct := e.start(nil, fastTune)
	codes, allowance := wrongKeys(direct, 40, func(i int) string { return fmt.Sprintf("203.0.113.%d", i+1) })
	require.LessOrEqual(t, codes[http.StatusUnauthorized], allowance,
		"wrong keys judged from one peer claiming 40 addresses: %v", codes)
	require.Positive(t, codes[http.StatusTooManyRequests], "answers: %v", codes)

	// Behind a trusted proxy on loopback: each forwarded address has its own allowance.
	proxied := e.start(map[string]string{"TRUSTED_PROXIES": "127.0.0.1/32, ::1/128"}, fastTune)
	codes, _ = wrongKeys(proxied, 40, func(i int) string { return fmt.Sprintf("198.51.100.%d", i+1) })
	require.Equal(t, map[int]int{http.StatusUnauthorized: 40}, codes, "40 clients, one wrong key each")
	codes, allowance = wrongKeys(proxied, 40, func(int) string { return "198.51.100.200" })
	require.LessOrEqual(t, codes[http.StatusUnauthorized], allowance, "one client: %v", codes)
	require.Positive(t, codes[http.StatusTooManyRequests], "answers: %v", codes)
	// A private hop that is not configured is the client: what it claims is not believed.
	codes, allowance = wrongKeys(proxied, 40, func(i int) string { return fmt.Sprintf("192.0.2.%d, 10.9.8.7", i+1) })
	require.LessOrEqual(t, codes[http.StatusUnauthorized], allowance, "behind an untrusted private hop: %v", codes)
	require.Positive(t, codes[http.StatusTooManyRequests], "answers: %v", codes)
}
