package hooks_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/testkit/hookstest"
)

// TestSlowOrHugeEndpointDoesNotDelayAnother: one endpoint hangs on every request and
// another streams an endless answer; a third, healthy endpoint of the same shop gets all
// of its events while the hanging one still holds its first requests. The slow one
// holds at most PerEndpoint of the queue's workers; the huge answer is cut at 64 KiB.
func TestSlowOrHugeEndpointDoesNotDelayAnother(t *testing.T) {
	t.Parallel()
	s := newScene(t, hooks.Config{AllowPrivate: true, DevMode: true, PerEndpoint: 2, Timeout: 30 * time.Second})
	slow := hookstest.NewReceiver(t)
	slow.Hold()
	s.endpoint(slow)

	// An endpoint whose answer never ends: 200, then bytes until the client hangs up.
	var hugeDone atomic.Int64
	huge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		chunk := []byte(strings.Repeat("x", 32<<10))
		for i := 0; i < 1<<15; i++ { // 1 GiB at most
			if _, err := w.Write(chunk); err != nil {
				break
			}
		}
		hugeDone.Add(1)
	}))
	t.Cleanup(huge.Close)
	_, _, err := s.svc.CreateEndpoint(context.Background(), s.shop.ID, hooks.NewEndpoint{URL: huge.URL + "/hooks"})
	require.NoError(t, err)

	fine := hookstest.NewReceiver(t)
	s.endpoint(fine)
	// Five workers: the hanging endpoint may hold two of them, the endless one two.
	hookstest.Deliver(t, s.pool, s.svc, hookstest.RiverConfig{Workers: 5})
	const n = 12
	for i := range n {
		s.record(hooks.CustomerOptedOut, i)
	}
	got := fine.WaitFor(t, n, 30*time.Second)
	require.Len(t, got, n)
	require.Empty(t, slow.Accepted(), "the hanging endpoint has answered nothing yet")
	require.LessOrEqual(t, slow.Requests(), 2, "the hanging endpoint holds at most PerEndpoint attempts at once")

	var hugeOK int
	deadline := time.Now().Add(30 * time.Second)
	for {
		require.NoError(t, s.pool.QueryRow(context.Background(), `SELECT count(*) FROM webhook_deliveries d
			JOIN webhook_endpoints e ON e.id = d.endpoint_id WHERE e.url = $1 AND d.status = 'succeeded'`, huge.URL+"/hooks").Scan(&hugeOK))
		if hugeOK == n {
			break
		}
		require.True(t, time.Now().Before(deadline), "the endless answers: %d of %d succeeded", hugeOK, n)
		time.Sleep(20 * time.Millisecond)
	}
	var longest int
	require.NoError(t, s.pool.QueryRow(context.Background(), `SELECT max(length(response_head)) FROM webhook_attempts`).Scan(&longest))
	require.Equal(t, 1024, longest, "an attempt keeps the first KiB of the answer")
	slow.Release()
}

// TestHugeAnswerHeadersFailTheAttempt: a receiver answering 200 with 100 KiB of
// headers (a misconfigured proxy, or one trying to make the server buffer without
// bound) does not count as a delivery: the client stops reading headers at 32 KiB, each
// attempt fails cleanly with its error in the attempt log, and the delivery fails once
// the schedule runs out.
func TestHugeAnswerHeadersFailTheAttempt(t *testing.T) {
	t.Parallel()
	s := newScene(t, hooks.Config{AllowPrivate: true, DevMode: true})
	var hits atomic.Int64
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		for i := range 50 {
			w.Header().Set(fmt.Sprintf("X-Padding-%d", i), strings.Repeat("p", 2<<10))
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(big.Close)
	_, _, err := s.svc.CreateEndpoint(context.Background(), s.shop.ID, hooks.NewEndpoint{URL: big.URL + "/hooks"})
	require.NoError(t, err)
	hookstest.Deliver(t, s.pool, s.svc, hookstest.RiverConfig{})
	s.record(hooks.CustomerOptedIn, 1)
	s.waitDeliveries(1, hooks.DeliveryFailed, 30*time.Second)
	require.Equal(t, int64(len(fastSchedule)), hits.Load(), "every scheduled attempt reached the receiver")
	require.Equal(t, len(fastSchedule), s.count(`SELECT count(*) FROM webhook_attempts
		WHERE status_code IS NULL AND error LIKE '%response headers exceeded%'`), "each attempt failed on the headers, and says so")
}

// TestPrivateAddressesRefused: without AllowPrivate, URLs naming a private address are
// refused when stored, and a name that resolves to one (or a URL stored before) is
// refused when the delivery connects: nothing reaches the target. A redirect is not
// followed, whatever it points at.
func TestPrivateAddressesRefused(t *testing.T) {
	t.Parallel()
	s := newScene(t, hooks.Config{DevMode: true})
	ctx := context.Background()
	for _, u := range []string{
		"http://127.0.0.1/hooks", "https://127.0.0.1:8443/", "https://10.1.2.3/", "https://172.16.0.1/",
		"https://192.168.1.1/", "https://169.254.169.254/latest/meta-data/", "https://[::1]/",
		"https://[fd00:ec2::254]/", "https://[::ffff:127.0.0.1]/", "https://100.64.0.1/", "https://0.0.0.0/",
		"https://localhost/hooks", "https://api.localhost/", "https://[fe80::1]/", "https://224.0.0.1/",
	} {
		_, _, err := s.svc.CreateEndpoint(ctx, s.shop.ID, hooks.NewEndpoint{URL: u})
		require.Error(t, err, u)
		require.Contains(t, err.Error(), "url", u)
	}
	strict := hooks.New(s.pool, s.queue, hooks.Config{Secrets: testSecrets})
	for _, u := range []string{"http://example.com/hooks", "ftp://example.com/", "https://user:pw@example.com/", "/relative", "https://example.com/#x"} {
		_, _, err := strict.CreateEndpoint(ctx, s.shop.ID, hooks.NewEndpoint{URL: u})
		require.Error(t, err, u)
	}
	public, _, err := strict.CreateEndpoint(ctx, s.shop.ID, hooks.NewEndpoint{URL: "https://hooks.example.com/in?token=abc"})
	require.NoError(t, err, "a public https URL is fine")
	require.NoError(t, strict.DeleteEndpoint(ctx, s.shop.ID, public.ID))

	// Endpoints stored while the rules allowed them (or by a name that resolves to
	// loopback): the connection itself is refused.
	var hits atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	t.Cleanup(target.Close)
	port := target.URL[strings.LastIndex(target.URL, ":")+1:]
	for _, u := range []string{"http://localhost:" + port + "/hooks", target.URL + "/hooks", "http://[::1]:" + port + "/hooks"} {
		_, err := s.pool.Exec(ctx, `INSERT INTO webhook_endpoints (shop_id, url, enabled_events, secret, created_at, updated_at)
			VALUES ($1, $2, '{*}', $3, now(), now())`, s.shop.ID, u, mustSecret(t))
		require.NoError(t, err)
	}
	hookstest.Deliver(t, s.pool, s.svc, hookstest.RiverConfig{})
	s.record(hooks.CustomerOptedIn, 1)
	s.waitDeliveries(3, hooks.DeliveryFailed, 30*time.Second)
	require.Zero(t, hits.Load(), "nothing reached the private address")
	rows, err := s.pool.Query(ctx, `SELECT DISTINCT error FROM webhook_attempts`)
	require.NoError(t, err)
	errs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Equal(t, []string{hooks.Unreachable}, errs, "one wording, never the address or its kind")
}

// TestRedirectNotFollowed: an endpoint answering a redirect to a private address (the
// metadata service, or another local server) fails; the redirect's target gets nothing.
func TestRedirectNotFollowed(t *testing.T) {
	t.Parallel()
	s := newScene(t, hooks.Config{AllowPrivate: true, DevMode: true})
	var hits atomic.Int64
	inner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	t.Cleanup(inner.Close)
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, inner.URL+"/latest/meta-data/", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirect.Close)
	_, _, err := s.svc.CreateEndpoint(context.Background(), s.shop.ID, hooks.NewEndpoint{URL: redirect.URL + "/hooks"})
	require.NoError(t, err)
	hookstest.Deliver(t, s.pool, s.svc, hookstest.RiverConfig{})
	s.record(hooks.CustomerOptedIn, 1)
	s.waitDeliveries(1, hooks.DeliveryFailed, 30*time.Second)
	require.Zero(t, hits.Load(), "the redirect was not followed")
	require.Equal(t, len(fastSchedule), s.count(`SELECT count(*) FROM webhook_attempts WHERE status_code = 307 AND error LIKE '%redirect%'`))
}

func mustSecret(t *testing.T) string {
	t.Helper()
	s, err := hooks.NewSecret()
	require.NoError(t, err)
	return s
}

// TestRotatedSecretSignsTwiceForADay: after a rotation every attempt carries two
// signatures, one per secret, each verifying with the Standard Webhooks library alone;
// a day later only the new secret signs.
func TestRotatedSecretSignsTwiceForADay(t *testing.T) {
	t.Parallel()
	clk := &clock{t: time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)}
	s := newScene(t, hooks.Config{AllowPrivate: true, DevMode: true, Now: clk.Now})
	ctx := context.Background()
	r := hookstest.NewReceiver(t)
	r.IgnoreTimestamp() // the clock is not the wall's
	ep, old := s.endpoint(r)
	hookstest.Deliver(t, s.pool, s.svc, hookstest.RiverConfig{})

	rotated, secret, err := s.svc.RotateSecret(ctx, s.shop.ID, ep.ID)
	require.NoError(t, err)
	require.NotEqual(t, old, secret)
	require.NotNil(t, rotated.PreviousSecretExpiresAt)
	require.Equal(t, clk.Now().Add(hooks.SecretOverlap), rotated.PreviousSecretExpiresAt.UTC())
	r.SetSecrets(secret) // the receiver moves to the new secret at once

	clk.Add(23 * time.Hour)
	s.record(hooks.CustomerOptedOut, 1)
	ev := r.WaitFor(t, 1, 20*time.Second)[0]
	sigs := strings.Fields(ev.Header.Get("webhook-signature"))
	require.Len(t, sigs, 2, "two signatures while both secrets sign")
	for _, sec := range []string{secret, old} {
		wh, err := standardwebhooks.NewWebhook(sec)
		require.NoError(t, err)
		require.NoError(t, wh.VerifyIgnoringTimestamp(ev.Body, ev.Header), "verifies with each secret alone")
	}

	clk.Add(2 * time.Hour) // 25 h after the rotation
	s.record(hooks.CustomerOptedOut, 2)
	ev = r.WaitFor(t, 2, 20*time.Second)[1]
	require.Len(t, strings.Fields(ev.Header.Get("webhook-signature")), 1)
	wh, err := standardwebhooks.NewWebhook(old)
	require.NoError(t, err)
	require.Error(t, wh.VerifyIgnoringTimestamp(ev.Body, ev.Header), "the old secret no longer signs")
	wh, err = standardwebhooks.NewWebhook(secret)
	require.NoError(t, err)
	require.NoError(t, wh.VerifyIgnoringTimestamp(ev.Body, ev.Header))
	got, err := s.svc.Endpoint(ctx, s.shop.ID, ep.ID)
	require.NoError(t, err)
	require.Nil(t, got.PreviousSecretExpiresAt, "the overlap is over")
}

// TestSignMatchesTheLibrary: Sign's header is what the Standard Webhooks library makes
// and verifies, one signature per secret.
func TestSignMatchesTheLibrary(t *testing.T) {
	t.Parallel()
	a, b := mustSecret(t), mustSecret(t)
	at := time.Now()
	body := []byte(`{"id":"evt_1","type":"opening.filled","data":{}}`)
	sig, err := hooks.Sign("evt_1", at, body, a, b)
	require.NoError(t, err)
	require.Len(t, strings.Fields(sig), 2)
	h := http.Header{}
	h.Set("webhook-id", "evt_1")
	h.Set("webhook-timestamp", fmt.Sprint(at.Unix()))
	h.Set("webhook-signature", sig)
	for _, sec := range []string{a, b} {
		wh, err := standardwebhooks.NewWebhook(sec)
		require.NoError(t, err)
		require.NoError(t, wh.Verify(body, h))
		want, err := wh.Sign("evt_1", at, body)
		require.NoError(t, err)
		require.Contains(t, strings.Fields(sig), want)
	}
	h.Set("webhook-id", "evt_2")
	wh, _ := standardwebhooks.NewWebhook(a)
	require.Error(t, wh.Verify(body, h), "the id is signed")
}

// TestEndpointDisabledAfterFailingForDays: an endpoint whose every attempt fails is
// disabled, with the reason, once it has failed for DisableAfter straight; a success in
// between starts the count again. Its pending deliveries then fail without a request.
func TestEndpointDisabledAfterFailingForDays(t *testing.T) {
	t.Parallel()
	clk := &clock{t: time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)}
	// One attempt per delivery, so each recorded event is one attempt at the clock's time.
	s := newScene(t, hooks.Config{AllowPrivate: true, DevMode: true, Now: clk.Now, Schedule: []time.Duration{0}})
	ctx := context.Background()
	r := hookstest.NewReceiver(t)
	r.IgnoreTimestamp()
	r.Answer(http.StatusBadGateway)
	ep, _ := s.endpoint(r)
	hookstest.Deliver(t, s.pool, s.svc, hookstest.RiverConfig{})
	fail := func(n int) {
		t.Helper()
		s.record(hooks.CustomerOptedOut, n)
		s.waitDeliveries(n, hooks.DeliveryFailed, 20*time.Second)
	}
	fail(1)
	e, err := s.svc.Endpoint(ctx, s.shop.ID, ep.ID)
	require.NoError(t, err)
	require.Equal(t, clk.Now(), e.FailingSince.UTC())
	require.False(t, e.Disabled())

	clk.Add(3 * 24 * time.Hour)
	fail(2)
	// A success resets the count.
	r.Answer(http.StatusOK)
	s.record(hooks.CustomerOptedOut, 3)
	s.waitDeliveries(1, hooks.DeliverySucceeded, 20*time.Second)
	e, err = s.svc.Endpoint(ctx, s.shop.ID, ep.ID)
	require.NoError(t, err)
	require.Nil(t, e.FailingSince)

	r.Answer(http.StatusBadGateway)
	clk.Add(time.Hour)
	fail(3)
	clk.Add(4 * 24 * time.Hour)
	fail(4)
	e, err = s.svc.Endpoint(ctx, s.shop.ID, ep.ID)
	require.NoError(t, err)
	require.False(t, e.Disabled(), "four days of failures since the success: not yet")

	clk.Add(24*time.Hour + time.Minute)
	fail(5)
	e, err = s.svc.Endpoint(ctx, s.shop.ID, ep.ID)
	require.NoError(t, err)
	require.True(t, e.Disabled(), "five days of failures")
	require.Contains(t, e.DisabledReason, "every attempt failed for 5 days")
	require.Contains(t, e.DisabledReason, "answered 502")

	// Disabled: nothing more is recorded for it (it was the shop's only endpoint), and a
	// delivery still pending is failed without a request.
	events, requests := s.count(`SELECT count(*) FROM webhook_events`), r.Requests()
	s.record(hooks.CustomerOptedOut, 6)
	require.Equal(t, events, s.count(`SELECT count(*) FROM webhook_events`), "no event recorded for a disabled endpoint")
	require.Equal(t, requests, r.Requests())

	// Enabling it again forgets the failures.
	on := false
	e, err = s.svc.UpdateEndpoint(ctx, s.shop.ID, ep.ID, hooks.EndpointChange{Disabled: &on})
	require.NoError(t, err)
	require.False(t, e.Disabled())
	require.Empty(t, e.DisabledReason)
	require.Nil(t, e.FailingSince)
}

// TestResend: "send again" makes one more attempt with the same body and webhook-id,
// whatever the delivery's status, logged as manual; a disabled endpoint refuses it.
func TestResend(t *testing.T) {
	t.Parallel()
	s := newScene(t, hooks.Config{AllowPrivate: true, DevMode: true})
	ctx := context.Background()
	r := hookstest.NewReceiver(t)
	ep, _ := s.endpoint(r)
	hookstest.Deliver(t, s.pool, s.svc, hookstest.RiverConfig{})
	s.record(hooks.BookingConfirmed, 1)
	first := r.WaitFor(t, 1, 20*time.Second)[0]
	s.waitDeliveries(1, hooks.DeliverySucceeded, 10*time.Second)
	page, err := s.svc.Deliveries(ctx, s.shop.ID, ep.ID, hooks.DeliveryQuery{})
	require.NoError(t, err)
	require.Len(t, page.Deliveries, 1)
	d := page.Deliveries[0]

	_, err = s.svc.Resend(ctx, s.shop.ID, ep.ID, d.ID)
	require.NoError(t, err)
	again := r.WaitFor(t, 2, 20*time.Second)[1]
	require.Equal(t, first.ID, again.ID, "the same webhook-id: receivers drop it if they had it")
	require.Equal(t, first.Body, again.Body)
	deadline := time.Now().Add(10 * time.Second)
	for s.count(`SELECT count(*) FROM webhook_attempts WHERE manual`) < 1 {
		require.True(t, time.Now().Before(deadline))
		time.Sleep(10 * time.Millisecond)
	}
	detail, err := s.svc.Delivery(ctx, s.shop.ID, ep.ID, d.ID)
	require.NoError(t, err)
	require.Len(t, detail.Attempts, 2)
	require.True(t, detail.Attempts[1].Manual)
	require.Equal(t, 1, detail.Delivery.Attempts, "a manual attempt is not one of the schedule's")
	require.JSONEq(t, string(first.Body), string(detail.Payload))

	// Another shop sees none of it.
	other := s.newShop("+15555550177")
	_, err = s.svc.Deliveries(ctx, other.ID, ep.ID, hooks.DeliveryQuery{})
	require.ErrorIs(t, err, hooks.ErrEndpointNotFound)
	_, err = s.svc.Resend(ctx, other.ID, ep.ID, d.ID)
	require.ErrorIs(t, err, hooks.ErrEndpointNotFound)
	_, err = s.svc.Delivery(ctx, s.shop.ID, ep.ID, uuid.New())
	require.ErrorIs(t, err, hooks.ErrDeliveryNotFound)

	off := true
	_, err = s.svc.UpdateEndpoint(ctx, s.shop.ID, ep.ID, hooks.EndpointChange{Disabled: &off})
	require.NoError(t, err)
	_, err = s.svc.Resend(ctx, s.shop.ID, ep.ID, d.ID)
	require.ErrorIs(t, err, hooks.ErrEndpointDisabled)
}
