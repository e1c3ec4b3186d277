package dashboard

import (
	"bytes"
	"cmp"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/slotrecovery/slotrecovery/internal/catalog"
	"github.com/slotrecovery/slotrecovery/internal/csvcell"
	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/money"
	"github.com/slotrecovery/slotrecovery/internal/phone"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

const (
	// maxExportDays bounds one export's date range.
	maxExportDays = 366
	// maxExportRows bounds one export's size; a year of a busy shop fits well inside.
	maxExportRows = 50_000
)

// exportHeader names the CSV columns. Phones are masked as on the page: owners keep
// their customer list elsewhere, and a file that travels by email should not carry it.
// amount is what the customer paid; platform_fee the platform's fee on it (Stripe
// Connect; 0 otherwise) and net_amount what the shop received. The two came later, so
// they are last: a sheet that reads the columns by position still finds the others.
// service and duration_minutes are what was booked (with services, the customer's own
// service, maybe shorter than the gap the opening was declared as); staff the person
// whose time it was ("" for anyone's), last as it came last. Then no-show protection's
// (issue 48): charged_at_yes (the deposit, the price, or 0 for a card kept), the policy
// accepted (policy_version, policy_sha256, policy_accepted_at in UTC RFC 3339; empty for
// none) and the booking's fee (fee_kind, fee_outcome, fee_amount).
var exportHeader = []string{
	"opening_id", "date", "start_time", "timezone", "duration_minutes", "service",
	"customer_name", "customer_phone_masked", "opening_status", "payment_status",
	"amount", "currency", "booking_id", "platform_fee", "net_amount", "staff",
	"payment_mode", "charged_at_yes", "policy_version", "policy_sha256", "policy_accepted_at",
	"fee_kind", "fee_outcome", "fee_amount",
}

// export answers a CSV of the filled slots whose appointment falls on a local date in
// [from, to], both inclusive, in the shop's time zone.
func (d *Dashboard) export(c echo.Context) error {
	s := current(c)
	loc := s.Shop.Location
	from, errFrom := time.ParseInLocation(time.DateOnly, c.QueryParam("from"), loc)
	to, errTo := time.ParseInLocation(time.DateOnly, c.QueryParam("to"), loc)
	switch {
	case errFrom != nil || errTo != nil:
		return d.errorPage(c, http.StatusBadRequest, "Check the dates",
			"Choose a first and a last day for the export, as YYYY-MM-DD (for example 2026-11-01 and 2026-11-30).")
	case to.Before(from):
		return d.errorPage(c, http.StatusBadRequest, "Check the dates", "The last day of the export comes before the first day.")
	case to.Sub(from) > maxExportDays*24*time.Hour:
		return d.errorPage(c, http.StatusBadRequest, "Check the dates",
			fmt.Sprintf("An export covers at most %d days; choose a shorter range.", maxExportDays))
	}
	until := time.Date(to.Year(), to.Month(), to.Day()+1, 0, 0, 0, 0, loc)
	rows, err := queries.DashboardFilledExport(c.Request().Context(), d.pool, db.DashboardFilledExportParams{
		ShopID: s.Shop.ID, StartsFrom: from, StartsUntil: until, MaxRows: maxExportRows,
	})
	if err != nil {
		return d.internalError(c, "export filled slots", err)
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.Write(exportHeader)
	for _, r := range rows {
		_ = w.Write(exportRecord(r, s.Shop))
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return d.internalError(c, "write csv", err)
	}
	name := fmt.Sprintf("filled-slots_%s_%s.csv", from.Format(time.DateOnly), to.Format(time.DateOnly))
	c.Response().Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	return c.Blob(http.StatusOK, "text/csv; charset=utf-8", buf.Bytes())
}

// exportRecord is one filled slot's CSV row. Every cell that holds text stored from
// someone's input is defused, not only the free-text names: phones and statuses are
// checked when they are stored, but the export does not rest on that.
func exportRecord(r db.DashboardFilledExportRow, shop shops.Shop) []string {
	start := r.StartsAt.In(shop.Location)
	payment, _ := paymentLabel(r.BookingStatus, bookingMode(r.TermsMode, r.BookingCheckout))
	// An erased customer's name is empty, like one who never gave a name; the file says
	// which it was, as the page does. (Their phone is empty too.)
	name := r.CustomerName
	if r.CustomerErased {
		name = erasedLabel
	}
	return []string{
		r.ID.String(), start.Format(time.DateOnly), start.Format("15:04"), safeCell(shop.Timezone),
		fmt.Sprint(cmp.Or(r.BookedMinutes, r.DurationMinutes)), safeCell(cmpOr(r.BookedService, r.Service)), safeCell(name),
		exportPhone(r.CustomerPhone), safeCell(r.Status), safeCell(payment),
		money.Plain(r.AmountCents, shop.Currency), safeCell(strings.ToUpper(shop.Currency)), safeCell(r.BookingID),
		money.Plain(r.FeeCents, shop.Currency), money.Plain(r.AmountCents-r.FeeCents, shop.Currency), safeCell(r.StaffName),
		safeCell(r.TermsMode), terms(r.TermsMode != "", money.Plain(r.ChargedCents, shop.Currency)),
		terms(r.TermsMode != "", fmt.Sprint(r.PolicyVersion)), safeCell(r.PolicySha256), accepted(r.PolicyAcceptedAt),
		safeCell(r.FeeKind), safeCell(r.FeeOutcome), terms(r.FeeKind != "", money.Plain(r.FeeAmountCents, shop.Currency)),
	}
}

// terms is v when the booking has the thing it describes, else an empty cell.
func terms(has bool, v string) string {
	if !has {
		return ""
	}
	return v
}

// accepted is a policy's acceptance time as the export writes it; "" for none.
func accepted(at *time.Time) string {
	if at == nil {
		return ""
	}
	return at.UTC().Format(time.RFC3339)
}

// exportPhone is the masked phone. A valid E.164 number masks to "+155******23": a
// leading "+" but only digits and asterisks, which no spreadsheet can run, so it is
// kept as owners know it; anything else stored in the column is defused like free text.
func exportPhone(p string) string {
	if phone.Valid(p) {
		return phone.Mask(p)
	}
	return safeCell(phone.Mask(p))
}

// safeCell is csvcell.Safe: the exports' one rule against formulas.
var safeCell = csvcell.Safe

// CustomersExportPath is the customer list as a CSV file (GET).
const CustomersExportPath = "/dashboard/customers/export.csv"

// customerExportHeader names the customer export's columns: the CSV import's own, so
// a file exported and imported again (here or through the API) changes nothing. Unlike
// the filled slots' file it carries whole phones: it is the owner's own list, for a
// copy or another tool, and the import needs them.
var customerExportHeader = []string{"phone", "name", "priority", "sms_opt_in", "preferences", "language"}

// exportCustomers answers the shop's customers (not the erased) as a CSV file in the
// import's columns, with the people they want by name in preferences (staff=Ana,Ben).
// Whole phone numbers leave only when the owner confirms with the shop's API key (a
// session left open on a shared computer is not enough), and each export is recorded
// before its first line, for the owner to read back (customers.StartExport). The file
// is written a page of customers at a time, never held whole.
func (d *Dashboard) exportCustomers(c echo.Context) error {
	s := current(c)
	ctx := c.Request().Context()
	shop, err := d.shops.Authenticate(ctx, strings.TrimSpace(c.FormValue("api_key")))
	if errors.Is(err, shops.ErrUnauthorized) || (err == nil && shop.ID != s.Shop.ID) {
		d.logger(c).Warn("customer export refused: not the shop's key", "shop_id", s.Shop.ID)
		return c.Redirect(http.StatusSeeOther, "/dashboard/customers?notice=export_key")
	}
	if err != nil {
		return d.internalError(c, "authenticate", err)
	}
	staff, err := d.catalog.Staff(ctx, s.Shop.ID)
	if err != nil {
		return d.internalError(c, "list staff", err)
	}
	q := customers.Query{Limit: customers.MaxCustomerPage}
	page, err := d.customerSvc.List(ctx, s.Shop.ID, q)
	if err != nil {
		return d.internalError(c, "export customers", err)
	}
	id, err := d.customerSvc.StartExport(ctx, s.Shop.ID, d.cfg.Now(), c.Request().UserAgent())
	if err != nil {
		return d.internalError(c, "record export", err)
	}
	d.logger(c).Info("customer export", "shop_id", s.Shop.ID, "export_id", id)
	name := fmt.Sprintf("customers_%s.csv", d.cfg.Now().In(s.Shop.Location).Format(time.DateOnly))
	res := c.Response()
	res.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	res.Header().Set(echo.HeaderContentType, "text/csv; charset=utf-8")
	res.WriteHeader(http.StatusOK)
	w := csv.NewWriter(res)
	_ = w.Write(customerExportHeader)
	n := 0
	for {
		for _, cu := range page.Customers {
			_ = w.Write(customerRecord(cu, staff))
			n++
		}
		w.Flush()
		if err := w.Error(); err != nil {
			// The browser went away: the export stays on the record as unfinished.
			d.logger(c).Warn("customer export cut short", "shop_id", s.Shop.ID, "export_id", id, "err", err)
			return nil
		}
		res.Flush()
		if q.Cursor = page.Next; q.Cursor == "" {
			break
		}
		if page, err = d.customerSvc.List(ctx, s.Shop.ID, q); err != nil {
			// The status is sent: the file ends here, and the record says unfinished.
			d.logger(c).Error("customer export cut short", "shop_id", s.Shop.ID, "export_id", id, "err", err)
			return nil
		}
	}
	if err := d.customerSvc.FinishExport(context.WithoutCancel(ctx), s.Shop.ID, id, n); err != nil {
		d.logger(c).Error("customer export not marked finished", "shop_id", s.Shop.ID, "export_id", id, "err", err)
	}
	return nil
}

// customerRecord is one customer's line, as the import reads it. A valid phone is
// written whole: "+" and digits only, which no spreadsheet runs as a formula.
func customerRecord(cu customers.Customer, staff []catalog.Staff) []string {
	ph := cu.Phone
	if !phone.Valid(ph) {
		ph = safeCell(ph)
	}
	optIn := "no"
	if cu.SMSOptIn {
		optIn = "yes"
	}
	return []string{ph, safeCell(cu.Name), strconv.Itoa(cu.Priority), optIn,
		safeCell(customers.FormatPreferences(cu.Preferences, staff)), string(cu.Language)}
}
