package page_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/catalog"
)

// TestWants: the page offers the shop's active services and people, the days and a
// time range, all optional; a wrong pick is shown next to its group with what was
// picked still ticked, and stores nothing; good picks are kept with the request.
func TestWants(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	cat := catalog.New(e.pool, nil)
	ana, err := cat.AddStaff(ctx, e.shop.ID, "Ana")
	require.NoError(t, err)
	_, err = cat.AddService(ctx, e.shop.ID, catalog.NewService{Name: "Haircut", DurationMinutes: 30, PriceCents: 3000})
	require.NoError(t, err)
	c := client(t)
	u := e.srv.URL + "/join/" + e.shop.Slug
	_, body := get(t, c, u)
	for _, must := range []string{`<fieldset class="wants"`, `name="services" value="Haircut"`, `name="staff" value="` + ana.ID.String() + `"`,
		`name="days" value="mon"`, `name="days" value="sun"`, `<select id="join-from" name="from">`, `<option value="09:00">09:00</option>`} {
		require.Contains(t, body, must)
	}
	_, es := get(t, c, u+"?lang=es")
	require.Contains(t, es, "¿Qué te interesa? (opcional)")
	require.Contains(t, es, ">mié</label>")
	_, fr := get(t, c, u+"?lang=fr")
	require.Contains(t, fr, "Qu&#39;est-ce qui vous intéresse ? (facultatif)")
	token := csrfRe.FindStringSubmatch(body)[1]

	bad := url.Values{"csrf": {token}, "name": {"Ana"}, "phone": {"(555) 555-0123"}, "language": {"en"}, "consent": {"yes"},
		"services": {"Haircut"}, "days": {"tue", "sat"}, "from": {"18:00"}, "to": {"09:00"}}
	res, body := post(t, c, u, bad)
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	require.Contains(t, body, `<p class="error" id="join-times-error">Pick a start time before the end time, or neither.</p><div class="times" id="join-times"`)
	require.Contains(t, body, `name="services" value="Haircut" checked`)
	require.Contains(t, body, `name="days" value="tue" checked`)
	require.Contains(t, body, `<option value="18:00" selected>`)
	require.NotContains(t, body, `id="join-name-error"`)
	forged := url.Values{"csrf": {token}, "name": {"Ana"}, "phone": {"(555) 555-0123"}, "language": {"en"}, "consent": {"yes"},
		"services": {"Brain surgery"}, "staff": {"not-an-id"}, "days": {"caturday"}}
	res, body = post(t, c, u, forged)
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	for _, f := range []string{"services", "staff", "days"} {
		require.Contains(t, body, `id="join-`+f+`-error"`)
	}
	require.Equal(t, 0, e.count(t, `SELECT count(*) FROM join_requests`))

	good := bad
	good["from"], good["to"], good["staff"] = []string{"09:00"}, []string{"12:00"}, []string{ana.ID.String()}
	res, body = post(t, c, u, good)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Contains(t, body, `id="join-done"`)
	var prefs string
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT preferences::text FROM join_requests`).Scan(&prefs))
	require.JSONEq(t, `{"days":[2,6],"windows":[{"start":540,"end":720}],"services":["Haircut"],"staff_ids":["`+ana.ID.String()+`"]}`, prefs)
}

// TestRefusedByShapeReadsTheSame: a toll-free or premium number is answered exactly as a
// number texted, and texted nothing.
func TestRefusedByShapeReadsTheSame(t *testing.T) {
	t.Parallel()
	e := setup(t)
	c := client(t)
	u := e.srv.URL + "/join/" + e.shop.Slug
	_, body := get(t, c, u)
	token := csrfRe.FindStringSubmatch(body)[1]
	form := func(number string) url.Values {
		return url.Values{"csrf": {token}, "name": {"Ana"}, "phone": {number}, "language": {"en"}, "consent": {"yes"}}
	}
	res, okBody := post(t, c, u, form("(555) 555-0123"))
	require.Equal(t, http.StatusOK, res.StatusCode)
	for _, n := range []string{"(800) 555-0123", "1-900-555-0123"} {
		res, b := post(t, c, u, form(n))
		require.Equal(t, http.StatusOK, res.StatusCode, n)
		require.Equal(t, okBody, b, n)
	}
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM river_job WHERE kind = 'sms_text'`))
	require.Equal(t, 2, e.count(t, `SELECT count FROM join_refusals WHERE reason = 'shape'`))
}
