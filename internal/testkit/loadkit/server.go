// Package loadkit is the harness the load and soak tools share (cmd/loadtest and
// cmd/soak): it builds the server, runs instances of it on loopback, stands in for
// Stripe's Checkout API, and drives the public API and inbound texts signed exactly as
// Twilio signs them, over real HTTP. It is a client of the server, never part of it.
package loadkit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// The credentials the tools give the server and sign with. They are test values.
const (
	AdminToken    = "loadtest-admin-token-0123456789"
	PublicURL     = "https://slots.loadtest.invalid"
	TwilioPath    = "/webhooks/twilio/sms"
	SessionSecret = "loadtest-session-secret-0123456789abcdef"
	StripeKey     = "sk_test_loadtest"
	// InboundOverrides are the connection overrides the tools configure on the inbound
	// URL (TWILIO_CONNECTION_OVERRIDES) and apply as Twilio does (Driver.Overrides): up
	// to three retries of any failure, each attempt waiting 13 s for its answer.
	InboundOverrides = "rc=3&rp=all&ct=2000&rt=13000"
	StripeSecret     = "whsec_loadtest"
	// ErasureKey and SecretsKey are ERASURE_KEY and SECRETS_KEY, which a server outside
	// DEV_MODE requires (32 bytes in hex, as `openssl rand -hex 32` writes them).
	ErasureKey = "3d7a1f9c5e2b8d4f6a0c3e7b9d1f5a2c8e4b6d0f3a7c9e1b5d2f8a4c6e0b3d7a"
	SecretsKey = "8e2c6a0f4d1b7e3c9a5f2d8b0e6c4a1f7d3b9e5c2a8f0d6b4e1c7a3f9d5b2e8c"
)

// Build compiles ./cmd/server (run from the module root) into bin.
func Build(ctx context.Context, bin string) error {
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/server").CombinedOutput(); err != nil {
		return fmt.Errorf("build server: %v\n%s", err, out)
	}
	return nil
}

// BuildRev compiles ./cmd/server as committed at the git revision rev (HEAD, a tag, a
// commit) into bin: a long run then tests one known version, whatever is being edited
// in the working tree meanwhile. The source is exported with git archive into a
// temporary directory; the working tree and the repository are left as they are.
func BuildRev(ctx context.Context, bin, rev string) error {
	src, err := os.MkdirTemp("", "slotrec-src-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(src)
	archive := exec.CommandContext(ctx, "git", "archive", "--format=tar", rev)
	untar := exec.CommandContext(ctx, "tar", "-x", "-C", src)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return err
	}
	untar.Stdin = pipe
	if err := untar.Start(); err != nil {
		return err
	}
	var stderr strings.Builder
	archive.Stderr = &stderr
	if err := archive.Run(); err != nil {
		_ = untar.Wait()
		return fmt.Errorf("git archive %s: %v\n%s", rev, err, stderr.String())
	}
	if err := untar.Wait(); err != nil {
		return fmt.Errorf("untar %s: %w", rev, err)
	}
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/server")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build server at %s: %v\n%s", rev, err, out)
	}
	return nil
}

// Env is what one instance is configured with.
type Env struct {
	DatabaseURL, RedisURL, KeyPrefix  string
	TwilioURL, TwilioSID, TwilioToken string
	StripeURL                         string
	// Addr is HTTP_ADDR; Pprof, when set, PPROF_ADDR.
	Addr, Pprof string
	// Overrides, when set, is TWILIO_CONNECTION_OVERRIDES.
	Overrides string
	// Extra is more KEY=VALUE settings, last (so they win): GOMAXPROCS or GOGC for an
	// experiment.
	Extra []string
}

// Environ is the instance's whole environment: nothing leaks in from the caller's
// but PATH and HOME.
func (e Env) Environ() []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
		"DATABASE_URL=" + e.DatabaseURL, "REDIS_URL=" + e.RedisURL, "REDIS_KEY_PREFIX=" + e.KeyPrefix,
		"HTTP_ADDR=" + e.Addr, "PUBLIC_URL=" + PublicURL, "ADMIN_TOKEN=" + AdminToken,
		"ERASURE_KEY=" + ErasureKey, "SECRETS_KEY=" + SecretsKey,
		"TWILIO_ACCOUNT_SID=" + e.TwilioSID, "TWILIO_AUTH_TOKEN=" + e.TwilioToken, "TWILIO_API_URL=" + e.TwilioURL,
		"STRIPE_SECRET_KEY=" + StripeKey, "STRIPE_WEBHOOK_SECRET=" + StripeSecret, "STRIPE_API_URL=" + e.StripeURL,
		"SESSION_SECRET=" + SessionSecret, "LOG_LEVEL=warn",
	}
	if e.Pprof != "" {
		env = append(env, "PPROF_ADDR="+e.Pprof)
	}
	if e.Overrides != "" {
		env = append(env, "TWILIO_CONNECTION_OVERRIDES="+e.Overrides)
	}
	return append(env, e.Extra...)
}

// Migrate runs `server migrate` once, so that instances started together do not queue
// on the migration lock.
func Migrate(ctx context.Context, bin string, env Env) error {
	env.Addr = "127.0.0.1:0"
	cmd := exec.CommandContext(ctx, bin, "migrate")
	cmd.Env = env.Environ()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("migrate: %v\n%s", err, out)
	}
	return nil
}

// FreePort returns a loopback address nobody listens on (at the moment it is asked).
func FreePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// Process is a child process the tools run: a server instance or a helper. It runs in
// its own process group, so a Ctrl-C at the terminal reaches only the tool, which then
// stops its children in order.
type Process struct {
	// Base is http://Addr for a server; empty otherwise.
	Base    string
	Started time.Time
	cmd     *exec.Cmd
	done    chan struct{}
}

// Start starts bin with args and env, its output appended to logPath.
func Start(bin string, args, env []string, logPath string) (*Process, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	p := &Process{cmd: cmd, done: make(chan struct{}), Started: time.Now()}
	go func() { _ = cmd.Wait(); logf.Close(); close(p.done) }()
	return p, nil
}

// StartServer starts `bin serve` with env, listening on env.Addr.
func StartServer(bin string, env Env, logPath string) (*Process, error) {
	p, err := Start(bin, []string{"serve"}, env.Environ(), logPath)
	if err != nil {
		return nil, err
	}
	p.Base = "http://" + env.Addr
	return p, nil
}

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed once the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Alive reports whether the process has not exited yet.
func (p *Process) Alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Kill sends SIGKILL (no shutdown, as a crash or an OOM kill) and waits for the exit.
func (p *Process) Kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// Stop sends SIGTERM and waits up to grace for a clean exit, then kills.
func (p *Process) Stop(grace time.Duration) {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		p.Kill()
	}
}

// WaitReady polls url until it answers 200, the process exits, ctx ends or timeout
// passes.
func (p *Process) WaitReady(ctx context.Context, url string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	client := &http.Client{Timeout: 2 * time.Second}
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			return errors.New("exited before it was ready")
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		res, err := client.Get(url)
		if err == nil {
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("not ready within %s", timeout)
}
