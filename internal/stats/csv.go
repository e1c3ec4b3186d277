package stats

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/slotrecovery/slotrecovery/api"
	"github.com/slotrecovery/slotrecovery/internal/csvcell"
	"github.com/slotrecovery/slotrecovery/internal/money"
)

// CSVHeader names WriteCSV's columns: the API's figures, in its names. row is "group"
// or "total"; amounts (paid_amount, revenue) are decimal in the currency's unit, as the
// filled-slots export writes them, so that the two files' sums compare; a figure
// without a value (a time to fill without fills) is an empty cell. Columns may be
// added at the end, never moved: sheets read them by position.
var CSVHeader = []string{
	"row", "from", "to", "time_zone", "group_by", "key", "label",
	"openings", "openings_offered", "openings_replied", "filled", "fill_rate",
	"time_to_fill_median_s", "time_to_fill_p90_s", "offers_sent",
	"replies_booked", "replies_declined", "replies_missed", "replies_no_reply", "replies_failed",
	"bookings", "paid", "paid_amount", "revenue", "currency", "attended", "no_shows", "move_ups",
}

// WriteCSV writes s as CSV (RFC 4180): the header, one row per group in s's order,
// and the totals last. Text typed by people (service and staff names) is defused
// against spreadsheet formulas.
func (*Service) WriteCSV(w io.Writer, s api.Stats) error {
	cw := csv.NewWriter(w)
	_ = cw.Write(CSVHeader)
	for _, g := range s.Groups {
		_ = cw.Write(csvRecord(s, "group", g.Key, g.Label, g.Figures))
	}
	_ = cw.Write(csvRecord(s, "total", "", "Total", s.Totals))
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write stats csv: %w", err)
	}
	return nil
}

func csvRecord(s api.Stats, row, key, label string, f api.Figures) []string {
	seconds := func(v *int64) string {
		if v == nil {
			return ""
		}
		return strconv.FormatInt(*v, 10)
	}
	n := strconv.Itoa
	return []string{
		row, s.From, s.To, safeCell(s.TimeZone), safeCell(s.GroupBy), safeCell(key), safeCell(label),
		n(f.Openings), n(f.OpeningsOffered), n(f.OpeningsReplied), n(f.Filled), strconv.FormatFloat(f.FillRate, 'f', 4, 64),
		seconds(f.TimeToFillMedianS), seconds(f.TimeToFillP90S), n(f.OffersSent),
		n(f.Replies.Booked), n(f.Replies.Declined), n(f.Replies.Missed), n(f.Replies.NoReply), n(f.Replies.Failed),
		n(f.Bookings), n(f.Paid), money.Plain(f.PaidCents, s.Currency), money.Plain(f.RevenueCents, s.Currency),
		safeCell(strings.ToUpper(s.Currency)), n(f.Attended), n(f.NoShows), n(f.MoveUps),
	}
}

// safeCell is csvcell.Safe: the exports' one rule against formulas.
var safeCell = csvcell.Safe
