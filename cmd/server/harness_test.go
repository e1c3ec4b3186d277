package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/inbound"
	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/offers"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/sms/twilio"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/redistest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/stripetest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/twiliofake"
	"github.com/slotrecovery/slotrecovery/internal/webhooks"
)

func TestMain(m *testing.M) {
	if killedServer() { // this binary is a server instance a test kills
		return
	}
	defer stripetest.Stop()
	pgtest.Main(m)
}

const (
	adminToken    = "test-admin-token-0123456789"
	publicURL     = "https://slots.example.test"
	webhookSecret = "whsec_test_secret"
	// The instances' ERASURE_KEY and SECRETS_KEY (32 bytes in hex, as required outside
	// DEV_MODE).
	testErasureKey = "5b0e2f8c1d4a7396e2c5b8f1a4d7e0c3b6f9a2d5e8c1b4f7a0d3e6c9b2f5a8d1"
	testSecretsKey = "c1f4a7d0e3b6c9f2a5d8e1b4c7f0a3d6e9b2c5f8a1d4e7b0c3f6a9d2e5b8c1f4"
)

// env is one test's world: its own database, Redis key prefix, Twilio fake and Stripe
// recorder, shared by every server instance the test starts.
type env struct {
	t       testing.TB
	pool    *pgxpool.Pool
	dbURL   string
	redis   redis.UniversalClient
	prefix  string
	twilio  *twiliofake.Server
	stripe  *stripetest.Recorder
	servers []string
	client  *http.Client
	seq     atomic.Int64
}

func newEnv(t testing.TB) *env {
	t.Helper()
	pool, dbURL := pgtest.New(t)
	rdb, prefix := redistest.New(t)
	e := &env{
		t: t, pool: pool, dbURL: dbURL, redis: rdb, prefix: prefix,
		twilio: twiliofake.New(t),
		stripe: stripetest.NewRecorder(t, stripetest.Mock(t)),
		client: newClient(200),
	}
	return e
}

// newClient is the tests' HTTP client, keeping up to perHost idle connections to each
// server. It drops an idle connection before the server does: a client that kept it
// longer could send a request on it just as the server closes it, and get EOF
// (TestRaceThreeHundredYes did: its YES storms leave most of the pool idle between
// rounds). Retrying then is no fix: the POST may have reached the server. The server
// closes a kept-alive connection after idleTimeout, but one that never carried a request
// (the pool dialed it for a storm, then served the storm on others) after
// readHeaderTimeout, counted from the accept: the client's idle timeout is below both.
func newClient(perHost int) *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		MaxIdleConnsPerHost: perHost, IdleConnTimeout: min(idleTimeout/3, readHeaderTimeout-time.Second),
	}}
}

func (e *env) vars(extra map[string]string) func(string) string {
	m := map[string]string{
		// Several instances run at once, beside other packages' tests, on one Postgres
		// (max_connections is often 100): keep each instance's pool small.
		"DATABASE_URL":          withQuery(e.dbURL, "pool_max_conns", "10"),
		"REDIS_URL":             redistest.URL(),
		"REDIS_KEY_PREFIX":      e.prefix,
		"HTTP_ADDR":             "127.0.0.1:0",
		"PUBLIC_URL":            publicURL,
		"ADMIN_TOKEN":           adminToken,
		"ERASURE_KEY":           testErasureKey,
		"SECRETS_KEY":           testSecretsKey,
		"TWILIO_ACCOUNT_SID":    twiliofake.TestAccountSID,
		"TWILIO_AUTH_TOKEN":     twiliofake.TestAuthToken,
		"TWILIO_API_URL":        e.twilio.URL(),
		"STRIPE_SECRET_KEY":     "sk_test_123",
		"STRIPE_WEBHOOK_SECRET": webhookSecret,
		"STRIPE_API_URL":        e.stripe.URL,
		"LOG_LEVEL":             "warn",
	}
	for k, v := range extra {
		m[k] = v
	}
	return func(k string) string { return m[k] }
}

// withQuery sets one query parameter of a URL.
func withQuery(raw, key, value string) string {
	u, err := url.Parse(raw)
	if err != nil {
		panic(err)
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// start runs a server instance in-process and returns its base URL; it stops with the
// test.
func (e *env) start(extra map[string]string, tune func(*slots.Config, *ledger.Config, *offers.Config)) string {
	e.t.Helper()
	return e.startWith(extra, serveOptions{tune: tune})
}

// startWith is start with the test's serveOptions (their ready is the harness's).
func (e *env) startWith(extra map[string]string, opts serveOptions) string {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	opts.ready = ready
	go func() {
		done <- serve(ctx, e.vars(extra), io.Discard, opts)
	}()
	select {
	case addr := <-ready:
		base := "http://" + addr
		e.servers = append(e.servers, base)
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
		return base
	case err := <-done:
		cancel()
		e.t.Fatalf("server did not start: %v", err)
	case <-time.After(60 * time.Second):
		cancel()
		e.t.Fatalf("server did not start in time")
	}
	return ""
}

// fastTune sets the payment timings for tests. Like production's (5 s, then the sweep
// from 15 s) the YES path's Stripe call ends before the booking sweep may try the link:
// with the sweep due first (it was 300 ms), a stripe-mock slowed by a busy machine lost
// the race to store the link, and the winner was told "link on its way" and texted it,
// one text more than the tests count. The call's bound is generous, so that stripe-mock
// answering slowly is not a Stripe outage; tests of the job wait 9 s for it.
func fastTune(_ *slots.Config, l *ledger.Config, _ *offers.Config) {
	l.CheckoutTimeout = 8 * time.Second
	l.CheckoutRetryDelay = l.CheckoutTimeout + time.Second
	l.SweepEvery = 500 * time.Millisecond
}

// api calls a JSON endpoint and decodes the answer into out (if not nil).
func (e *env) api(base, method, path, token string, body any, out any) int {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(e.t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, base+path, rd)
	require.NoError(e.t, err)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := e.client.Do(req)
	require.NoError(e.t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(e.t, err)
	if out != nil && len(raw) > 0 {
		require.NoError(e.t, json.Unmarshal(raw, out), "body: %s", raw)
	}
	return res.StatusCode
}

type shopInfo struct {
	ID        string `json:"id"`
	APIKey    string `json:"api_key"`
	SMSNumber string `json:"sms_number"`
}

var shopNumbers atomic.Int64

// newShop creates a shop through the API. policy fields override the defaults.
func (e *env) newShop(base string, paymentMode string, policy map[string]any) shopInfo {
	e.t.Helper()
	// A short code's rate: tests of waves of hundreds do not wait on the pacing (its own
	// test sets a long code's 1 a second).
	p := map[string]any{"wave_size": 1000, "wave_interval_seconds": 60, "min_lead_minutes": 30, "cooldown_seconds": 86400,
		"send_rate_per_second": 1000}
	for k, v := range policy {
		p[k] = v
	}
	number := fmt.Sprintf("+1555%07d", 1000000+shopNumbers.Add(1)+time.Now().UnixNano()%1000000)
	var s shopInfo
	status := e.api(base, http.MethodPost, "/api/shops", adminToken, map[string]any{
		"name": "Joe's Barbers", "timezone": "America/New_York", "sms_number": number, "currency": "usd",
		"payment_mode": paymentMode, "offer_policy": p,
	}, &s)
	require.Equal(e.t, http.StatusCreated, status)
	require.NotEmpty(e.t, s.APIKey)
	return s
}

type customerInfo struct {
	ID    string `json:"id"`
	Phone string `json:"phone"`
}

func (e *env) newCustomer(base string, shop shopInfo, phone string, optIn bool) customerInfo {
	e.t.Helper()
	var c customerInfo
	status := e.api(base, http.MethodPost, "/api/customers", shop.APIKey, map[string]any{
		"phone": phone, "name": "Customer " + phone[len(phone)-4:], "sms_opt_in": optIn, "priority": 0,
	}, &c)
	require.Equal(e.t, http.StatusCreated, status)
	return c
}

// bulkCustomers inserts n opted-in customers straight into the database (the API is
// tested on its own; a race test needs hundreds quickly) and returns their phones.
func (e *env) bulkCustomers(shop shopInfo, n int, base int) []string {
	e.t.Helper()
	rows, err := e.pool.Query(context.Background(), `
		INSERT INTO customers (shop_id, phone, name, sms_opt_in, priority, created_at)
		SELECT $1::uuid, '+1666' || lpad((($2::int) + i)::text, 7, '0'), 'Bulk ' || i, true, 0, now()
		FROM generate_series(1, $3::int) AS i
		RETURNING phone`, shop.ID, base, n)
	require.NoError(e.t, err)
	var phones []string
	for rows.Next() {
		var p string
		require.NoError(e.t, rows.Scan(&p))
		phones = append(phones, p)
	}
	require.NoError(e.t, rows.Err())
	return phones
}

type openingInfo struct {
	ID         string `json:"id"`
	Status     string `json:"status"`
	OffersSent int    `json:"offers_sent"`
	FilledBy   *struct {
		CustomerID string `json:"customer_id"`
		Phone      string `json:"phone"`
	} `json:"filled_by"`
	Booking *struct {
		ID         string `json:"id"`
		Status     string `json:"status"`
		PaymentURL string `json:"payment_url"`
		SessionID  string `json:"stripe_checkout_session_id"`
	} `json:"booking"`
}

func (e *env) newOpening(base string, shop shopInfo, startsIn time.Duration) openingInfo {
	e.t.Helper()
	var o openingInfo
	status := e.api(base, http.MethodPost, "/api/openings", shop.APIKey, map[string]any{
		"starts_at":        time.Now().Add(startsIn).UTC().Truncate(time.Second).Format(time.RFC3339),
		"duration_minutes": 30, "service": "Haircut", "price_cents": 4500,
	}, &o)
	require.Equal(e.t, http.StatusCreated, status)
	return o
}

func (e *env) opening(base string, shop shopInfo, id string) openingInfo {
	e.t.Helper()
	var o openingInfo
	require.Equal(e.t, http.StatusOK, e.api(base, http.MethodGet, "/api/openings/"+id, shop.APIKey, nil, &o))
	return o
}

type smsAnswer struct {
	Status  int
	Outcome string
	Body    string
}

// text sends a correctly signed inbound SMS to base, as Twilio would.
func (e *env) text(base, from, to, body string, extra ...string) smsAnswer {
	return e.textSID(base, fmt.Sprintf("SM%032d", e.seq.Add(1)+time.Now().UnixNano()), from, to, body, extra...)
}

func (e *env) textSID(base, sid, from, to, body string, extra ...string) smsAnswer {
	if inbound.Parse(body, "") == inbound.KeywordYes {
		e.waitRecorded(from)
	}
	form := url.Values{"MessageSid": {sid}, "From": {from}, "To": {to}, "Body": {body}, "AccountSid": {twiliofake.TestAccountSID}}
	for i := 0; i+1 < len(extra); i += 2 {
		form.Set(extra[i], extra[i+1])
	}
	return e.postForm(base, form, twilio.Signature(twiliofake.TestAuthToken, publicURL+webhooks.TwilioPath, form))
}

// waitRecorded waits until every text the Twilio fake accepted for phone is recorded by
// the server under its message SID (an offer's twilio_sid, a transactional text's
// claim): an offer is claimable only once its send is recorded, so a test's YES must
// not race the wave that texted it (it would be told "taken"). It may run outside the
// test's goroutine, so it fails the test with Errorf and goes on.
func (e *env) waitRecorded(phone string) {
	var sids []string
	for _, m := range e.twilio.MessagesTo(phone) {
		sids = append(sids, m.SID)
	}
	if len(sids) == 0 {
		return
	}
	deadline := time.Now().Add(asyncStep)
	for {
		var n int
		err := e.pool.QueryRow(context.Background(), `
			SELECT count(*) FROM unnest($1::text[]) AS s(sid)
			WHERE EXISTS (SELECT 1 FROM slot_offers WHERE twilio_sid = s.sid)
			   OR EXISTS (SELECT 1 FROM text_claims WHERE message_sid = s.sid)`, sids).Scan(&n)
		if err == nil && n == len(sids) {
			return
		}
		if time.Now().After(deadline) {
			e.t.Errorf("after %s, %d of the %d texts to %s are recorded as sent (err %v)\n%s", asyncStep, n, len(sids), phone, err, e.describe())
			return
		}
		time.Sleep(pollEvery)
	}
}

func (e *env) postForm(base string, form url.Values, signature string) smsAnswer {
	req, err := http.NewRequest(http.MethodPost, base+webhooks.TwilioPath, strings.NewReader(form.Encode()))
	if err != nil {
		return smsAnswer{Status: -1, Body: err.Error()}
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if signature != "" {
		req.Header.Set("X-Twilio-Signature", signature)
	}
	res, err := e.client.Do(req)
	if err != nil {
		return smsAnswer{Status: -1, Body: err.Error()}
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode == http.StatusOK {
		e.reportTaken(base, form, b)
	}
	return smsAnswer{Status: res.StatusCode, Outcome: res.Header.Get(webhooks.OutcomeHeader), Body: string(b)}
}

// reportTaken does what Twilio does once it has made the message of a TwiML answer to
// the text form: it requests the <Message>'s action URL (on base, signed over the URL
// without its fragment) with the message's own MessageSid and MessageStatus "sent".
func (e *env) reportTaken(base string, form url.Values, twiml []byte) {
	var r struct {
		Message struct {
			Action string `xml:"action,attr"`
		}
	}
	if xml.Unmarshal(twiml, &r) != nil || r.Message.Action == "" {
		return
	}
	action, _, _ := strings.Cut(r.Message.Action, "#")
	sid := fmt.Sprintf("SM%032d", e.seq.Add(1)+time.Now().UnixNano())
	rep := url.Values{"MessageSid": {sid}, "SmsSid": {sid}, "MessageStatus": {"sent"}, "SmsStatus": {"sent"},
		"AccountSid": {twiliofake.TestAccountSID}, "ApiVersion": {"2010-04-01"}, "From": {form.Get("To")}, "To": {form.Get("From")}}
	req, err := http.NewRequest(http.MethodPost, base+strings.TrimPrefix(action, publicURL), strings.NewReader(rep.Encode()))
	if err != nil {
		e.t.Errorf("report on %s: %v", action, err)
		return
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Twilio-Signature", twilio.Signature(twiliofake.TestAuthToken, action, rep))
	res, err := e.client.Do(req)
	if err != nil {
		e.t.Errorf("report on %s: %v", action, err)
		return
	}
	_, _ = io.Copy(io.Discard, res.Body)
	_ = res.Body.Close()
	if res.StatusCode != http.StatusOK {
		// Twilio would try again (connection overrides); the sweeper texts an answer
		// whose report is never recorded.
		e.t.Logf("report on %s answered %d", action, res.StatusCode)
	}
}

// twimlMessage is the words of the <Message> in a TwiML answer (its action URL, which
// names the text, left out).
func twimlMessage(t *testing.T, twiml string) string {
	t.Helper()
	var r struct {
		Message string `xml:"Message"`
	}
	require.NoError(t, xml.Unmarshal([]byte(twiml), &r), twiml)
	return r.Message
}

func (e *env) count(query string, args ...any) int {
	e.t.Helper()
	var n int
	require.NoError(e.t, e.pool.QueryRow(context.Background(), query, args...).Scan(&n))
	return n
}

// waveDone waits until the wave job of an opening's generation has completed. A wave
// records all its offers in one transaction before it texts anyone, and its job ends
// only after every text of the wave was handed to Twilio (or failed for good), so once
// it is done the wave's offers and texts are all there is: nothing more will come of it.
func (e *env) waveDone(openingID string, generation, wave int) {
	e.t.Helper()
	e.until(asyncStep, fmt.Sprintf("wave %d of generation %d done", wave, generation), func() bool {
		return e.count(`SELECT count(*) FROM river_job WHERE kind = 'offer_wave' AND args->>'opening_id' = $1
			AND (args->>'generation')::int = $2 AND (args->>'wave')::int = $3 AND state = 'completed'`,
			openingID, generation, wave) == 1
	})
}

// settle waits until every job of the given kinds is in a final state (completed,
// cancelled or discarded). A job that leads to another (a refund job to its text) inserts it in its own transaction, before it is final
// itself, so once nothing of these kinds is left to run, nothing more of theirs will
// happen: the texts and Stripe requests they make can be counted exactly.
func (e *env) settle(kinds ...string) {
	e.t.Helper()
	e.until(asyncStep, fmt.Sprintf("jobs %v settled", kinds), func() bool {
		return e.count(`SELECT count(*) FROM river_job WHERE kind = ANY($1)
			AND state NOT IN ('completed', 'cancelled', 'discarded')`, kinds) == 0
	})
}

// swept waits until two booking sweeps that began after the call have run to the end
// (not skipped because another was running): what the sweep owed when swept was called
// has been done or tried by then. A server without fastTune sweeps every 10 s.
func (e *env) swept() {
	e.t.Helper()
	var mark time.Time
	require.NoError(e.t, e.pool.QueryRow(context.Background(), `SELECT now()`).Scan(&mark))
	e.until(asyncStep, "two booking sweeps finished", func() bool {
		return e.count(`SELECT count(*) FROM river_job WHERE kind = 'bookings_sweep' AND state = 'completed'
			AND attempted_at > $1 AND metadata->'output' IS NOT NULL AND NOT COALESCE((metadata->'output'->>'skipped')::bool, false)`, mark) >= 2
	})
}

// offerStatus returns the status of a customer's offer for an opening, in its current
// generation ("" when there is none).
func (e *env) offerStatus(customerID, openingID string) string {
	e.t.Helper()
	var s string
	err := e.pool.QueryRow(context.Background(), `
		SELECT o.status FROM slot_offers o JOIN slot_openings s ON s.id = o.opening_id
		WHERE o.customer_id = $1 AND o.opening_id = $2 AND o.generation = s.generation`, customerID, openingID).Scan(&s)
	if errors.Is(err, pgx.ErrNoRows) {
		return ""
	}
	require.NoError(e.t, err)
	return s
}
