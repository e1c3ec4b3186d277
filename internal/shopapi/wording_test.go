package shopapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWordingSettings: formality, gsm7 and help_contact are on the shop object, set at
// creation and by PATCH (null puts formality back to the language's default and removes
// the help contact), and a bad value is a 422 naming its field.
func TestWordingSettings(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do(http.MethodPost, "/api/shops", adminToken, validShop("+15555550100"))
	require.Equal(t, http.StatusCreated, r.status, r.raw)
	require.Nil(t, r.body["formality"], "the language's default")
	require.Equal(t, "prefer", r.body["gsm7"])
	require.Nil(t, r.body["help_contact"])
	key := r.body["api_key"].(string)

	r = e.do(http.MethodPatch, "/api/shop", key, map[string]any{"formality": "FORMAL", "gsm7": "exact", "help_contact": " ana@salon.example "})
	require.Equal(t, http.StatusOK, r.status, r.raw)
	got := e.do(http.MethodGet, "/api/shop", key, nil).body
	require.Equal(t, "formal", got["formality"])
	require.Equal(t, "exact", got["gsm7"])
	require.Equal(t, "ana@salon.example", got["help_contact"])

	r = e.do(http.MethodPatch, "/api/shop", key, map[string]any{"name": "Renamed"})
	require.Equal(t, "formal", r.body["formality"], "left out: kept")
	r = e.do(http.MethodPatch, "/api/shop", key, map[string]any{"formality": nil, "help_contact": nil})
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Nil(t, r.body["formality"])
	require.Nil(t, r.body["help_contact"])
	require.Equal(t, "exact", r.body["gsm7"])

	for field, bads := range map[string][]any{
		"formality":    {"", "polite", "default"},
		"gsm7":         {"", "loose", nil},
		"help_contact": {"", "  ", strings.Repeat("x", 101), "line\nbreak"},
	} {
		for _, bad := range bads {
			r := e.do(http.MethodPatch, "/api/shop", key, map[string]any{field: bad})
			require.Equal(t, http.StatusUnprocessableEntity, r.status, "%s %q: %s", field, bad, r.raw)
			require.Equal(t, field, r.errFieldName(), r.raw)
			if bad == nil {
				continue
			}
			b := validShop("+15555550101")
			b[field] = bad
			r = e.do(http.MethodPost, "/api/shops", adminToken, b)
			require.Equal(t, http.StatusUnprocessableEntity, r.status, "%s %q: %s", field, bad, r.raw)
			require.Equal(t, field, r.errFieldName(), r.raw)
		}
	}
	b := validShop("+15555550102")
	b["formality"], b["gsm7"], b["help_contact"] = "informal", "exact", "+15555550142"
	r = e.do(http.MethodPost, "/api/shops", adminToken, b)
	require.Equal(t, http.StatusCreated, r.status, r.raw)
	require.Equal(t, "informal", r.body["formality"])
	require.Equal(t, "exact", r.body["gsm7"])
	require.Equal(t, "+15555550142", r.body["help_contact"])
}
