package dashboard

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/slotrecovery/slotrecovery/internal/catalog"
	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/money"
	"github.com/slotrecovery/slotrecovery/internal/payments"
	"github.com/slotrecovery/slotrecovery/internal/phone"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/sms"
)

const (
	// pageSize is how many filled slots one page lists.
	pageSize = 25
	// maxOpen is how many open openings the page lists.
	maxOpen = 50
	// chartWeeks is how many weeks the chart covers, this one included.
	chartWeeks = 8
)

// notices are the fixed messages a redirect may ask the page to show; the query string
// only picks one, so nothing a link carries is ever echoed into the page.
var notices = map[string]string{
	"declared": "Opening declared. Offers go out to your customers in waves.",
	"declared_slow": "Opening declared, but your number cannot text a whole wave before the offers close at its send rate: " +
		"the last customers of each wave will not be reached in time. Lower the customers per wave, or set a faster number's rate, in Settings.",
	"cancelled":   "Opening cancelled. No more offers will be texted for it.",
	"refund_done": "Marked as refunded by hand. It will show again only if another refund of that booking fails.",
}

// homeView is the dashboard page's data.
type homeView struct {
	Notice   string
	Error    string
	Timezone string
	Currency string
	Today    string
	Updated  string
	Week     totalsView
	Month    totalsView
	Chart    chartView
	Open     []openView
	OpenMore bool
	Filled   []filledView
	Page     int
	PrevPage int
	NextPage int
	Form     declareForm
	// People and Services are the shop's active staff and services, the opening form's
	// pickers (none: the form is as it was before the shop had any).
	People   []catalog.Staff
	Services []catalog.Service
	Export   exportForm
	// RefundsFailed are the payments the server could not refund: the owner must.
	RefundsFailed []refundFailedView
	// SMSProblem, when set, says that texts failed lately because of the shop's own
	// number or account.
	SMSProblem *smsProblemView
	// Stripe, when set, says that the shop takes card payments but its own Stripe
	// account (Stripe Connect) cannot take them now, so it cannot declare openings.
	Stripe *stripeBannerView
}

// stripeBannerView is the banner of a checkout shop whose connected Stripe account cannot
// take payments (shops.Shop.CheckoutReady).
type stripeBannerView struct {
	// Disconnected: the account left the platform (its open openings were cancelled
	// then); otherwise it was never connected or is not set up yet.
	Disconnected bool
}

// smsProblemView is the banner for texts that failed because of the shop's number or
// account (sms.ReasonAccount) rather than the customer's.
type smsProblemView struct {
	Code  int
	When  string
	Count int
	Hint  string
}

// smsProblemHints says what the owner can do about each kind of account problem.
var smsProblemHints = map[sms.AccountIssue]string{
	sms.AccountIssueRegion: "Your SMS account is not allowed to text this country or region: enable it in Twilio's Messaging geographic permissions.",
	sms.AccountIssueSender: "Your shop's number cannot text these customers' numbers (some carriers or countries do not take texts from it): ask Twilio support, or use another number.",
}

// maxRefundsFailed is how many failed refunds the page lists.
const maxRefundsFailed = 20

// refundFailedView is a booking whose payment could not be refunded.
type refundFailedView struct {
	BookingID uuid.UUID
	When      string
	Service   string
	Customer  string
	Phone     string
	Amount    string
	Payment   string
	Reason    string
	FailedAt  string
}

type totalsView struct {
	ID      string
	Label   string
	Range   string
	Money   string
	Pending string
	// Fees is the platform's fees on the confirmed payments (Stripe Connect), "" when
	// none: Money is after them.
	Fees         string
	PendingCount int
	Slots        int
	FillRate     string
	FillDetail   string
	Median       string
}

type openView struct {
	ID uuid.UUID
	// Staff is whose freed time it is ("" for anyone's); Rest marks the rest of a gap
	// that a shorter booking left.
	Staff      string
	Rest       bool
	When       string
	ISO        string
	Duration   int
	Service    string
	Price      string
	OffersSent int
	Yes        int
	No         int
	Waves      []waveView
	Next       string
	// Record links the opening's record page.
	Record bool
}

type waveView struct {
	Label  string
	Detail string
}

type filledView struct {
	ID uuid.UUID
	// Staff is whose time was booked ("" for anyone's); Service and Duration are what
	// was booked (with services, a customer's own service, maybe shorter than the gap).
	Staff    string
	When     string
	ISO      string
	Duration int
	Service  string
	Customer string
	Phone    string
	Payment  string
	PayClass string
	Amount   string
	// Fee and Net, when the platform kept a fee (Stripe Connect): its fee, and what
	// the shop received. Empty otherwise.
	Fee, Net string
	Status   string
	// BookingID is the booking's, for its attendance buttons (uuid.Nil: none to mark);
	// Attendance its mark (attended, no_show or ""); CanMark says its time has come and
	// it is live, CanChange that a mark may still be changed or taken back (24 hours).
	BookingID  uuid.UUID
	Attendance string
	CanMark    bool
	CanChange  bool
	// Record links the opening's record page.
	Record bool
	// FeeNote says what became of the booking's no-show or late-cancel fee ("No-show fee
	// $20.00 charged", "… declined: insufficient_funds"); "" for none (issue 48).
	FeeNote string
}

type exportForm struct {
	From, To string
}

func (d *Dashboard) home(c echo.Context) error {
	s := current(c)
	page := 1
	if n, err := strconv.Atoi(c.QueryParam("page")); err == nil && n > 1 && n <= 10_000 {
		page = n
	}
	v, err := d.homeView(c.Request().Context(), s.Shop, page)
	if err != nil {
		return d.internalError(c, "load dashboard", err)
	}
	v.Notice = cmpOr(notices[c.QueryParam("notice")], attendanceNotices[c.QueryParam("notice")])
	v.Form = declareForm{Duration: "30"}
	return d.render(c, http.StatusOK, s.Shop.Name+" · Slot recovery", v)
}

// homeView gathers everything the page shows for shop.
func (d *Dashboard) homeView(ctx context.Context, shop shops.Shop, page int) (homeView, error) {
	now := d.cfg.Now().In(shop.Location)
	v := homeView{
		Timezone: shop.Timezone, Currency: strings.ToUpper(shop.Currency), Page: page,
		Today: now.Format(time.DateOnly), Updated: now.Format("15:04:05"),
		Export: exportForm{From: monthStart(now).Format(time.DateOnly), To: now.Format(time.DateOnly)},
	}
	ws := weekStart(now)
	var err error
	if v.Week, err = d.totals(ctx, shop, "week", "This week", ws, ws.AddDate(0, 0, 7)); err != nil {
		return v, err
	}
	ms := monthStart(now)
	if v.Month, err = d.totals(ctx, shop, "month", "This month", ms, ms.AddDate(0, 1, 0)); err != nil {
		return v, err
	}
	if v.Chart, err = d.weeklyChart(ctx, shop, ws); err != nil {
		return v, err
	}
	if v.People, v.Services, err = d.pickers(ctx, shop); err != nil {
		return v, err
	}
	if v.Open, v.OpenMore, err = d.openList(ctx, shop, now); err != nil {
		return v, err
	}
	if v.RefundsFailed, err = d.refundsFailed(ctx, shop); err != nil {
		return v, err
	}
	if p := shop.SMSProblem; p.Recent(now) {
		var hint string
		if d.cfg.AccountIssue != nil {
			hint = smsProblemHints[d.cfg.AccountIssue(p.Code)]
		}
		if hint == "" {
			hint = "Check your SMS number and account settings with Twilio."
		}
		v.SMSProblem = &smsProblemView{Code: p.Code, When: formatWhen(p.At, shop.Location), Count: p.Count, Hint: hint}
	}
	if shop.CheckoutReady() != nil {
		v.Stripe = &stripeBannerView{Disconnected: shop.Stripe.DisconnectedAt != nil}
	}
	rows, err := queries.DashboardFilledPage(ctx, d.pool, db.DashboardFilledPageParams{
		ShopID: shop.ID, MaxRows: pageSize + 1, SkipRows: int32((page - 1) * pageSize),
	})
	if err != nil {
		return v, fmt.Errorf("list filled slots: %w", err)
	}
	if len(rows) > pageSize {
		rows, v.NextPage = rows[:pageSize], page+1
	}
	if page > 1 {
		v.PrevPage = page - 1
	}
	for _, r := range rows {
		label, class := paymentLabel(r.BookingStatus, bookingMode(r.TermsMode, r.BookingCheckout))
		v.Filled = append(v.Filled, filledView{
			ID: r.ID, When: formatWhen(r.StartsAt, shop.Location), ISO: r.StartsAt.UTC().Format(time.RFC3339),
			Duration: int(cmp.Or(r.BookedMinutes, r.DurationMinutes)), Service: cmpOr(r.BookedService, r.Service),
			Staff: r.StaffName, Customer: customerLabel(r.CustomerName, r.CustomerErased),
			Phone: phone.Mask(r.CustomerPhone), Payment: label, PayClass: class,
			Amount: money.Format(r.AmountCents, shop.Currency), Status: titleCase(r.Status),
		})
		f := &v.Filled[len(v.Filled)-1]
		f.Record = d.cfg.Offers != nil
		if bid, err := uuid.Parse(r.BookingID); err == nil && d.cfg.Ledger != nil &&
			(r.BookingStatus == ledger.BookingConfirmed || r.BookingStatus == ledger.BookingPendingPayment) {
			f.BookingID, f.CanMark = bid, !now.Before(r.StartsAt)
			switch {
			case r.AttendedAt != nil:
				f.Attendance, f.CanChange = string(ledger.AttendanceAttended), now.Sub(*r.AttendedAt) <= ledger.UndoAttendanceWithin
			case r.NoShowAt != nil:
				f.Attendance, f.CanChange = string(ledger.AttendanceNoShow), now.Sub(*r.NoShowAt) <= ledger.UndoAttendanceWithin
			}
		}
		if r.FeeCents > 0 {
			f.Fee, f.Net = money.Format(r.FeeCents, shop.Currency), money.Format(r.AmountCents-r.FeeCents, shop.Currency)
		}
	}
	if d.cfg.Ledger != nil {
		var ids []uuid.UUID
		for _, f := range v.Filled {
			if f.BookingID != uuid.Nil {
				ids = append(ids, f.BookingID)
			}
		}
		fees, err := d.cfg.Ledger.FeesOf(ctx, shop.ID, ids)
		if err != nil {
			return v, err
		}
		for i := range v.Filled {
			if fee := fees[v.Filled[i].BookingID]; fee != nil {
				v.Filled[i].FeeNote = feeNote(fee)
			}
		}
	}
	return v, nil
}

// feeNote is a booking's fee in the owner's words.
func feeNote(f *ledger.Fee) string {
	what := "No-show fee"
	if f.Kind == payments.FeeLateCancel {
		what = "Late-cancel fee"
	}
	what += " " + money.Format(f.AmountCents, f.Currency)
	switch f.State {
	case ledger.FeeCharged:
		return what + " charged"
	case ledger.FeeRequiresAction:
		return what + ": the bank wants the customer to confirm; they were texted a page to pay it"
	case ledger.FeeDeclined:
		return what + " declined: " + cmpOr(f.DeclineCode, f.Message)
	case ledger.FeeNoCard:
		return what + ": no card was kept to charge"
	}
	return what + " being charged"
}

// pickers are the shop's active people and services, for the opening form.
func (d *Dashboard) pickers(ctx context.Context, shop shops.Shop) ([]catalog.Staff, []catalog.Service, error) {
	staff, err := d.catalog.Staff(ctx, shop.ID)
	if err != nil {
		return nil, nil, err
	}
	services, err := d.catalog.Services(ctx, shop.ID)
	if err != nil {
		return nil, nil, err
	}
	staff = slices.DeleteFunc(staff, func(p catalog.Staff) bool { return !p.Active })
	services = slices.DeleteFunc(services, func(s catalog.Service) bool { return !s.Active })
	return staff, services, nil
}

// refundsFailed lists the shop's bookings whose payment could not be refunded.
func (d *Dashboard) refundsFailed(ctx context.Context, shop shops.Shop) ([]refundFailedView, error) {
	rows, err := queries.DashboardRefundsFailed(ctx, d.pool, db.DashboardRefundsFailedParams{ShopID: shop.ID, MaxRows: maxRefundsFailed})
	if err != nil {
		return nil, fmt.Errorf("list failed refunds: %w", err)
	}
	out := make([]refundFailedView, 0, len(rows))
	for _, r := range rows {
		out = append(out, refundFailedView{
			BookingID: r.ID, When: formatWhen(r.StartsAt, shop.Location), Service: r.Service,
			Customer: customerLabel(r.CustomerName, r.CustomerErased), Phone: phone.Mask(r.CustomerPhone),
			Amount: money.Format(r.AmountCents, r.Currency), Payment: r.PaymentIntentID, Reason: r.Reason,
			FailedAt: formatWhen(r.RefundFailedAt, shop.Location),
		})
	}
	return out, nil
}

func (d *Dashboard) totals(ctx context.Context, shop shops.Shop, id, label string, since, until time.Time) (totalsView, error) {
	r, err := queries.DashboardTotals(ctx, d.pool, db.DashboardTotalsParams{ShopID: shop.ID, Since: since, Until: until})
	if err != nil {
		return totalsView{}, fmt.Errorf("totals since %s: %w", since.Format(time.DateOnly), err)
	}
	t := totalsView{
		ID: id, Label: label, Range: formatRange(since, until.AddDate(0, 0, -1)),
		// What the shop received: customers' payments less the platform's fees.
		Money:        money.Format(r.ConfirmedCents-r.ConfirmedFeeCents, shop.Currency),
		Pending:      money.Format(r.PendingCents-r.PendingFeeCents, shop.Currency),
		PendingCount: int(r.PendingCount), Slots: int(r.SlotsRecovered),
		FillRate: "–", FillDetail: "no openings declared yet", Median: "–",
	}
	if r.OpeningsDeclared > 0 {
		t.FillRate = fmt.Sprintf("%d%%", (100*int(r.OpeningsFilled)+int(r.OpeningsDeclared)/2)/int(r.OpeningsDeclared))
		t.FillDetail = fmt.Sprintf("%d of %d openings filled", r.OpeningsFilled, r.OpeningsDeclared)
		if r.OpeningsDeclared == 1 {
			t.FillDetail = fmt.Sprintf("%d of 1 opening filled", r.OpeningsFilled)
		}
	}
	if r.ConfirmedFeeCents > 0 {
		t.Fees = money.Format(r.ConfirmedFeeCents, shop.Currency)
	}
	if r.SlotsRecovered > 0 {
		t.Median = formatDuration(time.Duration(r.MedianSeconds * float64(time.Second)))
	}
	return t, nil
}

// openList returns the open openings with their offers, replies and waves.
func (d *Dashboard) openList(ctx context.Context, shop shops.Shop, now time.Time) ([]openView, bool, error) {
	rows, err := queries.DashboardOpenList(ctx, d.pool, db.DashboardOpenListParams{ShopID: shop.ID, MaxRows: maxOpen + 1})
	if err != nil {
		return nil, false, fmt.Errorf("list open slots: %w", err)
	}
	more := len(rows) > maxOpen
	if more {
		rows = rows[:maxOpen]
	}
	if len(rows) == 0 {
		return nil, false, nil
	}
	ids := make([]uuid.UUID, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	waves, err := queries.DashboardWaves(ctx, d.pool, db.DashboardWavesParams{ShopID: shop.ID, OpeningIds: ids})
	if err != nil {
		return nil, false, fmt.Errorf("list waves: %w", err)
	}
	byOpening := map[uuid.UUID][]db.DashboardWavesRow{}
	for _, w := range waves {
		byOpening[w.OpeningID] = append(byOpening[w.OpeningID], w)
	}
	next, err := d.cfg.Waves.NextWaves(ctx, ids)
	if err != nil {
		// The schedule is a nicety; the page is still worth showing without it.
		d.log.Warn("dashboard next waves", "shop_id", shop.ID, "err", err)
	}
	out := make([]openView, len(rows))
	for i, r := range rows {
		o := openView{
			ID: r.ID, When: formatWhen(r.StartsAt, shop.Location), ISO: r.StartsAt.UTC().Format(time.RFC3339),
			Duration: int(r.DurationMinutes), Service: r.Service, Price: money.Format(r.PriceCents, shop.Currency),
			Staff: r.StaffName, Rest: r.IsRest,
			OffersSent: int(r.OffersSent), Yes: int(r.RepliesYes), No: int(r.RepliesNo), Record: d.cfg.Offers != nil,
		}
		for _, w := range byOpening[r.ID] {
			label := fmt.Sprintf("Wave %d", w.Wave)
			if r.Generation > 1 {
				label = fmt.Sprintf("Round %d, wave %d", w.Generation, w.Wave)
			}
			detail := fmt.Sprintf("%d texted, first at %s", w.Texted, shortTime(w.FirstAt, shop.Location, now))
			if w.Texted == 0 {
				detail = fmt.Sprintf("%d queued", w.Offers)
			}
			if w.Delivered > 0 || w.Undelivered > 0 {
				detail += fmt.Sprintf(" · %d delivered", w.Delivered)
				if w.Undelivered > 0 {
					detail += fmt.Sprintf(", %d not delivered (replaced in the next wave)", w.Undelivered)
				}
			}
			o.Waves = append(o.Waves, waveView{Label: label, Detail: detail})
		}
		if n, ok := next[r.ID]; ok && n.Generation == int(r.Generation) {
			if n.At.After(now) {
				o.Next = fmt.Sprintf("Wave %d at %s", n.Wave, shortTime(n.At, shop.Location, now))
			} else {
				o.Next = fmt.Sprintf("Wave %d due now", n.Wave)
			}
		}
		out[i] = o
	}
	return out, more, nil
}

// bookingMode is the payment mode a booking was made under, whatever the shop's is now:
// its terms' (the ledger's booking_terms), or, for a booking without terms, checkout
// when it was held for a payment page and none when it was confirmed at once.
func bookingMode(termsMode string, heldForCheckout bool) string {
	switch {
	case termsMode != "":
		return termsMode
	case heldForCheckout:
		return shops.PaymentCheckout
	}
	return shops.PaymentNone
}

// paymentLabel says in words where a filled slot's payment stands; paymentMode is the
// one the booking was made under (bookingMode).
func paymentLabel(status, paymentMode string) (label, class string) {
	switch status {
	case ledger.BookingConfirmed:
		switch paymentMode {
		case shops.PaymentNone:
			return "Confirmed", "ok"
		case shops.PaymentDeposit:
			return "Deposit paid", "ok"
		case shops.PaymentCard:
			return "Card kept", "ok"
		}
		return "Paid", "ok"
	case ledger.BookingPendingPayment:
		return "Awaiting payment", "wait"
	case ledger.BookingPaymentFailed:
		return "Payment failed", "bad"
	case ledger.BookingCancelled:
		return "Cancelled", "bad"
	case ledger.BookingMoved:
		// Moved up to an earlier opening, its payment with it.
		return "Moved up", "muted"
	}
	return "No booking", "muted"
}

// weekStart is Monday 00:00 of t's week in t's location (ISO weeks, as Postgres'
// date_trunc('week') counts them).
func weekStart(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d-(int(t.Weekday())+6)%7, 0, 0, 0, 0, t.Location())
}

func monthStart(t time.Time) time.Time {
	y, m, _ := t.Date()
	return time.Date(y, m, 1, 0, 0, 0, 0, t.Location())
}

// formatWhen is an appointment's local day and time: "Tue 24 Nov 2026, 15:00".
func formatWhen(t time.Time, loc *time.Location) string {
	return t.In(loc).Format("Mon 2 Jan 2006, 15:04")
}

// shortTime is a time near now: "14:02" today, "Tue 24 Nov 14:02" otherwise.
func shortTime(t time.Time, loc *time.Location, now time.Time) string {
	t = t.In(loc)
	if y, m, d := t.Date(); y == now.Year() && m == now.Month() && d == now.Day() {
		return t.Format("15:04")
	}
	return t.Format("Mon 2 Jan 15:04")
}

// formatRange is "17–23 Nov", "27 Oct – 2 Nov" or "1–30 Nov".
func formatRange(from, to time.Time) string {
	if from.Month() == to.Month() {
		return fmt.Sprintf("%d–%d %s", from.Day(), to.Day(), to.Format("Jan"))
	}
	return from.Format("2 Jan") + " – " + to.Format("2 Jan")
}

// formatDuration is a median wait in words: "under 1 min", "12 min", "3 h 5 min",
// "2.5 days".
func formatDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "under 1 min"
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h %d min", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%.1f days", d.Hours()/24)
}

func titleCase(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + strings.ReplaceAll(s[1:], "_", " ")
}

// erasedLabel stands for a customer the shop erased: their slot still counts, but who
// they were is gone, which "(no name)" (a customer who never gave one) would not say.
const erasedLabel = "(erased)"

// customerLabel is how a filled slot names its customer.
func customerLabel(name string, erased bool) string {
	if erased {
		return erasedLabel
	}
	return cmpOr(name, "(no name)")
}

func cmpOr(s, fallback string) string {
	if strings.TrimSpace(s) == "" {
		return fallback
	}
	return s
}
