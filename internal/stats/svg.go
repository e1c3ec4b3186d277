package stats

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	g "maragu.dev/gomponents"
	h "maragu.dev/gomponents/html"

	"github.com/slotrecovery/slotrecovery/api"
	"github.com/slotrecovery/slotrecovery/internal/money"
)

// The dashboard's pictures of a Stats, as inline SVG nodes laid out here: every
// coordinate is computed on the server, so the page needs no script and no style
// attribute (the dashboard's Content-Security-Policy allows neither inline). They scale
// by their viewBox to the width of their container (a 390 px phone too), take the
// dashboard's chart classes (chart, axis, bar, bar-value, bar-label) with presentation
// attributes as a fallback, name themselves to screen readers (role="img", a <title>
// and a <desc> with every number) and escape every text (gomponents' Text).

// Funnel geometry, in SVG user units.
const (
	funnelW      = 360
	funnelRowH   = 34
	funnelLabelW = 86 // the steps' names, left of the bars
	funnelValueW = 90 // room for "1234 · 100%" right of the longest bar
	funnelBarH   = 22
)

// funnelStep is one step of the funnel.
type funnelStep struct {
	name  string
	value int
}

// FunnelSVG draws the totals of s as a funnel, one horizontal bar a step: openings
// declared, offered (texted to at least once), replied (a YES or a NO), booked
// (bookings), paid and attended, each with its number and its share of the openings.
func FunnelSVG(s api.Stats) g.Node {
	t := s.Totals
	steps := []funnelStep{
		{"Openings", t.Openings}, {"Offered", t.OpeningsOffered}, {"Replied", t.OpeningsReplied},
		{"Booked", t.Bookings}, {"Paid", t.Paid}, {"Attended", t.Attended},
	}
	peak := 0
	for _, st := range steps {
		peak = max(peak, st.value)
	}
	height := len(steps)*funnelRowH + 4
	plot := funnelW - funnelLabelW - funnelValueW
	var rows []g.Node
	var desc []string
	for i, st := range steps {
		w := 0
		if peak > 0 {
			w = plot * st.value / peak
		}
		if st.value > 0 && w < 2 {
			w = 2
		}
		y := i*funnelRowH + 4
		mid := y + funnelBarH/2 + 5 // a 15-unit text's baseline, centred on the bar
		value := strconv.Itoa(st.value)
		if i > 0 && t.Openings > 0 {
			value += " · " + percent(st.value, t.Openings)
		}
		desc = append(desc, st.name+" "+value)
		rows = append(rows, g.El("g",
			g.El("text", h.Class("bar-label"), attr("x", 0), attr("y", mid), g.Attr("fill", "#52606d"), g.Text(st.name)),
			g.El("rect", h.Class("bar"), attr("x", funnelLabelW), attr("y", y), attr("width", w), attr("height", funnelBarH),
				g.Attr("rx", "3"), g.Attr("fill", "#3e7bfa"), g.El("title", g.Text(st.name+": "+value))),
			g.El("text", h.Class("bar-value"), attr("x", funnelLabelW+w+6), attr("y", mid), g.Attr("fill", "#1f2933"),
				g.Text(value)),
		))
	}
	return svg("stats-funnel", funnelW, height, "From opening to visit",
		fmt.Sprintf("From %s to %s: %s.", s.From, s.To, strings.Join(desc, "; ")), rows)
}

// percent is n of of, in whole percent.
func percent(n, of int) string {
	return strconv.Itoa(int(math.Round(100*float64(n)/float64(of)))) + "%"
}

// Metric is a figure ChartSVG can draw: the API's name of it.
type Metric struct {
	// Name is the figure's JSON name; Title says what a bar is.
	Name, Title string
	value       func(api.Figures) int64
	format      func(v int64, currency string) string
}

// Metrics are the figures ChartSVG draws, by their JSON names.
var Metrics = []Metric{
	{"filled", "Openings filled", count(func(f api.Figures) int { return f.Filled }), formatCount},
	{"revenue_cents", "Revenue recovered", func(f api.Figures) int64 { return f.RevenueCents }, money.Short},
	{"openings", "Openings declared", count(func(f api.Figures) int { return f.Openings }), formatCount},
	{"fill_rate", "Fill rate", func(f api.Figures) int64 { return int64(math.Round(f.FillRate * 10000)) }, formatRate},
	{"time_to_fill_median_s", "Median time to fill", func(f api.Figures) int64 {
		if f.TimeToFillMedianS == nil {
			return 0
		}
		return *f.TimeToFillMedianS
	}, formatSeconds},
	{"offers_sent", "Offers sent", count(func(f api.Figures) int { return f.OffersSent }), formatCount},
	{"bookings", "Bookings", count(func(f api.Figures) int { return f.Bookings }), formatCount},
	{"paid", "Bookings paid", count(func(f api.Figures) int { return f.Paid }), formatCount},
	{"paid_cents", "Money paid", func(f api.Figures) int64 { return f.PaidCents }, money.Short},
	{"attended", "Attended", count(func(f api.Figures) int { return f.Attended }), formatCount},
	{"no_shows", "No-shows", count(func(f api.Figures) int { return f.NoShows }), formatCount},
	{"move_ups", "Move-ups", count(func(f api.Figures) int { return f.MoveUps }), formatCount},
}

func count(f func(api.Figures) int) func(api.Figures) int64 {
	return func(x api.Figures) int64 { return int64(f(x)) }
}

func formatCount(v int64, _ string) string { return strconv.FormatInt(v, 10) }

// formatRate writes basis points as a whole percent.
func formatRate(bp int64, _ string) string {
	return strconv.FormatInt((bp+50)/100, 10) + "%"
}

// formatSeconds writes a duration in its two largest units: 45s, 12m, 1h 5m, 2d 3h.
func formatSeconds(s int64, _ string) string {
	switch {
	case s < 60:
		return strconv.FormatInt(s, 10) + "s"
	case s < 3600:
		return strconv.FormatInt(s/60, 10) + "m"
	case s < 86400:
		if m := s % 3600 / 60; m != 0 {
			return fmt.Sprintf("%dh %dm", s/3600, m)
		}
		return strconv.FormatInt(s/3600, 10) + "h"
	}
	if hr := s % 86400 / 3600; hr != 0 {
		return fmt.Sprintf("%dd %dh", s/86400, hr)
	}
	return strconv.FormatInt(s/86400, 10) + "d"
}

// MetricByName returns the Metric named name, and whether there is one.
func MetricByName(name string) (Metric, bool) {
	for _, m := range Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// Chart geometry, in SVG user units.
const (
	chartW      = 360
	chartH      = 200
	chartTop    = 24 // room for the value above the tallest bar
	chartBottom = 28 // room for the groups' labels
	// A value is written above its bar when a bar's slot is this wide; a label under
	// every k-th bar so that labels stand this far apart.
	chartValueSlot = 40
	chartLabelGap  = 56
)

// ChartSVG draws one figure (a Metrics name: filled, revenue_cents, fill_rate, …) of
// each group of s as a bar chart, groups in s's order. Values are written above the
// bars when there is room (up to 9 groups), and every bar's <title> and the chart's
// <desc> carry them all. An unknown metric is an error.
func ChartSVG(s api.Stats, metric string) (g.Node, error) {
	m, ok := MetricByName(metric)
	if !ok {
		return nil, fmt.Errorf("stats: no metric %q", metric)
	}
	baseline := chartH - chartBottom
	plot := baseline - chartTop
	var peak int64
	for _, gr := range s.Groups {
		peak = max(peak, m.value(gr.Figures))
	}
	n := max(len(s.Groups), 1)
	slot := float64(chartW) / float64(n)
	barW := max(slot*0.7, 1)
	every := int(math.Ceil(chartLabelGap / slot))
	nodes := []g.Node{g.El("line", h.Class("axis"), attr("x1", 0), attr("y1", baseline), attr("x2", chartW),
		attr("y2", baseline), g.Attr("stroke", "#9aa5b1"))}
	var desc []string
	for i, gr := range s.Groups {
		v := m.value(gr.Figures)
		hgt := 0
		if peak > 0 {
			hgt = int(int64(plot) * v / peak)
		}
		if v > 0 && hgt < 2 {
			hgt = 2 // a small group stays visible next to a big one
		}
		x := float64(i)*slot + (slot-barW)/2
		mid := x + barW/2
		value := m.format(v, s.Currency)
		desc = append(desc, gr.Label+" "+value)
		bar := []g.Node{
			g.El("rect", h.Class("bar"), fattr("x", x), attr("y", baseline-hgt), fattr("width", barW), attr("height", hgt),
				g.Attr("rx", "2"), g.Attr("fill", "#3e7bfa"), g.El("title", g.Text(gr.Label+": "+value))),
		}
		if slot >= chartValueSlot {
			bar = append(bar, g.El("text", h.Class("bar-value"), fattr("x", mid), attr("y", baseline-hgt-6),
				g.Attr("text-anchor", "middle"), g.Attr("fill", "#1f2933"), g.Text(value)))
		}
		if i%every == 0 {
			bar = append(bar, g.El("text", h.Class("bar-label"), fattr("x", mid), attr("y", baseline+20),
				g.Attr("text-anchor", "middle"), g.Attr("fill", "#52606d"), g.Text(gr.Label)))
		}
		nodes = append(nodes, g.El("g", bar...))
	}
	title := m.Title + " per " + s.GroupBy
	d := fmt.Sprintf("%s, %s to %s: %s.", title, s.From, s.To, strings.Join(desc, "; "))
	if len(s.Groups) == 0 {
		d = fmt.Sprintf("%s, %s to %s: nothing to show.", title, s.From, s.To)
	}
	return svg("stats-"+strings.ReplaceAll(m.Name, "_", "-"), chartW, chartH, title, d, nodes), nil
}

// svg is an inline SVG image of width×height user units, named by title and desc
// (ids made from id, unique on a page that shows each picture once).
func svg(id string, width, height int, title, desc string, children []g.Node) g.Node {
	return h.SVG(h.Class("chart"), g.Attr("xmlns", "http://www.w3.org/2000/svg"),
		g.Attr("viewBox", fmt.Sprintf("0 0 %d %d", width, height)), g.Attr("preserveAspectRatio", "xMidYMid meet"),
		h.Role("img"), h.Aria("labelledby", id+"-title "+id+"-desc"), g.Attr("font-size", "15"),
		g.El("title", h.ID(id+"-title"), g.Text(title)),
		g.El("desc", h.ID(id+"-desc"), g.Text(desc)),
		g.Group(children),
	)
}

func attr(name string, v int) g.Node { return g.Attr(name, strconv.Itoa(v)) }

// fattr writes a coordinate to a tenth of a unit.
func fattr(name string, v float64) g.Node {
	return g.Attr(name, strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64))
}
