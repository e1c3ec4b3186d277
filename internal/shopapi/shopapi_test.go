package shopapi_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/book"
	"github.com/slotrecovery/slotrecovery/internal/calendar"
	"github.com/slotrecovery/slotrecovery/internal/catalog"
	"github.com/slotrecovery/slotrecovery/internal/erasure"
	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/httperr"
	"github.com/slotrecovery/slotrecovery/internal/idempotency"
	"github.com/slotrecovery/slotrecovery/internal/inbox"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/shopapi"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/testkit/customertest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const adminToken = "test-admin-token-0123456789abcdef"

// publicURL is the server's external address in these tests.
const publicURL = "https://slots.example.test"

// env is one server on its own database.
type env struct {
	t    *testing.T
	url  string
	pool *pgxpool.Pool
	h    *shopapi.Handlers
	logs *logBuffer
}

// tlog sends the server's logs to the test's output, and keeps them in logs.
type tlog struct {
	t    *testing.T
	logs *logBuffer
}

func (w tlog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	w.logs.mu.Lock()
	w.logs.b.Write(p)
	w.logs.mu.Unlock()
	return len(p), nil
}

// logBuffer holds what the server logged.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvWith(t, nil)
}

// newEnvWith is newEnv with a change to the handlers before they are registered.
func newEnvWith(t *testing.T, change func(h *shopapi.Handlers, pool *pgxpool.Pool, queue jobs.Inserter)) *env {
	t.Helper()
	pool, _ := pgtest.New(t)
	// Insert-only River client: no queues, no workers; Declare only enqueues.
	rc, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	require.NoError(t, err)
	shopsSvc := shops.New(pool, shops.Config{PaymentsEnabled: true})
	custSvc := customertest.New(t, pool)
	openings := slots.New(pool, rc, nil, nil, slots.Config{})
	h := &shopapi.Handlers{
		Shops:       shopsSvc,
		Customers:   custSvc,
		Erasure:     erasure.New(pool, custSvc, rc, erasure.Config{}),
		Openings:    openings,
		Hooks:       hooks.New(pool, rc, hooks.Config{DevMode: true, AllowPrivate: true}),
		Idempotency: idempotency.New(pool, idempotency.Config{}),
		Calendar:    calendar.New(pool, shopsSvc, calendar.Config{PublicURL: publicURL}),
		PublicURL:   publicURL,
		AdminToken:  adminToken,
		Inbox:       inbox.New(pool, rc, custSvc, inbox.Config{}),
		Catalog:     catalog.New(pool, nil),
		Book:        book.New(pool, shopsSvc, openings, book.Config{}),
		Queue:       rc,
	}
	if change != nil {
		change(h, pool, rc)
	}
	logs := &logBuffer{}
	e := echo.New()
	e.HideBanner = true
	e.HTTPErrorHandler = httperr.Handler(slog.New(slog.NewTextHandler(tlog{t, logs}, nil)))
	// As cmd/server does: the import has its own, larger cap.
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		// As cmd/server does: the limit goes by the matched route (middleware added
		// with Use runs after routing), and the import's is a little above its own cap,
		// so that its handler's answer is the one sent.
		small := middleware.BodyLimit("64K")(next)
		large := middleware.BodyLimit(strconv.Itoa(shopapi.MaxImportBytes + 64<<10))(next)
		return func(c echo.Context) error {
			if c.Request().Method == http.MethodPost && c.Path() == shopapi.ImportPath {
				return large(c)
			}
			return small(c)
		}
	})
	h.Register(e)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return &env{t: t, url: srv.URL, pool: pool, h: h, logs: logs}
}

// sub returns e for the subtest t: its requests and queries report failures to t, not
// to the parent test (whose require would stop the wrong goroutine and blame the wrong
// test).
func (e *env) sub(t *testing.T) *env {
	c := *e
	c.t = t
	return &c
}

// resp is an answer, decoded as loosely as a client outside Go would.
type resp struct {
	status int
	header http.Header
	raw    string
	body   map[string]any
}

func (r resp) errCode() string      { return r.errField("code") }
func (r resp) errMsg() string       { return r.errField("message") }
func (r resp) errFieldName() string { return r.errField("field") }

func (r resp) errField(k string) string {
	e, _ := r.body["error"].(map[string]any)
	s, _ := e[k].(string)
	return s
}

// do sends one request. body may be nil, a string (sent as is), an io.Reader or a value
// to encode as JSON. Every answer is checked for leaks and for the JSON content type.
func (e *env) do(method, path, token string, body any) resp {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case io.Reader:
		rd = b
	default:
		j, err := json.Marshal(b)
		require.NoError(e.t, err)
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, e.url+path, rd)
	require.NoError(e.t, err)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(e.t, err)
	r := resp{status: res.StatusCode, header: res.Header, raw: string(raw)}
	checkAgainstSpec(e.t, req, res.StatusCode, res.Header, raw)
	for _, leak := range []string{"pq:", "SQLSTATE", "goroutine", "api_key_hash", "ApiKeyHash"} {
		require.NotContains(e.t, r.raw, leak, "%s %s", method, path)
	}
	if method != http.MethodHead && res.StatusCode != http.StatusNoContent {
		require.True(e.t, strings.HasPrefix(res.Header.Get("Content-Type"), "application/json"),
			"%s %s: content type %q, body %s", method, path, res.Header.Get("Content-Type"), raw)
		require.NoError(e.t, json.Unmarshal(raw, &r.body), "%s %s: %s", method, path, raw)
	}
	return r
}

// requireError checks an error answer's status, code and that it has a message.
func requireError(t *testing.T, r resp, status int, code string) {
	t.Helper()
	require.Equal(t, status, r.status, r.raw)
	require.Equal(t, code, r.errCode(), r.raw)
	require.NotEmpty(t, r.errMsg(), r.raw)
	if status == http.StatusUnauthorized {
		require.Equal(t, "Bearer", r.header.Get("WWW-Authenticate"))
	}
}

func validShop(sms string) map[string]any {
	return map[string]any{
		"name": "Fade Street Barbers", "timezone": "America/New_York", "sms_number": sms,
		"currency": "usd", "payment_mode": "checkout",
		"offer_policy": map[string]any{
			"wave_size": 5, "wave_interval_seconds": 300, "min_lead_minutes": 30,
			"quiet_hours": map[string]any{"start": "21:00", "end": "08:00"}, "cooldown_seconds": 3600,
		},
	}
}

// shop creates a shop and returns its id and key.
func (e *env) shop(sms string) (id, key string) {
	e.t.Helper()
	r := e.do(http.MethodPost, "/api/shops", adminToken, validShop(sms))
	require.Equal(e.t, http.StatusCreated, r.status, r.raw)
	return r.body["id"].(string), r.body["api_key"].(string)
}

func future(d time.Duration) string {
	return time.Now().Add(d).UTC().Truncate(time.Second).Format(time.RFC3339)
}

func validOpening() map[string]any {
	return map[string]any{"starts_at": future(48 * time.Hour), "duration_minutes": 45, "service": "Skin fade", "price_cents": 3500}
}

func (e *env) opening(key string) map[string]any {
	e.t.Helper()
	r := e.do(http.MethodPost, "/api/openings", key, validOpening())
	require.Equal(e.t, http.StatusCreated, r.status, r.raw)
	return r.body
}

func (e *env) queryString(sql string, args ...any) string {
	e.t.Helper()
	var s string
	require.NoError(e.t, e.pool.QueryRow(context.Background(), sql, args...).Scan(&s))
	return s
}

func (e *env) queryInt(sql string, args ...any) int {
	e.t.Helper()
	var n int
	require.NoError(e.t, e.pool.QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestCreateShop(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do(http.MethodPost, "/api/shops", adminToken, validShop("+15555550100"))
	require.Equal(t, http.StatusCreated, r.status, r.raw)
	require.Equal(t, "no-store", r.header.Get("Cache-Control"))

	require.ElementsMatch(t, []string{"id", "name", "timezone", "sms_number", "currency", "payment_mode",
		"offer_policy", "api_key", "created_at", "calendar_url", "calendar_full_details", "stripe", "language", "notify_phone", "auto_declare",
		"formality", "gsm7", "help_contact", "slug", "join_url", "privacy_url", "move_up_days", "chain_max",
		"customers_cancel_by_text", "ranking", "skip_after_no_shows", "join_keywords",
		// No-show protection (issue 48).
		"deposit_cents", "deposit_percent", "keep_card", "cancellation_policy", "late_cancel_hours",
		"no_show_fee_cents", "late_cancel_fee_cents", "policy_version"}, keys(r.body))
	require.Equal(t, []any{}, r.body["join_keywords"], "none of its own")
	require.Nil(t, r.body["notify_phone"], "no alert number unless one is given")
	require.Equal(t, true, r.body["customers_cancel_by_text"], "the default")
	require.Equal(t, "priority", r.body["ranking"], "the default: the list's order")
	require.Nil(t, r.body["skip_after_no_shows"], "the default: never")
	require.Equal(t, "en", r.body["language"], "the default")
	require.Equal(t, true, r.body["auto_declare"], "the default")
	require.Regexp(t, `^https://slots\.example\.test/calendar/cal_[0-9a-f]{64}\.ics$`, r.body["calendar_url"])
	require.Equal(t, false, r.body["calendar_full_details"])
	require.Equal(t, "Fade Street Barbers", r.body["name"])
	require.Equal(t, "America/New_York", r.body["timezone"])
	require.Equal(t, "+15555550100", r.body["sms_number"])
	require.Equal(t, "usd", r.body["currency"])
	require.Equal(t, "checkout", r.body["payment_mode"])
	require.Equal(t, map[string]any{
		"wave_size": 5.0, "wave_interval_seconds": 300.0, "min_lead_minutes": 30.0,
		"quiet_hours": map[string]any{"start": "21:00", "end": "08:00"}, "cooldown_seconds": 3600.0,
		"max_offers_per_day": nil, "first_wave_delay_seconds": 0.0, "send_rate_per_second": 1.0,
	}, r.body["offer_policy"])
	_, err := time.Parse(time.RFC3339, r.body["created_at"].(string))
	require.NoError(t, err)

	// The key: prefixed, at least 32 random bytes, stored only as a hash.
	key := r.body["api_key"].(string)
	require.True(t, strings.HasPrefix(key, "shop_"), key)
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(key, "shop_"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(raw), 32)
	var stored []byte
	require.NoError(t, e.pool.QueryRow(context.Background(), "SELECT api_key_hash FROM shops WHERE id = $1", r.body["id"]).Scan(&stored))
	require.NotEqual(t, []byte(key), stored)
	require.NotContains(t, string(stored), strings.TrimPrefix(key, "shop_"))
	sum := sha256.Sum256([]byte(key))
	require.Equal(t, sum[:], stored, "the stored hash is the key's SHA-256")

	// The key works, and is never shown again: no other answer carries it.
	list := e.do(http.MethodGet, "/api/openings", key, nil)
	require.Equal(t, http.StatusOK, list.status, list.raw)
	require.NotContains(t, list.raw, key)
	o := e.opening(key)
	require.NotContains(t, fmt.Sprint(o), key)

	// A second shop gets a different key.
	_, key2 := e.shop("+15555550101")
	require.NotEqual(t, key, key2)
}

func TestCreateShopPolicyDefaultsAndZeros(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		name   string
		policy any
		want   map[string]any
	}{
		{name: "omitted", policy: nil, want: map[string]any{
			"wave_size": 10.0, "wave_interval_seconds": 600.0, "min_lead_minutes": 60.0, "quiet_hours": nil, "cooldown_seconds": 86400.0, "max_offers_per_day": nil, "first_wave_delay_seconds": 0.0, "send_rate_per_second": 1.0}},
		{name: "explicit zeros kept for lead and cooldown", policy: map[string]any{
			"min_lead_minutes": 0, "cooldown_seconds": 0, "quiet_hours": nil}, want: map[string]any{
			"wave_size": 10.0, "wave_interval_seconds": 600.0, "min_lead_minutes": 0.0, "quiet_hours": nil, "cooldown_seconds": 0.0, "max_offers_per_day": nil, "first_wave_delay_seconds": 0.0, "send_rate_per_second": 1.0}},
		{name: "nulls mean defaults", policy: map[string]any{
			"wave_size": nil, "min_lead_minutes": nil, "cooldown_seconds": nil}, want: map[string]any{
			"wave_size": 10.0, "wave_interval_seconds": 600.0, "min_lead_minutes": 60.0, "quiet_hours": nil, "cooldown_seconds": 86400.0, "max_offers_per_day": nil, "first_wave_delay_seconds": 0.0, "send_rate_per_second": 1.0}},
		{name: "daytime quiet hours", policy: map[string]any{
			"wave_size": 1000, "wave_interval_seconds": 10, "quiet_hours": map[string]any{"start": "00:00", "end": "23:59"}},
			want: map[string]any{"wave_size": 1000.0, "wave_interval_seconds": 10.0, "min_lead_minutes": 60.0,
				"quiet_hours": map[string]any{"start": "00:00", "end": "23:59"}, "cooldown_seconds": 86400.0, "max_offers_per_day": nil, "first_wave_delay_seconds": 0.0, "send_rate_per_second": 1.0}},
		{name: "a short code's send rate", policy: map[string]any{"send_rate_per_second": 100}, want: map[string]any{
			"wave_size": 10.0, "wave_interval_seconds": 600.0, "min_lead_minutes": 60.0, "quiet_hours": nil, "cooldown_seconds": 86400.0, "max_offers_per_day": nil, "first_wave_delay_seconds": 0.0, "send_rate_per_second": 100.0}},
	}
	for i, tt := range tests {
		body := validShop(fmt.Sprintf("+1555555020%d", i))
		body["payment_mode"] = "none"
		if tt.policy == nil {
			delete(body, "offer_policy")
		} else {
			body["offer_policy"] = tt.policy
		}
		r := e.do(http.MethodPost, "/api/shops", adminToken, body)
		require.Equal(t, http.StatusCreated, r.status, "%s: %s", tt.name, r.raw)
		require.Equal(t, tt.want, r.body["offer_policy"], tt.name)
		require.Equal(t, "none", r.body["payment_mode"], tt.name)
	}
}

func TestCreateShopNeedsAdminToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, shopKey := e.shop("+15555550100")
	tests := []struct {
		name string
		auth string
	}{
		{"missing", ""},
		{"empty bearer", "Bearer "},
		{"wrong token", "Bearer not-the-admin-token"},
		{"prefix of the token", "Bearer " + adminToken[:10]},
		{"token plus more", "Bearer " + adminToken + "x"},
		{"wrong scheme", "Basic " + adminToken},
		{"no scheme", adminToken},
		{"a shop key", "Bearer " + shopKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(validShop("+15555550199"))
			require.NoError(t, err)
			req, err := http.NewRequest(http.MethodPost, e.url+"/api/shops", bytes.NewReader(b))
			require.NoError(t, err)
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			res, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer res.Body.Close()
			var body struct {
				Error struct{ Code, Message string }
			}
			require.NoError(t, json.NewDecoder(res.Body).Decode(&body))
			require.Equal(t, http.StatusUnauthorized, res.StatusCode)
			require.Equal(t, "Bearer", res.Header.Get("WWW-Authenticate"))
			require.Equal(t, "unauthorized", body.Error.Code)
			require.NotEmpty(t, body.Error.Message)
		})
	}
	// Nothing was created by any of them.
	require.Equal(t, 1, e.queryInt("SELECT count(*) FROM shops"))

	// The scheme is case-insensitive.
	req, err := http.NewRequest(http.MethodPost, e.url+"/api/shops", strings.NewReader(`{"name":"x","timezone":"UTC","sms_number":"+15555550123","currency":"eur","payment_mode":"none"}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "bearer "+adminToken)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusCreated, res.StatusCode)
}

func TestEmptyAdminTokenLetsNoOneIn(t *testing.T) {
	t.Parallel()
	e := echo.New()
	e.HTTPErrorHandler = httperr.Handler(nil)
	// No database: the token check comes first, so nothing reaches the services.
	(&shopapi.Handlers{}).Register(e)
	for _, auth := range []string{"", "Bearer", "Bearer ", `Bearer ""`} {
		req := httptest.NewRequest(http.MethodPost, "/api/shops", strings.NewReader(`{}`))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		require.Equal(t, http.StatusUnauthorized, rec.Code, "auth %q", auth)
	}
}

func TestCreateShopValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	with := func(k string, v any) map[string]any {
		b := validShop("+15555550100")
		b[k] = v
		return b
	}
	policy := func(k string, v any) map[string]any {
		b := validShop("+15555550100")
		b["offer_policy"].(map[string]any)[k] = v
		return b
	}
	tests := []struct {
		name   string
		body   any
		status int
		code   string
		field  string
	}{
		{"empty name", with("name", "  "), 422, "invalid_name", "name"},
		{"bad timezone", with("timezone", "Mars/Olympus_Mons"), 422, "invalid_timezone", "timezone"},
		{"Local timezone", with("timezone", "Local"), 422, "invalid_timezone", "timezone"},
		{"missing timezone", with("timezone", ""), 422, "invalid_timezone", "timezone"},
		{"sms number without plus", with("sms_number", "15555550100"), 422, "invalid_sms_number", "sms_number"},
		{"sms number with spaces", with("sms_number", "+1 555 555 0100"), 422, "invalid_sms_number", "sms_number"},
		{"sms number too short", with("sms_number", "+1234567"), 422, "invalid_sms_number", "sms_number"},
		{"bad currency", with("currency", "dollars"), 422, "invalid_currency", "currency"},
		{"numeric currency", with("currency", "840"), 422, "invalid_currency", "currency"},
		{"bogus payment mode", with("payment_mode", "cash"), 422, "invalid_payment_mode", "payment_mode"},
		{"wave size negative", policy("wave_size", -1), 422, "invalid_offer_policy_wave_size", "offer_policy.wave_size"},
		{"wave size too big", policy("wave_size", 1001), 422, "invalid_offer_policy_wave_size", "offer_policy.wave_size"},
		{"wave size enormous", policy("wave_size", int64(1)<<60), 422, "invalid_offer_policy_wave_size", "offer_policy.wave_size"},
		{"wave interval too short", policy("wave_interval_seconds", 5), 422, "invalid_offer_policy_wave_interval_seconds", "offer_policy.wave_interval_seconds"},
		{"wave interval that would overflow", policy("wave_interval_seconds", int64(9223372037)), 422, "invalid_offer_policy_wave_interval_seconds", "offer_policy.wave_interval_seconds"},
		{"negative lead", policy("min_lead_minutes", -1), 422, "invalid_offer_policy_min_lead_minutes", "offer_policy.min_lead_minutes"},
		{"negative cooldown", policy("cooldown_seconds", -1), 422, "invalid_offer_policy_cooldown_seconds", "offer_policy.cooldown_seconds"},
		{"quiet hour 25", policy("quiet_hours", map[string]any{"start": "25:00", "end": "08:00"}), 422, "invalid_offer_policy_quiet_hours", "offer_policy.quiet_hours"},
		{"quiet hour one digit", policy("quiet_hours", map[string]any{"start": "9:00", "end": "17:00"}), 422, "invalid_offer_policy_quiet_hours", "offer_policy.quiet_hours"},
		{"quiet minute 60", policy("quiet_hours", map[string]any{"start": "21:60", "end": "08:00"}), 422, "invalid_offer_policy_quiet_hours", "offer_policy.quiet_hours"},
		{"quiet with seconds", policy("quiet_hours", map[string]any{"start": "21:00:00", "end": "08:00"}), 422, "invalid_offer_policy_quiet_hours", "offer_policy.quiet_hours"},
		{"quiet 24:00", policy("quiet_hours", map[string]any{"start": "21:00", "end": "24:00"}), 422, "invalid_offer_policy_quiet_hours", "offer_policy.quiet_hours"},
		{"quiet without end", policy("quiet_hours", map[string]any{"start": "21:00"}), 422, "invalid_offer_policy_quiet_hours", "offer_policy.quiet_hours"},
		{"quiet empty object", policy("quiet_hours", map[string]any{}), 422, "invalid_offer_policy_quiet_hours", "offer_policy.quiet_hours"},
		{"quiet start equals end", policy("quiet_hours", map[string]any{"start": "08:00", "end": "08:00"}), 422, "invalid_offer_policy_quiet_hours", "offer_policy.quiet_hours"},
		{"quiet hours of the wrong type", policy("quiet_hours", "21:00-08:00"), 400, "bad_json", "offer_policy.quiet_hours"},
		{"wave size a string", policy("wave_size", "ten"), 400, "bad_json", "offer_policy.wave_size"},
		{"wave size a fraction", policy("wave_size", 2.5), 400, "bad_json", "offer_policy.wave_size"},
		{"name a number", with("name", 7), 400, "bad_json", "name"},
		{"policy an array", with("offer_policy", []int{1}), 400, "bad_json", "offer_policy"},
		{"malformed JSON", `{"name": "x",`, 400, "bad_json", ""},
		{"not JSON at all", `name=x`, 400, "bad_json", ""},
		{"array body", `[]`, 400, "bad_json", ""},
		{"empty body", ``, 400, "bad_json", ""},
		{"two objects", `{"name":"a"} {"name":"b"}`, 400, "bad_json", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.sub(t).do(http.MethodPost, "/api/shops", adminToken, tt.body)
			requireError(t, r, tt.status, tt.code)
			require.Equal(t, tt.field, r.errFieldName(), r.raw)
		})
	}
	require.Equal(t, 0, e.queryInt("SELECT count(*) FROM shops"))

	// Unknown fields are ignored.
	b := validShop("+15555550100")
	b["favourite_colour"] = "teal"
	r := e.do(http.MethodPost, "/api/shops", adminToken, b)
	require.Equal(t, http.StatusCreated, r.status, r.raw)

	// The SMS number routes inbound texts, so it belongs to one shop.
	r = e.do(http.MethodPost, "/api/shops", adminToken, validShop("+15555550100"))
	requireError(t, r, http.StatusConflict, "sms_number_taken")
}

func TestShopRoutesNeedShopKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, key := e.shop("+15555550100")
	o := e.opening(key)
	id := o["id"].(string)
	routes := []struct {
		method, path string
		body         any
	}{
		{http.MethodPost, "/api/customers", map[string]any{"phone": "+15555550111", "sms_opt_in": true}},
		{http.MethodPost, "/api/openings", validOpening()},
		{http.MethodGet, "/api/openings", nil},
		{http.MethodGet, "/api/openings?status=open", nil},
		{http.MethodGet, "/api/openings/" + id, nil},
		{http.MethodPost, "/api/openings/" + id + "/cancel", nil},
	}
	tokens := map[string]string{
		"missing":            "",
		"unknown":            "shop_" + strings.Repeat("A", 43),
		"not a shop key":     "hello",
		"admin token":        adminToken,
		"key with extra":     key + "x",
		"key missing a char": key[:len(key)-1],
	}
	for _, rt := range routes {
		for name, tok := range tokens {
			t.Run(rt.method+" "+rt.path+" "+name, func(t *testing.T) {
				r := e.sub(t).do(rt.method, rt.path, tok, rt.body)
				requireError(t, r, http.StatusUnauthorized, "unauthorized")
			})
		}
	}
	// None of it changed anything.
	require.Equal(t, 1, e.queryInt("SELECT count(*) FROM slot_openings"))
	require.Equal(t, "open", e.queryString("SELECT status FROM slot_openings WHERE id = $1", id))
	require.Equal(t, 0, e.queryInt("SELECT count(*) FROM customers"))
}

func TestCustomers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	shopID, key := e.shop("+15555550100")

	r := e.do(http.MethodPost, "/api/customers", key, map[string]any{
		"phone": "+15555550123", "name": " Ada ", "sms_opt_in": true, "priority": 5})
	require.Equal(t, http.StatusCreated, r.status, r.raw)
	require.ElementsMatch(t, []string{"id", "phone", "name", "sms_opt_in", "priority", "opted_out", "created_at",
		"status", "opted_out_at", "preferences", "language", "possibly_reassigned_at", "move_up", "paused_until", "stats"}, keys(r.body))
	require.Nil(t, r.body["paused_until"], "not paused")
	require.Equal(t, map[string]any{"offers_90d": 0.0, "bookings_90d": 0.0, "attended": 0.0, "no_shows": 0.0,
		"lapsed_holds": 0.0, "last_offered_at": nil, "last_booked_at": nil}, r.body["stats"], "a new customer's stats")
	require.Nil(t, r.body["language"], "the shop's")
	require.Nil(t, r.body["possibly_reassigned_at"], "no wrong number heard")
	require.Equal(t, "+15555550123", r.body["phone"])
	require.Equal(t, "Ada", r.body["name"])
	require.Equal(t, true, r.body["sms_opt_in"])
	require.Equal(t, 5.0, r.body["priority"])
	require.Equal(t, false, r.body["opted_out"])
	require.Equal(t, shopID, e.queryString("SELECT shop_id::text FROM customers WHERE id = $1", r.body["id"]))

	// Minimal body: only a phone.
	r = e.do(http.MethodPost, "/api/customers", key, map[string]any{"phone": "+447700900123"})
	require.Equal(t, http.StatusCreated, r.status, r.raw)
	require.Equal(t, false, r.body["sms_opt_in"])
	require.Equal(t, 0.0, r.body["priority"])

	r = e.do(http.MethodPost, "/api/customers", key, map[string]any{"phone": "+15555550123", "name": "Someone else"})
	requireError(t, r, http.StatusConflict, "phone_exists")
	require.Equal(t, "phone", r.errFieldName())

	tests := []struct {
		name   string
		body   any
		status int
		code   string
		field  string
	}{
		{"no plus", map[string]any{"phone": "15555550124"}, 422, "invalid_phone", "phone"},
		{"leading zero", map[string]any{"phone": "+05555550124"}, 422, "invalid_phone", "phone"},
		{"spaces", map[string]any{"phone": "+1 555 555 0124"}, 422, "invalid_phone", "phone"},
		{"too long", map[string]any{"phone": "+1234567890123456"}, 422, "invalid_phone", "phone"},
		{"missing", map[string]any{"name": "x"}, 422, "invalid_phone", "phone"},
		{"priority out of range", map[string]any{"phone": "+15555550124", "priority": 5000}, 422, "invalid_priority", "priority"},
		{"name too long", map[string]any{"phone": "+15555550124", "name": strings.Repeat("n", 201)}, 422, "invalid_name", "name"},
		{"priority a string", map[string]any{"phone": "+15555550124", "priority": "high"}, 400, "bad_json", "priority"},
		{"opt-in a string", map[string]any{"phone": "+15555550124", "sms_opt_in": "yes"}, 400, "bad_json", "sms_opt_in"},
		{"phone a number", map[string]any{"phone": 15555550124}, 400, "bad_json", "phone"},
		{"malformed", `{"phone":`, 400, "bad_json", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.sub(t).do(http.MethodPost, "/api/customers", key, tt.body)
			requireError(t, r, tt.status, tt.code)
			require.Equal(t, tt.field, r.errFieldName())
		})
	}
	require.Equal(t, 2, e.queryInt("SELECT count(*) FROM customers"))

	// Every customer of a list page carries their stats too.
	r = e.do(http.MethodGet, "/api/customers", key, nil)
	require.Equal(t, http.StatusOK, r.status, r.raw)
	list, _ := r.body["customers"].([]any)
	require.Len(t, list, 2, r.raw)
	for _, cu := range list {
		st, _ := cu.(map[string]any)["stats"].(map[string]any)
		require.Equal(t, 0.0, st["offers_90d"], "stats of %v", cu)
	}
}

func TestOpenings(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	shopID, key := e.shop("+15555550100")

	// Declare: an offset in the request comes back as UTC.
	start := time.Now().Add(72 * time.Hour).Truncate(time.Second)
	r := e.do(http.MethodPost, "/api/openings", key, map[string]any{
		"starts_at": start.In(time.FixedZone("x", 2*3600)).Format(time.RFC3339), "duration_minutes": 45,
		"service": "Skin fade", "price_cents": 3500})
	require.Equal(t, http.StatusCreated, r.status, r.raw)
	for _, k := range []string{"id", "shop_id", "starts_at", "duration_minutes", "service", "price_cents", "status",
		"offers_sent", "filled_by", "booking"} {
		require.Contains(t, r.body, k)
	}
	id := r.body["id"].(string)
	require.Equal(t, shopID, r.body["shop_id"])
	require.Equal(t, start.UTC().Format(time.RFC3339), r.body["starts_at"])
	require.True(t, strings.HasSuffix(r.body["starts_at"].(string), "Z"))
	require.Equal(t, 45.0, r.body["duration_minutes"])
	require.Equal(t, "Skin fade", r.body["service"])
	require.Equal(t, 3500.0, r.body["price_cents"])
	require.Equal(t, "open", r.body["status"])
	require.Equal(t, 0.0, r.body["offers_sent"])
	require.Nil(t, r.body["filled_by"])
	require.Nil(t, r.body["booking"])
	require.Equal(t, "usd", r.body["currency"])
	require.Equal(t, 1.0, r.body["generation"])
	require.Equal(t, "/api/openings/"+id, r.header.Get("Location"))

	// The offer loop started: the first wave is queued, in the same transaction.
	require.Equal(t, 1, e.queryInt(
		"SELECT count(*) FROM river_job WHERE kind = 'offer_wave' AND args->>'opening_id' = $1 AND (args->>'generation')::int = 1 AND (args->>'wave')::int = 1", id))

	// Get.
	g := e.do(http.MethodGet, "/api/openings/"+id, key, nil)
	require.Equal(t, http.StatusOK, g.status, g.raw)
	require.Equal(t, r.body, g.body)

	requireError(t, e.do(http.MethodGet, "/api/openings/00000000-0000-4000-8000-000000000000", key, nil), 404, "opening_not_found")
	requireError(t, e.do(http.MethodGet, "/api/openings/not-a-uuid", key, nil), 404, "opening_not_found")
	requireError(t, e.do(http.MethodPost, "/api/openings/not-a-uuid/cancel", key, nil), 404, "opening_not_found")

	// A second opening, then list.
	second := e.opening(key)
	l := e.do(http.MethodGet, "/api/openings", key, nil)
	require.Equal(t, http.StatusOK, l.status, l.raw)
	require.ElementsMatch(t, []string{"openings"}, keys(l.body))
	require.Len(t, l.body["openings"], 2)
	l = e.do(http.MethodGet, "/api/openings?limit=1", key, nil)
	require.Len(t, l.body["openings"], 1)

	// Cancel, twice.
	c := e.do(http.MethodPost, "/api/openings/"+id+"/cancel", key, nil)
	require.Equal(t, http.StatusOK, c.status, c.raw)
	require.Equal(t, "cancelled", c.body["status"])
	require.Equal(t, id, c.body["id"])
	c = e.do(http.MethodPost, "/api/openings/"+id+"/cancel", key, nil)
	require.Equal(t, http.StatusOK, c.status, c.raw)
	require.Equal(t, "cancelled", c.body["status"])
	require.Equal(t, "cancelled", e.queryString("SELECT status FROM slot_openings WHERE id = $1", id))

	// List by status.
	ids := func(r resp) []string {
		var out []string
		for _, o := range r.body["openings"].([]any) {
			out = append(out, o.(map[string]any)["id"].(string))
		}
		return out
	}
	l = e.do(http.MethodGet, "/api/openings?status=cancelled", key, nil)
	require.Equal(t, []string{id}, ids(l))
	l = e.do(http.MethodGet, "/api/openings?status=open", key, nil)
	require.Equal(t, []string{second["id"].(string)}, ids(l))
	for _, st := range []string{"filled", "completed", "expired"} {
		l = e.do(http.MethodGet, "/api/openings?status="+st, key, nil)
		require.Equal(t, http.StatusOK, l.status, l.raw)
		require.Contains(t, l.raw, `"openings":[]`, "an empty list is [], not null")
	}
	requireError(t, e.do(http.MethodGet, "/api/openings?status=bogus", key, nil), 422, "invalid_status")
	for _, lim := range []string{"0", "-1", "501", "ten", "1.5"} {
		requireError(t, e.do(http.MethodGet, "/api/openings?limit="+lim, key, nil), 422, "invalid_limit")
	}
}

func TestDeclareOpeningValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, key := e.shop("+15555550100") // min lead 30 minutes
	with := func(k string, v any) map[string]any {
		b := validOpening()
		b[k] = v
		return b
	}
	without := func(k string) map[string]any {
		b := validOpening()
		delete(b, k)
		return b
	}
	tests := []struct {
		name   string
		body   any
		status int
		code   string
		field  string
	}{
		{"starts in the past", with("starts_at", future(-time.Hour)), 422, "invalid_starts_at", "starts_at"},
		{"inside the lead time", with("starts_at", future(10*time.Minute)), 422, "invalid_starts_at", "starts_at"},
		{"more than a year ahead", with("starts_at", future(400*24*time.Hour)), 422, "invalid_starts_at", "starts_at"},
		{"not a timestamp", with("starts_at", "tomorrow at 3"), 422, "invalid_starts_at", "starts_at"},
		{"no zone", with("starts_at", "2030-01-02T15:00:00"), 422, "invalid_starts_at", "starts_at"},
		{"date only", with("starts_at", "2030-01-02"), 422, "invalid_starts_at", "starts_at"},
		{"missing start", without("starts_at"), 422, "invalid_starts_at", "starts_at"},
		{"negative duration", with("duration_minutes", -30), 422, "invalid_duration_minutes", "duration_minutes"},
		{"zero duration", with("duration_minutes", 0), 422, "invalid_duration_minutes", "duration_minutes"},
		{"duration over a day", with("duration_minutes", 1441), 422, "invalid_duration_minutes", "duration_minutes"},
		{"negative price", with("price_cents", -100), 422, "invalid_price_cents", "price_cents"},
		{"zero price", with("price_cents", 0), 422, "invalid_price_cents", "price_cents"},
		{"price over Stripe's eight digits", with("price_cents", 100_000_000), 422, "invalid_price_cents", "price_cents"},
		{"missing service", without("service"), 422, "invalid_service", "service"},
		{"starts_at a number", with("starts_at", 1700000000), 400, "bad_json", "starts_at"},
		{"duration a string", with("duration_minutes", "sixty"), 400, "bad_json", "duration_minutes"},
		{"price a fraction", with("price_cents", 12.5), 400, "bad_json", "price_cents"},
		{"malformed", `{"starts_at":"2030-01-01T00:00:00Z"`, 400, "bad_json", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.sub(t).do(http.MethodPost, "/api/openings", key, tt.body)
			requireError(t, r, tt.status, tt.code)
			require.Equal(t, tt.field, r.errFieldName())
		})
	}
	require.Equal(t, 0, e.queryInt("SELECT count(*) FROM slot_openings"))
	require.Equal(t, 0, e.queryInt("SELECT count(*) FROM river_job"))
}

// The largest price Stripe charges at once is declared; one unit more is refused above
// (TestDeclareOpeningValidation), so no booking waits for a link Stripe cannot make.
func TestDeclareOpeningAtTheLargestPrice(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, key := e.shop("+15555550100")
	b := validOpening()
	b["price_cents"] = 99_999_999
	r := e.do(http.MethodPost, "/api/openings", key, b)
	require.Equal(t, http.StatusCreated, r.status, r.raw)
	require.EqualValues(t, 99_999_999, r.body["price_cents"])
}

func TestShopsAreIsolated(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	shopA, keyA := e.shop("+15555550100")
	shopB, keyB := e.shop("+15555550200")
	a := e.opening(keyA)
	aID := a["id"].(string)
	b := e.opening(keyB)

	// B cannot read or cancel A's opening: to B it does not exist.
	requireError(t, e.do(http.MethodGet, "/api/openings/"+aID, keyB, nil), 404, "opening_not_found")
	requireError(t, e.do(http.MethodPost, "/api/openings/"+aID+"/cancel", keyB, nil), 404, "opening_not_found")
	got := e.do(http.MethodGet, "/api/openings/"+aID, keyA, nil)
	require.Equal(t, http.StatusOK, got.status)
	require.Equal(t, a, got.body, "A's opening is unchanged")
	require.Equal(t, "open", e.queryString("SELECT status FROM slot_openings WHERE id = $1", aID))

	// Still 404 once A has cancelled it (no "already cancelled" answer that would leak it).
	require.Equal(t, http.StatusOK, e.do(http.MethodPost, "/api/openings/"+aID+"/cancel", keyA, nil).status)
	requireError(t, e.do(http.MethodPost, "/api/openings/"+aID+"/cancel", keyB, nil), 404, "opening_not_found")
	requireError(t, e.do(http.MethodGet, "/api/openings/"+aID, keyB, nil), 404, "opening_not_found")

	// B's lists never hold A's openings, whatever the filter.
	for _, q := range []string{"", "?status=open", "?status=cancelled", "?limit=500"} {
		l := e.do(http.MethodGet, "/api/openings"+q, keyB, nil)
		require.Equal(t, http.StatusOK, l.status, l.raw)
		require.NotContains(t, l.raw, aID, q)
		require.NotContains(t, l.raw, shopA, q)
		for _, o := range l.body["openings"].([]any) {
			require.Equal(t, shopB, o.(map[string]any)["shop_id"])
		}
	}
	l := e.do(http.MethodGet, "/api/openings", keyB, nil)
	require.Len(t, l.body["openings"], 1)
	require.Equal(t, b["id"], l.body["openings"].([]any)[0].(map[string]any)["id"])

	// Customers are created under the caller's shop, whatever the body says.
	r := e.do(http.MethodPost, "/api/customers", keyB, map[string]any{
		"phone": "+15555550123", "shop_id": shopA, "sms_opt_in": true})
	require.Equal(t, http.StatusCreated, r.status, r.raw)
	require.Equal(t, shopB, e.queryString("SELECT shop_id::text FROM customers WHERE id = $1", r.body["id"]))
	require.Equal(t, 0, e.queryInt("SELECT count(*) FROM customers WHERE shop_id = $1", shopA))
	// The same phone is a separate customer of A: phones are unique per shop only.
	r = e.do(http.MethodPost, "/api/customers", keyA, map[string]any{"phone": "+15555550123", "sms_opt_in": true})
	require.Equal(t, http.StatusCreated, r.status, r.raw)
	require.Equal(t, shopA, e.queryString("SELECT shop_id::text FROM customers WHERE id = $1", r.body["id"]))

	// Openings too: a shop_id in the body is ignored.
	body := validOpening()
	body["shop_id"] = shopA
	r = e.do(http.MethodPost, "/api/openings", keyB, body)
	require.Equal(t, http.StatusCreated, r.status, r.raw)
	require.Equal(t, shopB, r.body["shop_id"])
	require.Equal(t, shopB, e.queryString("SELECT shop_id::text FROM slot_openings WHERE id = $1", r.body["id"]))
}

func TestRoutingErrorsAreJSON(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, key := e.shop("+15555550100")

	requireError(t, e.do(http.MethodGet, "/api/nothing-here", key, nil), 404, "not_found")
	requireError(t, e.do(http.MethodGet, "/nope", "", nil), 404, "not_found")
	requireError(t, e.do(http.MethodGet, "/api/openings/x/y/z", key, nil), 404, "not_found")

	for _, m := range []struct{ method, path string }{
		{http.MethodDelete, "/api/openings"},
		{http.MethodPut, "/api/customers"},
		{http.MethodGet, "/api/shops"},
		{http.MethodPost, "/api/shop"},
		{http.MethodGet, "/api/shop/rotate-key"},
		{http.MethodPost, "/api/customers/00000000-0000-4000-8000-000000000000"},
		{http.MethodPut, "/api/openings/00000000-0000-4000-8000-000000000000"},
		{http.MethodGet, "/api/openings/00000000-0000-4000-8000-000000000000/cancel"},
	} {
		// A wrong method is 405 whatever the credentials: routing comes before auth.
		for _, tok := range []string{"", key} {
			r := e.do(m.method, m.path, tok, nil)
			requireError(t, r, http.StatusMethodNotAllowed, "method_not_allowed")
			require.NotEmpty(t, r.header.Get("Allow"), "%s %s", m.method, m.path)
		}
	}

	// 2 MiB: refused by its Content-Length, and refused while streaming (chunked, no length).
	big := `{"service":"` + strings.Repeat("x", 2<<20) + `"}`
	for _, path := range []string{"/api/openings", "/api/customers"} {
		requireError(t, e.do(http.MethodPost, path, key, big), http.StatusRequestEntityTooLarge, "body_too_large")
		chunked := io.MultiReader(strings.NewReader(big)) // hides the length
		requireError(t, e.do(http.MethodPost, path, key, chunked), http.StatusRequestEntityTooLarge, "body_too_large")
	}
	requireError(t, e.do(http.MethodPost, "/api/shops", adminToken, big), http.StatusRequestEntityTooLarge, "body_too_large")
	require.Equal(t, 0, e.queryInt("SELECT count(*) FROM slot_openings"))
}

func TestFilledOpeningJSON(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	shopID, key := e.shop("+15555550100")
	_, keyB := e.shop("+15555550200")
	cust := e.do(http.MethodPost, "/api/customers", key, map[string]any{"phone": "+15555550123", "name": "Ada", "sms_opt_in": true})
	require.Equal(t, http.StatusCreated, cust.status, cust.raw)
	custID := cust.body["id"].(string)
	o := e.opening(key)
	id := o["id"].(string)

	// Booking is the domain's job (slots.Book); here the rows it leaves are written
	// directly, to pin down how a filled opening looks on the wire.
	ctx := context.Background()
	exec := func(sql string, args ...any) {
		t.Helper()
		_, err := e.pool.Exec(ctx, sql, args...)
		require.NoError(t, err)
	}
	exec(`INSERT INTO slot_offers (opening_id, customer_id, shop_id, generation, wave, status, created_at, sent_at)
		VALUES ($1, $2, $3, 1, 1, 'accepted', now(), now())`, id, custID, shopID)
	exec(`UPDATE slot_openings SET status = 'filled', filled_by = $2, filled_at = now(), updated_at = now() WHERE id = $1`, id, custID)
	exec(`INSERT INTO bookings (opening_id, customer_id, shop_id, status, amount_cents, currency,
			stripe_checkout_session_id, payment_url, created_at, updated_at)
		VALUES ($1, $2, $3, 'payment_failed', 3500, 'usd', 'cs_test_old', 'https://checkout.stripe.com/c/pay/cs_test_old',
			now() - interval '1 minute', now())`, id, custID, shopID)
	var latest string
	require.NoError(t, e.pool.QueryRow(ctx, `INSERT INTO bookings (opening_id, customer_id, shop_id, status, amount_cents,
			currency, created_at, updated_at)
		VALUES ($1, $2, $3, 'pending_payment', 3500, 'usd', now(), now()) RETURNING id::text`, id, custID, shopID).Scan(&latest))

	g := e.do(http.MethodGet, "/api/openings/"+id, key, nil)
	require.Equal(t, http.StatusOK, g.status, g.raw)
	require.Equal(t, "filled", g.body["status"])
	require.Equal(t, 1.0, g.body["offers_sent"])
	require.Equal(t, map[string]any{"customer_id": custID, "phone": "+15555550123", "name": "Ada"}, g.body["filled_by"])
	require.Equal(t, map[string]any{"id": latest, "status": "pending_payment", "amount_cents": 3500.0,
		"payment_url": nil, "stripe_checkout_session_id": nil, "application_fee_cents": 0.0, "net_cents": 3500.0,
		"service": "Skin fade", "duration_minutes": 45.0, "price_cents": 3500.0},
		g.body["booking"], "the latest booking, link not made yet (what was booked: the opening's service, without services)")
	require.NotNil(t, g.body["filled_at"])

	// The link is made on a connected account, with the platform's fee.
	exec(`UPDATE bookings SET stripe_checkout_session_id = 'cs_test_new', payment_url = 'https://checkout.stripe.com/c/pay/cs_test_new',
		stripe_account = 'acct_1', application_fee_cents = 88 WHERE id = $1`, latest)
	l := e.do(http.MethodGet, "/api/openings?status=filled", key, nil)
	require.Len(t, l.body["openings"], 1)
	b := l.body["openings"].([]any)[0].(map[string]any)["booking"].(map[string]any)
	require.Equal(t, "https://checkout.stripe.com/c/pay/cs_test_new", b["payment_url"])
	require.Equal(t, "cs_test_new", b["stripe_checkout_session_id"])
	require.Equal(t, 88.0, b["application_fee_cents"])
	require.Equal(t, 3412.0, b["net_cents"], "what the shop receives")

	// A filled opening has a customer and maybe a payment: it is not cancelled here.
	requireError(t, e.do(http.MethodPost, "/api/openings/"+id+"/cancel", key, nil), http.StatusConflict, "opening_not_open")
	require.Equal(t, "filled", e.queryString("SELECT status FROM slot_openings WHERE id = $1", id))
	// And to another shop it still does not exist.
	requireError(t, e.do(http.MethodPost, "/api/openings/"+id+"/cancel", keyB, nil), http.StatusNotFound, "opening_not_found")
	requireError(t, e.do(http.MethodGet, "/api/openings/"+id, keyB, nil), http.StatusNotFound, "opening_not_found")
	require.NotContains(t, e.do(http.MethodGet, "/api/openings?status=filled", keyB, nil).raw, id)
}
