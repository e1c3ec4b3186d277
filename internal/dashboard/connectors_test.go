package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	apptbook "github.com/slotrecovery/slotrecovery/internal/book"
	"github.com/slotrecovery/slotrecovery/internal/connectors"
	"github.com/slotrecovery/slotrecovery/internal/dashboard"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/webhooks"
)

var (
	connectorSecretRE = regexp.MustCompile(`<code id="new-secret">([A-Za-z0-9_-]+)</code>`)
	connectorURLRE    = regexp.MustCompile(`<code id="new-connector-url">(https://slots\.example/webhooks/(?:calcom|square)/([0-9a-f-]{36}))</code>`)
)

// connectorIDs are the ids of the connector cards on the page, in order.
func connectorIDs(body string) []string {
	var ids []string
	for _, m := range regexp.MustCompile(`id="connector-([0-9a-f-]{36})"`).FindAllStringSubmatch(body, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// TestIntegrationsConnectors: the owner connects cal.com (its URL and secret shown once,
// on a page nobody caches), sees a delivery refused for its signature as "401 bad
// signature 3 min ago", connects Square without a key and gives it later, and removes a
// connection with the confirmation box; bad input comes back with the API's words next
// to the field; another shop reaches none of it.
func TestIntegrationsConnectors(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)
	en := newEnv(t, envOpts{now: start, hooks: true})
	ctx := context.Background()
	ck := en.login(t, en.keyA)
	body, csrf := en.page(t, ck, dashboard.IntegrationsPath)
	require.Contains(t, body, `<h2 id="connectors-h">Booking systems</h2>`)
	require.Contains(t, body, "No booking systems connected yet.")
	require.Contains(t, body, `<label for="cn-kind">`)

	// cal.com: the secret is made for it and shown on this answer only, with the URL.
	rec := en.post(dashboard.IntegrationsPath+"/connectors", url.Values{"csrf": {csrf}, "kind": {"calcom"},
		"description": {"<b>Front desk</b>"}}, ck)
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	require.Equal(t, "no-store", rec.Header().Get("Cache-Control"))
	m := connectorSecretRE.FindStringSubmatch(rec.Body.String())
	require.NotNil(t, m, rec.Body.String())
	secret := m[1]
	u := connectorURLRE.FindStringSubmatch(rec.Body.String())
	require.NotNil(t, u, rec.Body.String())
	calURL, calID := u[1], u[2]
	body, _ = en.page(t, ck, dashboard.IntegrationsPath)
	require.NotContains(t, body, secret, "the secret is shown once")
	require.Equal(t, []string{calID}, connectorIDs(body))
	require.Contains(t, body, calURL)
	require.Contains(t, body, "cal.com: &lt;b&gt;Front desk&lt;/b&gt;", "the name is escaped")
	require.NotContains(t, body, "<b>Front desk</b>")
	require.Contains(t, body, "Last delivery: none yet.")

	// A delivery signed with another secret, through the real webhook handler: refused
	// and recorded; the card says so, and how long ago.
	wh := echo.New()
	wh.POST(webhooks.CalcomPath, (&webhooks.Connectors{Book: en.book, PublicURL: "https://slots.example"}).Calcom)
	req := httptest.NewRequest(http.MethodPost, "/webhooks/calcom/"+calID, strings.NewReader(`{"triggerEvent":"BOOKING_CREATED"}`))
	req.Header.Set("X-Cal-Signature-256", strings.Repeat("ab", 32))
	wh.ServeHTTP(httptest.NewRecorder(), req)
	c, err := en.book.Connector(ctx, en.shopA.ID, uuid.MustParse(calID))
	require.NoError(t, err)
	require.NotNil(t, c.LastDelivery)
	require.Equal(t, apptbook.ResultBadSignature, c.LastDelivery.Result)
	en.clock.Set(start.Add(3*time.Minute + 10*time.Second))
	body, _ = en.page(t, ck, dashboard.IntegrationsPath)
	require.Regexp(t, `id="connector-last-`+calID+`">Last delivery: <span class="badge badge-bad">401 bad signature 3 min ago</span>`, body)

	// Bad input: the API's words, next to the field; a typed key is not shown back.
	rec = en.post(dashboard.IntegrationsPath+"/connectors", url.Values{"csrf": {csrf}, "kind": {"ics"},
		"url": {"http://calendar.example/basic.ics"}}, ck)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code, rec.Body.String())
	_, apiErr := en.book.CreateConnector(ctx, en.shopB.ID, apptbook.NewConnector{Kind: connectors.SourceICS, URL: "http://calendar.example/basic.ics"})
	p, ok := problem.As(apiErr)
	require.True(t, ok, "the API refuses it too")
	require.Contains(t, fieldError(rec.Body.String(), "cn-url-error"), p.Message[1:], "in the API's words")
	require.Contains(t, rec.Body.String(), `value="http://calendar.example/basic.ics"`)
	rec = en.post(dashboard.IntegrationsPath+"/connectors", url.Values{"csrf": {csrf}, "kind": {"square"},
		"signature_key": {"has spaces in it"}}, ck)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	require.Contains(t, fieldError(rec.Body.String(), "cn-key-error"), "without spaces")
	require.NotContains(t, rec.Body.String(), "has spaces in it")
	rec = en.post(dashboard.IntegrationsPath+"/connectors", url.Values{"csrf": {csrf}, "kind": {"zoho"}}, ck)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	require.Contains(t, fieldError(rec.Body.String(), "cn-kind-error"), "ind must be one of calcom, square, ics")

	// A feed, then a second one: refused with the API's wording.
	rec = en.post(dashboard.IntegrationsPath+"/connectors", url.Values{"csrf": {csrf}, "kind": {"ics"},
		"url": {"https://calendar.example/private-abc/basic.ics"}}, ck)
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	require.Nil(t, connectorURLRE.FindStringSubmatch(rec.Body.String()), "a feed is polled: no webhook URL")
	require.NotContains(t, rec.Body.String(), `id="new-secret"`)
	rec = en.post(dashboard.IntegrationsPath+"/connectors", url.Values{"csrf": {csrf}, "kind": {"ics"},
		"url": {"https://calendar.example/other/basic.ics"}}, ck)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	require.Contains(t, rec.Body.String(), "The shop has a calendar feed already; delete it first")

	// Square without its key: the card asks for it; a bad key stays on the card; a good
	// one is saved.
	rec = en.post(dashboard.IntegrationsPath+"/connectors", url.Values{"csrf": {csrf}, "kind": {"square"}}, ck)
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	u = connectorURLRE.FindStringSubmatch(rec.Body.String())
	require.NotNil(t, u)
	sqID := u[2]
	require.Contains(t, rec.Body.String(), "paste the signature key Square shows")
	body, _ = en.page(t, ck, dashboard.IntegrationsPath)
	require.Contains(t, body, "No signature key yet")
	requireAccessible(t, body)
	rec = en.post(dashboard.IntegrationsPath+"/connectors/"+sqID+"/key", url.Values{"csrf": {csrf}, "signature_key": {"a b"}}, ck)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	require.Contains(t, rec.Body.String(), `id="connector-error-`+sqID+`"`)
	rec = en.post(dashboard.IntegrationsPath+"/connectors/"+sqID+"/key", url.Values{"csrf": {csrf}, "signature_key": {"sq-key-123"}}, ck)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	c, err = en.book.Connector(ctx, en.shopA.ID, uuid.MustParse(sqID))
	require.NoError(t, err)
	require.True(t, c.HasSecret)
	body, _ = en.page(t, ck, dashboard.IntegrationsPath+"?notice=connector_key")
	require.NotContains(t, body, "No signature key yet")
	require.NotContains(t, body, "sq-key-123")

	// The cal.com connector takes cal.com's API key (never shown again), then gives it up.
	calKey := "cal_live_0123456789abcdef0123456789abcdef"
	rec = en.post(dashboard.IntegrationsPath+"/connectors/"+calID+"/api_key", url.Values{"csrf": {csrf}, "api_key": {"not-a-cal-key"}}, ck)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), `id="connector-error-`+calID+`"`)
	rec = en.post(dashboard.IntegrationsPath+"/connectors/"+calID+"/api_key", url.Values{"csrf": {csrf}, "api_key": {" " + calKey + " "}}, ck)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	require.Equal(t, dashboard.IntegrationsPath+"?notice=api_key_set#connector-"+calID, rec.Header().Get("Location"))
	c, err = en.book.Connector(ctx, en.shopA.ID, uuid.MustParse(calID))
	require.NoError(t, err)
	require.True(t, c.HasAPIKey)
	body, _ = en.page(t, ck, dashboard.IntegrationsPath+"?notice=api_key_set")
	require.Contains(t, body, `id="api-key-held-`+calID+`"`)
	require.NotContains(t, body, calKey)
	require.Contains(t, body, "move-ups are now written into your booking system")
	rec = en.post(dashboard.IntegrationsPath+"/connectors/"+calID+"/api_key", url.Values{"csrf": {csrf}, "remove": {"yes"}}, ck)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	c, err = en.book.Connector(ctx, en.shopA.ID, uuid.MustParse(calID))
	require.NoError(t, err)
	require.False(t, c.HasAPIKey)

	// Another shop's owner reaches none of it; no CSRF token, no change.
	ckB := en.login(t, en.keyB)
	_, csrfB := en.page(t, ckB, dashboard.IntegrationsPath)
	rec = en.post(dashboard.IntegrationsPath+"/connectors/"+calID+"/delete", url.Values{"csrf": {csrfB}, "confirm": {"yes"}}, ckB)
	require.Equal(t, http.StatusNotFound, rec.Code)
	rec = en.post(dashboard.IntegrationsPath+"/connectors/"+sqID+"/key", url.Values{"csrf": {csrfB}, "signature_key": {"x"}}, ckB)
	require.Equal(t, http.StatusNotFound, rec.Code)
	rec = en.post(dashboard.IntegrationsPath+"/connectors/"+calID+"/api_key", url.Values{"csrf": {csrfB}, "api_key": {calKey}}, ckB)
	require.Equal(t, http.StatusNotFound, rec.Code)
	rec = en.post(dashboard.IntegrationsPath+"/connectors/"+calID+"/delete", url.Values{"confirm": {"yes"}}, ck)
	require.Equal(t, http.StatusForbidden, rec.Code)

	// Removing needs the box.
	rec = en.post(dashboard.IntegrationsPath+"/connectors/"+calID+"/delete", url.Values{"csrf": {csrf}}, ck)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	require.Contains(t, rec.Body.String(), "Tick the box to confirm that the connection should be removed.")
	rec = en.post(dashboard.IntegrationsPath+"/connectors/"+calID+"/delete", url.Values{"csrf": {csrf}, "confirm": {"yes"}}, ck)
	require.Equal(t, http.StatusSeeOther, rec.Code)
	_, err = en.book.Connector(ctx, en.shopA.ID, uuid.MustParse(calID))
	require.ErrorIs(t, err, apptbook.ErrConnectorNotFound)
	body, _ = en.page(t, ck, dashboard.IntegrationsPath+"?notice=connector_deleted")
	require.NotContains(t, body, calID)
	require.Contains(t, body, "The connection was removed")
	rec = en.post(dashboard.IntegrationsPath+"/connectors/"+calID+"/delete", url.Values{"csrf": {csrf}, "confirm": {"yes"}}, ck)
	require.Equal(t, http.StatusNotFound, rec.Code, "removed already")
}

// TestIntegrationsConnectorsLimit: at the API's limit the form is gone, and a post that
// gets past it is refused with the API's words.
func TestIntegrationsConnectorsLimit(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{})
	ctx := context.Background()
	ck := en.login(t, en.keyA)
	_, csrf := en.page(t, ck, dashboard.IntegrationsPath)
	for i := range apptbook.MaxConnectors {
		_, err := en.book.CreateConnector(ctx, en.shopA.ID, apptbook.NewConnector{Kind: connectors.SourceCalcom,
			Description: fmt.Sprintf("chair %d", i)})
		require.NoError(t, err)
	}
	body, _ := en.page(t, ck, dashboard.IntegrationsPath)
	require.Len(t, connectorIDs(body), apptbook.MaxConnectors)
	require.NotContains(t, body, `id="add-connector"`)
	require.Contains(t, body, fmt.Sprintf("A shop may have %d connections", apptbook.MaxConnectors))
	rec := en.post(dashboard.IntegrationsPath+"/connectors", url.Values{"csrf": {csrf}, "kind": {"calcom"}}, ck)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	require.Contains(t, rec.Body.String(), fmt.Sprintf("A shop may have at most %d connectors; delete one first.", apptbook.MaxConnectors))
	cs, err := en.book.Connectors(ctx, en.shopA.ID)
	require.NoError(t, err)
	require.Len(t, cs, apptbook.MaxConnectors)
}

// requireAccessible checks what the pages hold to: one h1; every visible input and
// select has a label naming its id; every aria-labelledby, aria-describedby and
// label's for names an element of the page; ids are unique.
func requireAccessible(t *testing.T, body string) {
	t.Helper()
	require.Equal(t, 1, strings.Count(body, "<h1"), "one h1")
	ids := map[string]int{}
	for _, m := range regexp.MustCompile(` id="([^"]+)"`).FindAllStringSubmatch(body, -1) {
		ids[m[1]]++
	}
	for id, n := range ids {
		require.Equal(t, 1, n, "id %q is unique", id)
	}
	for _, m := range regexp.MustCompile(`<(?:input|select)\b[^>]*>`).FindAllString(body, -1) {
		if strings.Contains(m, `type="hidden"`) {
			continue
		}
		id := regexp.MustCompile(` id="([^"]+)"`).FindStringSubmatch(m)
		require.NotNil(t, id, "%s has an id", m)
		require.Contains(t, body, `<label for="`+id[1]+`"`, "%s has a label", m)
	}
	for _, m := range regexp.MustCompile(`(?:aria-labelledby|aria-describedby|for)="([^"]+)"`).FindAllStringSubmatch(body, -1) {
		for _, ref := range strings.Fields(m[1]) {
			require.Contains(t, ids, ref, "%s names an element of the page", m[0])
		}
	}
}
