package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	apptbook "github.com/slotrecovery/slotrecovery/internal/book"
	"github.com/slotrecovery/slotrecovery/internal/catalog"
	"github.com/slotrecovery/slotrecovery/internal/connectors"
	"github.com/slotrecovery/slotrecovery/internal/dashboard"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// offerForms are the appointment ids the page's "Offer it" buttons post for.
func offerForms(body string) []string {
	var ids []string
	re := regexp.MustCompile(`action="` + regexp.QuoteMeta(dashboard.BookPath) + `/([0-9a-f-]{36})/offer"`)
	for _, m := range re.FindAllStringSubmatch(body, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// bookSection is the HTML of the page's section whose id is id.
func bookSection(t *testing.T, body, id string) string {
	t.Helper()
	i := strings.Index(body, `<section class="card" id="`+id+`"`)
	require.GreaterOrEqual(t, i, 0, "section %s", id)
	j := strings.Index(body[i:], "</section>")
	require.Greater(t, j, 0)
	return body[i : i+j]
}

// TestBookDay: the Book page shows the shop's day in its time zone, a section per person
// and "Anyone" last, names escaped and strangers' phones masked; the next day's and the
// day before's are a link away. With auto_declare off a cancelled appointment still
// ahead has "Offer it", and nothing else has; two presses at once declare one opening,
// and the page then says what was declared. Another shop's owner gets the 404 page.
func TestBookDay(t *testing.T) {
	t.Parallel()
	// 09:00 on Monday 30 November in New York (shop A's zone).
	now := time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC)
	en := newEnv(t, envOpts{now: now})
	ctx := context.Background()
	off := false
	shop, err := en.shops.Update(ctx, en.shopA.ID, shops.ShopChange{AutoDeclare: &off})
	require.NoError(t, err)
	cat := catalog.New(en.pool, en.clock.Now)
	ana, err := cat.AddStaff(ctx, shop.ID, "Ana")
	require.NoError(t, err)
	ben, err := cat.AddStaff(ctx, shop.ID, "<i>Ben</i>")
	require.NoError(t, err)
	en.addCustomer(t, shop, "+15555550123", "Kim <script>")

	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	at := func(day, hour int) time.Time { return time.Date(2026, 11, day, hour, 0, 0, 0, ny) }
	upsert := func(id string, status connectors.Status, start time.Time, staff uuid.UUID, phone, name string) apptbook.Appointment {
		t.Helper()
		res, err := en.book.Upsert(ctx, shop, connectors.Appointment{Source: connectors.SourceCalcom, ExternalID: id,
			Status: status, StartsAt: start, DurationMinutes: 45, Service: "Cut", PriceCents: 2500, Phone: phone,
			CustomerName: name, StaffID: staff})
		require.NoError(t, err)
		return res.Appointment
	}
	kim := upsert("kim", connectors.StatusBooked, at(30, 10), ana.ID, "+15555550123", "Kim")
	lou := upsert("lou", connectors.StatusBooked, at(30, 11), uuid.Nil, "+15555550999", "<b>Lou</b>")
	gone := upsert("gone", connectors.StatusCancelled, at(30, 13), ben.ID, "+15555550777", "Max")
	early := upsert("early", connectors.StatusCancelled, at(30, 8), ana.ID, "", "Early")
	late := upsert("late", connectors.StatusBooked, at(30, 23), uuid.Nil, "", "Late") // 04:00 UTC the next day
	tomorrow := upsert("tomorrow", connectors.StatusBooked, at(31, 9), ana.ID, "", "Tom")
	otherShop, err := en.book.Upsert(ctx, en.shopB, connectors.Appointment{Source: connectors.SourceAPI, ExternalID: "b",
		Status: connectors.StatusCancelled, StartsAt: at(30, 15), DurationMinutes: 30, CustomerName: "Bea's client"})
	require.NoError(t, err)

	ck := en.login(t, en.keyA)
	body, csrf := en.page(t, ck, dashboard.BookPath)
	require.Contains(t, body, `aria-current="page">Book<`)
	require.Contains(t, body, "Monday 30 November 2026")
	require.Contains(t, body, `href="/dashboard/book?day=2026-11-29"`)
	require.Contains(t, body, `href="/dashboard/book?day=2026-12-01"`)
	for _, a := range []apptbook.Appointment{kim, lou, gone, early, late} {
		require.Contains(t, body, `id="appointment-`+a.ID.String()+`"`)
	}
	require.NotContains(t, body, tomorrow.ID.String(), "the next day's")
	require.NotContains(t, body, otherShop.Appointment.ID.String(), "another shop's")
	require.NotContains(t, body, "Bea&#39;s client")

	// A section per person, by name, "Anyone" last; each with a heading.
	anaID, benID := "person-staff-"+ana.ID.String(), "person-staff-"+ben.ID.String()
	iAna, iBen, iAny := strings.Index(body, `id="`+anaID+`"`), strings.Index(body, `id="`+benID+`"`), strings.Index(body, `id="person-anyone"`)
	require.True(t, iBen < iAna && iAna < iAny, "<i>Ben</i> sorts before Ana, Anyone last: %d %d %d", iBen, iAna, iAny)
	anaSec := bookSection(t, body, anaID)
	require.Contains(t, anaSec, `<h2 id="person-h-staff-`+ana.ID.String()+`">Ana`)
	require.Contains(t, anaSec, kim.ID.String())
	require.Contains(t, anaSec, early.ID.String())
	require.Contains(t, anaSec, "10:00–10:45")
	require.Contains(t, anaSec, "45 min")
	require.Less(t, strings.Index(anaSec, early.ID.String()), strings.Index(anaSec, kim.ID.String()), "by start")
	require.Contains(t, bookSection(t, body, benID), "&lt;i&gt;Ben&lt;/i&gt;")
	anySec := bookSection(t, body, "person-anyone")
	require.Contains(t, anySec, lou.ID.String())
	require.Contains(t, anySec, late.ID.String(), "23:00 in New York is the shop's day, whatever UTC says")

	// Names escaped; the known customer's name; phones masked.
	require.Contains(t, body, "Kim &lt;script&gt;")
	require.Contains(t, body, "&lt;b&gt;Lou&lt;/b&gt;")
	require.NotContains(t, body, "<b>Lou</b>")
	require.NotContains(t, body, "<script>")
	require.NotContains(t, body, "+15555550999")
	require.Contains(t, body, "+155******99")
	require.Contains(t, body, "cal.com")
	require.Contains(t, body, `<span class="badge badge-bad">Cancelled</span>`)

	// Only the cancelled appointment still ahead waits for "Offer it".
	require.Equal(t, []string{gone.ID.String()}, offerForms(body))
	requireAccessible(t, body)
	require.Contains(t, body, "Waiting for you to offer it")
	require.Regexp(t, `<button type="submit" class="btn btn-primary">Offer it<span class="vh"> \(13:00–13:45, Max\)</span></button>`, body)

	// Another shop's owner, and a form without its token, change nothing.
	ckB := en.login(t, en.keyB)
	_, csrfB := en.page(t, ckB, dashboard.BookPath)
	rec := en.post(dashboard.BookPath+"/"+gone.ID.String()+"/offer", url.Values{"csrf": {csrfB}}, ckB)
	require.Equal(t, http.StatusNotFound, rec.Code)
	rec = en.post(dashboard.BookPath+"/"+gone.ID.String()+"/offer", url.Values{}, ck)
	require.Equal(t, http.StatusForbidden, rec.Code)
	rec = en.post(dashboard.BookPath+"/not-an-id/offer", url.Values{"csrf": {csrf}}, ck)
	require.Equal(t, http.StatusNotFound, rec.Code)
	require.Zero(t, countOpenings(t, en.pool, shop.ID))

	// A booked appointment has nothing to offer: the page says so.
	rec = en.post(dashboard.BookPath+"/"+kim.ID.String()+"/offer", url.Values{"csrf": {csrf}, "day": {"2026-11-30"}}, ck)
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Contains(t, rec.Body.String(), "Only an appointment that freed a time still ahead")

	// Two presses at once: one opening.
	var wg sync.WaitGroup
	codes, where := make([]int, 2), make([]string, 2)
	for i := range codes {
		wg.Go(func() {
			r := en.post(dashboard.BookPath+"/"+gone.ID.String()+"/offer", url.Values{"csrf": {csrf}, "day": {"2026-11-30"}}, ck)
			codes[i], where[i] = r.Code, r.Header().Get("Location")
		})
	}
	wg.Wait()
	require.Equal(t, []int{http.StatusSeeOther, http.StatusSeeOther}, codes)
	back := "/dashboard/book?day=2026-11-30&notice=offered#appointment-" + gone.ID.String()
	require.Equal(t, []string{back, back}, where, "both presses see the opening declared")
	require.Equal(t, 1, countOpenings(t, en.pool, shop.ID))
	decls, err := en.book.Declarations(ctx, shop.ID, gone.ID)
	require.NoError(t, err)
	require.Len(t, decls, 1)
	require.Equal(t, apptbook.DeclarationDeclared, decls[0].State)
	body, _ = en.page(t, ck, dashboard.BookPath+"?day=2026-11-30&notice=offered")
	require.Contains(t, body, "The opening is declared")
	require.Contains(t, body, "Opening declared: 13:00, 45 min")
	require.Empty(t, offerForms(body), "declared: nothing left to offer")

	// The next day, the day before, and a day that is not one.
	body, _ = en.page(t, ck, dashboard.BookPath+"?day=2026-12-01")
	require.Contains(t, body, tomorrow.ID.String())
	require.NotContains(t, body, kim.ID.String())
	require.Contains(t, body, `href="/dashboard/book?day=2026-11-30"`)
	body, _ = en.page(t, ck, dashboard.BookPath+"?day=2026-11-29")
	require.Contains(t, body, "No appointments on this day.")
	rec = en.get(dashboard.BookPath+"?day=30/11/2026", ck)
	require.Equal(t, http.StatusBadRequest, rec.Code)
}

// TestBookDeclarationsShown: with auto_declare on (the default) a cancellation declares
// its opening by itself, and the page says what it declared, or why it did not.
func TestBookDeclarationsShown(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC)
	en := newEnv(t, envOpts{now: now})
	ctx := context.Background()
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	cancel := func(id string, start time.Time) apptbook.Appointment {
		t.Helper()
		res, err := en.book.Upsert(ctx, en.shopA, connectors.Appointment{Source: connectors.SourceAPI, ExternalID: id,
			Status: connectors.StatusCancelled, StartsAt: start, DurationMinutes: 30, Service: "Trim", PriceCents: 1500})
		require.NoError(t, err)
		return res.Appointment
	}
	declared := cancel("later", time.Date(2026, 11, 30, 15, 0, 0, 0, ny))
	// Inside the shop's hour of minimum notice.
	soon := cancel("soon", time.Date(2026, 11, 30, 9, 30, 0, 0, ny))

	ck := en.login(t, en.keyA)
	body, _ := en.page(t, ck, dashboard.BookPath)
	require.Empty(t, offerForms(body), "nothing waits with auto_declare on")
	require.Contains(t, body, "offered as an opening by itself")
	row := func(id uuid.UUID) string {
		i := strings.Index(body, `id="appointment-`+id.String()+`"`)
		require.GreaterOrEqual(t, i, 0)
		return body[i : i+strings.Index(body[i:], "</tr>")]
	}
	require.Contains(t, row(declared.ID), "Opening declared: 15:00, 30 min")
	require.Contains(t, row(soon.ID), "Not offered (09:30, 30 min): it starts sooner than your minimum notice")
	require.Equal(t, 1, countOpenings(t, en.pool, en.shopA.ID))
}
