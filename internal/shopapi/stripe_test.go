package shopapi_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/payments/stripe"
	"github.com/slotrecovery/slotrecovery/internal/ratelimit"
	"github.com/slotrecovery/slotrecovery/internal/shopapi"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/testkit/stripetest"
)

// newConnectEnv is a server with STRIPE_CONNECT=on, a 2.5% default fee, and Stripe
// (stripe-mock behind a recorder) for the onboarding.
func newConnectEnv(t *testing.T) (*env, *stripetest.Recorder) {
	t.Helper()
	rec := stripetest.NewRecorder(t, stripetest.Mock(t))
	client, err := stripe.New(stripe.Config{SecretKey: "sk_test_shopapi", APIURL: rec.URL})
	require.NoError(t, err)
	e := newEnvWith(t, func(h *shopapi.Handlers, pool *pgxpool.Pool, queue jobs.Inserter) {
		h.Shops = shops.New(pool, shops.Config{PaymentsEnabled: true, StripeConnect: true, PlatformFeeBPS: 250})
		h.Openings = slots.New(pool, queue, nil, nil, slots.Config{})
		h.Ledger = ledger.New(pool, queue, client, ledger.Config{Connect: true, PlatformFeeBPS: 250,
			OnboardingReturnURL: publicURL + "/dashboard/settings", OnboardingRefreshURL: publicURL + "/dashboard/stripe/refresh"})
	})
	return e, rec
}

func stripeOf(t *testing.T, r resp) map[string]any {
	t.Helper()
	s, ok := r.body["stripe"].(map[string]any)
	require.True(t, ok, "the shop shows its Stripe account: %s", r.raw)
	return s
}

// TestShopStripeWithoutConnect: a server without Connect shows an empty Stripe account,
// ready, with no fee, and has nothing to onboard.
func TestShopStripeWithoutConnect(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, key := e.shop("+15555550170")
	st := stripeOf(t, e.do(http.MethodGet, "/api/shop", key, nil))
	require.Equal(t, false, st["connect"])
	require.Nil(t, st["account_id"])
	require.Equal(t, true, st["ready"])
	require.EqualValues(t, 0, st["platform_fee_bps"])
	require.Equal(t, []any{}, st["requirements_due"])
	requireError(t, e.do(http.MethodPost, "/api/shop/stripe/onboarding", key, nil), http.StatusConflict, "stripe_connect_off")
	require.Equal(t, http.StatusCreated, e.do(http.MethodPost, "/api/openings", key, validOpening()).status)
}

// TestStripeOnboardingAPI: on a Connect server a new checkout shop cannot declare a
// checkout opening (409 stripe_account_not_ready, saying what to do); onboarding answers
// a link and creates the account once, however many requests race; GET /api/shop shows
// the account and what Stripe still needs.
func TestStripeOnboardingAPI(t *testing.T) {
	t.Parallel()
	e, rec := newConnectEnv(t)
	_, key := e.shop("+15555550171")

	st := stripeOf(t, e.do(http.MethodGet, "/api/shop", key, nil))
	require.Equal(t, true, st["connect"])
	require.Nil(t, st["account_id"])
	require.Equal(t, false, st["ready"])
	require.EqualValues(t, 250, st["platform_fee_bps"])

	r := e.do(http.MethodPost, "/api/openings", key, validOpening())
	requireError(t, r, http.StatusConflict, "stripe_account_not_ready")
	require.Contains(t, r.errMsg(), "POST /api/shop/stripe/onboarding")
	require.Contains(t, r.errMsg(), "dashboard")
	require.Zero(t, e.queryInt(`SELECT count(*) FROM slot_openings`), "nothing declared")

	const n = 12
	var wg sync.WaitGroup
	answers := make([]resp, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i] = e.sub(t).do(http.MethodPost, "/api/shop/stripe/onboarding", key, nil)
		}()
	}
	wg.Wait()
	for _, a := range answers {
		require.Equal(t, http.StatusOK, a.status, a.raw)
		require.NotEmpty(t, a.body["url"])
		require.NotEmpty(t, a.body["expires_at"])
		require.Equal(t, "no-store", a.header.Get("Cache-Control"))
	}
	require.Equal(t, 1, rec.Count(http.MethodPost, "/v1/accounts"), "one account however many requests race")

	st = stripeOf(t, e.do(http.MethodGet, "/api/shop", key, nil))
	acct, _ := st["account_id"].(string)
	require.True(t, strings.HasPrefix(acct, "acct_"), "%v", st)
	require.Equal(t, false, st["charges_enabled"])
	require.NotEmpty(t, st["requirements_due"])
	require.Equal(t, false, st["ready"])
	r = e.do(http.MethodPost, "/api/openings", key, validOpening())
	requireError(t, r, http.StatusConflict, "stripe_account_not_ready")
	require.Contains(t, r.errMsg(), "finish the Stripe setup")
	require.Contains(t, r.errMsg(), "external_account", "what Stripe still needs")

	requireError(t, e.do(http.MethodPost, "/api/shop/stripe/onboarding", "", nil), http.StatusUnauthorized, "unauthorized")
}

// TestAdminSetsPlatformFee: only the admin token sets a shop's fee (null returns to the
// default); a shop's own key is refused as on every admin route.
func TestAdminSetsPlatformFee(t *testing.T) {
	t.Parallel()
	e, _ := newConnectEnv(t)
	id, key := e.shop("+15555550172")
	otherID, otherKey := e.shop("+15555550173")

	r := e.do(http.MethodPatch, "/api/shops/"+id, adminToken, map[string]any{"platform_fee_bps": 100})
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.EqualValues(t, 100, stripeOf(t, r)["platform_fee_bps"])
	require.Nil(t, r.body["api_key"], "the admin's answer carries no key")
	require.EqualValues(t, 100, stripeOf(t, e.do(http.MethodGet, "/api/shop", key, nil))["platform_fee_bps"])
	require.EqualValues(t, 250, stripeOf(t, e.do(http.MethodGet, "/api/shop", otherKey, nil))["platform_fee_bps"], "other shops keep the default")

	for _, tok := range []string{key, otherKey, "", "not-the-admin-token"} {
		requireError(t, e.do(http.MethodPatch, "/api/shops/"+id, tok, map[string]any{"platform_fee_bps": 0}), http.StatusUnauthorized, "unauthorized")
	}
	require.EqualValues(t, 100, stripeOf(t, e.do(http.MethodGet, "/api/shop", key, nil))["platform_fee_bps"], "unchanged")

	for _, bad := range []any{-1, 5001, 1e12} {
		requireError(t, e.do(http.MethodPatch, "/api/shops/"+id, adminToken, map[string]any{"platform_fee_bps": bad}),
			http.StatusUnprocessableEntity, "invalid_platform_fee_bps")
	}
	requireError(t, e.do(http.MethodPatch, "/api/shops/"+id, adminToken, `{"platform_fee_bps": "2%"}`), http.StatusBadRequest, "bad_json")
	requireError(t, e.do(http.MethodPatch, "/api/shops/8c5a7d0e-0000-4000-8000-000000000000", adminToken, map[string]any{"platform_fee_bps": 1}),
		http.StatusNotFound, "shop_not_found")
	requireError(t, e.do(http.MethodPatch, "/api/shops/not-a-uuid", adminToken, map[string]any{"platform_fee_bps": 1}),
		http.StatusNotFound, "shop_not_found")

	r = e.do(http.MethodPatch, "/api/shops/"+id, adminToken, map[string]any{"platform_fee_bps": nil})
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.EqualValues(t, 250, stripeOf(t, r)["platform_fee_bps"], "null returns to the default")
	r = e.do(http.MethodPatch, "/api/shops/"+otherID, adminToken, map[string]any{})
	require.Equal(t, http.StatusOK, r.status, "an empty patch changes nothing: %s", r.raw)
}

// TestStripeOnboardingLimited: the onboarding draws on the shop's StripeCalls before it
// asks Stripe: past the limit 429 with Retry-After, and while the limit cannot be asked
// 503; neither calls Stripe.
func TestStripeOnboardingLimited(t *testing.T) {
	t.Parallel()
	rec := stripetest.NewRecorder(t, stripetest.Mock(t))
	client, err := stripe.New(stripe.Config{SecretKey: "sk_test_shopapi", APIURL: rec.URL})
	require.NoError(t, err)
	var unavailable atomic.Bool // else past the limit
	unavailable.Store(true)
	e := newEnvWith(t, func(h *shopapi.Handlers, pool *pgxpool.Pool, queue jobs.Inserter) {
		h.Shops = shops.New(pool, shops.Config{PaymentsEnabled: true, StripeConnect: true})
		h.Openings = slots.New(pool, queue, nil, nil, slots.Config{})
		h.Ledger = ledger.New(pool, queue, client, ledger.Config{Connect: true,
			OnboardingReturnURL: publicURL + "/dashboard/settings", OnboardingRefreshURL: publicURL + "/dashboard/stripe/refresh"})
		h.StripeCalls = func(context.Context, uuid.UUID) (ratelimit.Result, error) {
			if unavailable.Load() {
				return ratelimit.Result{}, ratelimit.ErrUnavailable
			}
			return ratelimit.Result{Allowed: false, RetryAfter: 42 * time.Second}, nil
		}
	})
	_, key := e.shop("+15555550171")

	r := e.do(http.MethodPost, "/api/shop/stripe/onboarding", key, nil)
	requireError(t, r, http.StatusServiceUnavailable, "unavailable")
	require.Equal(t, "5", r.header.Get("Retry-After"))

	unavailable.Store(false)
	r = e.do(http.MethodPost, "/api/shop/stripe/onboarding", key, nil)
	requireError(t, r, http.StatusTooManyRequests, "too_many_requests")
	require.Equal(t, "42", r.header.Get("Retry-After"))
	require.Contains(t, r.errMsg(), "retry in 42 seconds")
	require.Zero(t, rec.Count(http.MethodPost, "/v1/accounts"), "Stripe is not asked")
	require.Zero(t, rec.Count(http.MethodPost, "/v1/account_links"))
}
