package dashboard

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/slotrecovery/slotrecovery/api"
	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/phone"
	"github.com/slotrecovery/slotrecovery/internal/problem"
)

// The offers' record on the dashboard (issue 47): an opening's waves, who each texted
// and why, how many each left out and for what, the replies, and "why not …?" for any
// customer; a customer's offers and figures; the filled slots' attendance.

// OpeningPath is an opening's record page: OpeningPath + "/" + id.
const OpeningPath = "/dashboard/openings"

// whyNotMatches is how many customers a "why not …?" search explains at most.
const whyNotMatches = 5

// recordView is an opening's record page.
type recordView struct {
	ID       uuid.UUID
	When     string
	ISO      string
	Duration int
	Service  string
	Staff    string
	Status   string
	Waves    []recordWave
	Replies  []recordReply
	// Query is the "why not …?" search as typed; Answers what it found (Searched says a
	// search was made, so that none found is said).
	Query    string
	Searched bool
	Answers  []whyNotAnswer
	Error    string
}

type recordWave struct {
	Title   string
	Ranking string
	Texted  []recordTexted
	Skipped []skipCount
	// SkippedTotal is the sum of Skipped's counts.
	SkippedTotal int
}

type recordTexted struct {
	Rank       int
	CustomerID uuid.UUID
	Name       string
	Reason     string
}

type skipCount struct {
	Label string
	N     int
}

type recordReply struct {
	CustomerID uuid.UUID
	Name       string
	When       string
	Outcome    string
}

type whyNotAnswer struct {
	CustomerID uuid.UUID
	Name       string
	Phone      string
	Words      string
	Texted     bool
}

// skipLabels are the record's reasons as the page names them, in the order it lists them.
var skipLabels = []struct {
	Key   string
	Label string
}{
	{"already_offered", "already offered this opening"},
	{"opted_out", "opted out or unreachable"},
	{"paused", "paused offers by text"},
	{"no_consent", "no consent to texts"},
	{"no_shows", "too many no-shows"},
	{"cooldown", "offered something recently"},
	{"daily_cap", "at the day's limit of offers"},
	{"quiet_hours", "quiet hours"},
	{"no_fit_service", "no service of theirs fits"},
	{"no_fit_staff", "want another person"},
	{"no_fit_window", "outside their days and times"},
}

// skipCounts lists the reasons that left someone out, with their counts.
func skipCounts(s api.OfferSkipped) ([]skipCount, int) {
	n := map[string]int{
		"already_offered": s.AlreadyOffered, "opted_out": s.OptedOut, "paused": s.Paused, "no_consent": s.NoConsent, "no_shows": s.NoShows,
		"cooldown": s.Cooldown, "daily_cap": s.DailyCap, "quiet_hours": s.QuietHours, "no_fit_service": s.NoFitService,
		"no_fit_staff": s.NoFitStaff, "no_fit_window": s.NoFitWindow,
	}
	var out []skipCount
	total := 0
	for _, l := range skipLabels {
		if n[l.Key] > 0 {
			out = append(out, skipCount{Label: l.Label, N: n[l.Key]})
			total += n[l.Key]
		}
	}
	return out, total
}

// rankingLabels name the shop's ranking settings as the settings page does.
var rankingLabels = map[string]string{
	"priority": "priority, then the list's order", "fair": "fair: offered least recently first",
	"reliable": "reliable: fewest no-shows first", "value": "value: the highest price first",
}

// outcomeLabels are the replies' outcomes in the owner's words ("" keeps the word).
var outcomeLabels = map[string]string{
	"booked": "booked", "taken": "too late: already taken", "declined": "said no", "expired": "too late: offer closed",
	"pending_payment": "booked, paying", "clarify": "asked which time",
}

// openingRecord is GET /dashboard/openings/:id (?q= asks "why not …?").
func (d *Dashboard) openingRecord(c echo.Context) error {
	s := current(c)
	id, err := uuid.Parse(c.Param("id"))
	if err != nil || d.cfg.Offers == nil {
		return d.notFound(c)
	}
	ctx := c.Request().Context()
	op, err := d.openings.Get(ctx, s.Shop.ID, id)
	if isNotFound(err) {
		return d.notFound(c)
	}
	if err != nil {
		return d.internalError(c, "get opening", err)
	}
	rec, err := d.cfg.Offers.Record(ctx, s.Shop.ID, id)
	if isNotFound(err) {
		return d.notFound(c)
	}
	if err != nil {
		return d.internalError(c, "opening record", err)
	}
	loc := s.Shop.Location
	v := recordView{ID: id, When: formatWhen(op.StartsAt, loc), ISO: op.StartsAt.UTC().Format(time.RFC3339),
		Duration: op.DurationMinutes, Service: op.Service, Staff: op.StaffName, Status: titleCase(op.Status)}
	for _, w := range rec.Waves {
		rw := recordWave{Title: waveLabel(w.Generation, w.N) + " · " + formatWhen(w.At, loc), Ranking: cmpOr(rankingLabels[w.Ranking], w.Ranking)}
		for _, t := range w.Texted {
			rw.Texted = append(rw.Texted, recordTexted{Rank: t.Rank, CustomerID: t.Customer.ID,
				Name: customerLabel(t.Customer.Name, t.Customer.Name == ""), Reason: t.Reason})
		}
		rw.Skipped, rw.SkippedTotal = skipCounts(w.Skipped)
		v.Waves = append(v.Waves, rw)
	}
	for _, r := range rec.Replies {
		v.Replies = append(v.Replies, recordReply{CustomerID: r.Customer.ID, Name: customerLabel(r.Customer.Name, r.Customer.Name == ""),
			When: formatWhen(r.At, loc), Outcome: cmpOr(outcomeLabels[r.Outcome], strings.ReplaceAll(r.Outcome, "_", " "))})
	}
	q := strings.TrimSpace(c.QueryParam("q"))
	if q != "" {
		v.Query, v.Searched = q, true
		if utf8.RuneCountInString(q) > 100 {
			v.Error = "Search for a name or a phone number of at most 100 characters."
		} else if v.Answers, err = d.whyNot(c, s.Shop.ID, id, q); err != nil {
			return d.internalError(c, "why not", err)
		}
	}
	return d.render(c, http.StatusOK, "Opening "+v.When+" · "+s.Shop.Name, v)
}

// waveLabel names a wave as the open slots' list does: "Wave 2", or "Round 2, wave 1"
// once the opening was offered again.
func waveLabel(generation, n int) string {
	if generation > 1 {
		return "Round " + strconv.Itoa(generation) + ", wave " + strconv.Itoa(n)
	}
	return "Wave " + strconv.Itoa(n)
}

// isNotFound says err is a problem of kind NotFound (another shop's or no such thing).
func isNotFound(err error) bool {
	p, ok := problem.As(err)
	return err != nil && ok && p.Kind == problem.NotFound
}

// whyNot explains the opening to the first customers whose name or phone matches q.
func (d *Dashboard) whyNot(c echo.Context, shopID, openingID uuid.UUID, q string) ([]whyNotAnswer, error) {
	ctx := c.Request().Context()
	page, err := d.customerSvc.List(ctx, shopID, customers.Query{Search: q, Limit: whyNotMatches})
	if err != nil {
		return nil, err
	}
	var out []whyNotAnswer
	for _, cu := range page.Customers {
		ex, err := d.cfg.Offers.Explain(ctx, shopID, openingID, cu.ID)
		if errors.Is(err, customers.ErrNotFound) {
			continue // erased meanwhile
		}
		if err != nil {
			return nil, err
		}
		out = append(out, whyNotAnswer{CustomerID: cu.ID, Name: customerLabel(cu.Name, false), Phone: phone.Mask(cu.Phone),
			Words: ex.Words, Texted: ex.Texted})
	}
	return out, nil
}

// customerRecordView is the offers and figures part of a customer's page.
type customerRecordView struct {
	Stats   api.CustomerStats
	History []historyRow
	// More says older offers exist than those shown.
	More bool
	// LastOffered and LastBooked are Stats' times in the shop's time ("" never).
	LastOffered, LastBooked string
}

type historyRow struct {
	OpeningID uuid.UUID
	Opening   string
	When      string
	Wave      string
	Outcome   string
}

// historyRows is how many of a customer's offers their page lists.
const historyRows = 20

// historyOutcomes are an offer's outcomes in the owner's words.
var historyOutcomes = map[string]string{
	"sending": "being texted", "no_reply": "no reply", "booked": "booked", "declined": "said no",
	"missed": "someone else booked it first, or it closed", "withdrawn": "not texted: it closed first",
	"failed": "text not delivered, or payment failed",
}

// customerRecord gathers a customer's stats and latest offers; nil on a server without
// the record.
func (d *Dashboard) customerRecord(c echo.Context, shopID, customerID uuid.UUID) (*customerRecordView, error) {
	if d.cfg.Offers == nil {
		return nil, nil
	}
	ctx := c.Request().Context()
	loc := current(c).Shop.Location
	st, err := d.customerSvc.Stats(ctx, shopID, customerID)
	if err != nil {
		return nil, err
	}
	hist, err := d.cfg.Offers.History(ctx, shopID, customerID, time.Time{}, historyRows+1)
	if err != nil {
		return nil, err
	}
	v := &customerRecordView{Stats: st}
	if len(hist) > historyRows {
		hist, v.More = hist[:historyRows], true
	}
	if st.LastOfferedAt != nil {
		v.LastOffered = formatWhen(*st.LastOfferedAt, loc)
	}
	if st.LastBookedAt != nil {
		v.LastBooked = formatWhen(*st.LastBookedAt, loc)
	}
	for _, e := range hist {
		what := formatWhen(e.Opening.StartsAt, loc)
		if e.Opening.Service != "" {
			what += " · " + e.Opening.Service
		}
		v.History = append(v.History, historyRow{OpeningID: e.Opening.ID, Opening: what, When: formatWhen(e.At, loc),
			Wave: waveLabel(e.Generation, e.Wave), Outcome: cmpOr(historyOutcomes[e.Outcome], strings.ReplaceAll(e.Outcome, "_", " "))})
	}
	return v, nil
}

// clearNoShows is POST /dashboard/customers/:id/clear_no_shows: the customer's no-shows
// until now no longer keep them out of offers.
func (d *Dashboard) clearNoShows(c echo.Context) error {
	s := current(c)
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return d.notFound(c)
	}
	err = d.customerSvc.ClearNoShows(c.Request().Context(), s.Shop.ID, id)
	switch {
	case errors.Is(err, customers.ErrNotFound):
		return d.notFound(c)
	case err != nil:
		return d.internalError(c, "clear no-shows", err)
	}
	return c.Redirect(http.StatusSeeOther, "/dashboard/customers/"+id.String()+"?notice=no_shows_cleared#record")
}

// attendanceNotices answer the filled slots' attendance buttons.
var attendanceNotices = map[string]string{
	"attended":         "Marked as came. You can undo it for 24 hours.",
	"no_show":          "Marked as a no-show. You can undo it for 24 hours.",
	"unmarked":         "The mark is taken back.",
	"too_early":        "The appointment has not started yet: mark it once it has.",
	"not_booked":       "That booking was cancelled or not paid: there is nothing to mark.",
	"attendance_final": "That mark was made more than 24 hours ago and stands.",
	"late_cancelled":   "Cancelled as a late cancellation: the slot is offered again, and the customer's accepted policy applies (see the fee beside it).",
	"not_cancellable":  "That booking is no longer live, or its time has come: mark a customer who did not come as a no-show.",
}

// lateCancel is POST /dashboard/bookings/:id/late_cancel: the owner enters a customer's
// late cancellation (they called), as POST /api/bookings/{id}/late_cancel does (issue
// 48), back to the list with what happened.
func (d *Dashboard) lateCancel(c echo.Context) error {
	s := current(c)
	id, err := uuid.Parse(c.Param("id"))
	if err != nil || d.cfg.Ledger == nil {
		return d.notFound(c)
	}
	_, err = d.cfg.Ledger.CancelLate(c.Request().Context(), s.Shop.ID, id)
	notice := "late_cancelled"
	switch {
	case errors.Is(err, ledger.ErrBookingNotFound):
		return d.notFound(c)
	case errors.Is(err, ledger.ErrNotCancellable):
		notice = "not_cancellable"
	case err != nil:
		return d.internalError(c, "late cancel", err)
	}
	return c.Redirect(http.StatusSeeOther, "/dashboard?notice="+notice+"#filled")
}

// markAttendance is POST /dashboard/bookings/:id/attendance (mark=attended|no_show|none):
// the filled slots' buttons, back to the list with what happened.
func (d *Dashboard) markAttendance(c echo.Context) error {
	s := current(c)
	id, err := uuid.Parse(c.Param("id"))
	if err != nil || d.cfg.Ledger == nil {
		return d.notFound(c)
	}
	var a ledger.Attendance
	switch c.FormValue("mark") {
	case "attended":
		a = ledger.AttendanceAttended
	case "no_show":
		a = ledger.AttendanceNoShow
	case "none":
		a = ledger.AttendanceNone
	default:
		return c.Redirect(http.StatusSeeOther, "/dashboard#filled")
	}
	_, err = d.cfg.Ledger.MarkAttendance(c.Request().Context(), s.Shop.ID, id, a, d.cfg.Now())
	notice := cmpOr(string(a), "unmarked")
	switch {
	case errors.Is(err, ledger.ErrBookingNotFound):
		return d.notFound(c)
	case errors.Is(err, ledger.ErrAttendanceTooEarly):
		notice = "too_early"
	case errors.Is(err, ledger.ErrAttendanceNotBooked):
		notice = "not_booked"
	case errors.Is(err, ledger.ErrAttendanceTooLate):
		notice = "attendance_final"
	case err != nil:
		return d.internalError(c, "mark attendance", err)
	}
	// Back to the page of the list the button was on.
	if n, err := strconv.Atoi(c.FormValue("page")); err == nil && n > 1 && n <= 10_000 {
		return c.Redirect(http.StatusSeeOther, "/dashboard?page="+strconv.Itoa(n)+"&notice="+notice+"#filled")
	}
	return c.Redirect(http.StatusSeeOther, "/dashboard?notice="+notice+"#filled")
}
