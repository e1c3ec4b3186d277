package dashboard

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/money"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// chartView is the weekly money chart, laid out on the server and drawn as inline SVG:
// every coordinate is computed here, so the page needs no script and no style attribute.
type chartView struct {
	Width, Height int
	Baseline      int
	Bars          []chartBar
	Desc          string
	Total         string
}

type chartBar struct {
	X, Y, W, H     int
	MidX           int
	ValueY, LabelY int
	Label          string
	Value          string
	Title          string
	Current        bool
}

// Chart geometry, in SVG user units; the SVG scales to its container.
const (
	chartW      = 480
	chartH      = 200
	chartTop    = 26 // room for the value above the tallest bar
	chartBottom = 30 // room for the week labels
	barW        = 36
)

// weeklyChart builds the chart of confirmed money for the chartWeeks weeks ending with
// the one that starts at thisWeek (local Monday 00:00).
func (d *Dashboard) weeklyChart(ctx context.Context, shop shops.Shop, thisWeek time.Time) (chartView, error) {
	first := thisWeek.AddDate(0, 0, -7*(chartWeeks-1))
	rows, err := queries.DashboardWeekly(ctx, d.pool, db.DashboardWeeklyParams{Tz: shop.Timezone, ShopID: shop.ID, Since: first})
	if err != nil {
		return chartView{}, fmt.Errorf("weekly money: %w", err)
	}
	byWeek := map[string]int64{}
	for _, r := range rows {
		if r.WeekStart.Valid {
			byWeek[r.WeekStart.Time.Format(time.DateOnly)] += r.ReceivedCents
		}
	}
	weeks := make([]time.Time, chartWeeks)
	amounts := make([]int64, chartWeeks)
	for i := range weeks {
		weeks[i] = first.AddDate(0, 0, 7*i)
		amounts[i] = byWeek[weeks[i].Format(time.DateOnly)]
	}
	return layoutChart(weeks, amounts, shop.Currency), nil
}

func layoutChart(weeks []time.Time, amounts []int64, currency string) chartView {
	c := chartView{Width: chartW, Height: chartH, Baseline: chartH - chartBottom}
	var peak, total int64
	for _, a := range amounts {
		peak = max(peak, a)
		total += a
	}
	plot := chartH - chartTop - chartBottom
	slot := chartW / len(amounts)
	var desc []string
	for i, a := range amounts {
		h := 0
		if peak > 0 {
			h = int(int64(plot) * a / peak)
		}
		if a > 0 && h < 2 {
			h = 2 // a small week stays visible next to a big one
		}
		x := i*slot + (slot-barW)/2
		label := weeks[i].Format("2 Jan")
		value := money.Short(a, currency)
		c.Bars = append(c.Bars, chartBar{
			X: x, Y: c.Baseline - h, W: barW, H: h, MidX: x + barW/2,
			ValueY: c.Baseline - h - 8, LabelY: c.Baseline + 20,
			Label: label, Value: value, Title: "Week of " + label + ": " + money.Format(a, currency),
			Current: i == len(amounts)-1,
		})
		desc = append(desc, "week of "+label+" "+money.Format(a, currency))
	}
	c.Total = money.Format(total, currency)
	c.Desc = "Money recovered per week, oldest first: " + strings.Join(desc, "; ") + "."
	return c
}
