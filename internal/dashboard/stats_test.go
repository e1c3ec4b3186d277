package dashboard_test

import (
	"encoding/csv"
	"encoding/xml"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/dashboard"
	"github.com/slotrecovery/slotrecovery/internal/ledger"
)

// TestStatsPage: the Figures page shows the period's totals from the records (revenue
// equal to the filled slots of those days, to the cent), the funnel and the per-week
// charts as SVG that parses, the groups' table, and the same figures as a CSV file; a
// refused period is shown next to its field; another shop's openings count nowhere.
func TestStatsPage(t *testing.T) {
	t.Parallel()
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, ny) // a Wednesday
	en := newEnv(t, envOpts{now: now})
	ana := en.addCustomer(t, en.shopA, "+15555550191", "Ana")
	ben := en.addCustomer(t, en.shopA, "+15555550192", "Ben")
	day := func(d, hour int) time.Time { return time.Date(2026, 11, d, hour, 0, 0, 0, ny) }
	// This week: two openings, one filled at $45 (confirmed); last week: one filled at
	// $30.50 (pending payment), one cancelled by the owner (counts nowhere).
	a := insertOpening(t, en.pool, en.shopA.ID, day(24, 10), day(23, 9), "Cut", 4500, "open")
	insertOpening(t, en.pool, en.shopA.ID, day(26, 15), day(24, 9), "Cut", 4500, "open")
	b := insertOpening(t, en.pool, en.shopA.ID, day(18, 10), day(17, 9), "Colour", 3050, "open")
	insertOpening(t, en.pool, en.shopA.ID, day(19, 10), day(17, 9), "Colour", 3050, "cancelled")
	book(t, en.pool, a, ana.ID, ledger.BookingConfirmed, 4500, day(23, 10))
	book(t, en.pool, b, ben.ID, ledger.BookingPendingPayment, 3050, day(17, 12))
	// Another shop's filled opening on the same days.
	other := en.addCustomer(t, en.shopB, "+447700900191", "Other")
	book(t, en.pool, insertOpening(t, en.pool, en.shopB.ID, day(24, 10), day(23, 9), "Cut", 9900, "open"), other.ID, ledger.BookingConfirmed, 9900, day(23, 10))

	ck := en.login(t, en.keyA)
	body, _ := en.page(t, ck, "/dashboard")
	require.Contains(t, body, `href="`+dashboard.StatsPath+`"`, "the navigation links the page")
	body, _ = en.page(t, ck, dashboard.StatsPath+"?from=2026-11-16&to=2026-11-29&group_by=week")
	page := text(body)
	require.Contains(t, page, "Mon 16 Nov 2026 – Sun 29 Nov 2026", page)
	require.Contains(t, page, "Revenue recovered $75.50", page)
	require.Contains(t, page, "Openings filled 2 of 3 67% fill rate", page)
	require.Contains(t, page, "Bookings 2 0 paid · 0 move-ups")
	// The filled slots' list sums to the same for those days.
	home, _ := en.page(t, ck, "/dashboard")
	require.Contains(t, text(home), "$45.00")
	require.Contains(t, text(home), "$30.50")

	svgs := regexp.MustCompile(`(?s)<svg.*?</svg>`).FindAllString(body, -1)
	require.Len(t, svgs, 3, "the funnel and two charts")
	for _, s := range svgs {
		require.NoError(t, xml.Unmarshal([]byte(s), new(struct{})), "SVG parses: %.200s", s)
		require.NotContains(t, s, "style=")
		require.NotContains(t, s, "<script")
	}
	require.Contains(t, svgs[0], "Openings")
	rows := regexp.MustCompile(`(?s)<tr><td data-label="Week"><div>([^<]*)</div></td><td data-label="Openings" class="num"><div>(\d+)</div></td><td data-label="Filled" class="num"><div>(\d+)</div></td><td data-label="Fill rate" class="num"><div>([^<]*)</div></td><td data-label="Revenue" class="num"><div>([^<]*)</div>`).
		FindAllStringSubmatch(body, -1)
	require.Len(t, rows, 2, page)
	require.Equal(t, []string{"1", "1", "100%", "$30.50"}, rows[0][2:])
	require.Equal(t, []string{"2", "1", "50%", "$45.00"}, rows[1][2:])

	// The CSV link downloads the same figures.
	link := regexp.MustCompile(`id="stats-csv" href="([^"]+)"|href="([^"]+)" id="stats-csv"`).FindStringSubmatch(body)
	require.NotNil(t, link, "the CSV link")
	href := strings.ReplaceAll(link[1]+link[2], "&amp;", "&")
	rec := en.get(href, ck)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "text/csv; charset=utf-8", rec.Header().Get("Content-Type"))
	recs, err := csv.NewReader(io.Reader(rec.Body)).ReadAll()
	require.NoError(t, err)
	require.Len(t, recs, 4, "header, two weeks, totals")
	require.Equal(t, "75.50", recs[3][slices.Index(recs[0], "revenue")])

	// A refused period: the page again, the reason next to the field.
	rec = en.get(dashboard.StatsPath+"?from=2026-11-29&to=2026-11-16", ck)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	require.NotEmpty(t, fieldError(rec.Body.String(), "stats-to-error")+fieldError(rec.Body.String(), "stats-from-error"), text(rec.Body.String()))
	rec = en.get(dashboard.StatsPath+"?group_by=month", ck)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	require.NotEmpty(t, fieldError(rec.Body.String(), "stats-group-error"))

	// The default: the 30 days ending today.
	body, _ = en.page(t, ck, dashboard.StatsPath)
	require.Contains(t, text(body), "Tue 27 Oct 2026 – Wed 25 Nov 2026")
}
