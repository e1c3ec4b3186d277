package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/slotrecovery/slotrecovery/internal/book"
	"github.com/slotrecovery/slotrecovery/internal/connectors"
	"github.com/slotrecovery/slotrecovery/internal/money"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// The Book page: the shop's appointment book for one day (?day=YYYY-MM-DD, today in the
// shop's time zone by default), a section per person and one for appointments with
// no one in particular, each appointment with what its cancellations declared. A
// cancelled appointment whose opening waits for the owner (auto_declare off) has an
// "Offer it" button: book.Service.Offer, which declares it once however often it is
// pressed.

// BookPath is the Book page.
const BookPath = "/dashboard/book"

// dayLayout is how the page's ?day= is written.
const dayLayout = "2006-01-02"

// maxDayPages bounds the pages of book.MaxPage appointments read for one day: far more
// than a shop's day holds.
const maxDayPages = 20

type bookView struct {
	// Day is the day shown, in words; Date, Prev and Next are it and its neighbours as
	// ?day= values.
	Day, Date, Prev, Next string
	Today                 bool
	AutoDeclare           bool
	Notice, Error         string
	People                []personView
	Count                 int
	// More is true when the day held more appointments than the page reads.
	More bool
	// Chains are the chains of move-ups with a time on this day, each whole.
	Chains []chainView
	// Copy are the moves still to copy into the shop's own booking system (whatever
	// the day shown).
	Copy []copyView
}

// copyView is a move to copy into the system the appointment came from.
type copyView struct {
	ID   uuid.UUID
	Text string
	// Problem is why the vendor refused the move written back through its API ("" for
	// none): the owner copies it by hand.
	Problem string
}

// chainView is a chain of moves as the page writes it: its links in order ("Tue 11:00
// Kim (from Thu 16:00)"), then its moves and what it recovered.
type chainView struct {
	Links   []string
	Summary string
}

// personView is one person's appointments of the day; Key names its section.
type personView struct {
	Key, Name    string
	Appointments []appointmentView
}

// appointmentView is one appointment as the page shows it.
type appointmentView struct {
	ID                  uuid.UUID
	Time                string
	Minutes             int
	Service             string
	Customer, Phone     string
	Status, StatusClass string
	Source              string
	Declarations        []string
	CanOffer            bool
}

// bookNotices are the page's notices after "Offer it", by the query's notice.
var bookNotices = map[string]string{
	"offered": "The opening is declared: offers go out with the next wave.",
	"skipped": "The opening was not declared: the appointment says why.",
	"pending": "The opening could not be declared just now; it is tried again within minutes.",
	"copied":  "The move is off the list.",
	// A second press, or another shop's address: nothing to take off.
	"copied_already": "That move was off the list already.",
}

// dayOf reads ?day= in the shop's zone: the day's start (local midnight). Empty means
// today; ok is false for anything else that is not a date.
func dayOf(raw string, shop shops.Shop, now time.Time) (time.Time, bool) {
	if raw == "" {
		y, m, d := now.In(shop.Location).Date()
		return time.Date(y, m, d, 0, 0, 0, 0, shop.Location), true
	}
	t, err := time.ParseInLocation(dayLayout, raw, shop.Location)
	if err != nil {
		return time.Time{}, false
	}
	return t, true
}

func (d *Dashboard) bookDay(c echo.Context) error {
	s := current(c)
	day, ok := dayOf(c.QueryParam("day"), s.Shop, d.cfg.Now())
	if !ok {
		return d.errorPage(c, http.StatusBadRequest, "That is not a day",
			"The address names a day the book cannot read. Open the Book page from the menu, or write the day as 2026-11-29.")
	}
	v, err := d.bookViewOf(c.Request().Context(), s.Shop, day)
	if err != nil {
		return d.internalError(c, "load book", err)
	}
	v.Notice = bookNotices[c.QueryParam("notice")]
	return d.render(c, http.StatusOK, "Book · "+v.Day+" · "+s.Shop.Name, v)
}

// bookViewOf reads shop's appointments starting on day (local midnight to the next,
// whatever its length), page by page, with what each release declared.
func (d *Dashboard) bookViewOf(ctx context.Context, shop shops.Shop, day time.Time) (bookView, error) {
	now := d.cfg.Now()
	y, m, dd := day.Date()
	end := time.Date(y, m, dd+1, 0, 0, 0, 0, shop.Location)
	ty, tm, td := now.In(shop.Location).Date()
	v := bookView{Day: day.Format("Monday 2 January 2006"), Date: day.Format(dayLayout),
		Prev: time.Date(y, m, dd-1, 0, 0, 0, 0, shop.Location).Format(dayLayout), Next: end.Format(dayLayout),
		Today: y == ty && m == tm && dd == td, AutoDeclare: shop.AutoDeclare}
	var all []book.Appointment
	q := book.Query{From: day, To: end, Limit: book.MaxPage}
	for range maxDayPages {
		page, err := d.cfg.Book.List(ctx, shop.ID, q)
		if err != nil {
			return v, err
		}
		all = append(all, page.Appointments...)
		if q.Cursor = page.Next; q.Cursor == "" {
			break
		}
	}
	v.More, v.Count = q.Cursor != "", len(all)
	chains, err := d.cfg.Book.Chains(ctx, shop.ID, day, end)
	if err != nil {
		return v, err
	}
	for _, c := range chains {
		v.Chains = append(v.Chains, chainViewOf(c, shop, now))
	}
	moves, err := d.cfg.Book.MovesToCopy(ctx, shop.ID, now)
	if err != nil {
		return v, err
	}
	today := now.In(shop.Location)
	for _, m := range moves {
		who := m.Name
		if who == "" {
			who = "(no name)"
		}
		v.Copy = append(v.Copy, copyView{ID: m.AppointmentID, Text: fmt.Sprintf("%s, %s: %s → %s (in %s)", who, orDash(m.Service),
			shortTime(m.From, shop.Location, today), shortTime(m.To, shop.Location, today), sourceLabel(m.Source)),
			Problem: m.Problem})
	}
	people := map[string]*personView{}
	for _, a := range all {
		av, err := d.appointmentViewOf(ctx, shop, a, now)
		if err != nil {
			return v, err
		}
		key, name := "anyone", "Anyone"
		if a.Staff != nil {
			key, name = "staff-"+a.Staff.ID.String(), a.Staff.Name
		}
		p := people[key]
		if p == nil {
			p = &personView{Key: key, Name: name}
			people[key] = p
		}
		p.Appointments = append(p.Appointments, av)
	}
	for _, p := range people {
		v.People = append(v.People, *p)
	}
	// People by name, "Anyone" last.
	sort.Slice(v.People, func(i, j int) bool {
		a, b := v.People[i], v.People[j]
		if (a.Key == "anyone") != (b.Key == "anyone") {
			return b.Key == "anyone"
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Key < b.Key
	})
	return v, nil
}

// chainViewOf writes c for the page, times in the shop's zone.
func chainViewOf(c book.Chain, shop shops.Shop, now time.Time) chainView {
	loc, today := shop.Location, now.In(shop.Location)
	var v chainView
	for _, l := range c.Links {
		at := shortTime(l.StartsAt, loc, today)
		switch {
		case l.Holder == "" && l.Status == "open":
			at += " open"
		case l.Holder == "":
			at += " " + l.Status
		default:
			at += " " + l.Holder
		}
		if l.LeftAt != nil {
			at += " (from " + shortTime(*l.LeftAt, loc, today) + ")"
		}
		v.Links = append(v.Links, at)
	}
	v.Summary = fmt.Sprintf("%d move%s, %s recovered", c.Moves, plural(c.Moves), money.Format(c.RecoveredCents, shop.Currency))
	return v
}

// appointmentViewOf is a as the page shows it, with what each of its releases declared.
func (d *Dashboard) appointmentViewOf(ctx context.Context, shop shops.Shop, a book.Appointment, now time.Time) (appointmentView, error) {
	loc := shop.Location
	av := appointmentView{ID: a.ID, Time: a.StartsAt.In(loc).Format("15:04") + "–" + a.EndsAt().In(loc).Format("15:04"),
		Minutes: a.DurationMinutes, Service: a.Service, Customer: a.Name, Phone: a.Phone, Source: sourceLabel(a.Source)}
	if a.Customer != nil && a.Customer.Name != "" {
		av.Customer = a.Customer.Name
	}
	av.Status, av.StatusClass = appointmentStatus(a.Status)
	if a.Releases == 0 {
		return av, nil
	}
	decls, err := d.cfg.Book.Declarations(ctx, shop.ID, a.ID)
	if err != nil {
		return av, err
	}
	today := now.In(loc)
	for _, dl := range decls {
		av.Declarations = append(av.Declarations, declarationText(dl, loc, today))
		if dl.Release == a.Releases && dl.State == book.DeclarationWaiting && dl.StartsAt.After(now) {
			av.CanOffer = true
		}
	}
	return av, nil
}

// declarationText says what one release declared, or why not.
func declarationText(dl book.Declaration, loc *time.Location, today time.Time) string {
	at := fmt.Sprintf("%s, %d min", shortTime(dl.StartsAt, loc, today), dl.DurationMinutes)
	switch dl.State {
	case book.DeclarationDeclared:
		return "Opening declared: " + at
	case book.DeclarationSkipped:
		return "Not offered (" + at + "): " + skipReason(dl.Reason)
	case book.DeclarationWaiting:
		return "Waiting for you to offer it: " + at
	}
	return "Being declared: " + at
}

// skipReason says why a release's opening was not declared.
func skipReason(reason string) string {
	switch reason {
	case book.SkipStarted:
		return "its time had passed"
	case book.SkipPastCutoff:
		return "it starts sooner than your minimum notice"
	case book.SkipAlreadyOpen:
		return "that time is already open, or was filled"
	case book.SkipBookedAgain:
		return "an appointment is booked at that time again"
	case book.SkipSuperseded:
		return "a later change frees the same time"
	case book.SkipNoPrice:
		return "no price: add services, or give the appointment a price"
	case book.SkipNoService:
		return "no service: add services, or name one on the appointment"
	}
	return reason
}

// appointmentStatus is a status in words and its badge's class.
func appointmentStatus(s connectors.Status) (string, string) {
	switch s {
	case connectors.StatusBooked:
		return "Booked", "badge-ok"
	case connectors.StatusCancelled:
		return "Cancelled", "badge-bad"
	case connectors.StatusMoved:
		return "Moved", "badge-muted"
	case connectors.StatusCompleted:
		return "Completed", "badge-muted"
	case connectors.StatusNoShow:
		return "No-show", "badge-bad"
	}
	return string(s), "badge-muted"
}

// sourceLabel names where an appointment came from.
func sourceLabel(s connectors.Source) string {
	switch s {
	case connectors.SourceAPI:
		return "API"
	case connectors.SourceSlotRecovery:
		return "Slot recovery"
	}
	return kindLabel(s)
}

// offerAppointment is "Offer it": the waiting opening of a cancelled appointment is
// declared (book.Service.Offer holds the appointment's row lock: two presses declare
// once). Another shop's appointment is the 404 page.
// markCopied takes a move off the list of moves to copy: the owner copied it into
// their own booking system.
func (d *Dashboard) markCopied(c echo.Context) error {
	s := current(c)
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return d.notFound(c)
	}
	done, err := d.cfg.Book.MarkCopied(c.Request().Context(), s.Shop.ID, id, d.cfg.Now())
	if err != nil {
		return d.internalError(c, "mark move copied", err)
	}
	notice := "copied"
	if !done {
		notice = "copied_already"
	}
	q := url.Values{"notice": {notice}}
	if day := c.FormValue("day"); day != "" {
		if _, ok := dayOf(day, s.Shop, d.cfg.Now()); ok {
			q.Set("day", day)
		}
	}
	return c.Redirect(http.StatusSeeOther, BookPath+"?"+q.Encode())
}

func (d *Dashboard) offerAppointment(c echo.Context) error {
	s := current(c)
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return d.notFound(c)
	}
	// The day the button was on, to go back to (today when it is not one).
	dayParam := c.FormValue("day")
	day, ok := dayOf(dayParam, s.Shop, d.cfg.Now())
	if !ok {
		dayParam = ""
		day, _ = dayOf("", s.Shop, d.cfg.Now())
	}
	back := func(notice string) string {
		q := url.Values{"notice": {notice}}
		if dayParam != "" {
			q.Set("day", dayParam)
		}
		return BookPath + "?" + q.Encode() + "#appointment-" + id.String()
	}
	decl, err := d.cfg.Book.Offer(c.Request().Context(), s.Shop, id)
	p, isProblem := problem.As(err)
	switch {
	case errors.Is(err, book.ErrNotFound):
		return d.notFound(c)
	case isProblem && p.Kind == problem.Conflict:
		v, verr := d.bookViewOf(c.Request().Context(), s.Shop, day)
		if verr != nil {
			return d.internalError(c, "load book", verr)
		}
		v.Error = friendlySetting(p)
		return d.render(c, http.StatusConflict, "Book · "+v.Day+" · "+s.Shop.Name, v)
	case err != nil && decl.State == book.DeclarationPending:
		// The claim is kept pending: DeclarePending declares it.
		d.logger(c).Warn("dashboard offer not declared yet", "shop_id", s.Shop.ID, "appointment_id", id, "err", err)
		return c.Redirect(http.StatusSeeOther, back("pending"))
	case err != nil:
		return d.internalError(c, "offer appointment", err)
	}
	notice := "offered"
	switch decl.State {
	case book.DeclarationSkipped:
		notice = "skipped"
	case book.DeclarationPending, book.DeclarationDeclaring, book.DeclarationWaiting:
		notice = "pending"
	}
	d.logger(c).Info("dashboard appointment offered", "shop_id", s.Shop.ID, "appointment_id", id, "state", decl.State,
		"opening_id", decl.OpeningID)
	return c.Redirect(http.StatusSeeOther, back(notice))
}
