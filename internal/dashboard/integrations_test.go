package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/dashboard"
	"github.com/slotrecovery/slotrecovery/internal/hooks"
)

var secretRE = regexp.MustCompile(`<code id="new-secret">(whsec_[A-Za-z0-9+/=]+)</code>`)

// endpointIDs are the ids of the endpoint cards on the page, in order.
func endpointIDs(body string) []string {
	var ids []string
	for _, m := range regexp.MustCompile(`id="endpoint-([0-9a-f-]{36})"`).FindAllStringSubmatch(body, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// TestIntegrationsCalendarCard: the page shows the feed's address with a webcal link;
// the owner turns full details on and off, and rotates the address (confirmed): the
// old address stops working at once.
func TestIntegrationsCalendarCard(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{hooks: true})
	ck := en.login(t, en.keyA)
	ctx := context.Background()
	body, csrf := en.page(t, ck, dashboard.IntegrationsPath)
	old := en.shopA.CalendarToken
	require.Contains(t, body, "https://slots.example/calendar/"+old+".ics")
	require.Contains(t, body, `href="webcal://slots.example/calendar/`+old+`.ics"`)
	require.Contains(t, body, `data-copy="calendar-url"`)
	require.Contains(t, body, `aria-current="page">Integrations<`)

	rec := en.post(dashboard.IntegrationsPath+"/calendar", url.Values{"csrf": {csrf}, "full_details": {"yes"}}, ck)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	shop, err := en.shops.Get(ctx, en.shopA.ID)
	require.NoError(t, err)
	require.True(t, shop.CalendarFullDetails)
	body, _ = en.page(t, ck, dashboard.IntegrationsPath+"?notice=calendar_saved")
	require.Regexp(t, `id="calendar-full"[^>]*checked`, body)
	rec = en.post(dashboard.IntegrationsPath+"/calendar", url.Values{"csrf": {csrf}}, ck)
	require.Equal(t, http.StatusSeeOther, rec.Code)
	shop, err = en.shops.Get(ctx, en.shopA.ID)
	require.NoError(t, err)
	require.False(t, shop.CalendarFullDetails, "an unticked box turns it off")

	// After a re-key of the server's key the previous address works for a while: the
	// card says until when; the owner's rotation ends it.
	require.NotContains(t, body, `id="calendar-old"`)
	_, err = en.pool.Exec(ctx, `UPDATE shops SET calendar_legacy_token_hash = '\x00', calendar_legacy_until = '2026-12-01T12:00:00Z'
		WHERE id = $1`, en.shopA.ID)
	require.NoError(t, err)
	body, _ = en.page(t, ck, dashboard.IntegrationsPath)
	require.Contains(t, body, `id="calendar-old"`)
	require.Contains(t, body, "keeps working until Tue 1 Dec 2026")

	rec = en.post(dashboard.IntegrationsPath+"/calendar/rotate", url.Values{"csrf": {csrf}}, ck)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	require.Contains(t, rec.Body.String(), "Tick the box to confirm that the current address should stop working.")
	rec = en.post(dashboard.IntegrationsPath+"/calendar/rotate", url.Values{"csrf": {csrf}, "confirm": {"yes"}}, ck)
	require.Equal(t, http.StatusSeeOther, rec.Code)
	shop, err = en.shops.Get(ctx, en.shopA.ID)
	require.NoError(t, err)
	require.NotEqual(t, old, shop.CalendarToken)
	_, err = en.shops.ByCalendarToken(ctx, old)
	require.Error(t, err, "the old address is dead")
	body, _ = en.page(t, ck, dashboard.IntegrationsPath+"?notice=calendar_rotated")
	require.Contains(t, body, shop.CalendarToken)
	require.NotContains(t, body, old)
	require.Contains(t, body, "The calendar has a new address.")
	require.NotContains(t, body, `id="calendar-old"`, "the rotation ended the previous address")

	rec = en.post(dashboard.IntegrationsPath+"/calendar/rotate", url.Values{"confirm": {"yes"}}, ck)
	require.Equal(t, http.StatusForbidden, rec.Code, "no CSRF token, no rotation")
}

// TestIntegrationsEndpoints: the owner adds an endpoint (its secret shown once, on a
// page nobody caches), sees its deliveries and sends one again, disables it (then
// "send again" is refused with the reason), enables it, rotates its secret and deletes
// it, each needing a confirmation where the API's would; another shop reaches none of it.
func TestIntegrationsEndpoints(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{hooks: true})
	ctx := context.Background()
	ck := en.login(t, en.keyA)
	body, csrf := en.page(t, ck, dashboard.IntegrationsPath)
	require.Contains(t, body, "No endpoints yet.")

	// Bad input stays on the form, next to the input.
	rec := en.post(dashboard.IntegrationsPath+"/endpoints", url.Values{"csrf": {csrf}, "url": {"http://crm.example.com/hook"}}, ck)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code, rec.Body.String())
	require.Contains(t, fieldError(rec.Body.String(), "ep-url-error"), "https")
	require.Contains(t, rec.Body.String(), `value="http://crm.example.com/hook"`)
	rec = en.post(dashboard.IntegrationsPath+"/endpoints", url.Values{"csrf": {csrf}, "url": {""}}, ck)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	require.NotEmpty(t, fieldError(rec.Body.String(), "ep-url-error"))

	// Added: the secret is on this answer only.
	rec = en.post(dashboard.IntegrationsPath+"/endpoints", url.Values{"csrf": {csrf}, "url": {"https://crm.example.com/hook"},
		"description": {"Our CRM"}, "events": {hooks.CustomerOptedOut, hooks.OpeningFilled}}, ck)
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	require.Equal(t, "no-store", rec.Header().Get("Cache-Control"))
	m := secretRE.FindStringSubmatch(rec.Body.String())
	require.NotNil(t, m, rec.Body.String())
	secret := m[1]
	body, _ = en.page(t, ck, dashboard.IntegrationsPath)
	require.NotContains(t, body, secret, "the secret is shown once")
	require.Contains(t, body, "https://crm.example.com/hook")
	require.Contains(t, body, "Our CRM")
	require.Contains(t, body, "Events: customer.opted_out, opening.filled")
	require.Contains(t, body, "No deliveries yet.")
	ids := endpointIDs(body)
	require.Len(t, ids, 1)
	id := uuid.MustParse(ids[0])
	base := dashboard.IntegrationsPath + "/endpoints/" + id.String()

	// A delivery, and "send again".
	c := en.addCustomer(t, en.shopA, "+15555550123", "Ana")
	require.NoError(t, hooks.Record(ctx, en.pool, en.shopA.ID, hooks.CustomerOptedOut, time.Now(), c.API()))
	n, err := en.hooks.Dispatch(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	page, err := en.hooks.Deliveries(ctx, en.shopA.ID, id, hooks.DeliveryQuery{})
	require.NoError(t, err)
	require.Len(t, page.Deliveries, 1)
	delivery := page.Deliveries[0].ID
	body, _ = en.page(t, ck, dashboard.IntegrationsPath)
	require.Contains(t, body, `id="delivery-`+delivery.String()+`"`)
	require.Contains(t, body, "customer.opted_out")
	require.Contains(t, body, ">Pending<")
	rec = en.post(base+"/deliveries/"+delivery.String()+"/retry", url.Values{"csrf": {csrf}}, ck)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	require.Equal(t, dashboard.IntegrationsPath+"?notice=resent#endpoint-"+id.String(), rec.Header().Get("Location"))
	var manual int
	require.NoError(t, en.pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'webhook_delivery'
		AND args->>'delivery_id' = $1 AND (args->>'manual')::bool`, delivery.String()).Scan(&manual))
	require.Equal(t, 1, manual)

	// Disabled: the reason shows, and sending again says why it cannot.
	rec = en.post(base+"/disable", url.Values{"csrf": {csrf}}, ck)
	require.Equal(t, http.StatusSeeOther, rec.Code)
	body, _ = en.page(t, ck, dashboard.IntegrationsPath)
	require.Contains(t, body, ">Disabled<")
	require.Contains(t, body, "Why: disabled by the owner")
	rec = en.post(base+"/deliveries/"+delivery.String()+"/retry", url.Values{"csrf": {csrf}}, ck)
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Contains(t, rec.Body.String(), "The endpoint is disabled; enable it")
	rec = en.post(base+"/enable", url.Values{"csrf": {csrf}}, ck)
	require.Equal(t, http.StatusSeeOther, rec.Code)
	body, _ = en.page(t, ck, dashboard.IntegrationsPath)
	require.Contains(t, body, ">Enabled<")

	// A new secret: confirmed, shown once; the previous one signs for a day more.
	rec = en.post(base+"/rotate-secret", url.Values{"csrf": {csrf}}, ck)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	require.Contains(t, rec.Body.String(), "Tick the box to confirm a new signing secret.")
	rec = en.post(base+"/rotate-secret", url.Values{"csrf": {csrf}, "confirm": {"yes"}}, ck)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	m = secretRE.FindStringSubmatch(rec.Body.String())
	require.NotNil(t, m)
	require.NotEqual(t, secret, m[1])
	require.Contains(t, rec.Body.String(), "For 24 hours the previous one signs too")
	body, _ = en.page(t, ck, dashboard.IntegrationsPath)
	require.Contains(t, body, "The previous signing secret also signs until")

	// Another shop reaches none of it.
	ckB := en.login(t, en.keyB)
	_, csrfB := en.page(t, ckB, dashboard.IntegrationsPath)
	for _, path := range []string{"/disable", "/rotate-secret", "/delete", "/deliveries/" + delivery.String() + "/retry"} {
		rec = en.post(base+path, url.Values{"csrf": {csrfB}, "confirm": {"yes"}}, ckB)
		require.Equal(t, http.StatusNotFound, rec.Code, path)
	}
	bodyB, _ := en.page(t, ckB, dashboard.IntegrationsPath)
	require.NotContains(t, bodyB, "crm.example.com")

	// Deleted, once confirmed.
	rec = en.post(base+"/delete", url.Values{"csrf": {csrf}}, ck)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	require.Contains(t, rec.Body.String(), "Tick the box to confirm that the endpoint and its deliveries should be deleted.")
	rec = en.post(base+"/delete", url.Values{"csrf": {csrf}, "confirm": {"yes"}}, ck)
	require.Equal(t, http.StatusSeeOther, rec.Code)
	body, _ = en.page(t, ck, dashboard.IntegrationsPath+"?notice=deleted")
	require.Empty(t, endpointIDs(body))
	require.Contains(t, body, "The endpoint was deleted")
	rec = en.post(base+"/enable", url.Values{"csrf": {csrf}}, ck)
	require.Equal(t, http.StatusNotFound, rec.Code)
	rec = en.post(dashboard.IntegrationsPath+"/endpoints/not-a-uuid/enable", url.Values{"csrf": {csrf}}, ck)
	require.Equal(t, http.StatusNotFound, rec.Code)
}

// TestIntegrationsWithoutWebhooks: a dashboard without the webhooks service shows the
// calendar alone, and adding an endpoint is not found.
func TestIntegrationsWithoutWebhooks(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{})
	ck := en.login(t, en.keyA)
	body, csrf := en.page(t, ck, dashboard.IntegrationsPath)
	require.Contains(t, body, "Calendar feed")
	require.False(t, strings.Contains(body, "Webhook endpoints"))
	rec := en.post(dashboard.IntegrationsPath+"/endpoints", url.Values{"csrf": {csrf}, "url": {"https://crm.example.com/hook"}}, ck)
	require.Equal(t, http.StatusNotFound, rec.Code)
}
