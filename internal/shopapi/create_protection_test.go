package shopapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/shopapi"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// newMinChargeEnv is newEnv on a server with STRIPE_CONNECT=on whose provider's smallest
// charge is 50 in every currency.
func newMinChargeEnv(t *testing.T) *env {
	t.Helper()
	return newEnvWith(t, func(h *shopapi.Handlers, pool *pgxpool.Pool, _ jobs.Inserter) {
		h.Shops = shops.New(pool, shops.Config{PaymentsEnabled: true, StripeConnect: true,
			MinimumCharge: func(string) int64 { return 50 }})
	})
}

// withFields is a valid new shop with the fields kv set on it.
func withFields(sms string, kv ...any) map[string]any {
	b := validShop(sms)
	for i := 0; i+1 < len(kv); i += 2 {
		b[kv[i].(string)] = kv[i+1]
	}
	return b
}

// TestCreateShopWithProtection: POST /api/shops takes the no-show protection's fields
// and checks them as PATCH /api/shop does: a deposit shop is created with its deposit,
// kept card, policy (version 1) and fees, as GET /api/shop then shows them; a deposit
// shop without a deposit, a fixed deposit below the smallest charge, both deposits, a
// null keep_card and bad bounds are 422s naming their field, and create nothing.
func TestCreateShopWithProtection(t *testing.T) {
	t.Parallel()
	e := newMinChargeEnv(t)
	r := e.do(http.MethodPost, "/api/shops", adminToken, withFields("+15555550100", "payment_mode", "deposit",
		"deposit_cents", 1500, "keep_card", true, "cancellation_policy", "Free to cancel until 24 hours before.",
		"late_cancel_hours", 48, "no_show_fee_cents", 2000, "late_cancel_fee_cents", 1000))
	require.Equal(t, http.StatusCreated, r.status, r.raw)
	require.Equal(t, "deposit", r.body["payment_mode"])
	require.Equal(t, 1500.0, r.body["deposit_cents"])
	require.Nil(t, r.body["deposit_percent"])
	require.Equal(t, true, r.body["keep_card"])
	require.Equal(t, "Free to cancel until 24 hours before.", r.body["cancellation_policy"])
	require.Equal(t, 48.0, r.body["late_cancel_hours"])
	require.Equal(t, 2000.0, r.body["no_show_fee_cents"])
	require.Equal(t, 1000.0, r.body["late_cancel_fee_cents"])
	require.Equal(t, 1.0, r.body["policy_version"], "a policy given at creation is its first version")
	got := e.do(http.MethodGet, "/api/shop", r.body["api_key"].(string), nil)
	require.Equal(t, http.StatusOK, got.status, got.raw)
	for _, k := range []string{"payment_mode", "deposit_cents", "deposit_percent", "keep_card", "cancellation_policy",
		"late_cancel_hours", "no_show_fee_cents", "late_cancel_fee_cents", "policy_version"} {
		require.Equal(t, r.body[k], got.body[k], k)
	}

	r = e.do(http.MethodPost, "/api/shops", adminToken, withFields("+15555550101", "payment_mode", "deposit", "deposit_percent", 25))
	require.Equal(t, http.StatusCreated, r.status, r.raw)
	require.Equal(t, 25.0, r.body["deposit_percent"])
	require.Equal(t, 24.0, r.body["late_cancel_hours"], "the default")
	require.Equal(t, 0.0, r.body["policy_version"], "no policy given: as a shop created without one")

	r = e.do(http.MethodPost, "/api/shops", adminToken, withFields("+15555550102", "payment_mode", "card", "no_show_fee_cents", 2500,
		"cancellation_policy", "A no-show pays $25."))
	require.Equal(t, http.StatusCreated, r.status, r.raw)
	require.Equal(t, "card", r.body["payment_mode"])
	require.Equal(t, 2500.0, r.body["no_show_fee_cents"])

	for _, c := range []struct {
		name  string
		kv    []any
		field string
	}{
		{"deposit without one", []any{"payment_mode", "deposit"}, "deposit_cents"},
		{"deposit below the smallest charge", []any{"payment_mode", "deposit", "deposit_cents", 49}, "deposit_cents"},
		{"both deposits", []any{"payment_mode", "deposit", "deposit_cents", 500, "deposit_percent", 10}, "deposit_cents"},
		{"percent out of range", []any{"payment_mode", "deposit", "deposit_percent", 101}, "deposit_percent"},
		{"null keep_card", []any{"keep_card", nil}, "keep_card"},
		{"long policy", []any{"cancellation_policy", strings.Repeat("é", 501)}, "cancellation_policy"},
		{"hours", []any{"late_cancel_hours", 721}, "late_cancel_hours"},
		{"negative fee", []any{"no_show_fee_cents", -1}, "no_show_fee_cents"},
		{"fee below the smallest charge", []any{"payment_mode", "card", "cancellation_policy", "A no-show pays.", "no_show_fee_cents", 49}, "no_show_fee_cents"},
		{"late fee below the smallest charge", []any{"payment_mode", "card", "cancellation_policy", "Late pays.", "late_cancel_fee_cents", 1}, "late_cancel_fee_cents"},
		{"fee above Stripe's largest charge", []any{"payment_mode", "card", "cancellation_policy", "A no-show pays.", "no_show_fee_cents", 100_000_000}, "no_show_fee_cents"},
	} {
		r := e.do(http.MethodPost, "/api/shops", adminToken, withFields("+15555550109", c.kv...))
		requireError(t, r, http.StatusUnprocessableEntity, "invalid_"+c.field)
		require.Equal(t, c.field, r.errFieldName(), c.name)
	}
	require.Zero(t, e.queryInt("SELECT count(*) FROM shops WHERE sms_number = '+15555550109'"), "nothing created")
	// The smallest charge holds a fixed deposit only: a checkout shop may keep one aside.
	r = e.do(http.MethodPost, "/api/shops", adminToken, withFields("+15555550103", "deposit_cents", 49))
	require.Equal(t, http.StatusCreated, r.status, r.raw)
}

// TestCreateShopProtectionNeedsConnect: without STRIPE_CONNECT a new shop can neither be
// in card mode nor keep cards (a kept card lives on the shop's own Stripe account).
func TestCreateShopProtectionNeedsConnect(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do(http.MethodPost, "/api/shops", adminToken, withFields("+15555550100", "payment_mode", "card"))
	requireError(t, r, http.StatusUnprocessableEntity, "invalid_payment_mode")
	require.Contains(t, r.errMsg(), "STRIPE_CONNECT=on")
	r = e.do(http.MethodPost, "/api/shops", adminToken, withFields("+15555550100", "keep_card", true))
	requireError(t, r, http.StatusUnprocessableEntity, "invalid_keep_card")
	r = e.do(http.MethodPost, "/api/shops", adminToken, withFields("+15555550100", "payment_mode", "deposit", "deposit_percent", 20))
	require.Equal(t, http.StatusCreated, r.status, r.raw)
	require.Equal(t, false, r.body["keep_card"])
}
