package stats_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	g "maragu.dev/gomponents"

	"github.com/slotrecovery/slotrecovery/api"
	"github.com/slotrecovery/slotrecovery/internal/stats"
)

// TestCSV: the by-week figures of the fixed history as CSV: the header, a row a week
// and the totals, amounts decimal as the filled-slots export writes them.
func TestCSV(t *testing.T) {
	t.Parallel()
	h := fixedHistory(t)
	s, err := h.svc.Report(context.Background(), h.shop, stats.Query{From: "2026-11-09", To: "2026-11-22"})
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, h.svc.WriteCSV(&buf, s))
	records, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	period := []string{"2026-11-09", "2026-11-22", "America/New_York", "week"}
	row := func(kind, key, label string, rest ...string) []string {
		return append(append(append([]string{kind}, period...), key, label), rest...)
	}
	require.Equal(t, [][]string{
		stats.CSVHeader,
		row("group", "2026-W46", "Nov 9", "4", "4", "3", "3", "0.7500", "1200", "1680", "9",
			"3", "1", "2", "2", "1", "3", "2", "60.00", "135.00", "USD", "1", "1", "1"),
		row("group", "2026-W47", "Nov 16", "2", "1", "1", "1", "0.5000", "3600", "3600", "1",
			"1", "0", "0", "0", "0", "1", "0", "0.00", "80.00", "USD", "1", "0", "0"),
		row("total", "", "Total", "6", "5", "4", "4", "0.6667", "1500", "3060", "10",
			"4", "1", "2", "2", "1", "4", "2", "60.00", "215.00", "USD", "2", "1", "1"),
	}, records)
}

// TestCSVDefusesFormulas: a label a spreadsheet would run (a service named "=1+2", a
// person "@SUM(A1)") is written as text; commas, quotes and line breaks are quoted.
func TestCSVDefusesFormulas(t *testing.T) {
	t.Parallel()
	s := api.Stats{From: "2026-11-09", To: "2026-11-22", TimeZone: "UTC", Currency: "usd", GroupBy: "service",
		Groups: []api.StatGroup{
			{Key: "=1+2", Label: "=1+2"}, {Key: "@SUM(A1)", Label: "@SUM(A1)"}, {Key: "-x", Label: "-x"},
			{Key: "Cut, \"long\"\nstyle", Label: "Cut, \"long\"\nstyle"},
		}}
	var buf bytes.Buffer
	require.NoError(t, (&stats.Service{}).WriteCSV(&buf, s))
	require.Contains(t, buf.String(), "\"Cut, \"\"long\"\"\nstyle\"")
	records, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	var labels []string
	for _, r := range records[1 : len(records)-1] {
		require.Equal(t, r[5], r[6], "key and label are defused alike")
		labels = append(labels, r[6])
	}
	require.Equal(t, []string{"'=1+2", "'@SUM(A1)", "'-x", "Cut, \"long\"\nstyle"}, labels)
}

// render writes a node as a string.
func render(t *testing.T, n g.Node) string {
	t.Helper()
	var b strings.Builder
	require.NoError(t, n.Render(&b))
	return b.String()
}

// parseSVG checks that doc is well-formed XML whose root is an <svg> image with a
// viewBox, a <title> and no style attribute or script, and returns its texts.
func parseSVG(t *testing.T, doc string) []string {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(doc))
	var texts []string
	depth := 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, doc)
		switch tok := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				require.Equal(t, "svg", tok.Name.Local)
				attrs := map[string]string{}
				for _, a := range tok.Attr {
					attrs[a.Name.Local] = a.Value
				}
				require.Equal(t, "img", attrs["role"])
				require.NotEmpty(t, attrs["viewBox"])
				require.Empty(t, attrs["width"], "the picture scales to its container")
			}
			require.NotEqual(t, "script", tok.Name.Local)
			require.NotEqual(t, "foreignObject", tok.Name.Local)
			for _, a := range tok.Attr {
				require.NotEqual(t, "style", a.Name.Local, "a strict CSP refuses inline styles")
				require.False(t, strings.HasPrefix(a.Name.Local, "on"), "no script: %s", a.Name.Local)
			}
			depth++
		case xml.EndElement:
			depth--
		case xml.CharData:
			if s := strings.TrimSpace(string(tok)); s != "" {
				texts = append(texts, s)
			}
		}
	}
	require.Contains(t, doc, "<title id=")
	return texts
}

// TestFunnelSVG: the funnel of the fixed history parses as XML and shows every step's
// number and share.
func TestFunnelSVG(t *testing.T) {
	t.Parallel()
	h := fixedHistory(t)
	s, err := h.svc.Report(context.Background(), h.shop, stats.Query{From: "2026-11-09", To: "2026-11-22"})
	require.NoError(t, err)
	texts := parseSVG(t, render(t, stats.FunnelSVG(s)))
	for _, want := range []string{"Openings", "6", "Offered", "5 · 83%", "Replied", "4 · 67%", "Booked", "4 · 67%",
		"Paid", "2 · 33%", "Attended", "2 · 33%"} {
		require.Contains(t, texts, want)
	}
	require.Contains(t, texts, "From opening to visit")
}

// TestChartSVG: each metric's chart parses as XML and shows each group's value and
// label; text from people is escaped; an unknown metric is an error; many groups keep
// their values in the titles and label only some bars.
func TestChartSVG(t *testing.T) {
	t.Parallel()
	h := fixedHistory(t)
	ctx := context.Background()
	s, err := h.svc.Report(ctx, h.shop, stats.Query{From: "2026-11-09", To: "2026-11-22"})
	require.NoError(t, err)
	for metric, want := range map[string][]string{
		"filled":                {"Nov 9", "3", "Nov 16", "1", "Openings filled per week"},
		"revenue_cents":         {"$135", "$80", "Revenue recovered per week"},
		"fill_rate":             {"75%", "50%"},
		"time_to_fill_median_s": {"20m", "1h"},
		"move_ups":              {"1", "0"},
	} {
		n, err := stats.ChartSVG(s, metric)
		require.NoError(t, err)
		texts := parseSVG(t, render(t, n))
		for _, w := range want {
			require.Contains(t, texts, w, metric)
		}
	}
	_, err = stats.ChartSVG(s, "style")
	require.Error(t, err)

	odd := api.Stats{From: "2026-11-09", To: "2026-11-22", Currency: "usd", GroupBy: "service",
		Groups: []api.StatGroup{{Key: "<b>", Label: `<script>alert("x")</script> & co`, Figures: api.Figures{Filled: 2}}}}
	n, err := stats.ChartSVG(odd, "filled")
	require.NoError(t, err)
	doc := render(t, n)
	require.NotContains(t, doc, "<script>")
	require.Contains(t, parseSVG(t, doc), `<script>alert("x")</script> & co`)

	year, err := h.svc.Report(ctx, h.shop, stats.Query{From: "2026-01-01", To: "2026-12-31"})
	require.NoError(t, err)
	n, err = stats.ChartSVG(year, "filled")
	require.NoError(t, err)
	doc = render(t, n)
	parseSVG(t, doc)
	require.Equal(t, 53, strings.Count(doc, "<rect"))
	require.Contains(t, doc, "<title>Nov 9: 3</title>", "every bar's value is in its title")
	require.Less(t, strings.Count(doc, `class="bar-label"`), 10, "labels stand apart on a phone")

	empty, err := h.svc.Report(ctx, h.shop, stats.Query{From: "2020-01-06", To: "2020-01-12", GroupBy: "wave"})
	require.NoError(t, err)
	n, err = stats.ChartSVG(empty, "filled")
	require.NoError(t, err)
	require.Contains(t, parseSVG(t, render(t, n)), "Openings filled per wave, 2020-01-06 to 2020-01-12: nothing to show.")
	parseSVG(t, render(t, stats.FunnelSVG(empty)))
}
