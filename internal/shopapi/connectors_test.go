package shopapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestConnectorsLifecycle: a cal.com connector shows its webhook URL and its secret once,
// keeps the secret sealed, is listed and read without it, is another shop's 404, and is
// gone after DELETE.
func TestConnectorsLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, key := e.shop("+15555550100")
	_, other := e.shop("+15555550101")

	created := e.do(http.MethodPost, "/api/connectors", key, map[string]any{"kind": "calcom", "description": "Front desk cal.com"})
	require.Equal(t, http.StatusCreated, created.status, created.raw)
	id := created.body["id"].(string)
	secret, _ := created.body["secret"].(string)
	require.GreaterOrEqual(t, len(secret), 40, "a cal.com connector's secret is shown at creation")
	require.Equal(t, publicURL+"/webhooks/calcom/"+id, created.body["webhook_url"])
	require.Equal(t, "calcom", created.body["kind"])
	require.Equal(t, "Front desk cal.com", created.body["description"])
	require.Equal(t, true, created.body["signature_key_set"])
	require.Nil(t, created.body["last_delivery"])
	require.Equal(t, "no-store", created.header.Get("Cache-Control"))
	require.Equal(t, "/api/connectors/"+id, created.header.Get("Location"))

	var stored string
	require.NoError(t, e.pool.QueryRow(context.Background(), "SELECT secret FROM connectors WHERE id = $1", id).Scan(&stored))
	require.True(t, strings.HasPrefix(stored, "sealed1:"), "kept sealed")
	require.NotContains(t, stored, secret)

	got := e.do(http.MethodGet, "/api/connectors/"+id, key, nil)
	require.Equal(t, http.StatusOK, got.status, got.raw)
	require.NotContains(t, got.body, "secret", "shown once")
	require.NotContains(t, got.raw, secret)
	require.Equal(t, created.body["webhook_url"], got.body["webhook_url"])

	list := e.do(http.MethodGet, "/api/connectors", key, nil)
	require.Equal(t, http.StatusOK, list.status, list.raw)
	require.Len(t, list.body["connectors"], 1)
	require.NotContains(t, list.raw, secret)

	for _, r := range []resp{
		e.do(http.MethodGet, "/api/connectors/"+id, other, nil),
		e.do(http.MethodPatch, "/api/connectors/"+id, other, map[string]any{"description": "mine"}),
		e.do(http.MethodDelete, "/api/connectors/"+id, other, nil),
		e.do(http.MethodGet, "/api/connectors/not-a-uuid", key, nil),
	} {
		require.Equal(t, http.StatusNotFound, r.status, r.raw)
		require.Equal(t, "connector_not_found", r.errCode())
	}
	otherList := e.do(http.MethodGet, "/api/connectors", other, nil)
	require.Equal(t, []any{}, otherList.body["connectors"])

	del := e.do(http.MethodDelete, "/api/connectors/"+id, key, nil)
	require.Equal(t, http.StatusNoContent, del.status, del.raw)
	require.Equal(t, http.StatusNotFound, e.do(http.MethodGet, "/api/connectors/"+id, key, nil).status)
	require.Equal(t, http.StatusNotFound, e.do(http.MethodDelete, "/api/connectors/"+id, key, nil).status)
}

// TestSquareConnectorKeyLater: Square makes the signature key once the subscription
// names our URL, so the connector is made first and its key given after; only Square's
// connectors take one.
func TestSquareConnectorKeyLater(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, key := e.shop("+15555550100")

	sq := e.do(http.MethodPost, "/api/connectors", key, map[string]any{"kind": "square"})
	require.Equal(t, http.StatusCreated, sq.status, sq.raw)
	id := sq.body["id"].(string)
	require.NotContains(t, sq.body, "secret", "Square's key is the owner's, not ours to show")
	require.Equal(t, false, sq.body["signature_key_set"])
	require.Equal(t, publicURL+"/webhooks/square/"+id, sq.body["webhook_url"])

	set := e.do(http.MethodPatch, "/api/connectors/"+id, key, map[string]any{"signature_key": "sq0wbs-Abc123_xyz"})
	require.Equal(t, http.StatusOK, set.status, set.raw)
	require.Equal(t, true, set.body["signature_key_set"])
	require.NotContains(t, set.raw, "sq0wbs-Abc123_xyz")

	withKey := e.do(http.MethodPost, "/api/connectors", key, map[string]any{"kind": "square", "signature_key": "k-1"})
	require.Equal(t, http.StatusCreated, withKey.status, withKey.raw)
	require.Equal(t, true, withKey.body["signature_key_set"])

	cal := e.do(http.MethodPost, "/api/connectors", key, map[string]any{"kind": "calcom"})
	require.Equal(t, http.StatusCreated, cal.status, cal.raw)
	r := e.do(http.MethodPatch, "/api/connectors/"+cal.body["id"].(string), key, map[string]any{"signature_key": "x"})
	require.Equal(t, http.StatusUnprocessableEntity, r.status, r.raw)
	require.Equal(t, "signature_key", r.errFieldName())

	desc := e.do(http.MethodPatch, "/api/connectors/"+id, key, map[string]any{"description": "Square, main street"})
	require.Equal(t, http.StatusOK, desc.status, desc.raw)
	require.Equal(t, "Square, main street", desc.body["description"])
	require.Equal(t, true, desc.body["signature_key_set"])
}

// TestConnectorBadInput: every malformed creation is a 4xx naming what is wrong.
func TestConnectorBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, key := e.shop("+15555550100")
	cases := []struct {
		name   string
		body   any
		status int
		field  string
	}{
		{"no kind", map[string]any{}, http.StatusUnprocessableEntity, "kind"},
		{"unknown kind", map[string]any{"kind": "acuity"}, http.StatusUnprocessableEntity, "kind"},
		{"api is no connector", map[string]any{"kind": "api"}, http.StatusUnprocessableEntity, "kind"},
		{"kind not a string", map[string]any{"kind": 7}, http.StatusBadRequest, "kind"},
		{"calcom with a key", map[string]any{"kind": "calcom", "signature_key": "k"}, http.StatusUnprocessableEntity, "kind"},
		{"square with a url", map[string]any{"kind": "square", "url": "https://x.test/a.ics"}, http.StatusUnprocessableEntity, "url"},
		{"square key with spaces", map[string]any{"kind": "square", "signature_key": "a b"}, http.StatusUnprocessableEntity, "signature_key"},
		{"ics without url", map[string]any{"kind": "ics"}, http.StatusUnprocessableEntity, "url"},
		{"ics ftp", map[string]any{"kind": "ics", "url": "ftp://x.test/a.ics"}, http.StatusUnprocessableEntity, "url"},
		{"ics over http", map[string]any{"kind": "ics", "url": "http://x.test/a.ics"}, http.StatusUnprocessableEntity, "url"},
		{"ics with password", map[string]any{"kind": "ics", "url": "https://u:p@x.test/a.ics"}, http.StatusUnprocessableEntity, "url"},
		{"long description", map[string]any{"kind": "calcom", "description": strings.Repeat("d", 201)}, http.StatusUnprocessableEntity, "description"},
		{"not json", "{", http.StatusBadRequest, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.sub(t).do(http.MethodPost, "/api/connectors", key, c.body)
			require.Equal(t, c.status, r.status, r.raw)
			if c.field != "" {
				require.Equal(t, c.field, r.errFieldName(), r.raw)
			}
		})
	}
	ics := e.do(http.MethodPost, "/api/connectors", key, map[string]any{"kind": "ics",
		"url": "https://calendar.google.com/calendar/ical/x%40group.calendar.google.com/private-abc/basic.ics"})
	require.Equal(t, http.StatusCreated, ics.status, ics.raw)
	require.Nil(t, ics.body["webhook_url"], "a feed is polled")
	require.NotContains(t, ics.raw, "private-abc", "the feed's address is its credential: never shown")

	for range 9 {
		r := e.do(http.MethodPost, "/api/connectors", key, map[string]any{"kind": "calcom"})
		require.Equal(t, http.StatusCreated, r.status, r.raw)
	}
	r := e.do(http.MethodPost, "/api/connectors", key, map[string]any{"kind": "calcom"})
	require.Equal(t, http.StatusConflict, r.status, r.raw)
	require.Equal(t, "too_many_connectors", r.errCode())
}

// TestConnectorAPIKey: a cal.com connector takes the vendor's API key (kept sealed,
// never shown: has_api_key says it is held) and gives it up; a key that is not cal.com's,
// an ics connector and another shop's connector are refused.
func TestConnectorAPIKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, key := e.shop("+15555550100")
	_, other := e.shop("+15555550101")
	created := e.do(http.MethodPost, "/api/connectors", key, map[string]any{"kind": "calcom"})
	require.Equal(t, http.StatusCreated, created.status, created.raw)
	require.Equal(t, false, created.body["has_api_key"])
	path := "/api/connectors/" + created.body["id"].(string) + "/api_key"

	requireError(t, e.do(http.MethodPut, path, key, map[string]any{"api_key": "sk_live_not_calcom"}), http.StatusUnprocessableEntity, "invalid_api_key")
	const calKey = "cal_live_0123456789abcdef0123456789abcdef"
	r := e.do(http.MethodPut, path, key, map[string]any{"api_key": calKey})
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Equal(t, true, r.body["has_api_key"])
	require.NotContains(t, r.raw, calKey, "never shown")
	var stored string
	require.NoError(t, e.pool.QueryRow(context.Background(), "SELECT api_key FROM connectors WHERE id = $1", created.body["id"]).Scan(&stored))
	require.True(t, strings.HasPrefix(stored, "sealed1:"), "kept sealed")
	require.NotContains(t, stored, calKey)
	got := e.do(http.MethodGet, "/api/connectors/"+created.body["id"].(string), key, nil)
	require.Equal(t, true, got.body["has_api_key"])
	require.NotContains(t, got.raw, calKey)

	require.Equal(t, http.StatusNotFound, e.do(http.MethodPut, path, other, map[string]any{"api_key": calKey}).status, "another shop's")
	require.Equal(t, http.StatusNotFound, e.do(http.MethodDelete, path, other, nil).status)

	r = e.do(http.MethodDelete, path, key, nil)
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Equal(t, false, r.body["has_api_key"])

	feed := e.do(http.MethodPost, "/api/connectors", key, map[string]any{"kind": "ics", "url": "https://calendar.example/feed.ics"})
	require.Equal(t, http.StatusCreated, feed.status, feed.raw)
	r = e.do(http.MethodPut, "/api/connectors/"+feed.body["id"].(string)+"/api_key", key, map[string]any{"api_key": calKey})
	require.Equal(t, http.StatusUnprocessableEntity, r.status, r.raw)
	require.Equal(t, "api_key", r.errFieldName())
}
