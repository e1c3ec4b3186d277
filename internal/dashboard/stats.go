package dashboard

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/slotrecovery/slotrecovery/api"
	"github.com/slotrecovery/slotrecovery/internal/money"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/stats"
)

// StatsPath is the figures' page (what the waitlist earned, issue 47); StatsPath +
// ".csv" the same figures as a file.
const StatsPath = "/dashboard/stats"

// statsView is the figures' page: the period and grouping asked, and what stats made of
// them (nil when the form was refused).
type statsView struct {
	From, To, GroupBy string
	Errors            map[string]string
	Stats             *api.Stats
	// CSV is the file's address for the period shown.
	CSV string
}

// statsGroupings are the page's groupings, in its select's order.
var statsGroupings = [][2]string{
	{api.StatsByWeek, "Week"}, {api.StatsByService, "Service"}, {api.StatsByStaff, "Person"}, {api.StatsByWave, "Wave"},
}

// statsReport reads the query's period and grouping and asks stats for them; a refused
// query comes back as the view with its errors.
func (d *Dashboard) statsReport(c echo.Context) (statsView, error) {
	s := current(c)
	v := statsView{From: c.QueryParam("from"), To: c.QueryParam("to"), GroupBy: c.QueryParam("group_by"), Errors: map[string]string{}}
	for _, f := range []*string{&v.From, &v.To, &v.GroupBy} {
		if len(*f) > 20 {
			*f = (*f)[:20]
		}
	}
	st, err := d.cfg.Stats.Report(c.Request().Context(), s.Shop, stats.Query{From: v.From, To: v.To, GroupBy: v.GroupBy})
	if p, ok := problem.As(err); err != nil && ok && p.Kind == problem.Invalid {
		v.Errors[cmpOr(p.Field, "from")] = friendlySetting(err)
		return v, nil
	}
	if err != nil {
		return v, err
	}
	v.Stats, v.From, v.To, v.GroupBy = &st, st.From, st.To, st.GroupBy
	q := url.Values{"from": {st.From}, "to": {st.To}, "group_by": {st.GroupBy}}
	v.CSV = StatsPath + ".csv?" + q.Encode()
	return v, nil
}

// statsPage is GET /dashboard/stats?from=&to=&group_by=.
func (d *Dashboard) statsPage(c echo.Context) error {
	v, err := d.statsReport(c)
	if err != nil {
		return d.internalError(c, "stats", err)
	}
	status := http.StatusOK
	if v.Stats == nil {
		status = http.StatusUnprocessableEntity
	}
	return d.render(c, status, "Figures · "+current(c).Shop.Name, v)
}

// statsCSV is GET /dashboard/stats.csv?from=&to=&group_by=: the page's figures as the
// API's CSV file.
func (d *Dashboard) statsCSV(c echo.Context) error {
	v, err := d.statsReport(c)
	if err != nil {
		return d.internalError(c, "stats", err)
	}
	if v.Stats == nil {
		return d.render(c, http.StatusUnprocessableEntity, "Figures · "+current(c).Shop.Name, v)
	}
	hd := c.Response().Header()
	hd.Set(echo.HeaderContentType, "text/csv; charset=utf-8")
	hd.Set(echo.HeaderContentDisposition, `attachment; filename="stats_`+v.Stats.GroupBy+`_`+v.Stats.From+`_`+v.Stats.To+`.csv"`)
	hd.Set("Cache-Control", "no-store")
	c.Response().WriteHeader(http.StatusOK)
	return d.cfg.Stats.WriteCSV(c.Response(), *v.Stats)
}

// headline is one of the page's headline figures.
type headline struct {
	Label, Value, Detail string
}

// headlines are the totals an owner reads first.
func (v statsView) headlines() []headline {
	t, cur := v.Stats.Totals, v.Stats.Currency
	ttf := "–"
	if t.TimeToFillMedianS != nil {
		ttf = formatDuration(secondsDuration(*t.TimeToFillMedianS))
		if t.TimeToFillP90S != nil {
			ttf += " (9 in 10 within " + formatDuration(secondsDuration(*t.TimeToFillP90S)) + ")"
		}
	}
	return []headline{
		{"Revenue recovered", money.Format(t.RevenueCents, cur), fmt.Sprintf("%s paid through payment links", money.Format(t.PaidCents, cur))},
		{"Openings filled", fmt.Sprintf("%d of %d", t.Filled, t.Openings), fmt.Sprintf("%s fill rate", percentText(t.FillRate))},
		{"Time to fill (median)", ttf, ""},
		{"Offers sent", strconv.Itoa(t.OffersSent), fmt.Sprintf("%d booked · %d no · %d missed · %d no reply · %d failed",
			t.Replies.Booked, t.Replies.Declined, t.Replies.Missed, t.Replies.NoReply, t.Replies.Failed)},
		{"Bookings", strconv.Itoa(t.Bookings), fmt.Sprintf("%d paid · %d move-ups", t.Paid, t.MoveUps)},
		{"Came / no-shows", fmt.Sprintf("%d / %d", t.Attended, t.NoShows), "as you marked them"},
	}
}

func percentText(rate float64) string {
	return strconv.FormatFloat(rate*100, 'f', 0, 64) + "%"
}
