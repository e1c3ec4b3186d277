package dashboard_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/dashboard"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/slots"
)

// text is the page's visible text, tags dropped and spaces folded, for assertions on
// what an owner reads.
func text(body string) string {
	body = regexp.MustCompile(`(?s)<[^>]*>`).ReplaceAllString(body, " ")
	return strings.Join(strings.Fields(html.UnescapeString(body)), " ")
}

// TestOpeningRecordAndAttendance follows an owner through issue 47's pages: an
// opening's record (who each wave texted and why, who it left out and for what, "why
// not …?" by name and by phone), the filled slot's attendance buttons (too early, a
// no-show, the undo, final after 24 hours, another shop's owner refused), and the
// customer's figures and offers with the no-shows' clear.
func TestOpeningRecordAndAttendance(t *testing.T) {
	t.Parallel()
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	start := time.Date(2026, 11, 30, 10, 0, 0, 0, ny)
	en := newEnv(t, envOpts{now: start})
	ctx := context.Background()
	shop := en.shopA

	ana, err := en.customers.Add(ctx, shop.ID, customers.NewCustomer{Phone: "+15555550171", Name: "Ana", SMSOptIn: true, Priority: 5})
	require.NoError(t, err)
	ben := en.addCustomer(t, shop, "+15555550172", "Ben")
	maria, err := en.customers.Add(ctx, shop.ID, customers.NewCustomer{Phone: "+15555550173", Name: "Maria"}) // never opted in
	require.NoError(t, err)
	olga := en.addCustomer(t, shop, "+15555550174", "Olga")
	require.NoError(t, en.customers.OptOut(ctx, olga.ID))

	op, err := en.slots.Declare(ctx, shop, slots.NewOpening{StartsAt: start.Add(2 * time.Hour), DurationMinutes: 30, Service: "Cut", PriceCents: 2500})
	require.NoError(t, err)
	_, err = en.offers.RunWave(ctx, jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 1})
	require.NoError(t, err)

	ck := en.login(t, en.keyA)
	path := dashboard.OpeningPath + "/" + op.ID.String()
	body, _ := en.page(t, ck, "/dashboard")
	require.Contains(t, body, `href="`+path+`"`, "the open slot links its record")

	body, _ = en.page(t, ck, path)
	page := text(body)
	require.Contains(t, page, "Wave 1 · Mon 30 Nov 2026, 10:00", page)
	require.Contains(t, page, "Ranked by priority, then the list's order.")
	rows := regexp.MustCompile(`(?s)<tr><td data-label="#" class="num"><div>(\d+)</div></td><td data-label="Customer"><div><a href="/dashboard/customers/([0-9a-f-]{36})">([^<]*)</a></div></td><td data-label="Why there"><div>([^<]*)</div>`).
		FindAllStringSubmatch(body, -1)
	require.Len(t, rows, 2, "texted rows in %s", page)
	require.Equal(t, []string{"1", ana.ID.String(), "Ana"}, rows[0][1:4])
	require.Equal(t, []string{"2", ben.ID.String(), "Ben"}, rows[1][1:4])
	rec, err := en.offers.Record(ctx, shop.ID, op.ID)
	require.NoError(t, err)
	require.Equal(t, rec.Waves[0].Texted[0].Reason, html.UnescapeString(rows[0][4]), "the record's own words")
	require.Contains(t, rows[0][4], "priority 5")
	require.Contains(t, page, "Left out: 2 customers. 1 opted out or unreachable 1 no consent to texts", page)
	require.Contains(t, page, "No replies yet.")

	// Why not Maria? By name, then by the end of her phone number.
	want, err := en.offers.Explain(ctx, shop.ID, op.ID, maria.ID)
	require.NoError(t, err)
	require.False(t, want.Texted)
	for _, q := range []string{"maria", "0173"} {
		body, _ = en.page(t, ck, path+"?q="+url.QueryEscape(q))
		page = text(body)
		require.Contains(t, page, "Maria +155******73 Maria was not texted", "q=%s: %s", q, page)
		require.Contains(t, page, want.Words, "q=%s", q)
		require.Contains(t, want.Words, "Maria was not texted in wave 1")
	}
	body, _ = en.page(t, ck, path+"?q=Zed")
	require.Contains(t, text(body), "No customer matches “Zed”.")
	body, _ = en.page(t, ck, path+"?q="+strings.Repeat("x", 101))
	require.Contains(t, text(body), "at most 100 characters")
	// Another shop's owner finds no such opening.
	other := en.login(t, en.keyB)
	require.Equal(t, http.StatusNotFound, en.get(path, other).Code)
	require.Equal(t, http.StatusNotFound, en.get(dashboard.OpeningPath+"/not-an-id", ck).Code)

	// Ana says YES (the claim her YES makes).
	cl, err := en.slots.Claimable(ctx, &shop, ana.ID)
	require.NoError(t, err)
	require.Len(t, cl.Live, 1)
	var claim slots.Claim
	require.NoError(t, pgx.BeginFunc(ctx, en.pool, func(tx pgx.Tx) (err error) {
		claim, err = en.slots.ClaimTx(ctx, tx, shop, ana.ID, cl.Live[0])
		return err
	}))
	require.Equal(t, slots.Booked, claim.Outcome)
	var bookingID uuid.UUID
	require.NoError(t, en.pool.QueryRow(ctx, `SELECT id FROM bookings WHERE opening_id = $1`, op.ID).Scan(&bookingID))
	mark := func(ck *http.Cookie, csrf, m string) string {
		t.Helper()
		rec := en.post("/dashboard/bookings/"+bookingID.String()+"/attendance", url.Values{"csrf": {csrf}, "mark": {m}, "page": {"1"}}, ck)
		require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
		return rec.Header().Get("Location")
	}

	// Before the visit: no buttons, and a mark is refused with the reason.
	body, csrf := en.page(t, ck, "/dashboard")
	require.Contains(t, text(body), "after the visit")
	require.NotContains(t, body, `value="no_show"`)
	require.Contains(t, body, `action="/dashboard/bookings/`+bookingID.String()+`/late_cancel"`, "before the visit: a late cancellation")
	require.Equal(t, "/dashboard?notice=too_early#filled", mark(ck, csrf, "no_show"))
	body, _ = en.page(t, ck, "/dashboard?notice=too_early")
	require.Contains(t, text(body), "The appointment has not started yet")

	// After it: Came and No-show; a no-show marked, shown, and undone.
	en.clock.Set(start.Add(3 * time.Hour))
	body, csrf = en.page(t, ck, "/dashboard")
	require.Contains(t, body, `value="attended"`)
	require.Contains(t, body, `value="no_show"`)
	require.Contains(t, body, `href="`+path+`"`, "the filled slot links its record")
	require.Equal(t, "/dashboard?notice=no_show#filled", mark(ck, csrf, "no_show"))
	body, _ = en.page(t, ck, "/dashboard?notice=no_show")
	require.Contains(t, text(body), "Marked as a no-show.")
	require.Contains(t, body, `<span class="badge badge-bad">No-show</span>`)
	require.Contains(t, body, `value="none"`, "undo offered")
	// Its fee, as the ledger answered it (issue 48), is shown beside the mark.
	_, err = en.pool.Exec(ctx, `INSERT INTO booking_fees (booking_id, shop_id, kind, state, amount_cents, currency, decline_code, created_at, updated_at)
		VALUES ($1, $2, 'no_show', 'declined', 2000, 'usd', 'insufficient_funds', now(), now())`, bookingID, shop.ID)
	require.NoError(t, err)
	body, _ = en.page(t, ck, "/dashboard")
	require.Contains(t, text(body), "No-show fee $20.00 declined: insufficient_funds")
	// Another shop's owner cannot mark it.
	_, csrfB := en.page(t, other, "/dashboard")
	rec2 := en.post("/dashboard/bookings/"+bookingID.String()+"/attendance", url.Values{"csrf": {csrfB}, "mark": {"attended"}}, other)
	require.Equal(t, http.StatusNotFound, rec2.Code)

	// Ben texted PAUSE: his page says until when.
	_, err = en.customers.Pause(ctx, ben.ID) // at the clock: 13:00
	require.NoError(t, err)
	body, _ = en.page(t, ck, "/dashboard/customers/"+ben.ID.String())
	require.Contains(t, text(body), "Paused offers until Mon 14 Dec 2026, 13:00", text(body))

	// Ana's page: her figures and her offer, booked; her no-show cleared.
	cpath := "/dashboard/customers/" + ana.ID.String()
	body, csrf = en.page(t, ck, cpath)
	page = text(body)
	require.Contains(t, page, "Offers in 90 days 1 Bookings in 90 days 1 Came 0 No-shows 1 Holds not paid 0", page)
	require.Contains(t, page, "Last offered Mon 30 Nov 2026, 10:00")
	require.Contains(t, page, "Mon 30 Nov 2026, 12:00 · Cut Mon 30 Nov 2026, 10:00 Wave 1 booked", page)
	require.Contains(t, body, `href="`+path+`"`, "her offer links the opening's record")
	rec3 := en.post(cpath+"/clear_no_shows", url.Values{"csrf": {csrf}}, ck)
	require.Equal(t, http.StatusSeeOther, rec3.Code)
	require.Equal(t, cpath+"?notice=no_shows_cleared#record", rec3.Header().Get("Location"))
	body, _ = en.page(t, ck, cpath+"?notice=no_shows_cleared")
	require.Contains(t, text(body), "Their no-shows so far no longer keep them out of offers.")
	var cleared bool
	require.NoError(t, en.pool.QueryRow(ctx, `SELECT no_shows_cleared_at IS NOT NULL FROM customers WHERE id = $1`, ana.ID).Scan(&cleared))
	require.True(t, cleared)

	_, csrf = en.page(t, ck, "/dashboard")
	require.Equal(t, "/dashboard?notice=unmarked#filled", mark(ck, csrf, "none"))
	require.Equal(t, "/dashboard?notice=attended#filled", mark(ck, csrf, "attended"))
	body, _ = en.page(t, ck, "/dashboard")
	require.Contains(t, body, `<span class="badge badge-ok">Came</span>`)

	// A day later the mark stands: no undo, and a change is refused.
	en.clock.Set(start.Add(28 * time.Hour))
	ck = en.login(t, en.keyA) // the session of the day before has ended
	body, csrf = en.page(t, ck, "/dashboard")
	require.Contains(t, body, `<span class="badge badge-ok">Came</span>`)
	require.NotContains(t, body, `value="none"`)
	require.Equal(t, "/dashboard?notice=attendance_final#filled", mark(ck, csrf, "no_show"))
	var attended bool
	require.NoError(t, en.pool.QueryRow(ctx, `SELECT attended_at IS NOT NULL AND no_show_at IS NULL FROM bookings WHERE id = $1`, bookingID).Scan(&attended))
	require.True(t, attended)
	// Its time has passed: not a late cancellation any more.
	lc := en.post("/dashboard/bookings/"+bookingID.String()+"/late_cancel", url.Values{"csrf": {csrf}}, ck)
	require.Equal(t, http.StatusSeeOther, lc.Code, lc.Body.String())
	require.Equal(t, "/dashboard?notice=not_cancellable#filled", lc.Header().Get("Location"))
	var status string
	require.NoError(t, en.pool.QueryRow(ctx, `SELECT status FROM bookings WHERE id = $1`, bookingID).Scan(&status))
	require.NotEqual(t, "cancelled", status)
}
