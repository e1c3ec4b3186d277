package dashboard

import (
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/slotrecovery/slotrecovery/internal/catalog"
	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/phone"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// ImportPath is the dashboard's CSV upload (POST), the one dashboard route whose body
// may be far larger than a form's: the server gives this route, matched as a route (not
// a path, which percent-encoding can disguise), a limit above MaxImportBytes, and the
// handler caps the upload itself.
const ImportPath = "/dashboard/customers/import"

// MaxImportBytes caps an upload (the API's cap too). Every other dashboard form reads
// at most MaxFormBytes.
const MaxImportBytes = 4 << 20

// customerNotices are the fixed messages a redirect may ask the customers page to show.
var customerNotices = map[string]string{
	"saved":      "Customer saved.",
	"checked":    "Noted: the number is still theirs.",
	"erased":     "Customer erased: their name and phone are gone and they will never be texted again. Their past bookings still count in your totals.",
	"export_key": "That is not this shop's API key: the list was not downloaded. Enter the key you sign in with.",
}

// statusLabels say a customer's standing in words.
var statusLabels = map[string]string{
	customers.StatusOptedIn:     "Opted in",
	customers.StatusNotOptedIn:  "Not opted in",
	customers.StatusOptedOut:    "Opted out (STOP)",
	customers.StatusUnreachable: "Unreachable",
}

type customersView struct {
	Notice string
	// Exports are the newest downloads of the list with whole phones, in the shop's
	// time zone.
	Exports  []customers.Export
	Location *time.Location
	Query    string
	Status   string
	Statuses []option
	Rows     []customerRow
	Next     string // the next page's URL, "" on the last
}

type option struct {
	Value, Label string
	Selected     bool
}

type customerRow struct {
	ID          uuid.UUID
	Name        string
	Phone       string
	Status      string
	StatusLabel string
	Priority    int
	Preferences string
	// Language is the language the customer is texted in, in words; ShopsLanguage marks
	// the shop's (they have none of their own).
	Language      string
	ShopsLanguage bool
	// Reassigned: the number answered "wrong number" and may have changed hands.
	Reassigned bool
}

// shownExports is how many of the newest exports the customers page lists.
const shownExports = 10

func (d *Dashboard) customers(c echo.Context) error {
	s := current(c)
	q := customers.Query{Search: c.QueryParam("q"), Status: c.QueryParam("status"), Cursor: c.QueryParam("cursor")}
	if _, ok := statusLabels[q.Status]; !ok {
		q.Status = ""
	}
	staff, err := d.catalog.Staff(c.Request().Context(), s.Shop.ID)
	if err != nil {
		return d.internalError(c, "list staff", err)
	}
	page, err := d.customerSvc.List(c.Request().Context(), s.Shop.ID, q)
	if p, ok := problem.As(err); ok && p.Kind == problem.Invalid {
		// A stale or edited cursor, an overlong search: start again from the top.
		q.Cursor, q.Search = "", strings.TrimSpace(q.Search)[:min(len(strings.TrimSpace(q.Search)), 100)]
		page, err = d.customerSvc.List(c.Request().Context(), s.Shop.ID, q)
	}
	if err != nil {
		return d.internalError(c, "list customers", err)
	}
	exports, err := d.customerSvc.Exports(c.Request().Context(), s.Shop.ID, shownExports)
	if err != nil {
		return d.internalError(c, "list exports", err)
	}
	v := customersView{Notice: customerNotices[c.QueryParam("notice")], Query: q.Search, Status: q.Status,
		Exports: exports, Location: s.Shop.Location}
	v.Statuses = append(v.Statuses, option{Value: "", Label: "Everyone", Selected: q.Status == ""})
	for _, st := range []string{customers.StatusOptedIn, customers.StatusNotOptedIn, customers.StatusOptedOut, customers.StatusUnreachable} {
		v.Statuses = append(v.Statuses, option{Value: st, Label: statusLabels[st], Selected: q.Status == st})
	}
	for _, cu := range page.Customers {
		lang := languageName(cu.Language)
		if cu.Language == "" {
			lang = shopsLanguage(s.Shop.Language)
		}
		v.Rows = append(v.Rows, customerRow{ID: cu.ID, Name: cmpOr(cu.Name, "(no name)"), Phone: phone.Mask(cu.Phone),
			Status: cu.Status(), StatusLabel: statusLabels[cu.Status()], Priority: cu.Priority,
			Preferences: cmpOr(customers.FormatPreferences(cu.Preferences, staff), "any time"),
			Language:    lang, ShopsLanguage: cu.Language == "", Reassigned: cu.PossiblyReassignedAt != nil})
	}
	if page.Next != "" {
		v.Next = "/dashboard/customers?" + url.Values{"q": {q.Search}, "status": {q.Status}, "cursor": {page.Next}}.Encode()
	}
	return d.render(c, http.StatusOK, "Customers · "+s.Shop.Name, v)
}

// customerForm is the edit form as typed, with a message per field that is wrong.
type customerForm struct {
	Name, Priority, Preferences string
	// Language is the customer's own language's code, "" for the shop's.
	Language string
	OptIn    bool
	// MoveUp: offered earlier times when booked (customers.Customer.MoveUp).
	MoveUp bool
	Errors map[string]string
}

type customerView struct {
	ID uuid.UUID
	// Staff are the shop's people's names, for the preferences' hint.
	Staff []string
	Phone string
	// Status and StatusLabel are the customer's texting status (customers.Status*) and its
	// words, as on the list.
	Status      string
	StatusLabel string
	OptedOut    bool
	// ReassignedAt is when the number answered "wrong number", in the shop's time, ""
	// when it has not since the owner last checked.
	ReassignedAt string
	// ShopLanguage is the shop's language, what "the shop's" means on the form.
	ShopLanguage language.Code
	Form         customerForm
	// Record is their offers and figures (nil on a server without the offers' record);
	// Notice what the last action did.
	Record *customerRecordView
	Notice string
	// PausedUntil is when the customer's PAUSE by text ends, in the shop's time; "" when
	// not paused now.
	PausedUntil string
}

func (d *Dashboard) customerPage(c echo.Context) error {
	s := current(c)
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return d.notFound(c)
	}
	cu, err := d.customerSvc.Get(c.Request().Context(), s.Shop.ID, id)
	if errors.Is(err, customers.ErrNotFound) {
		return d.notFound(c)
	}
	if err != nil {
		return d.internalError(c, "get customer", err)
	}
	staff, err := d.catalog.Staff(c.Request().Context(), s.Shop.ID)
	if err != nil {
		return d.internalError(c, "list staff", err)
	}
	v := newCustomerView(cu, s.Shop, staff)
	v.Form = customerForm{Name: cu.Name, Priority: strconv.Itoa(cu.Priority), OptIn: cu.SMSOptIn, MoveUp: cu.MoveUp,
		Preferences: customers.FormatPreferences(cu.Preferences, staff), Language: string(cu.Language)}
	if cu.PausedUntil != nil && cu.PausedUntil.After(d.cfg.Now()) {
		v.PausedUntil = formatWhen(*cu.PausedUntil, s.Shop.Location)
	}
	if v.Record, err = d.customerRecord(c, s.Shop.ID, cu.ID); err != nil {
		return d.internalError(c, "customer record", err)
	}
	if c.QueryParam("notice") == "no_shows_cleared" {
		v.Notice = "Their no-shows so far no longer keep them out of offers."
	}
	return d.render(c, http.StatusOK, cmpOr(cu.Name, "Customer")+" · "+s.Shop.Name, v)
}

func newCustomerView(cu customers.Customer, shop shops.Shop, staff []catalog.Staff) customerView {
	v := customerView{ID: cu.ID, Phone: phone.Mask(cu.Phone), Status: cu.Status(), StatusLabel: statusLabels[cu.Status()],
		OptedOut: cu.OptedOutAt != nil, ShopLanguage: shop.Language}
	if cu.PossiblyReassignedAt != nil {
		v.ReassignedAt = cu.PossiblyReassignedAt.In(shop.Location).Format("Mon 2 Jan 2006 15:04")
	}
	for _, p := range staff {
		v.Staff = append(v.Staff, p.Name)
	}
	return v
}

// customerFields maps the domain's field names to the form's inputs.
var customerFields = map[string]string{"name": "name", "priority": "priority", "sms_opt_in": "sms_opt_in",
	"preferences": "preferences", "preferences.days": "preferences", "preferences.windows": "preferences",
	"preferences.services": "preferences", "preferences.staff_ids": "preferences", shops.LanguageField: shops.LanguageField}

func (d *Dashboard) saveCustomer(c echo.Context) error {
	s := current(c)
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return d.notFound(c)
	}
	ctx := c.Request().Context()
	cu, err := d.customerSvc.Get(ctx, s.Shop.ID, id)
	if errors.Is(err, customers.ErrNotFound) {
		return d.notFound(c)
	}
	if err != nil {
		return d.internalError(c, "get customer", err)
	}
	staff, err := d.catalog.Staff(ctx, s.Shop.ID)
	if err != nil {
		return d.internalError(c, "list staff", err)
	}
	f := customerForm{Name: strings.TrimSpace(c.FormValue("name")), Priority: strings.TrimSpace(c.FormValue("priority")),
		Preferences: strings.TrimSpace(c.FormValue("preferences")), OptIn: c.FormValue("sms_opt_in") == "yes",
		MoveUp: c.FormValue("move_up") == "yes", Errors: map[string]string{}}
	ch := customers.Change{Name: &f.Name}
	if c.FormValue("move_up_shown") == "1" {
		ch.MoveUp = &f.MoveUp // a form without the box (from before it) leaves it as it is
	} else {
		f.MoveUp = cu.MoveUp
	}
	if n, err := strconv.Atoi(cmpOr(f.Priority, "0")); err != nil {
		f.Errors["priority"] = "Enter a whole number from -1000 to 1000 (higher is offered first)."
	} else {
		ch.Priority = &n
	}
	// An opted-out customer's box is disabled (so never sent): leave their consent alone.
	if cu.OptedOutAt == nil {
		ch.SMSOptIn = &f.OptIn
	}
	// The field shows the people the customer wants by name (staff=Ana,Ben), so a save
	// keeps them unless the owner edited that part.
	if prefs, err := customers.ParsePreferences(f.Preferences, staff); err != nil {
		f.Errors["preferences"] = err.Error()
	} else {
		ch.Preferences = &prefs
	}
	// The select's "" is the shop's language; a form without the field (from before it
	// existed) leaves the customer's as it is.
	f.Language = string(cu.Language)
	if form, err := c.FormParams(); err == nil && form.Has(shops.LanguageField) {
		f.Language = strings.TrimSpace(form.Get(shops.LanguageField))
		var lang language.Code
		if f.Language != "" {
			lang, err = shops.ParseLanguage(f.Language)
		}
		if err != nil {
			f.Errors[shops.LanguageField] = "Choose one of the languages in the list."
		} else {
			ch.Language = &lang
		}
	}
	if len(f.Errors) == 0 {
		// A consent changed here is the owner's, made on the dashboard.
		ch.Source = customers.Source{Method: customers.SourceDashboard}
		_, err := d.customerSvc.Update(ctx, s.Shop.ID, id, ch)
		p, isProblem := problem.As(err)
		switch {
		case err == nil:
			d.logger(c).Info("dashboard customer saved", "shop_id", s.Shop.ID, "customer_id", id)
			return c.Redirect(http.StatusSeeOther, "/dashboard/customers?notice=saved")
		case errors.Is(err, customers.ErrNotFound):
			return d.notFound(c)
		case isProblem && customerFields[p.Field] != "":
			f.Errors[customerFields[p.Field]] = p.Message
		default:
			return d.internalError(c, "save customer", err)
		}
	}
	v := newCustomerView(cu, s.Shop, staff)
	v.Form = f
	return d.render(c, http.StatusUnprocessableEntity, "Check the customer · "+s.Shop.Name, v)
}

// reassignedChecked takes the "may have changed hands" mark off a customer: the owner
// checked the number with them.
func (d *Dashboard) reassignedChecked(c echo.Context) error {
	s := current(c)
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return d.notFound(c)
	}
	_, err = d.customerSvc.ClearPossiblyReassigned(c.Request().Context(), s.Shop.ID, id)
	switch {
	case errors.Is(err, customers.ErrNotFound):
		return d.notFound(c)
	case err != nil:
		return d.internalError(c, "clear reassigned mark", err)
	}
	return c.Redirect(http.StatusSeeOther, "/dashboard/customers?notice=checked")
}

func (d *Dashboard) eraseCustomer(c echo.Context) error {
	s := current(c)
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return d.notFound(c)
	}
	err = d.erasure.Erase(c.Request().Context(), s.Shop.ID, id)
	switch {
	case errors.Is(err, customers.ErrNotFound):
		return d.notFound(c)
	case err != nil:
		return d.internalError(c, "erase customer", err)
	}
	d.logger(c).Info("dashboard customer erased", "shop_id", s.Shop.ID, "customer_id", id)
	return c.Redirect(http.StatusSeeOther, "/dashboard/customers?notice=erased")
}

type importView struct {
	Error                                 string
	Created, Updated, Unchanged, Rejected int
	Problems                              []customers.ImportRow
	MoreProblems                          int
	Took                                  string
}

// maxShownProblems is how many rejected lines the report page lists.
const maxShownProblems = 200

// importCustomers streams the upload: the form's csrf field comes first (the form puts it
// there), so the token is checked before the file is read, and the file is parsed as it
// arrives, never spooled to memory or disk whole (c.FormValue would do both).
func (d *Dashboard) importCustomers(c echo.Context) error {
	s := current(c)
	req := c.Request()
	fail := func(status int, msg string) error {
		return d.render(c, status, "Import · "+s.Shop.Name, importView{Error: msg})
	}
	mt, params, err := mime.ParseMediaType(req.Header.Get(echo.HeaderContentType))
	if err != nil || mt != "multipart/form-data" {
		return fail(http.StatusUnsupportedMediaType, "Upload the file with the form on the customers page.")
	}
	mr := multipart.NewReader(http.MaxBytesReader(c.Response(), req.Body, MaxImportBytes), params["boundary"])
	part, err := mr.NextPart()
	if err != nil || part.FormName() != "csrf" {
		return d.errorPage(c, http.StatusForbidden, "This form has expired",
			"The form was missing its security token, or it came from an old page. Go back, reload the page and try again.")
	}
	token, _ := io.ReadAll(io.LimitReader(part, 200))
	if !validCSRF(string(token), s.CSRF) {
		return d.errorPage(c, http.StatusForbidden, "This form has expired",
			"The form was missing its security token, or it came from an old page. Go back, reload the page and try again.")
	}
	part, err = mr.NextPart()
	if err != nil || part.FormName() != "file" {
		return fail(http.StatusBadRequest, "Choose a CSV file to import.")
	}
	start := time.Now()
	rep, err := d.customerSvc.Import(req.Context(), s.Shop.ID, part, customers.Source{By: "dashboard (CSV import)"})
	var mbe *http.MaxBytesError
	p, isProblem := problem.As(err)
	switch {
	case errors.As(err, &mbe):
		return fail(http.StatusRequestEntityTooLarge, "The file is larger than 4 MB. Split it into smaller files.")
	case isProblem && p.Kind == problem.Invalid:
		return fail(http.StatusUnprocessableEntity, p.Message+".")
	case err != nil:
		return d.internalError(c, "import customers", err)
	}
	v := importView{Created: rep.Created, Updated: rep.Updated, Unchanged: rep.Unchanged, Rejected: rep.Rejected,
		Took: time.Since(start).Round(time.Millisecond).String()}
	for _, r := range rep.Rows {
		if r.Result != customers.ImportRejected {
			continue
		}
		if len(v.Problems) == maxShownProblems {
			v.MoreProblems++
			continue
		}
		v.Problems = append(v.Problems, r)
	}
	d.logger(c).Info("dashboard customers imported", "shop_id", s.Shop.ID, "created", rep.Created,
		"updated", rep.Updated, "unchanged", rep.Unchanged, "rejected", rep.Rejected)
	return d.render(c, http.StatusOK, "Import · "+s.Shop.Name, v)
}
