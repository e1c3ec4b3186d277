package dashboard_test

import (
	"context"
	"encoding/csv"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/catalog"
	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/slots"
)

// inputValue is the value of the input whose id is id.
func inputValue(t *testing.T, body, id string) string {
	t.Helper()
	m := regexp.MustCompile(`id="` + regexp.QuoteMeta(id) + `"[^>]*value="([^"]*)"`).FindStringSubmatch(body)
	require.NotNil(t, m, "input %s", id)
	return html.UnescapeString(m[1])
}

// TestStaffPage: an owner adds, renames and deactivates people on the Staff page,
// through the catalog's rules: an empty or duplicate name is refused next to the field
// (never a 500), another shop's person is not found, and nothing is deleted.
func TestStaffPage(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday})
	ck := en.login(t, en.keyA)
	cat := catalog.New(en.pool, nil)
	ctx := context.Background()

	body, csrf := en.page(t, ck, "/dashboard/staff")
	assert.Contains(t, body, `<a href="/dashboard/staff" aria-current="page">Staff</a>`)
	assert.Contains(t, body, `<a href="/dashboard/services">Services</a>`)
	assert.Contains(t, body, "Nobody yet")

	rec := en.post("/dashboard/staff", url.Values{"csrf": {csrf}, "name": {"  Ana "}}, ck)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	require.Equal(t, "/dashboard/staff?notice=added", rec.Header().Get("Location"))
	rec = en.post("/dashboard/staff", url.Values{"csrf": {csrf}, "name": {"Ben"}}, ck)
	require.Equal(t, http.StatusSeeOther, rec.Code)

	rec = en.post("/dashboard/staff", url.Values{"csrf": {csrf}, "name": {"ana"}}, ck)
	require.Equal(t, http.StatusConflict, rec.Code)
	assert.Contains(t, fieldError(rec.Body.String(), "staff-name-error"), "already have someone of that name")
	rec = en.post("/dashboard/staff", url.Values{"csrf": {csrf}, "name": {"   "}}, ck)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	assert.Equal(t, "Enter a name of 1 to 100 characters.", fieldError(rec.Body.String(), "staff-name-error"))
	rec = en.post("/dashboard/staff", url.Values{"name": {"Cy"}}, ck)
	require.Equal(t, http.StatusForbidden, rec.Code, "no CSRF token, nothing added")

	people, err := cat.Staff(ctx, en.shopA.ID)
	require.NoError(t, err)
	require.Len(t, people, 2)
	// Added at the same instant of the test's clock: tell them apart by name.
	ana, ben := people[0], people[1]
	if ana.Name != "Ana" {
		ana, ben = ben, ana
	}
	require.Equal(t, []string{"Ana", "Ben"}, []string{ana.Name, ben.Name})

	// Rename Ben; a rename to Ana's name is refused on Ben's row.
	rec = en.post("/dashboard/staff/"+ben.ID.String(), url.Values{"csrf": {csrf}, "name": {"Benjamin"}}, ck)
	require.Equal(t, http.StatusSeeOther, rec.Code)
	rec = en.post("/dashboard/staff/"+ben.ID.String(), url.Values{"csrf": {csrf}, "name": {"ANA"}}, ck)
	require.Equal(t, http.StatusConflict, rec.Code)
	assert.Contains(t, fieldError(rec.Body.String(), "staff-"+ben.ID.String()+"-error"), "already have someone")

	// Deactivate Ana, then make her active again.
	rec = en.post("/dashboard/staff/"+ana.ID.String(), url.Values{"csrf": {csrf}, "active": {"no"}}, ck)
	require.Equal(t, http.StatusSeeOther, rec.Code)
	require.Equal(t, "/dashboard/staff?notice=deactivated", rec.Header().Get("Location"))
	p, err := cat.Person(ctx, en.shopA.ID, ana.ID)
	require.NoError(t, err)
	require.False(t, p.Active)
	body, _ = en.page(t, ck, "/dashboard/staff?notice=deactivated")
	assert.Contains(t, body, "Inactive")
	assert.Contains(t, body, "Make active")
	assert.Contains(t, body, "Benjamin")
	rec = en.post("/dashboard/staff/"+ana.ID.String(), url.Values{"csrf": {csrf}, "active": {"yes"}}, ck)
	require.Equal(t, http.StatusSeeOther, rec.Code)
	p, err = cat.Person(ctx, en.shopA.ID, ana.ID)
	require.NoError(t, err)
	require.True(t, p.Active)

	// Another shop's person, or no id at all, is not found.
	ckB := en.login(t, en.keyB)
	_, csrfB := en.page(t, ckB, "/dashboard/staff")
	rec = en.post("/dashboard/staff/"+ana.ID.String(), url.Values{"csrf": {csrfB}, "name": {"Mine"}}, ckB)
	require.Equal(t, http.StatusNotFound, rec.Code)
	rec = en.post("/dashboard/staff/not-a-uuid", url.Values{"csrf": {csrfB}, "name": {"Mine"}}, ckB)
	require.Equal(t, http.StatusNotFound, rec.Code)
	p, err = cat.Person(ctx, en.shopA.ID, ana.ID)
	require.NoError(t, err)
	require.Equal(t, "Ana", p.Name)
}

// TestServicesPage: an owner adds and edits services (name, length 5–480, price, who
// does it, active) with the API's rules: a duplicate name, a bad length, a bad price
// or an unknown person is said politely next to the field, never a 500.
func TestServicesPage(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday})
	ck := en.login(t, en.keyA)
	cat := catalog.New(en.pool, nil)
	ctx := context.Background()
	ana, err := cat.AddStaff(ctx, en.shopA.ID, "Ana")
	require.NoError(t, err)

	body, csrf := en.page(t, ck, "/dashboard/services")
	assert.Contains(t, body, `<a href="/dashboard/services" aria-current="page">Services</a>`)
	assert.Contains(t, body, "No services yet")
	assert.Contains(t, body, `value="`+ana.ID.String()+`"`, "Ana can be ticked")

	form := func(name, minutes, price string, staff ...string) url.Values {
		return url.Values{"csrf": {csrf}, "name": {name}, "duration_minutes": {minutes}, "price": {price}, "staff_id": staff}
	}
	rec := en.post("/dashboard/services", form("Cut", "30", "30.00"), ck)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	require.Equal(t, "/dashboard/services?notice=added", rec.Header().Get("Location"))
	rec = en.post("/dashboard/services", form("Colour", "90", "90", ana.ID.String()), ck)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())

	for _, tc := range []struct {
		name   string
		form   url.Values
		status int
		errID  string
		want   string
	}{
		{"duplicate name", form("cut", "30", "30"), http.StatusConflict, "service-name-error", "already have a service of that name"},
		{"too short", form("Trim", "4", "10"), http.StatusUnprocessableEntity, "service-duration-error", "from 5 to 480"},
		{"too long", form("Day", "481", "10"), http.StatusUnprocessableEntity, "service-duration-error", "from 5 to 480"},
		{"not a number", form("Trim", "half an hour", "10"), http.StatusUnprocessableEntity, "service-duration-error", "from 5 to 480"},
		{"no price", form("Trim", "10", ""), http.StatusUnprocessableEntity, "service-price-error", "Enter the price"},
		{"zero price", form("Trim", "10", "0"), http.StatusUnprocessableEntity, "service-price-error", "above zero"},
		{"unknown person", form("Trim", "10", "10", uuid.NewString()), http.StatusUnprocessableEntity, "service-staff-error", "Choose people from the list"},
		{"not an id", form("Trim", "10", "10", "ana"), http.StatusUnprocessableEntity, "service-staff-error", "Choose people from the list"},
		{"no name", form("", "10", "10"), http.StatusUnprocessableEntity, "service-name-error", "Enter a name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := en.post("/dashboard/services", tc.form, ck)
			require.Equal(t, tc.status, rec.Code, rec.Body.String())
			assert.Contains(t, fieldError(rec.Body.String(), tc.errID), tc.want)
			assert.Contains(t, rec.Body.String(), `class="error-summary"`)
		})
	}

	svcs, err := cat.Services(ctx, en.shopA.ID)
	require.NoError(t, err)
	require.Len(t, svcs, 2, "no refused form added a service")
	cut, colour := svcs[0], svcs[1]
	if cut.Name != "Cut" {
		cut, colour = colour, cut
	}
	require.Equal(t, []uuid.UUID{ana.ID}, colour.StaffIDs)
	body, _ = en.page(t, ck, "/dashboard/services")
	assert.Contains(t, body, "$90.00")
	assert.Contains(t, body, "anyone")

	// The edit form shows the service; saving changes it, and unticking active makes it
	// inactive; Ana is ticked for the colour.
	body, _ = en.page(t, ck, "/dashboard/services/"+colour.ID.String())
	assert.Equal(t, "90.00", inputValue(t, body, "service-price"))
	assert.Regexp(t, `value="`+ana.ID.String()+`" checked`, body)
	rec = en.post("/dashboard/services/"+cut.ID.String(), form("Short cut", "25", "28.50", ana.ID.String()), ck)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	svcs, err = cat.Services(ctx, en.shopA.ID)
	require.NoError(t, err)
	require.Contains(t, svcs, catalog.Service{ID: cut.ID, ShopID: en.shopA.ID, Name: "Short cut", DurationMinutes: 25, PriceCents: 2850,
		StaffIDs: []uuid.UUID{ana.ID}, Active: false})
	rec = en.post("/dashboard/services/"+cut.ID.String(), form("Colour", "25", "28.50"), ck)
	require.Equal(t, http.StatusConflict, rec.Code)
	assert.Contains(t, fieldError(rec.Body.String(), "service-name-error"), "already have a service")
	rec = en.post("/dashboard/services/"+cut.ID.String(), form("Short cut", "500", "28.50"), ck)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	assert.Contains(t, fieldError(rec.Body.String(), "service-duration-error"), "from 5 to 480")

	// Another shop's service is not found, to see or to save.
	ckB := en.login(t, en.keyB)
	_, csrfB := en.page(t, ckB, "/dashboard/services")
	require.Equal(t, http.StatusNotFound, en.get("/dashboard/services/"+cut.ID.String(), ckB).Code)
	rec = en.post("/dashboard/services/"+cut.ID.String(), url.Values{"csrf": {csrfB}, "name": {"Mine"}, "duration_minutes": {"30"}, "price": {"1"}}, ckB)
	require.Equal(t, http.StatusNotFound, rec.Code)
}

// TestOpeningFormPicksAPersonAndAService: with staff and services, the opening form
// offers the shop's active people and services; service and price may be left empty;
// the open list shows whose time it is. An unknown or inactive person is refused
// politely.
func TestOpeningFormPicksAPersonAndAService(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday})
	ck := en.login(t, en.keyB) // no payments: openings need no Stripe account
	cat := catalog.New(en.pool, nil)
	ctx := context.Background()
	ana, err := cat.AddStaff(ctx, en.shopB.ID, "Ana")
	require.NoError(t, err)
	gone, err := cat.AddStaff(ctx, en.shopB.ID, "Gone")
	require.NoError(t, err)
	no := false
	_, err = cat.UpdateStaff(ctx, en.shopB.ID, gone.ID, catalog.StaffChange{Active: &no})
	require.NoError(t, err)
	_, err = cat.AddService(ctx, en.shopB.ID, catalog.NewService{Name: "Cut", DurationMinutes: 30, PriceCents: 3000})
	require.NoError(t, err)

	body, csrf := en.page(t, ck, "/dashboard")
	assert.Contains(t, body, `<option value="`+ana.ID.String()+`">Ana</option>`)
	assert.NotContains(t, body, gone.ID.String(), "an inactive person is not offered")
	assert.Contains(t, body, `<option value="Cut">Cut (30 min)</option>`)

	declare := func(extra url.Values) *http.Response {
		f := url.Values{"csrf": {csrf}, "date": {"2026-11-20"}, "time": {"15:00"}, "duration_minutes": {"90"}}
		for k, v := range extra {
			f[k] = v
		}
		return en.post("/dashboard/openings", f, ck).Result()
	}
	res := declare(url.Values{"staff_id": {ana.ID.String()}})
	require.Equal(t, http.StatusSeeOther, res.StatusCode, "no service, no price: each customer's own")
	res = declare(url.Values{"staff_id": {gone.ID.String()}})
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	rec := en.post("/dashboard/openings", url.Values{"csrf": {csrf}, "date": {"2026-11-20"}, "time": {"16:00"},
		"duration_minutes": {"30"}, "staff_id": {"someone"}}, ck)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	assert.Equal(t, "Choose a person from the list, or anyone.", fieldError(rec.Body.String(), "staff-error"))
	rec = en.post("/dashboard/openings", url.Values{"csrf": {csrf}, "date": {"2026-11-20"}, "time": {"16:00"},
		"duration_minutes": {"30"}, "staff_id": {uuid.NewString()}}, ck)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	assert.Equal(t, "Choose one of your active people, or anyone.", fieldError(rec.Body.String(), "staff-error"))
	rec = en.post("/dashboard/openings", url.Values{"csrf": {csrf}, "date": {"2026-11-20"}, "time": {"16:00"},
		"duration_minutes": {"30"}, "service": {"Perm"}}, ck)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	assert.Contains(t, fieldError(rec.Body.String(), "service-error"), `no active service named "Perm"`)

	list, err := en.slots.List(ctx, en.shopB.ID, slots.StatusOpen, 10)
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, ana.ID, list[0].StaffID)
	require.Equal(t, "", list[0].Service)
	body, _ = en.page(t, ck, "/dashboard")
	assert.Contains(t, body, "with Ana")
	assert.Contains(t, body, "Customers&#39; own services")
}

// TestOpeningsShowWhoAndTheBookedService: a filled opening shows whose time it was and
// the service its booking took (shorter than the gap), and the rest of the gap shows as
// an open slot of the same person.
func TestOpeningsShowWhoAndTheBookedService(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday})
	ctx := context.Background()
	cat := catalog.New(en.pool, nil)
	ana, err := cat.AddStaff(ctx, en.shopB.ID, "Ana")
	require.NoError(t, err)
	cust := en.addCustomer(t, en.shopB, "+447700900201", "Cleo")
	start := time.Date(2026, 11, 20, 15, 0, 0, 0, time.UTC)
	gap := insertOpening(t, en.pool, en.shopB.ID, start, wednesday, "", 0, "open")
	_, err = en.pool.Exec(ctx, `UPDATE slot_openings SET duration_minutes = 90, staff_id = $2 WHERE id = $1`, gap, ana.ID)
	require.NoError(t, err)
	bk := book(t, en.pool, gap, cust.ID, ledger.BookingConfirmed, 3000, wednesday)
	_, err = en.pool.Exec(ctx, `UPDATE bookings SET service = 'Cut', duration_minutes = 30 WHERE id = $1`, bk)
	require.NoError(t, err)
	rest := insertOpening(t, en.pool, en.shopB.ID, start.Add(30*time.Minute), wednesday, "", 0, "open")
	_, err = en.pool.Exec(ctx, `UPDATE slot_openings SET duration_minutes = 60, staff_id = $2, parent_id = $3 WHERE id = $1`, rest, ana.ID, gap)
	require.NoError(t, err)

	ck := en.login(t, en.keyB)
	body, _ := en.page(t, ck, "/dashboard")
	filled := regexp.MustCompile(`(?s)<tr class="filled-row" data-opening="` + gap.String() + `">.*?</tr>`).FindString(body)
	require.NotEmpty(t, filled)
	assert.Contains(t, filled, "Cut")
	assert.Contains(t, filled, "30 min")
	assert.Contains(t, filled, "with Ana")
	open := regexp.MustCompile(`(?s)<tr class="open-row" data-opening="` + rest.String() + `">.*?</tr>`).FindString(body)
	require.NotEmpty(t, open)
	assert.Contains(t, open, "with Ana")
	assert.Contains(t, open, "rest of a gap")

	// The export says what was booked too.
	rec := en.get("/dashboard/export.csv?from=2026-11-20&to=2026-11-20", ck)
	require.Equal(t, http.StatusOK, rec.Code)
	rows, err := csv.NewReader(strings.NewReader(rec.Body.String())).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 2)
	require.Equal(t, []string{"30", "Cut"}, rows[1][4:6])
}

// TestCustomerFormKeepsAndEditsStaff: a customer's wanted people show by name in their
// preferences; saving the form as shown keeps them, editing the staff= part changes
// them, and a name the shop does not have is refused next to the field.
func TestCustomerFormKeepsAndEditsStaff(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday})
	ctx := context.Background()
	cat := catalog.New(en.pool, nil)
	ana, err := cat.AddStaff(ctx, en.shopA.ID, "Ana")
	require.NoError(t, err)
	ben, err := cat.AddStaff(ctx, en.shopA.ID, "Ben")
	require.NoError(t, err)
	cu := en.addCustomer(t, en.shopA, "+15555550301", "Dana")
	prefs := customers.Preferences{Days: []int{1}, StaffIDs: []uuid.UUID{ana.ID}}
	_, err = en.customers.Update(ctx, en.shopA.ID, cu.ID, customers.Change{Preferences: &prefs})
	require.NoError(t, err)

	ck := en.login(t, en.keyA)
	path := "/dashboard/customers/" + cu.ID.String()
	body, csrf := en.page(t, ck, path)
	shown := inputValue(t, body, "preferences")
	require.Equal(t, "days=mon; staff=Ana", shown)
	assert.Contains(t, body, "staff=Ana,Ben")
	list, _ := en.page(t, ck, "/dashboard/customers")
	assert.Contains(t, list, "days=mon; staff=Ana")

	save := func(p string) int {
		return en.post(path, url.Values{"csrf": {csrf}, "name": {"Dana"}, "priority": {"0"}, "sms_opt_in": {"yes"}, "preferences": {p}}, ck).Code
	}
	staffOf := func() []uuid.UUID {
		c, err := en.customers.Get(ctx, en.shopA.ID, cu.ID)
		require.NoError(t, err)
		return c.Preferences.StaffIDs
	}
	require.Equal(t, http.StatusSeeOther, save(shown))
	require.Equal(t, []uuid.UUID{ana.ID}, staffOf(), "saving the form as shown keeps the people")
	require.Equal(t, http.StatusSeeOther, save("days=mon; staff=ben, ANA"))
	require.Equal(t, []uuid.UUID{ben.ID, ana.ID}, staffOf())

	rec := en.post(path, url.Values{"csrf": {csrf}, "name": {"Dana"}, "priority": {"0"}, "preferences": {"staff=Zed"}}, ck)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	assert.Equal(t, `preferences: the shop has no person named "Zed"`, fieldError(rec.Body.String(), "preferences-error"))
	require.Equal(t, []uuid.UUID{ben.ID, ana.ID}, staffOf())

	require.Equal(t, http.StatusSeeOther, save("days=mon"))
	require.Empty(t, staffOf(), "removing the staff= part lets anyone's openings through")
}

// TestCustomerExportRoundTrip: the customers' CSV is in the import's columns, with the
// people they want as staff=Ana,Ben; imported back it changes nothing, and it restores
// what was changed since. A shop without those people refuses those lines, as for any
// file.
func TestCustomerExportRoundTrip(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday})
	ctx := context.Background()
	cat := catalog.New(en.pool, nil)
	ana, err := cat.AddStaff(ctx, en.shopA.ID, "Ana")
	require.NoError(t, err)
	ben, err := cat.AddStaff(ctx, en.shopA.ID, "Ben")
	require.NoError(t, err)
	dana := en.addCustomer(t, en.shopA, "+15555550401", "Dana")
	prefs := customers.Preferences{Days: []int{1, 6}, Windows: []customers.Window{{Start: 9 * 60, End: 12 * 60}},
		StaffIDs: []uuid.UUID{ana.ID, ben.ID}}
	_, err = en.customers.Update(ctx, en.shopA.ID, dana.ID, customers.Change{Preferences: &prefs})
	require.NoError(t, err)
	en.addCustomer(t, en.shopA, "+15555550402", "=Eve")

	ck := en.login(t, en.keyA)
	page, csrf := en.page(t, ck, "/dashboard/customers")
	assert.Contains(t, page, `action="/dashboard/customers/export.csv"`)
	assert.Contains(t, page, "No downloads yet.")

	// Whole phones leave only with the shop's own key: not without one, not with
	// another shop's, and a refusal records nothing.
	for _, key := range []string{"", en.keyB, "sk_not_a_key"} {
		rec := en.post("/dashboard/customers/export.csv", url.Values{"csrf": {csrf}, "api_key": {key}}, ck)
		require.Equal(t, http.StatusSeeOther, rec.Code, "key %q", key)
		require.Equal(t, "/dashboard/customers?notice=export_key", rec.Header().Get("Location"), "key %q", key)
		require.NotContains(t, rec.Body.String(), "+15555550401")
	}
	page, _ = en.page(t, ck, "/dashboard/customers?notice=export_key")
	assert.Contains(t, page, "not this shop&#39;s API key")
	assert.Contains(t, page, "No downloads yet.")
	require.Equal(t, http.StatusForbidden, en.post("/dashboard/customers/export.csv", url.Values{"api_key": {en.keyA}}, ck).Code,
		"a form without its csrf token")

	req := httptest.NewRequest(http.MethodPost, "/dashboard/customers/export.csv", strings.NewReader(url.Values{"csrf": {csrf}, "api_key": {" " + en.keyA + " "}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("User-Agent", "TestBrowser/1.0")
	rec := en.do(req, ck)
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "text/csv; charset=utf-8", rec.Header().Get("Content-Type"))
	assert.Contains(t, rec.Header().Get("Content-Disposition"), `filename="customers_2026-11-18.csv"`)
	file := rec.Body.String()
	rows, err := csv.NewReader(strings.NewReader(file)).ReadAll()
	require.NoError(t, err)
	// Both were added at the same instant (the test's clock), so their order in the file
	// is the ids'.
	require.NotEmpty(t, rows)
	slices.SortFunc(rows[1:], func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	require.Equal(t, [][]string{
		{"phone", "name", "priority", "sms_opt_in", "preferences", "language"},
		{"+15555550401", "Dana", "0", "yes", "days=mon,sat; times=09:00-12:00; staff=Ana,Ben", ""},
		{"+15555550402", "'=Eve", "0", "yes", "", ""},
	}, rows)

	danaRow := func(rep customers.ImportReport) customers.ImportRow {
		t.Helper()
		for _, r := range rep.Rows {
			if r.Phone == dana.Phone {
				return r
			}
		}
		t.Fatalf("no line for Dana in %+v", rep.Rows)
		return customers.ImportRow{}
	}
	// As it is: Dana is unchanged. (A name a spreadsheet would run as a formula is
	// written defused, like every export's, and so comes back with its quote.)
	rep, err := en.customers.Import(ctx, en.shopA.ID, strings.NewReader(file))
	require.NoError(t, err)
	require.Equal(t, customers.ImportUnchanged, danaRow(rep).Result, "%+v", rep.Rows)
	// After a change: the file puts Dana's people back.
	none := customers.Preferences{}
	_, err = en.customers.Update(ctx, en.shopA.ID, dana.ID, customers.Change{Preferences: &none})
	require.NoError(t, err)
	rep, err = en.customers.Import(ctx, en.shopA.ID, strings.NewReader(file))
	require.NoError(t, err)
	require.Equal(t, customers.ImportUpdated, danaRow(rep).Result)
	got, err := en.customers.Get(ctx, en.shopA.ID, dana.ID)
	require.NoError(t, err)
	require.Equal(t, prefs, got.Preferences)

	// Another shop without Ana and Ben: Dana's line is refused with the same words.
	rep, err = en.customers.Import(ctx, en.shopB.ID, strings.NewReader(file))
	require.NoError(t, err)
	require.Equal(t, customers.ImportRejected, danaRow(rep).Result)
	require.Equal(t, `preferences: the shop has no person named "Ana"`, danaRow(rep).Reason)

	// The download is on the record, with its browser and its count.
	page, _ = en.page(t, ck, "/dashboard/customers")
	assert.Contains(t, page, `id="exports"`)
	assert.Contains(t, page, "TestBrowser/1.0")
	assert.Contains(t, page, "<td>2</td>")
	assert.NotContains(t, page, "No downloads yet.")
	exports, err := en.customers.Exports(ctx, en.shopA.ID, 10)
	require.NoError(t, err)
	require.Len(t, exports, 1)
	require.Equal(t, 2, exports[0].Customers)
	others, err := en.customers.Exports(ctx, en.shopB.ID, 10)
	require.NoError(t, err)
	require.Empty(t, others, "another shop's record")

	// Signed out: no file, and no GET at all.
	require.Equal(t, http.StatusSeeOther, en.post("/dashboard/customers/export.csv", url.Values{"api_key": {en.keyA}}).Code)
	require.NotEqual(t, http.StatusOK, en.get("/dashboard/customers/export.csv", ck).Code)
}
