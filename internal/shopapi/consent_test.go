package shopapi_test

import (
	"context"
	"encoding/csv"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/join"
	"github.com/slotrecovery/slotrecovery/internal/ratelimit"
	"github.com/slotrecovery/slotrecovery/internal/shopapi"
	"github.com/slotrecovery/slotrecovery/internal/testkit/redistest"
)

// newJoinEnv is newEnv with the join service, its limits in Redis under the test's
// own prefix.
func newJoinEnv(t *testing.T) *env {
	t.Helper()
	rdb, prefix := redistest.New(t)
	return newEnvWith(t, func(h *shopapi.Handlers, pool *pgxpool.Pool, queue jobs.Inserter) {
		h.Join = join.New(pool, queue, h.Customers, join.Config{
			Limits: join.Limits{Limiter: ratelimit.New(rdb, ratelimit.Config{Prefix: prefix})},
		})
	})
}

// joined has number join shopID's list as the join page does it (join.Service's
// Request, then the number's YES through Confirm) and returns the customer's id.
func (e *env) joined(shopID, key, number, sid string) string {
	e.t.Helper()
	ctx := context.Background()
	shop, err := e.h.Shops.Get(ctx, uuid.MustParse(shopID))
	require.NoError(e.t, err)
	out, err := e.h.Join.Request(ctx, shop, join.Submission{Name: "Ana", Phone: number, Consent: true,
		IP: netip.MustParseAddr("203.0.113.7"), UserAgent: "Mozilla/5.0 (iPhone)"})
	require.NoError(e.t, err)
	require.True(e.t, out.Sent, out.Refused)
	handled, err := e.h.Join.Confirm(ctx, shop, join.Reply{From: number, Body: "YES", MessageSID: sid})
	require.NoError(e.t, err)
	require.True(e.t, handled)
	list := e.do(http.MethodGet, "/api/customers?q="+strings.TrimPrefix(number, "+"), key, nil)
	require.Equal(e.t, http.StatusOK, list.status, list.raw)
	cs := list.body["customers"].([]any)
	require.Len(e.t, cs, 1)
	return cs[0].(map[string]any)["id"].(string)
}

// TestCustomerConsent: a customer who joined from the page has their opt-in on
// record, with its proof (the page's visitor, the words shown, their YES); a customer
// with no record has no events; another shop's customer, or no customer, is a 404.
func TestCustomerConsent(t *testing.T) {
	t.Parallel()
	e := newJoinEnv(t)
	shopID, key := e.shop("+15555550100")
	id := e.joined(shopID, key, "+15555550123", "SM0000000000000000000000000000001")

	r := e.do(http.MethodGet, "/api/customers/"+id+"/consent", key, nil)
	require.Equal(t, http.StatusOK, r.status, r.raw)
	events := r.body["events"].([]any)
	require.Len(t, events, 1)
	ev := events[0].(map[string]any)
	require.Equal(t, id, ev["customer_id"])
	require.Equal(t, "opt_in", ev["kind"])
	require.Equal(t, "page", ev["method"])
	require.Equal(t, "203.0.113.7", ev["ip"])
	require.Equal(t, "Mozilla/5.0 (iPhone)", ev["user_agent"])
	require.Equal(t, false, ev["asserted_by_owner"])
	d := ev["disclosure"].(map[string]any)
	require.Equal(t, join.DisclosureVersion, d["version"])
	require.Contains(t, d["text"], "Fade Street Barbers")
	conf := ev["confirmation"].(map[string]any)
	require.Equal(t, "SM0000000000000000000000000000001", conf["message_sid"])
	require.Equal(t, "YES", conf["body"])

	added := e.do(http.MethodPost, "/api/customers", key, map[string]any{"phone": "+15555550124", "name": "Bo"})
	require.Equal(t, http.StatusCreated, added.status, added.raw)
	r = e.do(http.MethodGet, "/api/customers/"+added.body["id"].(string)+"/consent", key, nil)
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Equal(t, []any{}, r.body["events"], "no record: an empty list, not null")

	_, otherKey := e.shop("+15555550101")
	requireError(t, e.do(http.MethodGet, "/api/customers/"+id+"/consent", otherKey, nil), http.StatusNotFound, "customer_not_found")
	requireError(t, e.do(http.MethodGet, "/api/customers/"+uuid.NewString()+"/consent", key, nil), http.StatusNotFound, "customer_not_found")
	requireError(t, e.do(http.MethodGet, "/api/customers/nope/consent", key, nil), http.StatusNotFound, "customer_not_found")
	requireError(t, e.do(http.MethodGet, "/api/customers/"+id+"/consent", "", nil), http.StatusUnauthorized, "unauthorized")
}

// exportCSV sends GET /api/consent/export?query with key and returns the answer's
// status, header and rows; the answer is checked against the document as env.do's are.
func (e *env) exportCSV(key, query string) (int, http.Header, [][]string) {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.url+shopapi.ConsentExportPath+"?"+query, nil)
	require.NoError(e.t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(e.t, err)
	checkAgainstSpec(e.t, req, res.StatusCode, res.Header, raw)
	require.Equal(e.t, http.StatusOK, res.StatusCode, string(raw))
	rows, err := csv.NewReader(strings.NewReader(string(raw))).ReadAll()
	require.NoError(e.t, err, string(raw))
	return res.StatusCode, res.Header, rows
}

// TestConsentExport: the export is the shop's events as CSV, a header row first, each
// with the customer's number; from and to bound it (to exclusive), another shop's
// customers are not in it, and a bad from or to is a 422 naming it.
func TestConsentExport(t *testing.T) {
	t.Parallel()
	e := newJoinEnv(t)
	shopID, key := e.shop("+15555550100")
	before := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	id := e.joined(shopID, key, "+15555550123", "SM0000000000000000000000000000001")
	otherID, otherKey := e.shop("+15555550101")
	e.joined(otherID, otherKey, "+15555550199", "SM0000000000000000000000000000002")
	after := time.Now().Add(time.Minute).UTC().Format(time.RFC3339)

	_, h, rows := e.exportCSV(key, "")
	require.True(t, strings.HasPrefix(h.Get("Content-Type"), "text/csv"), h.Get("Content-Type"))
	require.Equal(t, `attachment; filename="consent-fade-street-barbers.csv"`, h.Get("Content-Disposition"))
	require.Equal(t, "no-store", h.Get("Cache-Control"))
	require.Len(t, rows, 2, "the header and the shop's one event: %v", rows)
	header := rows[0]
	require.Equal(t, "event_id", header[0])
	row := map[string]string{}
	for i, col := range header {
		row[col] = rows[1][i]
	}
	require.Equal(t, id, row["customer_id"])
	require.Equal(t, "+15555550123", row["phone"])
	require.Equal(t, "Ana", row["name"])
	require.Equal(t, "opt_in", row["kind"])
	require.Equal(t, "page", row["method"])
	require.Equal(t, "203.0.113.7", row["ip"])
	require.Equal(t, "YES", row["confirmation_body"])

	_, _, rows = e.exportCSV(key, "from="+before+"&to="+after)
	require.Len(t, rows, 2, "inside the range")
	_, _, rows = e.exportCSV(key, "from="+after)
	require.Len(t, rows, 1, "after it: the header alone")
	_, _, rows = e.exportCSV(key, "to="+before)
	require.Len(t, rows, 1, "before it: the header alone")
	_, _, rows = e.exportCSV(otherKey, "")
	require.Len(t, rows, 2, "the other shop's one event")
	require.Equal(t, "+15555550199", rows[1][2])

	for _, tt := range []struct{ query, field string }{
		{"from=yesterday", "from"},
		{"from=2026-11-01", "from"},
		{"to=2026-11-01T00:00:00", "to"},
		{"from=" + after + "&to=" + before, "to"},
		{"from=" + after + "&to=" + after, "to"},
	} {
		r := e.do(http.MethodGet, shopapi.ConsentExportPath+"?"+tt.query, key, nil)
		requireError(t, r, http.StatusUnprocessableEntity, "invalid_"+tt.field)
		require.Equal(t, tt.field, r.errFieldName(), tt.query)
	}
	requireError(t, e.do(http.MethodGet, shopapi.ConsentExportPath, "", nil), http.StatusUnauthorized, "unauthorized")
}

// TestJoinCountries: the shop's answer lists the calling codes that may join, its own
// first; PATCH adds others (in either form), a bad code is 422 on the field and changes
// nothing else, and null goes back to the shop's own only.
func TestJoinCountries(t *testing.T) {
	t.Parallel()
	e := newJoinEnv(t)
	r := e.do(http.MethodPost, "/api/shops", adminToken, validShop("+15555550100"))
	require.Equal(t, http.StatusCreated, r.status, r.raw)
	key := r.body["api_key"].(string)
	require.Equal(t, []any{"+1"}, e.do(http.MethodGet, "/api/shop", key, nil).body["join_countries"])

	r = e.do(http.MethodPatch, "/api/shop", key, map[string]any{"join_countries": []string{"44", "+33", "+1"}})
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Equal(t, []any{"+1", "+33", "+44"}, r.body["join_countries"])

	r = e.do(http.MethodPatch, "/api/shop", key, map[string]any{"join_countries": []string{"+44", "france"}, "name": "Not this"})
	require.Equal(t, http.StatusUnprocessableEntity, r.status, r.raw)
	require.Equal(t, "join_countries", r.errFieldName(), r.raw)
	got := e.do(http.MethodGet, "/api/shop", key, nil).body
	require.Equal(t, []any{"+1", "+33", "+44"}, got["join_countries"], "kept")
	require.NotEqual(t, "Not this", got["name"])
	// And the reverse: a refused shop change keeps good countries unsaved.
	r = e.do(http.MethodPatch, "/api/shop", key, map[string]any{"join_countries": []string{"+34"}, "join_keywords": []string{"STOP"}})
	require.Equal(t, http.StatusUnprocessableEntity, r.status, r.raw)
	require.Equal(t, "join_keywords", r.errFieldName(), r.raw)
	require.Equal(t, []any{"+1", "+33", "+44"}, e.do(http.MethodGet, "/api/shop", key, nil).body["join_countries"], "kept")

	r = e.do(http.MethodPatch, "/api/shop", key, map[string]any{"join_countries": nil})
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Equal(t, []any{"+1"}, r.body["join_countries"])
}
