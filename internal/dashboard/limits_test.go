package dashboard_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/dashboard"
	"github.com/slotrecovery/slotrecovery/internal/testkit/redistest"
)

// TestSignOutSurvivesRedisLoss: a sign-out is recorded where the truth lives. After
// Redis loses every key of this deployment (a restart without persistence), a copy of
// the signed-out cookie still opens nothing, on this instance and on another; the
// shop's other session, on another device, goes on.
func TestSignOutSurvivesRedisLoss(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday})
	ck := en.login(t, en.keyA)
	copied := &http.Cookie{Name: ck.Name, Value: ck.Value}
	elsewhere := en.login(t, en.keyA)
	_, csrf := en.page(t, ck, "/dashboard")

	rec := en.post("/dashboard/logout", url.Values{"csrf": {csrf}}, ck)
	require.Equal(t, http.StatusSeeOther, rec.Code)
	rec = en.get("/dashboard", copied)
	require.Equal(t, http.StatusSeeOther, rec.Code, "signed out, before Redis loses anything")

	// Redis restarts empty: every key of this test's prefix is gone (the rate limiter's
	// too, which go-redis/redis_rate keeps under "rate:").
	ctx := context.Background()
	require.NoError(t, redistest.DeletePrefix(ctx, en.redis, en.prefix))
	require.NoError(t, redistest.DeletePrefix(ctx, en.redis, "rate:"+en.prefix))

	other := en.instance(t, nil)
	for name, e := range map[string]*echo.Echo{"this instance": en.e, "another instance": other} {
		rec := on(e, newGet("/dashboard"), copied)
		require.Equal(t, http.StatusSeeOther, rec.Code, "%s: the signed-out cookie came back after Redis lost its data: %d %s",
			name, rec.Code, rec.Header().Get("Location"))
		require.Equal(t, "/dashboard/login", rec.Header().Get("Location"), name)
		rec = on(e, newGet("/dashboard"), elsewhere)
		require.Equal(t, http.StatusOK, rec.Code, "%s: the shop's other session goes on", name)
	}
}

// TestSignInLimitHoldsAcrossInstances: the sign-in limits are kept in Redis, so two
// instances behind a load balancer allow together what one allows, not twice as much,
// however the attempts are spread and however many arrive at once.
func TestSignInLimitHoldsAcrossInstances(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday,
		perClient: dashboard.Limit{Burst: 3, Every: 10 * time.Minute},
		perShop:   dashboard.Limit{Burst: 2, Every: time.Hour},
	})
	// The other instance is built like the first, with the same limits, Postgres and
	// Redis; nothing in memory is shared.
	d, err := dashboard.New(en.pool, en.shops, en.slots, dashboard.Config{
		Customers: en.customers, Erasure: en.erasure,
		SessionSecret: secret, Secure: en.secure, Now: en.clock.Now, Redis: en.redis, KeyPrefix: en.prefix, Waves: en.waves,
		SignInsPerClient: dashboard.Limit{Burst: 3, Every: 10 * time.Minute},
		SignInsPerShop:   dashboard.Limit{Burst: 2, Every: time.Hour},
	})
	require.NoError(t, err)
	second := *en
	second.e = newEcho(d)
	instances := []*env{en, &second}

	// Each attempt gets its form (and login cookie) from the instance it posts to.
	attempt := func(en *env, ip, key string) int {
		form := en.get("/dashboard/login")
		loginCk := cookieNamed(form, "sr_login")
		req := newPost("/dashboard/login", url.Values{"csrf": {csrfIn(t, form.Body.String())}, "api_key": {key}})
		req.Header.Set("X-Real-IP", ip)
		rec := en.do(req, loginCk)
		if rec.Code == http.StatusTooManyRequests {
			require.NotEmpty(t, rec.Header().Get("Retry-After"))
		}
		return rec.Code
	}
	concurrently := func(n int, ip func(i int) string, key string) map[int]int {
		var mu sync.Mutex
		var wg sync.WaitGroup
		codes := map[int]int{}
		for i := range n {
			wg.Go(func() {
				code := attempt(instances[i%2], ip(i), key)
				mu.Lock()
				codes[code]++
				mu.Unlock()
			})
		}
		wg.Wait()
		return codes
	}

	t.Run("per client", func(t *testing.T) {
		codes := concurrently(40, func(int) string { return "198.51.100.20" }, "shop_wrong")
		require.Equal(t, map[int]int{http.StatusUnauthorized: 3, http.StatusTooManyRequests: 37}, codes,
			"3 tries in all from one address, whichever instance they reach")
	})
	t.Run("per shop", func(t *testing.T) {
		codes := concurrently(20, func(i int) string { return "203.0.113." + strconv.Itoa(10+i) }, en.keyA)
		require.Equal(t, map[int]int{http.StatusSeeOther: 2, http.StatusTooManyRequests: 18}, codes,
			"2 sign-ins in all to one shop, whichever instance they reach")
	})
}

func newGet(path string) *http.Request {
	req, _ := http.NewRequest(http.MethodGet, path, nil)
	return req
}

// countingReader counts what is read of r.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// TestFormsReadAtMostMaxFormBytes: every dashboard form is read up to MaxFormBytes and
// no further, whatever the server in front allows and whatever the body's type: a
// larger one gets a 413 page and changes nothing. (The percent-encoded path is the
// route /dashboard/customers/:id, a form like the others.)
func TestFormsReadAtMostMaxFormBytes(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday})
	ck := en.login(t, en.keyA)
	_, csrf := en.page(t, ck, "/dashboard")
	customer := en.addCustomer(t, en.shopA, "+15555550161", "Ida")
	big := strings.Repeat("x", 2<<20)

	urlencoded := declareForm("2026-11-20", "15:00", "30", "Cut", "30.00", csrf)
	urlencoded.Set("pad", big)
	multipartBody := "--b0undary\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n" + csrf +
		"\r\n--b0undary\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.csv\"\r\n\r\n" + big + "\r\n--b0undary--\r\n"
	for name, tc := range map[string]struct {
		path, ctype, body string
		cookies           []*http.Cookie
	}{
		"declare, urlencoded":     {"/dashboard/openings", "application/x-www-form-urlencoded", urlencoded.Encode(), []*http.Cookie{ck}},
		"customer, multipart":     {"/dashboard/customers/" + customer.ID.String(), "multipart/form-data; boundary=b0undary", multipartBody, []*http.Cookie{ck}},
		"encoded import path":     {"/dashboard/customers/%69mport", "multipart/form-data; boundary=b0undary", multipartBody, []*http.Cookie{ck}},
		"sign-out":                {"/dashboard/logout", "application/x-www-form-urlencoded", url.Values{"csrf": {csrf}, "pad": {big}}.Encode(), []*http.Cookie{ck}},
		"sign-in, before the key": {"/dashboard/login", "application/x-www-form-urlencoded", url.Values{"api_key": {en.keyA}, "pad": {big}}.Encode(), nil},
	} {
		t.Run(name, func(t *testing.T) {
			body := &countingReader{r: strings.NewReader(tc.body)}
			req := httptest.NewRequest(http.MethodPost, tc.path, io.MultiReader(body)) // no length: only reading tells
			req.Header.Set("Content-Type", tc.ctype)
			rec := en.do(req, tc.cookies...)
			require.Equal(t, http.StatusRequestEntityTooLarge, rec.Code, rec.Body.String())
			require.Contains(t, rec.Body.String(), "This form is too large")
			require.LessOrEqual(t, body.n.Load(), int64(dashboard.MaxFormBytes+64<<10), "bytes read of a %d-byte body", len(tc.body))
		})
	}
	require.Zero(t, countOpenings(t, en.pool, en.shopA.ID))
	en.page(t, ck, "/dashboard") // still signed in
}
