package shopapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestShopSlugAndPrivacyURL: the shop object shows its slug, its join page's address
// and its privacy link (null when none); creation and PATCH set them, "" or null
// removes the link, another shop's slug is a 409 slug_taken and a bad value a 422
// naming its field, which changes nothing.
func TestShopSlugAndPrivacyURL(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do(http.MethodPost, "/api/shops", adminToken, validShop("+15555550100"))
	require.Equal(t, http.StatusCreated, r.status, r.raw)
	require.Equal(t, "fade-street-barbers", r.body["slug"], "made from the name")
	require.Equal(t, publicURL+"/join/fade-street-barbers", r.body["join_url"])
	require.Nil(t, r.body["privacy_url"])
	key := r.body["api_key"].(string)

	b := validShop("+15555550101")
	b["slug"], b["privacy_url"] = " Joes-Barbers ", "https://joes.example/privacy"
	r = e.do(http.MethodPost, "/api/shops", adminToken, b)
	require.Equal(t, http.StatusCreated, r.status, r.raw)
	require.Equal(t, "joes-barbers", r.body["slug"])
	require.Equal(t, publicURL+"/join/joes-barbers", r.body["join_url"])
	require.Equal(t, "https://joes.example/privacy", r.body["privacy_url"])
	otherKey := r.body["api_key"].(string)
	got := e.do(http.MethodGet, "/api/shop", otherKey, nil).body
	require.Equal(t, "joes-barbers", got["slug"])
	require.Equal(t, "https://joes.example/privacy", got["privacy_url"], "stored at creation")

	r = e.do(http.MethodPatch, "/api/shop", key, map[string]any{"slug": "fade-st", "privacy_url": "https://fade.example/p"})
	require.Equal(t, http.StatusOK, r.status, r.raw)
	got = e.do(http.MethodGet, "/api/shop", key, nil).body
	require.Equal(t, "fade-st", got["slug"])
	require.Equal(t, publicURL+"/join/fade-st", got["join_url"])
	require.Equal(t, "https://fade.example/p", got["privacy_url"])

	r = e.do(http.MethodPatch, "/api/shop", key, map[string]any{"name": "Renamed"})
	require.Equal(t, "fade-st", r.body["slug"], "left out: kept, not made from the new name")
	require.Equal(t, "https://fade.example/p", r.body["privacy_url"])
	r = e.do(http.MethodPatch, "/api/shop", key, map[string]any{"privacy_url": ""})
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Nil(t, r.body["privacy_url"], `"" removes the link`)
	require.Nil(t, e.do(http.MethodGet, "/api/shop", key, nil).body["privacy_url"])
	e.do(http.MethodPatch, "/api/shop", key, map[string]any{"privacy_url": "https://fade.example/p"})
	r = e.do(http.MethodPatch, "/api/shop", key, map[string]any{"privacy_url": nil})
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Nil(t, r.body["privacy_url"], "null removes the link")

	r = e.do(http.MethodPatch, "/api/shop", key, map[string]any{"slug": "JOES-barbers"})
	requireError(t, r, http.StatusConflict, "slug_taken")
	require.Equal(t, "slug", r.errFieldName())
	b = validShop("+15555550102")
	b["slug"] = "joes-barbers"
	r = e.do(http.MethodPost, "/api/shops", adminToken, b)
	requireError(t, r, http.StatusConflict, "slug_taken")
	require.Equal(t, 2, e.queryInt("SELECT count(*) FROM shops"), "the refused shop was not created")

	for field, bads := range map[string][]any{
		"slug":        {"", "ab", "-fade", "fade-", "fa--de", "fade_st", "fädé", strings.Repeat("a", 41), nil},
		"privacy_url": {"http://fade.example/p", "fade.example/p", "https://", "https://fade.example/" + strings.Repeat("p", 300)},
	} {
		for _, bad := range bads {
			r := e.do(http.MethodPatch, "/api/shop", key, map[string]any{field: bad})
			require.Equal(t, http.StatusUnprocessableEntity, r.status, "%s %q: %s", field, bad, r.raw)
			require.Equal(t, field, r.errFieldName(), r.raw)
			if bad == nil {
				continue // null at creation: the default
			}
			b := validShop("+15555550103")
			b[field] = bad
			r = e.do(http.MethodPost, "/api/shops", adminToken, b)
			require.Equal(t, http.StatusUnprocessableEntity, r.status, "%s %q: %s", field, bad, r.raw)
			require.Equal(t, field, r.errFieldName(), r.raw)
		}
	}
	got = e.do(http.MethodGet, "/api/shop", key, nil).body
	require.Equal(t, "fade-st", got["slug"], "a refused change changes nothing")
	require.Nil(t, got["privacy_url"])
}

// TestShopMoveUpSettings: move_up_days and chain_max are on the shop object (14 and 5
// by default), PATCH sets each within its range and keeps the other, and a value out of
// range, or null, is a 422 naming its field.
func TestShopMoveUpSettings(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, key := e.shop("+15555550100")
	got := e.do(http.MethodGet, "/api/shop", key, nil).body
	require.Equal(t, 14.0, got["move_up_days"])
	require.Equal(t, 5.0, got["chain_max"])

	r := e.do(http.MethodPatch, "/api/shop", key, map[string]any{"move_up_days": 90})
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Equal(t, 90.0, r.body["move_up_days"])
	require.Equal(t, 5.0, r.body["chain_max"], "left out: kept")
	r = e.do(http.MethodPatch, "/api/shop", key, map[string]any{"chain_max": 0, "move_up_days": 0})
	require.Equal(t, http.StatusOK, r.status, r.raw)
	got = e.do(http.MethodGet, "/api/shop", key, nil).body
	require.Equal(t, 0.0, got["move_up_days"])
	require.Equal(t, 0.0, got["chain_max"])
	r = e.do(http.MethodPatch, "/api/shop", key, map[string]any{"chain_max": 20, "move_up_days": 7})
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Equal(t, 7, e.queryInt("SELECT move_up_days FROM shops"), "stored where offers reads it")
	require.Equal(t, 20, e.queryInt("SELECT chain_max FROM shops"))

	for field, bads := range map[string][]any{
		"move_up_days": {-1, 91, nil},
		"chain_max":    {-1, 21, nil},
	} {
		for _, bad := range bads {
			r := e.do(http.MethodPatch, "/api/shop", key, map[string]any{field: bad})
			require.Equal(t, http.StatusUnprocessableEntity, r.status, "%s %v: %s", field, bad, r.raw)
			require.Equal(t, field, r.errFieldName(), r.raw)
		}
	}
	r = e.do(http.MethodPatch, "/api/shop", key, map[string]any{"chain_max": "5"})
	require.Equal(t, http.StatusBadRequest, r.status, r.raw)
	require.Equal(t, "chain_max", r.errFieldName(), r.raw)
	got = e.do(http.MethodGet, "/api/shop", key, nil).body
	require.Equal(t, 7.0, got["move_up_days"], "a refused change changes nothing")
	require.Equal(t, 20.0, got["chain_max"])
}
