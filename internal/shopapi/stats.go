package shopapi

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/stats"
)

// StatsPath is what the waitlist earned: GET StatsPath?from=&to=&group_by=&format=.
const StatsPath = "/api/stats"

// ErrNoStats answers /api/stats on a server without the figures.
var ErrNoStats = problem.New(problem.Unavailable, "stats_unavailable", "the figures are not served here")

// getStats is GET /api/stats: the shop's recovery figures over [from, to] (local dates,
// the last 30 days by default), in total and per week, service, person or wave, as JSON
// or, with format=csv or Accept: text/csv, as a CSV file.
func (h *Handlers) getStats(c echo.Context) error {
	if h.Stats == nil {
		return ErrNoStats
	}
	format := c.QueryParam("format")
	switch format {
	case "", "json", "csv":
	default:
		return problem.Invalidf("format", "format must be json or csv")
	}
	if format == "" && strings.Contains(c.Request().Header.Get(echo.HeaderAccept), "text/csv") {
		format = "csv"
	}
	shop := shopOf(c)
	s, err := h.Stats.Report(c.Request().Context(), shop, stats.Query{
		From: c.QueryParam("from"), To: c.QueryParam("to"), GroupBy: c.QueryParam("group_by")})
	if err != nil {
		return err
	}
	if format != "csv" {
		return c.JSON(http.StatusOK, s)
	}
	hd := c.Response().Header()
	hd.Set(echo.HeaderContentType, "text/csv; charset=utf-8")
	hd.Set(echo.HeaderContentDisposition, `attachment; filename="stats_`+s.GroupBy+`_`+s.From+`_`+s.To+`.csv"`)
	hd.Set("Cache-Control", "no-store")
	c.Response().WriteHeader(http.StatusOK)
	return h.Stats.WriteCSV(c.Response(), s)
}
