package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/payments/stripe"
	"github.com/slotrecovery/slotrecovery/internal/testkit/twiliofake"
	"github.com/slotrecovery/slotrecovery/internal/webhooks"
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
	t.Cleanup(cancel) // a failure before the graceful stop below does not leave it running
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, e.vars(map[string]string{"LOG_LEVEL": "info"}), logs, serveOptions{ready: ready, tune: fastTune})
	}()
	var base string
	select {
	case addr := <-ready:
		base = "http://" + addr
	case err := <-done:
		cancel()
		t.Fatalf("server did not start: %v", err)
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatal("server did not start in time")
	}
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
	// A text is one line at info, its request's, with the outcome.
	require.NotContains(t, out, `"msg":"inbound text answered"`)
	textLines := 0
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, `"msg":"request"`) {
			require.Contains(t, line, `"request_id":"`, line)
		}
		if strings.Contains(line, `"path":"`+webhooks.TwilioPath+`"`) {
			require.Contains(t, line, `"outcome":"help"`, line)
			textLines++
		}
	}
	require.Equal(t, 1, textLines, "one line at info for the text")
	// At info, the text's request is logged and Twilio's report that it took the
	// answer is not (a line per report tells an operator nothing).
	require.Contains(t, out, `"path":"`+webhooks.TwilioPath+`"`)
	require.NotContains(t, out, `"path":"`+webhooks.TwilioAnsweredPath+`"`)
	require.NotContains(t, out, c.Phone, "phones never appear in logs")
	require.NotContains(t, out, twiliofake.TestAuthToken)
	require.NotContains(t, out, adminToken)
	require.NotContains(t, out, shop.APIKey)

	var stdout bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"migrate"}, e.vars(nil), &stdout, io.Discard))
	require.Contains(t, stdout.String(), "migrations applied")
}

// TestSimulateSMS: the simulate command signs a text the way Twilio does, so a running
// server that checks signatures accepts it, prints the outcome and the answer, and
// reports the answer taken on its action URL, as Twilio does.
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
	require.Contains(t, out.String(), "<Response><Message>", "printed without the action URL")
	require.Equal(t, 1, e.count(`SELECT count(*) FROM inbound_messages WHERE answered_at IS NOT NULL`),
		"reported taken on the answer's action URL, as Twilio does")

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

// pgProxy forwards TCP connections to Postgres. Cut drops every connection it carries
// and closes new ones as soon as they arrive, which is how a Postgres outage looks to
// the server; restore lets connections through again. It stays on one address all
// along, so the server's pool reconnects through it once restored.
type pgProxy struct {
	ln     net.Listener
	target string
	wg     sync.WaitGroup

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]struct{}
}

func newPGProxy(t *testing.T, target string) *pgProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &pgProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(func() {
		_ = ln.Close()
		p.setCut(true)
		p.wg.Wait()
	})
	return p
}

func (p *pgProxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		if !p.track(c) {
			continue
		}
		p.wg.Add(1)
		go p.pipe(c)
	}
}

// track registers c, or closes it when the proxy is cut.
func (p *pgProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		_ = c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *pgProxy) forget(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		_ = c.Close()
		delete(p.conns, c)
	}
}

func (p *pgProxy) pipe(c net.Conn) {
	defer p.wg.Done()
	up, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		p.forget(c)
		return
	}
	if !p.track(up) {
		p.forget(c)
		return
	}
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
	p.forget(c, up) // ends the other copy too
	<-done
}

func (p *pgProxy) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for c := range p.conns {
			_ = c.Close()
		}
	}
}

// TestPostgresUnreachableFailsClosed: with Postgres cut off from a running instance, a
// YES makes no booking and is answered 200 retry_later, asking the customer to reply
// again (not an error Twilio would retry), and /readyz says Postgres is unreachable.
// Once Postgres is back, the next YES books.
func TestPostgresUnreachableFailsClosed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	u, err := url.Parse(e.dbURL)
	require.NoError(t, err)
	if u.Hostname() == "" {
		t.Skip("needs Postgres over TCP (TEST_DATABASE_URL names a socket)")
	}
	target := u.Host
	if u.Port() == "" {
		target = net.JoinHostPort(u.Hostname(), "5432")
	}
	proxy := newPGProxy(t, target)
	u.Host = proxy.ln.Addr().String()
	dbURL := withQuery(withQuery(u.String(), "connect_timeout", "1"), "pool_max_conns", "4")
	base := e.start(map[string]string{"DATABASE_URL": dbURL}, fastTune)
	// Cleanups run last first: Postgres is back before the server stops.
	t.Cleanup(func() { proxy.setCut(false) })

	shop := e.newShop(base, "checkout", nil)
	c := e.newCustomer(base, shop, "+15550000071", true)
	op := e.newOpening(base, shop, 3*time.Hour)
	e.waveDone(op.ID, 1, 1)
	require.Equal(t, "sent", e.offerStatus(c.ID, op.ID))

	proxy.setCut(true)
	sid := "SM000000000000000000000000000pgdown"
	a := e.textSID(base, sid, c.Phone, shop.SMSNumber, "YES")
	require.Equal(t, http.StatusOK, a.Status, a.Body)
	require.Equal(t, "retry_later", a.Outcome, a.Body)
	require.Contains(t, a.Body, "reply again")
	var ready map[string]string
	require.Equal(t, http.StatusServiceUnavailable, e.api(base, http.MethodGet, "/readyz", "", nil, &ready))
	require.Equal(t, map[string]string{"postgres": "unreachable", "redis": "ok"}, ready)

	// Straight from Postgres (the test's own connection does not go through the proxy):
	// nothing was booked, and the message could not even be stored.
	require.Zero(t, e.count(`SELECT count(*) FROM bookings`))
	require.Zero(t, e.count(`SELECT count(*) FROM inbound_messages WHERE message_sid = $1`, sid))
	require.Equal(t, 1, e.count(`SELECT count(*) FROM slot_openings WHERE id = $1 AND status = 'open'`, op.ID))
	require.Equal(t, "sent", e.offerStatus(c.ID, op.ID))
	require.Zero(t, e.stripe.Count(http.MethodPost, "/v1/checkout/sessions"))
	keys, err := e.redis.Keys(context.Background(), e.prefix+"slot_lock:*").Result()
	require.NoError(t, err)
	require.Empty(t, keys, "no lock left behind")

	proxy.setCut(false)
	e.eventually("ready again", func() bool {
		return e.api(base, http.MethodGet, "/readyz", "", nil, nil) == http.StatusOK
	})
	a = e.text(base, c.Phone, shop.SMSNumber, "YES")
	require.Equal(t, "booked", a.Outcome, a.Body)
	require.Equal(t, 1, e.count(`SELECT count(*) FROM bookings`))
}

// metricsText fetches an instance's /metrics.
func (e *env) metricsText(base string) string {
	e.t.Helper()
	res, err := e.client.Get(base + "/metrics")
	require.NoError(e.t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(e.t, err)
	require.Equal(e.t, http.StatusOK, res.StatusCode)
	return string(b)
}

var labelPair = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"`)

// metricValue returns the value of the sample of name whose labels are exactly labels,
// from Prometheus's text format, and whether there is one.
func metricValue(t *testing.T, text, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		rest, ok := strings.CutPrefix(line, name)
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		got := map[string]string{}
		switch {
		case strings.HasPrefix(rest, "{"):
			end := strings.LastIndex(rest, "}")
			require.Positive(t, end, line)
			for _, m := range labelPair.FindAllStringSubmatch(rest[1:end], -1) {
				got[m[1]] = m[2]
			}
			rest = rest[end+1:]
		case strings.HasPrefix(rest, " "):
		default:
			continue // another metric whose name starts with this one
		}
		if len(got) != len(labels) {
			continue
		}
		match := true
		for k, v := range labels {
			if got[k] != v {
				match = false
			}
		}
		if !match {
			continue
		}
		v, err := strconv.ParseFloat(strings.Fields(rest)[0], 64)
		require.NoError(t, err, line)
		return v, true
	}
	return 0, false
}

// TestProductMetrics: /metrics counts what happened (docs/operations.md): a wave and the offers
// it texted, a Twilio send error by its code, a booked and a taken YES with their answer
// times, the slot lock obtained, the bookings by status, and a Stripe event by type and
// result.
func TestProductMetrics(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(nil, fastTune)
	shop := e.newShop(base, "checkout", nil)
	alice := e.newCustomer(base, shop, "+15550000081", true)
	bob := e.newCustomer(base, shop, "+15550000082", true)
	carol := e.newCustomer(base, shop, "+15550000083", true)
	e.twilio.FailNumber(carol.Phone, 21610, http.StatusBadRequest) // she replied STOP to the carrier
	op := e.newOpening(base, shop, 3*time.Hour)
	e.waveDone(op.ID, 1, 1)
	require.Equal(t, "failed", e.offerStatus(carol.ID, op.ID))

	a := e.text(base, alice.Phone, shop.SMSNumber, "YES")
	require.Equal(t, "booked", a.Outcome, a.Body)
	require.Equal(t, "taken", e.text(base, bob.Phone, shop.SMSNumber, "YES").Outcome)
	b := e.opening(base, shop, op.ID).Booking
	require.NotNil(t, b)
	r := e.send(base, event{id: evtID(), typ: stripe.EventCheckoutCompleted, booking: b.ID, session: b.SessionID, intent: "pi_metrics"})
	require.Equal(t, "confirmed", r.Result, r.Body)

	text := e.metricsText(base)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"slotrecovery_waves_run_total", map[string]string{"result": "texted"}, 1},
		{"slotrecovery_offers_texted_total", nil, 2},
		{"slotrecovery_twilio_send_errors_total", map[string]string{"code": "21610"}, 1},
		{"slotrecovery_lock_obtains_total", map[string]string{"result": "obtained"}, 1},
		{"slotrecovery_inbound_replies_total", map[string]string{"outcome": "booked"}, 1},
		// A YES after the slot went is told "taken" from Postgres, without the lock.
		{"slotrecovery_inbound_replies_total", map[string]string{"outcome": "taken"}, 1},
		{"slotrecovery_yes_answer_seconds_count", nil, 2},
		{"slotrecovery_bookings_total", map[string]string{"status": "pending_payment"}, 1},
		{"slotrecovery_bookings_total", map[string]string{"status": "confirmed"}, 1},
		{"slotrecovery_stripe_events_total", map[string]string{"type": "checkout.session.completed", "result": "confirmed"}, 1},
	} {
		got, ok := metricValue(t, text, c.name, c.labels)
		require.True(t, ok, "%s%v missing from:\n%s", c.name, c.labels, text)
		require.Equal(t, c.want, got, "%s%v", c.name, c.labels)
	}
	_, ok := metricValue(t, text, "slotrecovery_lock_obtains_total", map[string]string{"result": "error"})
	require.False(t, ok, "no lock errors")
}
