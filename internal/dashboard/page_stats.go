package dashboard

import (
	"strconv"
	"time"

	g "maragu.dev/gomponents"
	h "maragu.dev/gomponents/html"

	"github.com/slotrecovery/slotrecovery/api"
	"github.com/slotrecovery/slotrecovery/internal/money"
	"github.com/slotrecovery/slotrecovery/internal/stats"
)

// The figures' page (stats.go): the period's form, the headline totals, the funnel, a
// chart of what was filled and recovered per group, and the groups' table.

func secondsDuration(s int64) time.Duration { return time.Duration(s) * time.Second }

func (v statsView) content(string) g.Node {
	return g.Group{
		h.H1(g.Text("What the waitlist earned")),
		h.P(h.Class("lede"), g.Text("Every figure belongs to the day of its opening's appointment, in your time zone: "+
			"an opening's offers, replies and bookings count where the opening counts, so the revenue is the sum of the "+
			"filled slots of those days. (The totals on Slots count bookings by the day they were made.)")),
		v.form(),
		g.Iff(v.Stats != nil, v.report),
	}
}

// form asks for the period and the grouping (a GET: the page's address is shareable).
func (v statsView) form() g.Node {
	field := func(name, id, label string, input g.Node) g.Node {
		e := v.Errors[name]
		return h.Div(fieldClass(e), h.Label(h.For(id), g.Text(label)), fieldError(id+"-error", e), input)
	}
	return h.Form(h.Method("get"), h.Action(StatsPath), h.Class("card"), novalidate(),
		h.Div(h.Class("row filters"),
			field("from", "stats-from", "From", h.Input(h.ID("stats-from"), h.Name("from"), h.Type("date"), h.Value(v.From),
				g.If(v.Errors["from"] != "", h.Aria("invalid", "true")))),
			field("to", "stats-to", "To (included)", h.Input(h.ID("stats-to"), h.Name("to"), h.Type("date"), h.Value(v.To),
				g.If(v.Errors["to"] != "", h.Aria("invalid", "true")))),
			field("group_by", "stats-group", "Per", h.Select(h.ID("stats-group"), h.Name("group_by"),
				g.Map(statsGroupings, func(o [2]string) g.Node {
					return h.Option(h.Value(o[0]), g.If(o[0] == v.GroupBy, h.Selected()), g.Text(o[1]))
				}))),
			h.Div(h.Button(h.Type("submit"), h.Class("btn btn-primary"), g.Text("Show"))),
		),
		g.If(v.CSV != "", h.P(h.A(h.Href(v.CSV), h.ID("stats-csv"), g.Text("Download these figures (CSV)")))),
	)
}

// report is the figures: headlines, the funnel, two charts and the table.
func (v statsView) report() g.Node {
	s := *v.Stats
	filled, _ := stats.ChartSVG(s, "filled")
	revenue, _ := stats.ChartSVG(s, "revenue_cents")
	per := "week"
	for _, o := range statsGroupings {
		if o[0] == s.GroupBy {
			per = o[1]
		}
	}
	return g.Group{
		h.Section(h.Aria("labelledby", "stats-totals-h"), h.ID("stats-totals"),
			h.H2(h.ID("stats-totals-h"), g.Text(formatDay(s.From)+" – "+formatDay(s.To))),
			h.Div(h.Class("cards"), g.Map(v.headlines(), func(hl headline) g.Node {
				return h.Div(h.Class("card stat"),
					h.P(h.Class("muted"), g.Text(hl.Label)),
					h.P(h.Class("big"), g.Text(hl.Value)),
					g.If(hl.Detail != "", h.P(h.Class("muted"), g.Text(hl.Detail))),
				)
			})),
		),
		h.Div(h.Class("cards"),
			h.Figure(h.Class("card chart-card"), h.FigCaption(h.Strong(g.Text("From opening to visit"))), stats.FunnelSVG(s)),
			g.If(len(s.Groups) > 0, h.Figure(h.Class("card chart-card"), h.FigCaption(h.Strong(g.Text("Openings filled, per "+lower(per)))), filled)),
			g.If(len(s.Groups) > 0, h.Figure(h.Class("card chart-card"), h.FigCaption(h.Strong(g.Text("Revenue recovered, per "+lower(per)))), revenue)),
		),
		h.Section(h.Class("card"), h.Aria("labelledby", "stats-groups-h"), h.ID("stats-groups"),
			h.H2(h.ID("stats-groups-h"), g.Text("Per "+lower(per))),
			g.If(len(s.Groups) == 0, h.P(h.Class("empty"), g.Text("No openings in this period."))),
			g.If(len(s.Groups) > 0, h.Table(h.Class("list"),
				h.THead(h.Tr(colHead(per), numHead("Openings"), numHead("Filled"), numHead("Fill rate"), numHead("Revenue"),
					numHead("Offers"), numHead("Bookings"), numHead("No-shows"))),
				h.TBody(g.Map(s.Groups, func(gr api.StatGroup) g.Node {
					f := gr.Figures
					num := func(label, val string) g.Node {
						return h.Td(h.Data("label", label), h.Class("num"), h.Div(g.Text(val)))
					}
					return h.Tr(
						h.Td(h.Data("label", per), h.Div(g.Text(cmpOr(gr.Label, gr.Key)))),
						num("Openings", strconv.Itoa(f.Openings)), num("Filled", strconv.Itoa(f.Filled)),
						num("Fill rate", percentText(f.FillRate)), num("Revenue", money.Format(f.RevenueCents, s.Currency)),
						num("Offers", strconv.Itoa(f.OffersSent)), num("Bookings", strconv.Itoa(f.Bookings)),
						num("No-shows", strconv.Itoa(f.NoShows)),
					)
				})),
			)),
			g.If(s.GroupBy == api.StatsByWave, h.P(h.Class("muted"), g.Text("An opening counts in every wave that texted it, "+
				"so the waves need not add up to the totals."))),
		),
	}
}

// formatDay is a period's day as the page writes it: "Mon 2 Nov 2026".
func formatDay(iso string) string {
	t, err := time.Parse(time.DateOnly, iso)
	if err != nil {
		return iso
	}
	return t.Format("Mon 2 Jan 2006")
}

func lower(s string) string {
	if s == "" {
		return s
	}
	return string(s[0]|0x20) + s[1:]
}
