package dashboard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/dashboard"
	"github.com/slotrecovery/slotrecovery/internal/httperr"
	"github.com/slotrecovery/slotrecovery/internal/shopapi"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

var newKeyRE = regexp.MustCompile(`<code id="new-key">([^<]+)</code>`)

// newKeyIn returns the key a rotation's answer shows.
func newKeyIn(t *testing.T, body string) string {
	t.Helper()
	m := newKeyRE.FindStringSubmatch(body)
	require.NotNil(t, m, "the answer shows the new key")
	return html.UnescapeString(m[1])
}

// syncBuffer is a log sink the handlers may write to while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// instance is another server of the same deployment: its own Dashboard and shops
// service (nothing in memory shared), the same Postgres, Redis and SESSION_SECRET.
func (en *env) instance(t *testing.T, logs *syncBuffer) *echo.Echo {
	t.Helper()
	cfg := dashboard.Config{SessionSecret: secret, Secure: en.secure, Now: en.clock.Now, Redis: en.redis, KeyPrefix: en.prefix, Waves: en.waves,
		Customers: en.customers, Erasure: en.erasure}
	if logs != nil {
		cfg.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	}
	d, err := dashboard.New(en.pool, shops.New(en.pool, shops.Config{Now: en.clock.Now, PaymentsEnabled: true}), en.slots, cfg)
	require.NoError(t, err)
	return newEcho(d)
}

// on sends req to the instance e.
func on(e *echo.Echo, req *http.Request, cookies ...*http.Cookie) *httptest.ResponseRecorder {
	for _, c := range cookies {
		req.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	return rec
}

// requireSignedOut checks that ck no longer opens the dashboard on e: pages and forms
// go to the sign-in form (which shows itself rather than bouncing back), and the
// browser is told to drop the cookie.
func requireSignedOut(t *testing.T, e *echo.Echo, ck *http.Cookie, csrf string) {
	t.Helper()
	for _, path := range []string{"/dashboard", "/dashboard/settings", "/dashboard/customers", "/dashboard/export.csv?from=2026-11-01&to=2026-11-30"} {
		rec := on(e, httptest.NewRequest(http.MethodGet, path, nil), ck)
		require.Equal(t, http.StatusSeeOther, rec.Code, path)
		require.Equal(t, "/dashboard/login", rec.Header().Get("Location"), path)
		gone := cookieNamed(rec, "sr_session")
		require.NotNil(t, gone, "%s clears the ended session's cookie", path)
		require.Negative(t, gone.MaxAge)
	}
	req := httptest.NewRequest(http.MethodPost, "/dashboard/settings/rotate-key",
		strings.NewReader(url.Values{"csrf": {csrf}, "confirm": {"yes"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := on(e, req, ck)
	require.Equal(t, http.StatusSeeOther, rec.Code, "a form posted with the ended session is not acted on")
	require.Equal(t, "/dashboard/login", rec.Header().Get("Location"))
	rec = on(e, httptest.NewRequest(http.MethodGet, "/dashboard/login", nil), ck)
	require.Equal(t, http.StatusOK, rec.Code, "the sign-in form, not a redirect loop")
}

// TestKeyRotationEndsSessions: rotating a shop's key, through the API or the
// dashboard's form, ends every dashboard session signed in under the old key, on every
// instance; another shop's sessions go on, and the old key no longer signs in.
func TestKeyRotationEndsSessions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// rotate rotates shop A's key, signed in as ck, and returns the new key and the
		// session cookie the rotation answered with (nil through the API).
		rotate func(t *testing.T, en *env, ck *http.Cookie) (string, *http.Cookie)
	}{
		{"through the API", func(t *testing.T, en *env, _ *http.Cookie) (string, *http.Cookie) {
			api := echo.New()
			api.HTTPErrorHandler = httperr.Handler(slog.New(slog.DiscardHandler))
			(&shopapi.Handlers{Shops: en.shops, Openings: en.slots}).Register(api)
			req := httptest.NewRequest(http.MethodPost, "/api/shop/rotate-key", nil)
			req.Header.Set("Authorization", "Bearer "+en.keyA)
			rec := on(api, req)
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			var out struct {
				APIKey string `json:"api_key"`
			}
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
			require.NotEmpty(t, out.APIKey)
			return out.APIKey, nil
		}},
		{"through the dashboard form", func(t *testing.T, en *env, ck *http.Cookie) (string, *http.Cookie) {
			_, csrf := en.page(t, ck, "/dashboard/settings")
			rec := en.post("/dashboard/settings/rotate-key", url.Values{"csrf": {csrf}, "confirm": {"yes"}}, ck)
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			fresh := cookieNamed(rec, "sr_session")
			require.NotNil(t, fresh, "the browser that rotated gets a session under the new key")
			return newKeyIn(t, rec.Body.String()), fresh
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			en := newEnv(t, envOpts{now: wednesday})
			other := en.instance(t, nil)
			rotating := en.login(t, en.keyA)
			elsewhere := en.login(t, en.keyA)
			_, elsewhereCSRF := en.page(t, elsewhere, "/dashboard")
			shopB := en.login(t, en.keyB)
			// Before the rotation, both instances honour both of A's sessions.
			for _, e := range []*echo.Echo{en.e, other} {
				require.Equal(t, http.StatusOK, on(e, httptest.NewRequest(http.MethodGet, "/dashboard", nil), elsewhere).Code)
			}
			_, rotatingCSRF := en.page(t, rotating, "/dashboard")
			oldRotating := &http.Cookie{Name: rotating.Name, Value: rotating.Value}

			newKey, fresh := tc.rotate(t, en, rotating)

			for name, e := range map[string]*echo.Echo{"this instance": en.e, "another instance": other} {
				t.Run(name, func(t *testing.T) {
					requireSignedOut(t, e, elsewhere, elsewhereCSRF)
					requireSignedOut(t, e, oldRotating, rotatingCSRF)
					rec := on(e, httptest.NewRequest(http.MethodGet, "/dashboard", nil), shopB)
					require.Equal(t, http.StatusOK, rec.Code, "another shop's session goes on")
					require.Contains(t, rec.Body.String(), "Bea&#39;s Salon")
					if fresh != nil {
						rec = on(e, httptest.NewRequest(http.MethodGet, "/dashboard", nil), fresh)
						require.Equal(t, http.StatusOK, rec.Code, "the session the rotation answered with works")
					}
				})
			}

			// The old key no longer signs in; the new one does.
			form := en.get("/dashboard/login")
			loginCk := cookieNamed(form, "sr_login")
			rec := en.post("/dashboard/login", url.Values{"csrf": {csrfIn(t, form.Body.String())}, "api_key": {en.keyA}}, loginCk)
			require.Equal(t, http.StatusUnauthorized, rec.Code)
			body, _ := en.page(t, en.login(t, newKey), "/dashboard")
			require.Contains(t, body, "Ada&#39;s Barbers")
		})
	}
}

// TestRotateKeyForm: the settings page offers the rotation with a warning and a
// confirmation; the answer shows the new key once, and nothing else (cookie, header,
// log) carries it; a reload of the answer rotates nothing.
func TestRotateKeyForm(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday})
	logs := &syncBuffer{}
	en.e = en.instance(t, logs)
	ck := en.login(t, en.keyA)
	body, csrf := en.page(t, ck, "/dashboard/settings")
	assert.Contains(t, body, `<form method="post" action="/dashboard/settings/rotate-key"`)
	assert.Contains(t, body, `<input id="rotate-confirm" name="confirm" type="checkbox" value="yes">`)
	assert.Contains(t, body, "The current key stops working at once,")
	assert.Contains(t, body, "is signed out")

	keyVersion := func() int {
		shop, err := en.shops.Get(context.Background(), en.shopA.ID)
		require.NoError(t, err)
		return shop.KeyVersion
	}
	require.Equal(t, 1, keyVersion())

	t.Run("without the confirmation nothing changes", func(t *testing.T) {
		rec := en.post("/dashboard/settings/rotate-key", url.Values{"csrf": {csrf}}, ck)
		require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
		assert.Equal(t, "Tick the box to confirm that the current key should stop working.", fieldError(rec.Body.String(), "rotate-confirm-error"))
		assert.Nil(t, cookieNamed(rec, "sr_session"))
		require.Equal(t, 1, keyVersion())
		en.page(t, ck, "/dashboard")
	})
	t.Run("without the CSRF token nothing changes", func(t *testing.T) {
		rec := en.post("/dashboard/settings/rotate-key", url.Values{"confirm": {"yes"}}, ck)
		require.Equal(t, http.StatusForbidden, rec.Code)
		require.Equal(t, 1, keyVersion())
	})
	t.Run("a GET is not a rotation", func(t *testing.T) {
		rec := en.get("/dashboard/settings/rotate-key", ck)
		require.Equal(t, http.StatusNotFound, rec.Code)
		require.Equal(t, 1, keyVersion())
	})

	rec := en.post("/dashboard/settings/rotate-key", url.Values{"csrf": {csrf}, "confirm": {"yes"}}, ck)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, 2, keyVersion())
	body = rec.Body.String()
	key := newKeyIn(t, body)
	require.True(t, strings.HasPrefix(key, "shop_"))
	shop, err := en.shops.Authenticate(context.Background(), key)
	require.NoError(t, err, "the key shown is the shop's new key")
	require.Equal(t, en.shopA.ID, shop.ID)
	assert.Equal(t, 1, strings.Count(body, key), "shown once on the page")
	assert.Contains(t, body, "Your old key stopped working just now.")
	assert.Contains(t, body, "it is shown only once")
	assert.Contains(t, body, `aria-current="page">Settings</a>`)
	assert.Equal(t, "no-store", rec.Header().Get("Cache-Control"))
	for name, values := range rec.Header() {
		for _, v := range values {
			assert.NotContains(t, v, key, "header %s", name)
			assert.NotContains(t, v, key[len("shop_"):], "header %s", name)
		}
	}
	assert.NotContains(t, logs.String(), key[len("shop_"):], "the key is never logged")
	assert.Contains(t, logs.String(), `"msg":"dashboard key rotated"`)
	fresh := cookieNamed(rec, "sr_session")
	require.NotNil(t, fresh)
	freshBody, freshCSRF := en.page(t, fresh, "/dashboard/settings")
	assert.NotContains(t, freshBody, key, "the settings page never shows the key again")
	assert.Equal(t, csrfIn(t, body), freshCSRF, "the answer's forms belong to the new session")

	// A reload of the answer posts the form again, with the ended session: refused.
	rec = en.post("/dashboard/settings/rotate-key", url.Values{"csrf": {csrf}, "confirm": {"yes"}}, ck)
	require.Equal(t, http.StatusSeeOther, rec.Code)
	// With the new cookie but the old page's token: refused too.
	rec = en.post("/dashboard/settings/rotate-key", url.Values{"csrf": {csrf}, "confirm": {"yes"}}, fresh)
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, 2, keyVersion(), "nothing rotated again")
}

// TestSessionOfAnOldKeyVersionIsRefused: a session signed in under an older key stays
// refused whatever the clock says (versions are compared, not times), so instances
// whose clocks differ agree.
func TestSessionOfAnOldKeyVersionIsRefused(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday})
	ck := en.login(t, en.keyA)
	_, csrf := en.page(t, ck, "/dashboard")
	_, _, err := en.shops.RotateKey(context.Background(), en.shopA.ID)
	require.NoError(t, err)
	requireSignedOut(t, en.e, ck, csrf)
	// The clock does not matter: even an hour later, or earlier, the old session stays
	// refused.
	for _, d := range []time.Duration{-time.Hour, time.Hour} {
		en.clock.Set(wednesday.Add(d))
		rec := en.get("/dashboard", ck)
		require.Equal(t, http.StatusSeeOther, rec.Code)
	}
}
