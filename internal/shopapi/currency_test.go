package shopapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/payments/stripe"
	"github.com/slotrecovery/slotrecovery/internal/shopapi"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
)

// stripeEnv is a server that knows Stripe's currencies and minimum charges, as
// cmd/server wires it.
func stripeEnv(t *testing.T) *env {
	return newEnvWith(t, func(h *shopapi.Handlers, pool *pgxpool.Pool, queue jobs.Inserter) {
		h.Shops = shops.New(pool, shops.Config{PaymentsEnabled: true,
			ChargesIn: stripe.ChargesIn, MinimumCharge: stripe.MinimumCharge})
		h.Openings = slots.New(pool, queue, nil, nil, slots.Config{MinimumCharge: stripe.MinimumCharge})
	})
}

// TestStripesMinimumHoldsThroughSettings: Stripe's minimum charge cannot be bypassed
// through PATCH /api/shop. A currency Stripe does not charge in is refused (it has no
// minimum: not any three letters are a currency), and a change of currency or of
// payment mode that would leave open openings below the minimum is refused with a 409
// that names them; the owner cancels them (or keeps the old setting) first.
func TestStripesMinimumHoldsThroughSettings(t *testing.T) {
	t.Parallel()
	e := stripeEnv(t)

	// A currency Stripe does not charge in: refused at creation and by PATCH.
	body := validShop("+15555550400")
	body["currency"] = "xyz"
	requireError(t, e.do(http.MethodPost, "/api/shops", adminToken, body), http.StatusUnprocessableEntity, "invalid_currency")
	_, key := e.shop("+15555550401")
	r := e.do(http.MethodPatch, "/api/shop", key, map[string]any{"currency": "xyz"})
	requireError(t, r, http.StatusUnprocessableEntity, "invalid_currency")
	require.Equal(t, "currency", r.errFieldName())
	require.Equal(t, "usd", e.queryString("SELECT currency FROM shops WHERE sms_number = '+15555550401'"))

	// A shop without payments declares a 1-cent opening (no minimum applies to it).
	none := validShop("+15555550402")
	none["payment_mode"] = "none"
	created := e.do(http.MethodPost, "/api/shops", adminToken, none)
	require.Equal(t, http.StatusCreated, created.status, created.raw)
	noneKey := created.body["api_key"].(string)
	cheap := validOpening()
	cheap["price_cents"] = 1
	d := e.do(http.MethodPost, "/api/openings", noneKey, cheap)
	require.Equal(t, http.StatusCreated, d.status, d.raw)
	cheapID := d.body["id"].(string)

	// Switching it to checkout would take payments below Stripe's minimum: refused,
	// naming the opening.
	r = e.do(http.MethodPatch, "/api/shop", noneKey, map[string]any{"payment_mode": "checkout"})
	requireError(t, r, http.StatusUnprocessableEntity, "openings_below_minimum_charge")
	require.Equal(t, "payment_mode", r.errFieldName())
	require.Contains(t, r.errMsg(), cheapID)
	require.Contains(t, r.errMsg(), "50")
	require.Equal(t, "none", e.queryString("SELECT payment_mode FROM shops WHERE sms_number = '+15555550402'"))

	// Once it is cancelled, the switch goes through.
	c := e.do(http.MethodPost, "/api/openings/"+cheapID+"/cancel", noneKey, nil)
	require.Equal(t, http.StatusOK, c.status, c.raw)
	r = e.do(http.MethodPatch, "/api/shop", noneKey, map[string]any{"payment_mode": "checkout"})
	require.Equal(t, http.StatusOK, r.status, r.raw)

	// A checkout shop's 0.60 USD opening: fine in pounds (minimum 0.30), refused in
	// forints (minimum 175.00).
	sixty := validOpening()
	sixty["price_cents"] = 60
	d = e.do(http.MethodPost, "/api/openings", key, sixty)
	require.Equal(t, http.StatusCreated, d.status, d.raw)
	sixtyID := d.body["id"].(string)
	r = e.do(http.MethodPatch, "/api/shop", key, map[string]any{"currency": "gbp"})
	require.Equal(t, http.StatusOK, r.status, r.raw)
	r = e.do(http.MethodPatch, "/api/shop", key, map[string]any{"currency": "huf"})
	requireError(t, r, http.StatusUnprocessableEntity, "openings_below_minimum_charge")
	require.Equal(t, "currency", r.errFieldName())
	require.Contains(t, r.errMsg(), sixtyID)
	require.Contains(t, r.errMsg(), "17500")
	require.Equal(t, "gbp", e.queryString("SELECT currency FROM shops WHERE sms_number = '+15555550401'"))

	// Without payments, the same change is the owner's to make: nothing is charged.
	r = e.do(http.MethodPatch, "/api/shop", key, map[string]any{"currency": "huf", "payment_mode": "none"})
	require.Equal(t, http.StatusOK, r.status, r.raw)
	// And back to checkout in forints is refused again while the opening is open.
	r = e.do(http.MethodPatch, "/api/shop", key, map[string]any{"payment_mode": "checkout"})
	requireError(t, r, http.StatusUnprocessableEntity, "openings_below_minimum_charge")
}

// TestTheMinimumCheckNamesAFewOpenings: many openings below the minimum are named a
// few at a time, with how many more there are, so the answer stays readable.
func TestTheMinimumCheckNamesAFewOpenings(t *testing.T) {
	t.Parallel()
	e := stripeEnv(t)
	none := validShop("+15555550410")
	none["payment_mode"] = "none"
	created := e.do(http.MethodPost, "/api/shops", adminToken, none)
	require.Equal(t, http.StatusCreated, created.status, created.raw)
	key := created.body["api_key"].(string)
	for i := range 12 {
		o := validOpening()
		o["price_cents"] = 10
		o["starts_at"] = time.Now().Add(48*time.Hour + time.Duration(i)*time.Hour).UTC().Truncate(time.Second).Format(time.RFC3339)
		require.Equal(t, http.StatusCreated, e.do(http.MethodPost, "/api/openings", key, o).status)
	}
	r := e.do(http.MethodPatch, "/api/shop", key, map[string]any{"payment_mode": "checkout"})
	requireError(t, r, http.StatusUnprocessableEntity, "openings_below_minimum_charge")
	require.Contains(t, r.errMsg(), "and 7 more", r.raw)
	require.Equal(t, 5, strings.Count(r.errMsg(), "0.10 USD"), r.raw)
	var n int
	require.NoError(t, e.pool.QueryRow(context.Background(), "SELECT count(*) FROM shops WHERE payment_mode = 'none'").Scan(&n))
	require.Equal(t, 1, n)
}
