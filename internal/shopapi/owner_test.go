package shopapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// send is do with a body of any content type (do sends JSON).
func (e *env) send(method, path, token, contentType string, body io.Reader) resp {
	e.t.Helper()
	req, err := http.NewRequest(method, e.url+path, body)
	require.NoError(e.t, err)
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(e.t, err)
	checkAgainstSpec(e.t, req, res.StatusCode, res.Header, raw)
	r := resp{status: res.StatusCode, header: res.Header, raw: string(raw)}
	if len(raw) > 0 {
		require.NoError(e.t, json.Unmarshal(raw, &r.body), string(raw))
	}
	return r
}

func (e *env) importCSV(key, csv string) resp {
	e.t.Helper()
	return e.send(http.MethodPost, "/api/customers/import", key, "text/csv", strings.NewReader(csv))
}

func (e *env) customer(key string, body map[string]any) string {
	e.t.Helper()
	r := e.do(http.MethodPost, "/api/customers", key, body)
	require.Equal(e.t, http.StatusCreated, r.status, r.raw)
	return r.body["id"].(string)
}

func TestShopSettings(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, key := e.shop("+15555550100")
	o := e.opening(key)

	r := e.do(http.MethodGet, "/api/shop", key, nil)
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Equal(t, "Fade Street Barbers", r.body["name"])
	require.NotContains(t, r.body, "api_key")

	// A partial change: the rest stays; quiet hours removed with null; a daily cap and
	// a grace period set.
	r = e.do(http.MethodPatch, "/api/shop", key, map[string]any{
		"name": "Fade Street", "timezone": "Europe/London",
		"offer_policy": map[string]any{"quiet_hours": nil, "max_offers_per_day": 2, "first_wave_delay_seconds": 120, "send_rate_per_second": 3},
	})
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Equal(t, "Fade Street", r.body["name"])
	require.Equal(t, "Europe/London", r.body["timezone"])
	require.Equal(t, "usd", r.body["currency"])
	require.Equal(t, map[string]any{
		"wave_size": 5.0, "wave_interval_seconds": 300.0, "min_lead_minutes": 30.0, "quiet_hours": nil,
		"cooldown_seconds": 3600.0, "max_offers_per_day": 2.0, "first_wave_delay_seconds": 120.0,
		"send_rate_per_second": 3.0, // a toll-free number's rate
	}, r.body["offer_policy"])
	require.Equal(t, r.body, e.do(http.MethodGet, "/api/shop", key, nil).body, "stored")

	// A new time zone changes how openings read, never when they are.
	got := e.do(http.MethodGet, "/api/openings/"+o["id"].(string), key, nil)
	require.Equal(t, o["starts_at"], got.body["starts_at"])

	// The cap back to none; quiet hours back.
	r = e.do(http.MethodPatch, "/api/shop", key, map[string]any{"offer_policy": map[string]any{
		"max_offers_per_day": nil, "quiet_hours": map[string]any{"start": "22:00", "end": "07:00"}}})
	require.Equal(t, http.StatusOK, r.status, r.raw)
	p := r.body["offer_policy"].(map[string]any)
	require.Nil(t, p["max_offers_per_day"])
	require.Equal(t, map[string]any{"start": "22:00", "end": "07:00"}, p["quiet_hours"])

	// Validated exactly as at creation.
	tests := []struct {
		name  string
		body  any
		code  string
		field string
	}{
		{"bad zone", map[string]any{"timezone": "Mars/Olympus"}, "invalid_timezone", "timezone"},
		{"local zone", map[string]any{"timezone": "Local"}, "invalid_timezone", "timezone"},
		{"empty name", map[string]any{"name": "  "}, "invalid_name", "name"},
		{"null name", map[string]any{"name": nil}, "invalid_name", "name"},
		{"currency", map[string]any{"currency": "dollars"}, "invalid_currency", "currency"},
		{"payment mode", map[string]any{"payment_mode": "cash"}, "invalid_payment_mode", "payment_mode"},
		{"wave size 0", map[string]any{"offer_policy": map[string]any{"wave_size": 0}}, "invalid_offer_policy_wave_size", "offer_policy.wave_size"},
		{"interval", map[string]any{"offer_policy": map[string]any{"wave_interval_seconds": 5}}, "invalid_offer_policy_wave_interval_seconds", "offer_policy.wave_interval_seconds"},
		{"cap 0", map[string]any{"offer_policy": map[string]any{"max_offers_per_day": 0}}, "invalid_offer_policy_max_offers_per_day", "offer_policy.max_offers_per_day"},
		{"delay", map[string]any{"offer_policy": map[string]any{"first_wave_delay_seconds": -1}}, "invalid_offer_policy_first_wave_delay_seconds", "offer_policy.first_wave_delay_seconds"},
		{"quiet", map[string]any{"offer_policy": map[string]any{"quiet_hours": map[string]any{"start": "25:00", "end": "07:00"}}}, "invalid_offer_policy_quiet_hours", "offer_policy.quiet_hours"},
		{"policy null", map[string]any{"offer_policy": nil}, "invalid_offer_policy", "offer_policy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.sub(t).do(http.MethodPatch, "/api/shop", key, tt.body)
			requireError(t, r, http.StatusUnprocessableEntity, tt.code)
			require.Equal(t, tt.field, r.errFieldName())
		})
	}
	requireError(t, e.do(http.MethodPatch, "/api/shop", key, `{"name":`), http.StatusBadRequest, "bad_json")
	requireError(t, e.do(http.MethodPatch, "/api/shop", key, map[string]any{"offer_policy": map[string]any{"wave_size": "big"}}),
		http.StatusBadRequest, "bad_json")
	require.Equal(t, "Fade Street", e.do(http.MethodGet, "/api/shop", key, nil).body["name"], "nothing half-applied")
}

func TestRotateKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, oldKey := e.shop("+15555550100")
	r := e.do(http.MethodPost, "/api/shop/rotate-key", oldKey, nil)
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Equal(t, "no-store", r.header.Get("Cache-Control"))
	newKey := r.body["api_key"].(string)
	require.True(t, strings.HasPrefix(newKey, "shop_"))
	require.NotEqual(t, oldKey, newKey)
	// The old key stops working at once; the new one works.
	requireError(t, e.do(http.MethodGet, "/api/shop", oldKey, nil), http.StatusUnauthorized, "unauthorized")
	requireError(t, e.do(http.MethodPost, "/api/shop/rotate-key", oldKey, nil), http.StatusUnauthorized, "unauthorized")
	got := e.do(http.MethodGet, "/api/shop", newKey, nil)
	require.Equal(t, http.StatusOK, got.status)
	require.NotContains(t, got.raw, newKey, "shown once")
}

func TestCustomerListSearchAndPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, key := e.shop("+15555550100")
	for i := range 7 {
		e.customer(key, map[string]any{"phone": fmt.Sprintf("+1555555%04d", 1000+i), "name": fmt.Sprintf("Client %d", i), "sms_opt_in": i%2 == 0})
	}
	e.customer(key, map[string]any{"phone": "+447700900777", "name": "Zoë O'Hara_%", "sms_opt_in": true})

	// Pages of 3 by cursor: every customer once, in the order they were added.
	var seen []string
	cursor := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 5)
		path := "/api/customers?limit=3"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		r := e.do(http.MethodGet, path, key, nil)
		require.Equal(t, http.StatusOK, r.status, r.raw)
		for _, c := range r.body["customers"].([]any) {
			seen = append(seen, c.(map[string]any)["name"].(string))
		}
		next, _ := r.body["next_cursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	require.Equal(t, []string{"Client 0", "Client 1", "Client 2", "Client 3", "Client 4", "Client 5", "Client 6", "Zoë O'Hara_%"}, seen)

	names := func(query string) []string {
		t.Helper()
		r := e.do(http.MethodGet, "/api/customers?"+query, key, nil)
		require.Equal(t, http.StatusOK, r.status, r.raw)
		var out []string
		for _, c := range r.body["customers"].([]any) {
			out = append(out, c.(map[string]any)["name"].(string))
		}
		return out
	}
	require.Equal(t, []string{"Client 3"}, names("q=client+3"))
	require.Equal(t, []string{"Zoë O'Hara_%"}, names("q=zo%C3%AB"))
	require.Equal(t, []string{"Zoë O'Hara_%"}, names("q=_%25"), "LIKE wildcards are literal")
	require.Equal(t, []string{"Client 5"}, names("q=1005"))
	require.Equal(t, []string{"Zoë O'Hara_%"}, names("q=%2B44+7700"), "phone fragment with spaces")
	require.Equal(t, []string{"Client 1", "Client 3", "Client 5"}, names("status=not_opted_in"))
	require.Len(t, names("status=opted_in"), 5)
	require.Empty(t, names("status=opted_out"))

	for _, q := range []string{"limit=0", "limit=201", "limit=x", "status=maybe", "cursor=garbage", "q=" + strings.Repeat("a", 101)} {
		r := e.do(http.MethodGet, "/api/customers?"+q, key, nil)
		require.Equal(t, http.StatusUnprocessableEntity, r.status, "%s: %s", q, r.raw)
	}
}

func TestCustomerEditAndOptOutRule(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, key := e.shop("+15555550100")
	id := e.customer(key, map[string]any{"phone": "+15555550123", "name": "Ada", "sms_opt_in": true})

	r := e.do(http.MethodPatch, "/api/customers/"+id, key, map[string]any{
		"name": "Ada L.", "priority": 7,
		"preferences": map[string]any{"days": []string{"sat", "mon", "Monday"}, "windows": []any{
			map[string]any{"start": "14:00", "end": "18:00"}, map[string]any{"start": "09:00", "end": "12:00"}},
			"services": []string{"Skin fade", "skin FADE"}},
	})
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Equal(t, "Ada L.", r.body["name"])
	require.Equal(t, 7.0, r.body["priority"])
	require.Equal(t, true, r.body["sms_opt_in"])
	require.Equal(t, map[string]any{
		"days":     []any{"mon", "sat"},
		"windows":  []any{map[string]any{"start": "09:00", "end": "12:00"}, map[string]any{"start": "14:00", "end": "18:00"}},
		"services": []any{"Skin fade"},
	}, r.body["preferences"])
	require.Equal(t, r.body, e.do(http.MethodGet, "/api/customers/"+id, key, nil).body)

	r = e.do(http.MethodPatch, "/api/customers/"+id, key, map[string]any{"preferences": nil})
	require.Equal(t, map[string]any{"days": []any{}, "windows": []any{}, "services": []any{}}, r.body["preferences"])

	for _, tt := range []struct {
		body  any
		field string
	}{
		{map[string]any{"priority": 5000}, "priority"},
		{map[string]any{"name": strings.Repeat("n", 201)}, "name"},
		{map[string]any{"preferences": map[string]any{"days": []string{"someday"}}}, "preferences.days"},
		{map[string]any{"preferences": map[string]any{"windows": []any{map[string]any{"start": "12:00", "end": "09:00"}}}}, "preferences.windows"},
		{map[string]any{"preferences": map[string]any{"windows": []any{map[string]any{"start": "9", "end": "10:00"}}}}, "preferences.windows"},
		{map[string]any{"preferences": map[string]any{"windows": []any{
			map[string]any{"start": "01:00", "end": "02:00"}, map[string]any{"start": "03:00", "end": "04:00"},
			map[string]any{"start": "05:00", "end": "06:00"}, map[string]any{"start": "07:00", "end": "08:00"},
			map[string]any{"start": "09:00", "end": "10:00"}}}}, "preferences.windows"},
		{map[string]any{"preferences": map[string]any{"services": []string{""}}}, "preferences.services"},
		{map[string]any{"sms_opt_in": nil}, "sms_opt_in"},
	} {
		r := e.do(http.MethodPatch, "/api/customers/"+id, key, tt.body)
		require.Equal(t, http.StatusUnprocessableEntity, r.status, r.raw)
		require.Equal(t, tt.field, r.errFieldName(), r.raw)
	}
	requireError(t, e.do(http.MethodPatch, "/api/customers/"+id, key, map[string]any{"priority": "high"}), 400, "bad_json")

	// The customer replies STOP: the owner sees it and cannot undo it.
	_, err := e.pool.Exec(context.Background(), `UPDATE customers SET opted_out_at = now() WHERE id = $1`, id)
	require.NoError(t, err)
	r = e.do(http.MethodGet, "/api/customers/"+id, key, nil)
	require.Equal(t, "opted_out", r.body["status"])
	require.NotNil(t, r.body["opted_out_at"])
	requireError(t, e.do(http.MethodPatch, "/api/customers/"+id, key, map[string]any{"sms_opt_in": true}),
		http.StatusConflict, "customer_opted_out")
	r = e.do(http.MethodPatch, "/api/customers/"+id, key, map[string]any{"sms_opt_in": false, "name": "Ada"})
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Equal(t, "opted_out", r.body["status"])
	require.Equal(t, "Ada", r.body["name"])
}

func TestEraseCustomer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	shopID, key := e.shop("+15555550100")
	id := e.customer(key, map[string]any{"phone": "+15555550123", "name": "Ada", "sms_opt_in": true})
	o := e.opening(key)
	ctx := context.Background()
	// Ada booked and paid; she texted the shop.
	_, err := e.pool.Exec(ctx, `UPDATE slot_openings SET status = 'filled', filled_by = $2, filled_at = now() WHERE id = $1`, o["id"], id)
	require.NoError(t, err)
	_, err = e.pool.Exec(ctx, `INSERT INTO bookings (opening_id, customer_id, shop_id, status, amount_cents, currency, created_at, updated_at)
		VALUES ($1, $2, $3, 'confirmed', 3500, 'usd', now(), now())`, o["id"], id, shopID)
	require.NoError(t, err)
	_, err = e.pool.Exec(ctx, `INSERT INTO inbound_messages (message_sid, shop_id, from_phone, to_phone, body, received_at, outcome)
		VALUES ('SM1', $1, '+15555550123', '+15555550100', 'YES it is Ada', now(), 'booked')`, shopID)
	require.NoError(t, err)

	r := e.do(http.MethodDelete, "/api/customers/"+id, key, nil)
	require.Equal(t, http.StatusNoContent, r.status, r.raw)

	requireError(t, e.do(http.MethodGet, "/api/customers/"+id, key, nil), 404, "customer_not_found")
	requireError(t, e.do(http.MethodDelete, "/api/customers/"+id, key, nil), 404, "customer_not_found")
	require.NotContains(t, e.do(http.MethodGet, "/api/customers", key, nil).raw, id)
	// Name, phone and words gone; the row, the booking and the money stay.
	require.Equal(t, "||false|true", e.queryString(`SELECT name || '|' || phone || '|' || sms_opt_in || '|' || (opted_out_at IS NOT NULL) FROM customers WHERE id = $1`, id))
	require.Equal(t, 3500, e.queryInt(`SELECT sum(amount_cents) FROM bookings WHERE shop_id = $1 AND status = 'confirmed'`, shopID))
	require.Equal(t, "|", e.queryString(`SELECT from_phone || '|' || body FROM inbound_messages WHERE message_sid = 'SM1'`))
	got := e.do(http.MethodGet, "/api/openings/"+o["id"].(string), key, nil)
	require.Equal(t, map[string]any{"customer_id": id, "phone": "", "name": ""}, got.body["filled_by"])
	require.Zero(t, e.queryInt(`SELECT count(*) FROM customers WHERE phone = '+15555550123' OR name = 'Ada'`))

	// The person may come back later, as a new customer with a new consent.
	again := e.customer(key, map[string]any{"phone": "+15555550123", "name": "Ada"})
	require.NotEqual(t, id, again)
}

// TestNewRoutesAreTenantIsolated: another shop's customer ids are 404 on every route
// that takes one, and the shop routes only ever reach the key's own shop.
func TestNewRoutesAreTenantIsolated(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, keyA := e.shop("+15555550100")
	_, keyB := e.shop("+15555550101")
	idA := e.customer(keyA, map[string]any{"phone": "+15555550123", "name": "Ada", "sms_opt_in": true})

	for _, m := range []struct {
		method string
		body   any
	}{
		{http.MethodGet, nil},
		{http.MethodPatch, map[string]any{"name": "Mallory"}},
		{http.MethodDelete, nil},
	} {
		requireError(t, e.do(m.method, "/api/customers/"+idA, keyB, m.body), http.StatusNotFound, "customer_not_found")
		requireError(t, e.do(m.method, "/api/customers/not-a-uuid", keyB, m.body), http.StatusNotFound, "customer_not_found")
	}
	require.Empty(t, e.do(http.MethodGet, "/api/customers", keyB, nil).body["customers"])
	require.Empty(t, e.do(http.MethodGet, "/api/customers?q=Ada", keyB, nil).body["customers"])

	// B's import of A's customer's phone creates B's own customer; A's is untouched.
	r := e.importCSV(keyB, "phone,name\n+15555550123,Mallory\n")
	require.Equal(t, 1.0, r.body["created"], r.raw)
	require.Equal(t, "Ada", e.do(http.MethodGet, "/api/customers/"+idA, keyA, nil).body["name"])

	// B's settings and key rotation touch only B.
	require.Equal(t, http.StatusOK, e.do(http.MethodPatch, "/api/shop", keyB, map[string]any{"name": "B"}).status)
	require.Equal(t, http.StatusOK, e.do(http.MethodPost, "/api/shop/rotate-key", keyB, nil).status)
	a := e.do(http.MethodGet, "/api/shop", keyA, nil)
	require.Equal(t, http.StatusOK, a.status, "A's key still works")
	require.Equal(t, "Fade Street Barbers", a.body["name"])

	// Without a key, every new route is 401.
	for _, p := range []struct{ method, path string }{
		{http.MethodGet, "/api/shop"}, {http.MethodPatch, "/api/shop"}, {http.MethodPost, "/api/shop/rotate-key"},
		{http.MethodGet, "/api/customers"}, {http.MethodPost, "/api/customers/import"},
		{http.MethodGet, "/api/customers/" + idA}, {http.MethodPatch, "/api/customers/" + idA}, {http.MethodDelete, "/api/customers/" + idA},
	} {
		requireError(t, e.do(p.method, p.path, "", nil), http.StatusUnauthorized, "unauthorized")
	}
}

func TestImportCSV(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, key := e.shop("+15555550100")
	stopped := e.customer(key, map[string]any{"phone": "+15555550199", "name": "Stopped", "sms_opt_in": true})
	_, err := e.pool.Exec(context.Background(), `UPDATE customers SET opted_out_at = now() WHERE id = $1`, stopped)
	require.NoError(t, err)

	file := "\uFEFFPhone,Name,Priority,SMS_opt_in,Preferences,Notes\n" +
		"+15555550101,Ada,5,yes,days=mon,whatever\n" + // line 2: the unquoted comma ends the cell: "whatever" is Notes, ignored
		"+1 (555) 555-0102,Bea,,no,\n" + // line 3
		"+15555550103,Cy,,,\"days=sat,sun; times=09:00-12:00; services=Haircut\"\n" + // line 4: no consent given
		"5555550104,Dee,,yes,\n" + // line 5: not E.164
		"+15555550105,Eve,high,yes,\n" + // line 6
		"+15555550106,Fay,,maybe,\n" + // line 7
		"\n" + // blank line skipped
		"+15555550101,Ada again,,yes,\n" + // line 9: same phone as line 2
		"+15555550199,Stopped,,yes,\n" + // line 10: opted out by STOP
		",nobody,,,\n" // line 11
	r := e.importCSV(key, file)
	require.Equal(t, http.StatusOK, r.status, r.raw)
	type row struct {
		Line   int
		Result string
		Reason string
	}
	rows := func(r resp) []row {
		var out []row
		for _, x := range r.body["rows"].([]any) {
			m := x.(map[string]any)
			reason, _ := m["reason"].(string)
			out = append(out, row{int(m["line"].(float64)), m["result"].(string), reason})
		}
		return out
	}
	got := rows(r)
	require.Len(t, got, 9, r.raw)
	want := map[int]string{2: "created", 3: "created", 4: "created", 5: "rejected", 6: "rejected", 7: "rejected", 9: "rejected", 10: "unchanged", 11: "rejected"}
	for _, g := range got {
		require.Equal(t, want[g.Line], g.Result, "line %d: %+v", g.Line, g)
	}
	require.Contains(t, got[3].Reason, "E.164")
	require.Contains(t, got[4].Reason, "priority")
	require.Contains(t, got[5].Reason, "sms_opt_in")
	require.Contains(t, got[6].Reason, "line 2")
	require.Contains(t, got[7].Reason, "STOP")
	require.Equal(t, []any{3.0, 0.0, 1.0, 5.0}, []any{r.body["created"], r.body["updated"], r.body["unchanged"], r.body["rejected"]})

	list := e.do(http.MethodGet, "/api/customers?limit=200", key, nil).body["customers"].([]any)
	byPhone := map[string]map[string]any{}
	for _, c := range list {
		byPhone[c.(map[string]any)["phone"].(string)] = c.(map[string]any)
	}
	require.Equal(t, true, byPhone["+15555550101"]["sms_opt_in"])
	require.Equal(t, 5.0, byPhone["+15555550101"]["priority"])
	require.Equal(t, false, byPhone["+15555550102"]["sms_opt_in"], "formatting stripped from the phone")
	require.Equal(t, false, byPhone["+15555550103"]["sms_opt_in"], "no consent in the file: not opted in")
	require.Equal(t, map[string]any{"days": []any{"sat", "sun"}, "windows": []any{map[string]any{"start": "09:00", "end": "12:00"}},
		"services": []any{"Haircut"}}, byPhone["+15555550103"]["preferences"])
	require.Equal(t, "opted_out", byPhone["+15555550199"]["status"])

	// The same file again changes nothing and duplicates nothing.
	r = e.importCSV(key, file)
	require.Equal(t, []any{0.0, 0.0, 4.0, 5.0}, []any{r.body["created"], r.body["updated"], r.body["unchanged"], r.body["rejected"]}, r.raw)
	require.Equal(t, 4, e.queryInt("SELECT count(*) FROM customers"))

	// A re-import updates; an empty consent cell keeps the consent given before; a
	// multipart upload (the dashboard's form, curl -F) works the same.
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, err := mw.CreateFormFile("file", "customers.csv")
	require.NoError(t, err)
	_, _ = fw.Write([]byte("phone,name,sms_opt_in,preferences\n+15555550101,Ada Lovelace,,none\n+15555550107,New,yes,\n"))
	require.NoError(t, mw.Close())
	r = e.send(http.MethodPost, "/api/customers/import", key, mw.FormDataContentType(), &buf)
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Equal(t, []any{1.0, 1.0, 0.0, 0.0}, []any{r.body["created"], r.body["updated"], r.body["unchanged"], r.body["rejected"]}, r.raw)
	c := e.do(http.MethodGet, "/api/customers?q=lovelace", key, nil).body["customers"].([]any)[0].(map[string]any)
	require.Equal(t, true, c["sms_opt_in"])
	require.Equal(t, 5.0, c["priority"], "no priority column: kept")

	// Files refused whole, with a clear 4xx, importing nothing.
	before := e.queryInt("SELECT count(*) FROM customers")
	for _, tt := range []struct {
		name, ctype, body string
		status            int
		code              string
	}{
		{"no phone column", "text/csv", "name,priority\nAda,1\n", 422, "no_phone_column"},
		{"empty", "text/csv", "", 422, "no_phone_column"},
		{"binary", "text/csv", "PK\x03\x04\x00\x00binary", 422, "not_csv"},
		{"latin-1", "text/csv", "phone,name\n+15555550108,Zo\xeb\n", 422, "not_csv"},
		{"json", "application/json", `{"phone":"+15555550108"}`, 415, "unsupported_media_type"},
		{"too many rows", "text/csv", "phone\n" + strings.Repeat("+15555550108\n", 10_001), 422, "too_many_rows"},
		{"too large", "text/csv", "phone,name\n" + strings.Repeat("+15555550108,"+strings.Repeat("x", 1000)+"\n", 4200), 413, "file_too_large"},
		{"multipart without file", "multipart/form-data; boundary=xx", "--xx\r\nContent-Disposition: form-data; name=\"other\"\r\n\r\nx\r\n--xx--\r\n", 400, "no_file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := e.sub(t).send(http.MethodPost, "/api/customers/import", key, tt.ctype, strings.NewReader(tt.body))
			requireError(t, r, tt.status, tt.code)
		})
	}
	require.Equal(t, before, e.queryInt("SELECT count(*) FROM customers"))
}

// TestImportTenThousand: the largest file allowed imports in seconds, and again with
// nothing changed. The timings are printed (go test -v), not asserted tightly.
func TestImportTenThousand(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, key := e.shop("+15555550100")
	var b strings.Builder
	b.WriteString("phone,name,priority,sms_opt_in,preferences\n")
	for i := range 10_000 {
		consent := []string{"yes", "no", ""}[i%3]
		prefs := ""
		if i%4 == 0 {
			prefs = `"days=mon,tue; times=09:00-12:00"`
		}
		fmt.Fprintf(&b, "+1555%07d,Customer %d,%d,%s,%s\n", i, i, i%10, consent, prefs)
	}
	file := b.String()
	start := time.Now()
	r := e.importCSV(key, file)
	first := time.Since(start)
	require.Equal(t, http.StatusOK, r.status, r.raw[:min(len(r.raw), 500)])
	require.Equal(t, []any{10000.0, 0.0, 0.0, 0.0}, []any{r.body["created"], r.body["updated"], r.body["unchanged"], r.body["rejected"]})
	start = time.Now()
	r = e.importCSV(key, file)
	second := time.Since(start)
	require.Equal(t, []any{0.0, 0.0, 10000.0, 0.0}, []any{r.body["created"], r.body["updated"], r.body["unchanged"], r.body["rejected"]})
	t.Logf("10,000-row import (%d KiB): first %v (10000 created), again %v (10000 unchanged)", len(file)>>10, first, second)
	require.Less(t, first, 20*time.Second)
	require.Equal(t, 3334, e.queryInt("SELECT count(*) FROM customers WHERE sms_opt_in"))
}

// TestDeclareAnswersWithAWarningWhenTheWaveIsTooSlow: an opening whose first wave the
// shop's number cannot send before its offers close is created, and the answer says so.
func TestDeclareAnswersWithAWarningWhenTheWaveIsTooSlow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, key := e.shop("+15555550170")
	r := e.do(http.MethodPatch, "/api/shop", key, map[string]any{"offer_policy": map[string]any{"wave_size": 1000, "send_rate_per_second": 1}})
	require.Equal(t, http.StatusOK, r.status, r.raw)
	lead := time.Duration(r.body["offer_policy"].(map[string]any)["min_lead_minutes"].(float64)) * time.Minute

	soon := validOpening()
	soon["starts_at"] = future(lead + 10*time.Minute)
	r = e.do(http.MethodPost, "/api/openings", key, soon)
	require.Equal(t, http.StatusCreated, r.status, r.raw)
	require.Len(t, r.body["warnings"], 1, r.raw)
	require.Contains(t, r.body["warnings"].([]any)[0], "a wave of 1000 texts takes 16m40s")

	r = e.do(http.MethodPost, "/api/openings", key, validOpening()) // two days ahead
	require.Equal(t, http.StatusCreated, r.status, r.raw)
	require.NotContains(t, r.body, "warnings", "no warning when there is time")
}

// TestCustomerCreatedWithPreferences: POST /api/customers keeps the preferences it is
// given, checked and normalised as PATCH checks them, and reads them back the same; a
// bad one is refused with its field and adds nobody.
func TestCustomerCreatedWithPreferences(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, key := e.shop("+15555550100")
	r := e.do(http.MethodPost, "/api/customers", key, map[string]any{
		"phone": "+15555550124", "name": "Bea", "sms_opt_in": true,
		"preferences": map[string]any{"days": []string{"sat", "mon"}, "windows": []any{map[string]any{"start": "09:00", "end": "24:00"}},
			"services": []string{"Skin fade"}},
	})
	require.Equal(t, http.StatusCreated, r.status, r.raw)
	want := map[string]any{
		"days":     []any{"mon", "sat"},
		"windows":  []any{map[string]any{"start": "09:00", "end": "24:00"}},
		"services": []any{"Skin fade"},
	}
	require.Equal(t, want, r.body["preferences"])
	id, _ := r.body["id"].(string)
	require.Equal(t, want, e.do(http.MethodGet, "/api/customers/"+id, key, nil).body["preferences"])

	bad := e.do(http.MethodPost, "/api/customers", key, map[string]any{
		"phone": "+15555550125", "preferences": map[string]any{"days": []string{"someday"}}})
	require.Equal(t, http.StatusUnprocessableEntity, bad.status, bad.raw)
	require.Equal(t, "preferences.days", bad.errFieldName(), bad.raw)
	list := e.do(http.MethodGet, "/api/customers?q=5555550125", key, nil)
	require.Equal(t, http.StatusOK, list.status, list.raw)
	require.Empty(t, list.body["customers"], "the refused customer was not added")
}
