package shopapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCancelAndRankingSettings: customers_cancel_by_text, ranking and
// skip_after_no_shows are read and changed through the shop's API, each refused on its
// own field when out of range, and a refused change changes nothing.
func TestCancelAndRankingSettings(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do(http.MethodPost, "/api/shops", adminToken, validShop("+15555550100"))
	require.Equal(t, http.StatusCreated, r.status, r.raw)
	key := r.body["api_key"].(string)

	r = e.do(http.MethodPatch, "/api/shop", key, map[string]any{"customers_cancel_by_text": false, "ranking": "Fair", "skip_after_no_shows": 3})
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Equal(t, false, r.body["customers_cancel_by_text"])
	require.Equal(t, "fair", r.body["ranking"], "read in any case, stored as written in the API")
	require.EqualValues(t, 3, r.body["skip_after_no_shows"])

	for _, bad := range []struct {
		field string
		value any
	}{
		{"ranking", "random"}, {"ranking", nil}, {"ranking", ""},
		{"skip_after_no_shows", 0}, {"skip_after_no_shows", 21}, {"skip_after_no_shows", "two"},
		{"customers_cancel_by_text", nil}, {"customers_cancel_by_text", "yes"},
	} {
		r := e.do(http.MethodPatch, "/api/shop", key, map[string]any{bad.field: bad.value, "name": "Not this"})
		require.Contains(t, []int{http.StatusBadRequest, http.StatusUnprocessableEntity}, r.status, "%s=%v: %s", bad.field, bad.value, r.raw)
		require.Equal(t, bad.field, r.errFieldName(), r.raw)
	}
	got := e.do(http.MethodGet, "/api/shop", key, nil).body
	require.Equal(t, "fair", got["ranking"])
	require.EqualValues(t, 3, got["skip_after_no_shows"])
	require.NotEqual(t, "Not this", got["name"])

	r = e.do(http.MethodPatch, "/api/shop", key, map[string]any{"skip_after_no_shows": nil, "ranking": "value"})
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Nil(t, r.body["skip_after_no_shows"], "null: never")
	require.Equal(t, "value", r.body["ranking"])
	require.Equal(t, false, r.body["customers_cancel_by_text"], "left out: kept")
}
