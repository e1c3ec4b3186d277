package dashboard

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/slotrecovery/slotrecovery/internal/catalog"
	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/money"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
)

// declareForm is the "declare an opening" form as typed, with a message per field that
// is wrong. Field names are the API's (problem.Error.Field), so the domain's errors land
// next to the input they are about.
type declareForm struct {
	Date, Time, Duration, Service, Price string
	// StaffID is the person picked ("" for anyone).
	StaffID string
	Errors  map[string]string
	Summary []formError
	// Other is a problem with the opening as a whole rather than one input.
	Other string
}

type formError struct {
	Anchor, Message string
}

// inputFor is the id of the input a field's message points at.
var inputFor = map[string]string{
	"starts_at": "starts-date", "duration_minutes": "duration", "staff_id": "staff", "service": "service", "price_cents": "price",
}

// fieldOrder is the order of the inputs on the page, for the error summary.
var fieldOrder = []string{"starts_at", "duration_minutes", "staff_id", "service", "price_cents"}

func (f *declareForm) fail(field, msg string) {
	if f.Errors == nil {
		f.Errors = map[string]string{}
	}
	if _, dup := f.Errors[field]; !dup {
		f.Errors[field] = msg
	}
}

func (f *declareForm) summarise() {
	f.Summary = nil
	for _, field := range fieldOrder {
		if msg, ok := f.Errors[field]; ok {
			f.Summary = append(f.Summary, formError{Anchor: inputFor[field], Message: msg})
		}
	}
}

// parse turns the form into an opening, recording a message for each input it cannot
// read. What it can read, the domain checks: the same rules as the API. A shop with
// services may leave the price empty (the service's, or each customer's own).
func (f *declareForm) parse(shop shops.Shop, withServices bool) slots.NewOpening {
	var n slots.NewOpening
	switch {
	case f.Date == "" && f.Time == "":
		f.fail("starts_at", "Enter the date and start time of the opening.")
	case f.Date == "":
		f.fail("starts_at", "Enter the date of the opening.")
	case f.Time == "":
		f.fail("starts_at", "Enter the start time of the opening.")
	default:
		t, err := time.ParseInLocation("2006-01-02 15:04", f.Date+" "+f.Time, shop.Location)
		if err != nil {
			f.fail("starts_at", "Enter the date as YYYY-MM-DD and the time as HH:MM, for example 2026-11-24 and 15:00.")
		} else {
			n.StartsAt = t
		}
	}
	if f.Duration == "" {
		f.fail("duration_minutes", "Enter how long the appointment lasts, in minutes.")
	} else if m, err := strconv.Atoi(f.Duration); err != nil {
		f.fail("duration_minutes", "Enter the length in whole minutes, for example 30.")
	} else {
		n.DurationMinutes = m
	}
	n.Service = f.Service
	if f.StaffID != "" {
		if id, err := uuid.Parse(f.StaffID); err != nil {
			f.fail("staff_id", "Choose a person from the list, or anyone.")
		} else {
			n.StaffID = id
		}
	}
	cents, err := money.Parse(f.Price, shop.Currency)
	switch {
	case f.Price == "" && withServices:
		// Left to the service named (its price) or to each customer's own service.
	case f.Price == "":
		f.fail("price_cents", "Enter the price, for example 45.00.")
	case err != nil:
		f.fail("price_cents", "Enter the price as a number with at most "+strconv.Itoa(money.Decimals(shop.Currency))+
			" decimals, for example "+money.Plain(4500, shop.Currency)+".")
	default:
		n.PriceCents = cents
	}
	return n
}

// fieldLabels name the API's fields the way the form does, to reword the domain's
// messages ("starts_at must be in the future" → "The start must be in the future").
var fieldLabels = map[string]string{
	"starts_at": "The start", "duration_minutes": "The length in minutes", "service": "The service",
}

// staffPickMessage rewords the domain's refusal of the opening's person.
const staffPickMessage = "Choose one of your active people, or anyone."

// friendly rewords a domain problem about a form field for the person at the form.
func friendly(p *problem.Error, currency string) string {
	if p.Field == "price_cents" {
		if strings.Contains(p.Message, "at least") {
			// Under the payment provider's minimum for the currency.
			return "This price is below the smallest payment the payment provider accepts in " + strings.ToUpper(currency) + "."
		}
		return "Enter a price above zero and at most " + money.Format(money.MaxAmount, currency) + "."
	}
	if p.Field == "staff_id" {
		return staffPickMessage
	}
	msg := p.Message
	if label, ok := fieldLabels[p.Field]; ok && strings.HasPrefix(msg, p.Field) {
		msg = label + strings.TrimPrefix(msg, p.Field)
	}
	if !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	return msg
}

func (d *Dashboard) declare(c echo.Context) error {
	s := current(c)
	f := declareForm{
		Date: strings.TrimSpace(c.FormValue("date")), Time: strings.TrimSpace(c.FormValue("time")),
		Duration: strings.TrimSpace(c.FormValue("duration_minutes")), Service: strings.TrimSpace(c.FormValue("service")),
		Price: strings.TrimSpace(c.FormValue("price")), StaffID: strings.TrimSpace(c.FormValue("staff_id")),
	}
	withServices, err := catalog.HasServices(c.Request().Context(), d.pool, s.Shop.ID)
	if err != nil {
		return d.internalError(c, "check services", err)
	}
	n := f.parse(s.Shop, withServices)
	status := http.StatusUnprocessableEntity
	if len(f.Errors) == 0 {
		var o slots.Opening
		var err error
		if d.cfg.Senders != nil {
			// SMS_US_A2P=required: the owner reads why above the form.
			err = d.cfg.Senders.CheckCanText(c.Request().Context(), s.Shop)
		}
		if err == nil {
			o, err = d.openings.Declare(c.Request().Context(), s.Shop, n)
		}
		p, isProblem := problem.As(err)
		switch {
		case err == nil:
			d.logger(c).Info("dashboard opening declared", "shop_id", s.Shop.ID, "opening_id", o.ID)
			if len(o.Warnings) > 0 {
				return c.Redirect(http.StatusSeeOther, "/dashboard?notice=declared_slow#open")
			}
			return c.Redirect(http.StatusSeeOther, "/dashboard?notice=declared#open")
		case isProblem && p.Field != "" && inputFor[p.Field] != "":
			f.fail(p.Field, friendly(p, s.Shop.Currency))
		case isProblem && (p.Kind == problem.Invalid || p.Kind == problem.Conflict):
			// A conflict is the shop's state, not the form's (its Stripe account cannot
			// take payments): the owner reads why and what to do above the form.
			f.Other = p.Message
			if p.Kind == problem.Conflict {
				status = http.StatusConflict
			}
		default:
			return d.internalError(c, "declare opening", err)
		}
	}
	f.summarise()
	v, err := d.homeView(c.Request().Context(), s.Shop, 1)
	if err != nil {
		return d.internalError(c, "load dashboard", err)
	}
	v.Form = f
	return d.render(c, status, "Check the opening · "+s.Shop.Name, v)
}

func (d *Dashboard) cancel(c echo.Context) error {
	s := current(c)
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return d.notFound(c)
	}
	_, err = d.openings.Cancel(c.Request().Context(), s.Shop.ID, id)
	p, isProblem := problem.As(err)
	switch {
	case err == nil:
		d.logger(c).Info("dashboard opening cancelled", "shop_id", s.Shop.ID, "opening_id", id)
		return c.Redirect(http.StatusSeeOther, "/dashboard?notice=cancelled#open")
	case errors.Is(err, slots.ErrNotFound) || (isProblem && p.Kind == problem.NotFound):
		return d.notFound(c)
	case isProblem && p.Kind == problem.Conflict:
		v, err := d.homeView(c.Request().Context(), s.Shop, 1)
		if err != nil {
			return d.internalError(c, "load dashboard", err)
		}
		v.Form = declareForm{Duration: "30"}
		v.Error = "That opening could not be cancelled: " + p.Message + "."
		return d.render(c, http.StatusConflict, s.Shop.Name+" · Slot recovery", v)
	default:
		return d.internalError(c, "cancel opening", err)
	}
}

// refundDone takes a failed refund off the list of those needing attention: the owner
// says they refunded the payment by hand in Stripe. Another shop's booking, or one with
// nothing to dismiss, is not found.
func (d *Dashboard) refundDone(c echo.Context) error {
	s := current(c)
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return d.notFound(c)
	}
	ok, err := ledger.DismissRefundFailed(c.Request().Context(), d.pool, s.Shop.ID, id, d.cfg.Now())
	if err != nil {
		return d.internalError(c, "dismiss failed refund", err)
	}
	if !ok {
		return d.notFound(c)
	}
	d.logger(c).Info("dashboard failed refund marked as refunded by hand", "shop_id", s.Shop.ID, "booking_id", id)
	return c.Redirect(http.StatusSeeOther, "/dashboard?notice=refund_done")
}
