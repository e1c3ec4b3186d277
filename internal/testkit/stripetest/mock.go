// Package stripetest runs stripe-mock for tests and puts a recording,
// scriptable proxy in front of it.
//
// stripe-mock validates requests against Stripe's OpenAPI spec and answers
// with fixtures, but it is stateless: it returns the same fixture id for every
// object, ignores idempotency keys and cannot decline a card or send a
// webhook. Tests therefore count and inspect requests at a Recorder, script
// the answers stripe-mock cannot give with Recorder.Respond and FailNext, and
// drive payment outcomes with signed webhook events.
//
// One stripe-mock process serves a whole test binary. It is bound to loopback
// on ports the kernel picks, so test binaries running in parallel do not
// collide, and it dies with the test binary (a parent-death signal on Linux;
// call Stop from TestMain to be sure elsewhere).
package stripetest

import (
	"bytes"
	"fmt"
	"go/build"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Version is the stripe-mock version the project pins (tools/go.mod).
const Version = "v0.203.0"

// startTimeout bounds how long stripe-mock may take to load its spec and
// answer; it takes about a second.
const startTimeout = 30 * time.Second

// The one stripe-mock of this test binary.
var (
	mockOnce sync.Once
	mockMu   sync.Mutex
	mockURL  string
	mockErr  error
	mockCmd  *exec.Cmd
	mockDone chan struct{}
)

// Mock returns the base URL (http://127.0.0.1:PORT) of a stripe-mock
// started once per test binary. If STRIPE_MOCK_URL is set, it uses that
// server instead (for example the docker compose one).
//
// The binary is STRIPE_MOCK_BIN, else stripe-mock on PATH, else
// /root/go/bin/stripe-mock or $GOPATH/bin/stripe-mock. If there is none, the
// test fails with how to install it.
func Mock(t testing.TB) string {
	t.Helper()
	if u := os.Getenv("STRIPE_MOCK_URL"); u != "" {
		return strings.TrimRight(u, "/")
	}
	// The start runs inside Once and reports through mockErr: a t.Fatal
	// inside Do would mark it done without a URL for every later test.
	mockOnce.Do(func() { mockURL, mockErr = start() })
	if mockErr != nil {
		t.Fatalf("stripetest: %v", mockErr)
	}
	return mockURL
}

// Stop kills the stripe-mock started by Mock, if any, and waits for it to
// exit. Call it from TestMain after m.Run; on Linux the process also dies
// with the test binary without it.
func Stop() {
	mockMu.Lock()
	cmd, done := mockCmd, mockDone
	mockCmd = nil
	mockMu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-done
}

func findBinary() (string, error) {
	if p := os.Getenv("STRIPE_MOCK_BIN"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("STRIPE_MOCK_BIN=%s: %w", p, err)
		}
		return p, nil
	}
	if p, err := exec.LookPath("stripe-mock"); err == nil {
		return p, nil
	}
	candidates := []string{"/root/go/bin/stripe-mock"}
	for _, dir := range filepath.SplitList(build.Default.GOPATH) {
		candidates = append(candidates, filepath.Join(dir, "bin", "stripe-mock"))
	}
	for _, p := range candidates {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	return "", fmt.Errorf("stripe-mock not found (looked at STRIPE_MOCK_BIN, PATH, %s); install it with "+
		"`go install github.com/stripe/stripe-mock@%s` or set STRIPE_MOCK_BIN or STRIPE_MOCK_URL",
		strings.Join(candidates, ", "), Version)
}

type started struct {
	url string
	err error
}

func start() (string, error) {
	bin, err := findBinary()
	if err != nil {
		return "", err
	}
	// Both listeners get an explicit loopback address with an empty port so
	// the kernel picks free ones: -http-addr alone leaves stripe-mock's
	// HTTPS listener on the default [::]:12112, which a second test binary
	// running in parallel could not bind.
	cmd := exec.Command(bin, "-http-addr", "127.0.0.1:", "-https-addr", "127.0.0.1:")
	cmd.SysProcAttr = sysProcAttr()
	addr := &addrWriter{found: make(chan string, 1)}
	cmd.Stdout = addr
	var stderr lockedBuffer
	cmd.Stderr = &stderr

	result := make(chan started, 1)
	done := make(chan struct{})
	go func() {
		// Pdeathsig fires when the thread that started the child exits, not
		// the process: keep this goroutine on its own locked thread until
		// the child is gone so the Go scheduler never retires that thread.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			result <- started{err: fmt.Errorf("start %s: %w", bin, err)}
			close(done)
			return
		}
		mockMu.Lock()
		mockCmd, mockDone = cmd, done
		mockMu.Unlock()

		go func() {
			select {
			case a := <-addr.found:
				result <- started{url: "http://" + a}
			case <-done:
				result <- started{err: fmt.Errorf("%s exited before listening: %s", bin, stderr.String())}
			case <-time.After(startTimeout):
				result <- started{err: fmt.Errorf("%s did not listen within %s: %s", bin, startTimeout, stderr.String())}
			}
		}()
		_ = cmd.Wait()
		close(done)
	}()

	r := <-result
	if r.err != nil {
		Stop()
		return "", r.err
	}
	if err := waitReady(r.url); err != nil {
		Stop()
		return "", err
	}
	return r.url, nil
}

// waitReady polls until stripe-mock answers an authenticated request.
func waitReady(base string) error {
	deadline := time.Now().Add(startTimeout)
	c := &http.Client{Timeout: 2 * time.Second}
	var last error
	for time.Now().Before(deadline) {
		req, err := http.NewRequest(http.MethodGet, base+"/v1/balance", nil)
		if err != nil {
			return fmt.Errorf("stripe-mock readiness request: %w", err)
		}
		req.Header.Set("Authorization", "Bearer sk_test_stripetest")
		resp, err := c.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		last = err
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("stripe-mock at %s not ready within %s: %v", base, startTimeout, last)
}

// lockedBuffer is a bytes.Buffer safe for the writer goroutine exec starts
// and a reader reporting a failed start.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.TrimSpace(b.buf.String())
}

// addrWriter is stripe-mock's stdout: it reports the address from the line
// "Listening for HTTP at address: 127.0.0.1:PORT" and discards the rest.
type addrWriter struct {
	mu    sync.Mutex
	line  []byte
	found chan string
	sent  bool
}

func (w *addrWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.sent {
		return len(p), nil
	}
	w.line = append(w.line, p...)
	for {
		i := bytes.IndexByte(w.line, '\n')
		if i < 0 {
			break
		}
		l := strings.TrimSpace(string(w.line[:i]))
		w.line = w.line[i+1:]
		if a, ok := strings.CutPrefix(l, "Listening for HTTP at address: "); ok {
			w.found <- a
			w.sent = true
			w.line = nil
			break
		}
	}
	return len(p), nil
}
