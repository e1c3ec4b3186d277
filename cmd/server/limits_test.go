package main

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/config"
	"github.com/slotrecovery/slotrecovery/internal/dashboard"
	"github.com/slotrecovery/slotrecovery/internal/shopapi"
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

// TestBodyLimitsByRoute: of every route the server answers, only the two CSV imports
// and Stripe's webhook take more than 64 KiB, and each of those a little more than its
// handler's own cap.
func TestBodyLimitsByRoute(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cfg, err := config.Load(e.vars(nil))
	require.NoError(t, err)
	a, err := build(t.Context(), cfg, slog.New(slog.DiscardHandler), fastTune)
	require.NoError(t, err)
	t.Cleanup(a.close)
	large := map[string]int64{
		"POST " + shopapi.ImportPath:   shopapi.MaxImportBytes,
		"POST " + dashboard.ImportPath: dashboard.MaxImportBytes,
		"POST " + webhooks.StripePath:  webhooks.MaxStripeBody,
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
