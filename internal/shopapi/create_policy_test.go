package shopapi_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCreateAndPatchGiveOnePolicyAnswer: creation and PATCH /api/shop read the offer
// policy by one rule. Only an absent or null field takes its default; an explicit 0 for
// a field where 0 means nothing (a wave of no one, waves with no interval, a number that
// sends nothing) is refused by both, with the same answer; creation does not store the
// default instead.
func TestCreateAndPatchGiveOnePolicyAnswer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, key := e.shop("+15555550300")
	for i, field := range []string{"wave_size", "wave_interval_seconds", "send_rate_per_second"} {
		t.Run(field, func(t *testing.T) {
			e := e.sub(t)
			body := validShop(fmt.Sprintf("+1555555031%d", i))
			body["offer_policy"].(map[string]any)[field] = 0
			created := e.do(http.MethodPost, "/api/shops", adminToken, body)
			patched := e.do(http.MethodPatch, "/api/shop", key, map[string]any{"offer_policy": map[string]any{field: 0}})

			requireError(t, patched, http.StatusUnprocessableEntity, "invalid_offer_policy_"+field)
			requireError(t, created, http.StatusUnprocessableEntity, "invalid_offer_policy_"+field)
			require.Equal(t, patched.body["error"], created.body["error"], "creation and PATCH answer alike")
			require.Equal(t, 0, e.queryInt("SELECT count(*) FROM shops WHERE sms_number = $1", body["sms_number"]),
				"nothing was created")
		})
	}

	// Absent and null still take the defaults at creation.
	for i, policy := range []map[string]any{
		{},
		{"wave_size": nil, "wave_interval_seconds": nil, "send_rate_per_second": nil},
	} {
		body := validShop(fmt.Sprintf("+1555555032%d", i))
		body["offer_policy"] = policy
		r := e.do(http.MethodPost, "/api/shops", adminToken, body)
		require.Equal(t, http.StatusCreated, r.status, r.raw)
		p := r.body["offer_policy"].(map[string]any)
		require.Equal(t, 10.0, p["wave_size"], r.raw)
		require.Equal(t, 600.0, p["wave_interval_seconds"], r.raw)
		require.Equal(t, 1.0, p["send_rate_per_second"], r.raw)
	}
}
