package dashboard_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/dashboard"
	"github.com/slotrecovery/slotrecovery/internal/erasure"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/testkit/customertest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/redistest"
)

// TestLogoutEndsCopiedSessions: after sign-out, a copy of the session cookie taken
// before it (another tab, a stolen copy) is refused everywhere, while another sign-in
// of the same shop goes on.
func TestLogoutEndsCopiedSessions(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday})
	ck := en.login(t, en.keyA)
	copied := &http.Cookie{Name: ck.Name, Value: ck.Value}
	elsewhere := en.login(t, en.keyA)
	_, csrf := en.page(t, ck, "/dashboard")
	open := insertOpening(t, en.pool, en.shopA.ID, wednesday.Add(48*time.Hour), wednesday, "Cut", 3000, "open")

	rec := en.post("/dashboard/logout", url.Values{"csrf": {csrf}}, ck)
	require.Equal(t, http.StatusSeeOther, rec.Code)

	for _, path := range []string{"/dashboard", "/dashboard/export.csv?from=2026-11-01&to=2026-11-30"} {
		rec = en.get(path, copied)
		require.Equal(t, http.StatusSeeOther, rec.Code, path)
		require.Equal(t, "/dashboard/login", rec.Header().Get("Location"))
	}
	rec = en.post("/dashboard/openings/"+open.String()+"/cancel", url.Values{"csrf": {csrf}}, copied)
	require.Equal(t, http.StatusSeeOther, rec.Code)
	require.Equal(t, "/dashboard/login", rec.Header().Get("Location"))
	require.Equal(t, "open", openingStatus(t, en.pool, open))
	rec = en.get("/dashboard/login", copied)
	require.Equal(t, http.StatusOK, rec.Code, "the sign-in form, not a redirect loop")
	rec = en.post("/dashboard/logout", url.Values{"csrf": {csrf}}, copied)
	require.Equal(t, http.StatusSeeOther, rec.Code, "signing out again is harmless")

	en.page(t, elsewhere, "/dashboard") // the other sign-in is untouched

	// The sign-out is recorded in Postgres until the session would have expired (and a
	// minute for instances' clocks), then purged.
	var expires time.Time
	require.NoError(t, en.pool.QueryRow(t.Context(),
		`SELECT expires_at FROM dashboard_session_ends WHERE session_id = $1 AND shop_id = $2`,
		sessionID(t, copied), en.shopA.ID).Scan(&expires))
	assert.Equal(t, wednesday.Add(12*time.Hour+time.Minute), expires.UTC(), "kept until the session would have expired")
}

// sessionID is the id part of a session cookie
// ("2.<shop>.<expiry>.<id>.<key version>.<mac>").
func sessionID(t *testing.T, ck *http.Cookie) string {
	t.Helper()
	parts := strings.Split(ck.Value, ".")
	require.Len(t, parts, 6)
	return parts[3]
}

// TestSessionsWithoutRedis: sessions and their sign-outs live in Postgres, so while
// Redis is unreachable signed-in owners stay signed in and signing out works; only
// signing in, whose attempts Redis counts, fails closed, with a 503 that asks to retry.
func TestSessionsWithoutRedis(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday})
	ck := en.login(t, en.keyA)
	copied := &http.Cookie{Name: ck.Name, Value: ck.Value}
	elsewhere := en.login(t, en.keyA)
	_, csrf := en.page(t, ck, "/dashboard")

	d, err := dashboard.New(en.pool, en.shops, en.slots, dashboard.Config{
		Customers: en.customers, Erasure: en.erasure,
		SessionSecret: secret, Secure: true, Now: en.clock.Now, Redis: redistest.Unreachable(t), Waves: en.waves,
	})
	require.NoError(t, err)
	broken := *en
	broken.e = newEcho(d)

	en.page(t, ck, "/dashboard")
	rec := broken.get("/dashboard", ck)
	require.Equal(t, http.StatusOK, rec.Code, "a signed-in owner stays signed in")

	form := broken.get("/dashboard/login")
	require.Equal(t, http.StatusOK, form.Code)
	rec = broken.post("/dashboard/login", url.Values{"csrf": {csrfIn(t, form.Body.String())}, "api_key": {en.keyA}},
		cookieNamed(form, "sr_login"))
	require.Equal(t, http.StatusServiceUnavailable, rec.Code, "an attempt Redis cannot count is not let through")
	assert.Contains(t, rec.Body.String(), "Signing in is not possible for a moment.")
	assert.Contains(t, rec.Body.String(), `<h1>Sign in</h1>`)
	assert.Equal(t, "30", rec.Header().Get("Retry-After"))
	assert.Nil(t, cookieNamed(rec, "sr_session"))

	rec = broken.post("/dashboard/logout", url.Values{"csrf": {csrf}}, ck)
	require.Equal(t, http.StatusSeeOther, rec.Code, "signing out needs no Redis")
	require.Equal(t, "/dashboard/login", rec.Header().Get("Location"))
	for _, e := range []*env{en, &broken} {
		rec = e.get("/dashboard", copied)
		require.Equal(t, http.StatusSeeOther, rec.Code, "the copy is signed out")
		rec = e.get("/dashboard", elsewhere)
		require.Equal(t, http.StatusOK, rec.Code, "the other session goes on")
	}
}

// TestSessionsFailClosedWithoutPostgres: when Postgres cannot say whether a session
// signed out, the dashboard answers 503 rather than honour it, and sign-out does not
// pretend to have worked.
func TestSessionsFailClosedWithoutPostgres(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday})
	ck := en.login(t, en.keyA)
	_, csrf := en.page(t, ck, "/dashboard")

	down, err := pgxpool.New(t.Context(), "postgres://postgres@127.0.0.1:1/none?connect_timeout=1")
	require.NoError(t, err)
	t.Cleanup(down.Close)
	downCustomers := customertest.NewWith(t, down, customers.Config{Now: en.clock.Now})
	d, err := dashboard.New(down, shops.New(down, shops.Config{Now: en.clock.Now}), en.slots, dashboard.Config{
		SessionSecret: secret, Secure: true, Now: en.clock.Now, Redis: en.redis, KeyPrefix: en.prefix, Waves: en.waves,
		Customers: downCustomers, Erasure: erasure.New(down, downCustomers, en.river, erasure.Config{}),
	})
	require.NoError(t, err)
	broken := *en
	broken.e = newEcho(d)

	rec := broken.get("/dashboard", ck)
	require.Equal(t, http.StatusServiceUnavailable, rec.Code)
	assert.Contains(t, rec.Body.String(), "cannot check your session")
	assert.NotContains(t, rec.Body.String(), "127.0.0.1:1")
	rec = broken.post("/dashboard/logout", url.Values{"csrf": {csrf}}, ck)
	require.Equal(t, http.StatusServiceUnavailable, rec.Code)
	assert.Nil(t, cookieNamed(rec, "sr_session"), "the cookie stays until the sign-out is recorded")
	rec = broken.get("/dashboard/login", ck)
	require.Equal(t, http.StatusOK, rec.Code, "the sign-in form still shows")
	en.page(t, ck, "/dashboard") // not signed out
}

// TestSignInIsRateLimited: sign-in attempts are limited per client address (every
// attempt counts, before the key is looked up) and successful sign-ins per shop; the
// limited get a 429 sign-in page that says how long to wait.
func TestSignInIsRateLimited(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday,
		perClient: dashboard.Limit{Burst: 3, Every: 10 * time.Minute},
		perShop:   dashboard.Limit{Burst: 2, Every: time.Hour},
	})
	attempt := func(ip, key string) *http.Response {
		t.Helper()
		form := en.get("/dashboard/login")
		loginCk := cookieNamed(form, "sr_login")
		req := newPost("/dashboard/login", url.Values{"csrf": {csrfIn(t, form.Body.String())}, "api_key": {key}})
		req.Header.Set("X-Real-IP", ip)
		return en.do(req, loginCk).Result()
	}

	t.Run("per client", func(t *testing.T) {
		for range 3 {
			require.Equal(t, http.StatusUnauthorized, attempt("198.51.100.7", "shop_wrong").StatusCode)
		}
		for _, key := range []string{"shop_wrong", en.keyB} {
			res := attempt("198.51.100.7", key)
			require.Equal(t, http.StatusTooManyRequests, res.StatusCode, "even a good key, once limited")
			body := readBody(t, res)
			assert.Contains(t, body, "Too many sign-in attempts from your network. Wait 10 minutes and try again.")
			assert.Contains(t, body, `<h1>Sign in</h1>`)
			assert.Equal(t, "600", res.Header.Get("Retry-After"))
			assert.Nil(t, responseCookie(res, "sr_session"))
		}
		require.Equal(t, http.StatusUnauthorized, attempt("198.51.100.8", "shop_wrong").StatusCode, "another client is not limited")
		// Every address of one IPv6 /64 shares a bucket.
		for range 3 {
			require.Equal(t, http.StatusUnauthorized, attempt("2001:db8:1:2::1", "shop_wrong").StatusCode)
		}
		require.Equal(t, http.StatusTooManyRequests, attempt("2001:db8:1:2:ffff::9", "shop_wrong").StatusCode)
		require.Equal(t, http.StatusUnauthorized, attempt("2001:db8:1:3::1", "shop_wrong").StatusCode)
	})

	t.Run("per shop", func(t *testing.T) {
		require.Equal(t, http.StatusSeeOther, attempt("203.0.113.1", en.keyA).StatusCode)
		require.Equal(t, http.StatusSeeOther, attempt("203.0.113.2", en.keyA).StatusCode)
		res := attempt("203.0.113.3", en.keyA)
		require.Equal(t, http.StatusTooManyRequests, res.StatusCode, "a third address, the same shop")
		assert.Contains(t, readBody(t, res), "Too many sign-ins to this shop. Wait 60 minutes and try again.")
		require.Equal(t, http.StatusSeeOther, attempt("203.0.113.4", en.keyB).StatusCode, "another shop is not limited")
	})
}

// TestSignInBucketsRefill: once the wait a 429 announced has passed, signing in works
// again. The buckets are in Redis and refill on Redis's clock (the instances' clocks
// may differ), so this waits for real, on limits of a second.
func TestSignInBucketsRefill(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday,
		perClient: dashboard.Limit{Burst: 1, Every: time.Second},
		perShop:   dashboard.Limit{Burst: 1, Every: time.Second},
	})
	attempt := func() *http.Response {
		t.Helper()
		form := en.get("/dashboard/login")
		req := newPost("/dashboard/login", url.Values{"csrf": {csrfIn(t, form.Body.String())}, "api_key": {en.keyA}})
		req.Header.Set("X-Real-IP", "198.51.100.9")
		return en.do(req, cookieNamed(form, "sr_login")).Result()
	}
	require.Equal(t, http.StatusSeeOther, attempt().StatusCode)
	res := attempt()
	require.Equal(t, http.StatusTooManyRequests, res.StatusCode)
	require.Equal(t, "1", res.Header.Get("Retry-After"))
	deadline := time.Now().Add(10 * time.Second)
	for res.StatusCode == http.StatusTooManyRequests {
		require.True(t, time.Now().Before(deadline), "still limited 10 s after a wait of 1 s")
		time.Sleep(time.Second)
		res = attempt()
	}
	require.Equal(t, http.StatusSeeOther, res.StatusCode, "both buckets refilled")
}

func newPost(path string, form url.Values) *http.Request {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return req
}

func readBody(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return string(b)
}

func responseCookie(res *http.Response, name string) *http.Cookie {
	for _, c := range res.Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}
