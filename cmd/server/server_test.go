package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/twiliofake"
)

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// TestConfigErrorsStopTheServer: a missing or malformed variable stops start-up with a
// message naming it and without the secrets.
func TestConfigErrorsStopTheServer(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"DATABASE_URL": "mysql://root:hunter2secret@db/x", "REDIS_URL": "redis://127.0.0.1:6379",
		"ADMIN_TOKEN": "short", "PUBLIC_URL": "https://x.example", "TWILIO_ACCOUNT_SID": "ACx", "TWILIO_AUTH_TOKEN": "tok-secret-value",
	}
	err := run(context.Background(), []string{"serve"}, func(k string) string { return env[k] }, io.Discard, io.Discard)
	require.Error(t, err)
	require.Contains(t, err.Error(), "DATABASE_URL")
	require.Contains(t, err.Error(), "ADMIN_TOKEN")
	require.NotContains(t, err.Error(), "hunter2secret")
	require.NotContains(t, err.Error(), "tok-secret-value")

	err = run(context.Background(), []string{"bogus"}, func(string) string { return "" }, io.Discard, io.Discard)
	require.ErrorContains(t, err, "unknown command")
}

// TestServerBasics: health, readiness, metrics, JSON errors, request ids in every log
// line of a request, masked phones, and the migrate command.
func TestServerBasics(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	logs := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, e.vars(map[string]string{"LOG_LEVEL": "info"}), logs, serveOptions{ready: ready, tune: fastTune})
	}()
	base := "http://" + <-ready
	e.servers = append(e.servers, base)

	for path, want := range map[string]int{"/healthz": 200, "/readyz": 200, "/metrics": 200, "/nope": 404} {
		res, err := http.Get(base + path)
		require.NoError(t, err)
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		require.Equal(t, want, res.StatusCode, path)
		if path == "/nope" {
			require.JSONEq(t, `{"error":{"code":"not_found","message":"no such resource"}}`, string(body))
		}
	}
	shop := e.newShop(base, "none", nil)
	c := e.newCustomer(base, shop, "+15550000123", true)
	a := e.text(base, c.Phone, shop.SMSNumber, "HELP")
	require.Equal(t, "help", a.Outcome)

	res, err := http.Get(base + "/metrics")
	require.NoError(t, err)
	metrics, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Contains(t, string(metrics), `slotrecovery_inbound_replies_total{outcome="help"} 1`)
	require.Contains(t, string(metrics), "echo_requests_total")

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err, "graceful shutdown")
	case <-time.After(30 * time.Second):
		t.Fatal("server did not stop")
	}
	out := logs.String()
	require.Contains(t, out, `"msg":"inbound text answered"`)
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, `"msg":"inbound text answered"`) || strings.Contains(line, `"msg":"request"`) {
			require.Contains(t, line, `"request_id":"`, line)
		}
	}
	require.NotContains(t, out, c.Phone, "phones never appear in logs")
	require.NotContains(t, out, twiliofake.TestAuthToken)
	require.NotContains(t, out, adminToken)
	require.NotContains(t, out, shop.APIKey)

	var stdout bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"migrate"}, e.vars(nil), &stdout, io.Discard))
	require.Contains(t, stdout.String(), "migrations applied")
}

// TestSimulateSMS: the simulate command signs a text the way Twilio does, so a running
// server that checks signatures accepts it, and prints the outcome.
func TestSimulateSMS(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	base := e.start(map[string]string{"HTTP_ADDR": addr, "PUBLIC_URL": "http://" + addr}, fastTune)
	shop := e.newShop(base, "none", nil)
	c := e.newCustomer(base, shop, "+15550000456", true)

	var out bytes.Buffer
	getenv := func(k string) string {
		if k == "TWILIO_AUTH_TOKEN" {
			return twiliofake.TestAuthToken
		}
		return ""
	}
	err = run(context.Background(), []string{"simulate", "sms", "--url", base, "--from", c.Phone, "--to", shop.SMSNumber, "--body", "help"}, getenv, &out, io.Discard)
	require.NoError(t, err)
	require.Contains(t, out.String(), "X-Slot-Outcome: help")

	// A wrong token is refused by the server, and the command says so.
	out.Reset()
	err = run(context.Background(), []string{"simulate", "sms", "--url", base, "--token", "wrongtoken", "--from", c.Phone, "--to", shop.SMSNumber}, getenv, &out, io.Discard)
	require.ErrorContains(t, err, "403")
}

// TestSimulateHelpHidesSecrets: the simulate commands' help never prints a secret taken
// from the environment.
func TestSimulateHelpHidesSecrets(t *testing.T) {
	t.Parallel()
	getenv := func(k string) string {
		return map[string]string{"TWILIO_AUTH_TOKEN": "supersecrettoken123", "STRIPE_WEBHOOK_SECRET": "whsec_supersecret"}[k]
	}
	for _, kind := range []string{"sms", "stripe"} {
		var out bytes.Buffer
		_ = run(context.Background(), []string{"simulate", kind, "-h"}, getenv, &out, &out)
		require.NotEmpty(t, out.String())
		require.NotContains(t, out.String(), "supersecret", kind)
	}
}
