package dashboard

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/slotrecovery/slotrecovery/internal/catalog"
	"github.com/slotrecovery/slotrecovery/internal/money"
	"github.com/slotrecovery/slotrecovery/internal/problem"
)

// The Staff and Services pages: the shop's people and what they do, changed through
// internal/catalog, the API's own rules. People are never deleted (an inactive one
// keeps their history); a service can be made inactive.

// Paths of the catalog pages.
const (
	StaffPath    = "/dashboard/staff"
	ServicesPath = "/dashboard/services"
)

// catalogNotices are the fixed messages a redirect may ask the catalog pages to show.
var catalogNotices = map[string]string{
	"added":       "Added.",
	"saved":       "Saved.",
	"activated":   "Active again: their openings and services are offered.",
	"deactivated": "Made inactive: they keep their history, and you can make them active again.",
}

// staffView is the Staff page's data.
type staffView struct {
	Notice string
	People []catalog.Staff
	// Add is the add form as typed, Edit the rename form of the person EditID, each with
	// its message.
	Add, AddError   string
	EditID          uuid.UUID
	Edit, EditError string
}

func (d *Dashboard) staffPage(c echo.Context) error {
	s := current(c)
	v, err := d.staffView(c, staffView{Notice: catalogNotices[c.QueryParam("notice")]})
	if err != nil {
		return d.internalError(c, "list staff", err)
	}
	return d.render(c, http.StatusOK, "Staff · "+s.Shop.Name, v)
}

func (d *Dashboard) staffView(c echo.Context, v staffView) (staffView, error) {
	var err error
	v.People, err = d.catalog.Staff(c.Request().Context(), current(c).Shop.ID)
	return v, err
}

// catalogStatus is the status of a form the catalog refused: 409 for a name the shop
// already uses, 422 otherwise.
func catalogStatus(p *problem.Error) int {
	if p.Kind == problem.Conflict {
		return http.StatusConflict
	}
	return http.StatusUnprocessableEntity
}

// staffMessage says what is wrong with a person's name, for the owner.
func staffMessage(p *problem.Error) string {
	if p.Kind == problem.Conflict {
		return "You already have someone of that name. Use another (add an initial, for example)."
	}
	return "Enter a name of 1 to 100 characters."
}

func (d *Dashboard) addStaff(c echo.Context) error {
	s := current(c)
	name := strings.TrimSpace(c.FormValue("name"))
	_, err := d.catalog.AddStaff(c.Request().Context(), s.Shop.ID, name)
	p, isProblem := problem.As(err)
	switch {
	case err == nil:
		d.logger(c).Info("dashboard person added", "shop_id", s.Shop.ID)
		return c.Redirect(http.StatusSeeOther, StaffPath+"?notice=added")
	case isProblem && (p.Kind == problem.Invalid || p.Kind == problem.Conflict):
		v, err := d.staffView(c, staffView{Add: name, AddError: staffMessage(p)})
		if err != nil {
			return d.internalError(c, "list staff", err)
		}
		return d.render(c, catalogStatus(p), "Check the name · "+s.Shop.Name, v)
	default:
		return d.internalError(c, "add person", err)
	}
}

// saveStaff renames a person (the name field) or makes them active or inactive (the
// active field, yes or no).
func (d *Dashboard) saveStaff(c echo.Context) error {
	s := current(c)
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return d.notFound(c)
	}
	var ch catalog.StaffChange
	notice := "saved"
	name := strings.TrimSpace(c.FormValue("name"))
	switch c.FormValue("active") {
	case "yes", "no":
		active := c.FormValue("active") == "yes"
		ch.Active = &active
		notice = map[bool]string{true: "activated", false: "deactivated"}[active]
	default:
		ch.Name = &name
	}
	_, err = d.catalog.UpdateStaff(c.Request().Context(), s.Shop.ID, id, ch)
	p, isProblem := problem.As(err)
	switch {
	case err == nil:
		d.logger(c).Info("dashboard person saved", "shop_id", s.Shop.ID, "staff_id", id)
		return c.Redirect(http.StatusSeeOther, StaffPath+"?notice="+notice)
	case errors.Is(err, catalog.ErrStaffNotFound):
		return d.notFound(c)
	case isProblem && (p.Kind == problem.Invalid || p.Kind == problem.Conflict):
		v, err := d.staffView(c, staffView{EditID: id, Edit: name, EditError: staffMessage(p)})
		if err != nil {
			return d.internalError(c, "list staff", err)
		}
		return d.render(c, catalogStatus(p), "Check the name · "+s.Shop.Name, v)
	default:
		return d.internalError(c, "save person", err)
	}
}

// serviceForm is a service's form as typed, with a message per field that is wrong
// (keyed by the API's field names).
type serviceForm struct {
	Name, Duration, Price string
	StaffIDs              []string
	Active                bool
	Errors                map[string]string
}

// servicesView is the Services page's data: the list and the add form.
type servicesView struct {
	Notice   string
	Currency string
	Services []serviceRow
	People   []catalog.Staff
	Form     serviceForm
}

type serviceRow struct {
	catalog.Service
	Price string
	// Who names the people who do it, "anyone" without a limit.
	Who string
}

// serviceView is one service's edit page.
type serviceView struct {
	ID       uuid.UUID
	Currency string
	People   []catalog.Staff
	Form     serviceForm
}

func (d *Dashboard) servicesPage(c echo.Context) error {
	s := current(c)
	v, err := d.servicesView(c, servicesView{Notice: catalogNotices[c.QueryParam("notice")], Form: serviceForm{Duration: "30"}})
	if err != nil {
		return d.internalError(c, "list services", err)
	}
	return d.render(c, http.StatusOK, "Services · "+s.Shop.Name, v)
}

func (d *Dashboard) servicesView(c echo.Context, v servicesView) (servicesView, error) {
	s := current(c)
	ctx := c.Request().Context()
	v.Currency = strings.ToUpper(s.Shop.Currency)
	var err error
	if v.People, err = d.catalog.Staff(ctx, s.Shop.ID); err != nil {
		return v, err
	}
	svcs, err := d.catalog.Services(ctx, s.Shop.ID)
	if err != nil {
		return v, err
	}
	for _, sv := range svcs {
		v.Services = append(v.Services, serviceRow{Service: sv, Price: money.Format(sv.PriceCents, s.Shop.Currency),
			Who: staffNames(sv.StaffIDs, v.People)})
	}
	return v, nil
}

// staffNames names ids among people, "anyone" for none.
func staffNames(ids []uuid.UUID, people []catalog.Staff) string {
	var names []string
	for _, p := range people {
		for _, id := range ids {
			if p.ID == id {
				names = append(names, p.Name)
			}
		}
	}
	if len(names) == 0 {
		return "anyone"
	}
	return strings.Join(names, ", ")
}

// readServiceForm reads the service form of c, recording what cannot be read.
func readServiceForm(c echo.Context, currency string) (serviceForm, catalog.NewService) {
	f := serviceForm{Name: strings.TrimSpace(c.FormValue("name")), Duration: strings.TrimSpace(c.FormValue("duration_minutes")),
		Price: strings.TrimSpace(c.FormValue("price")), Active: c.FormValue("active") == "yes", Errors: map[string]string{}}
	n := catalog.NewService{Name: f.Name, StaffIDs: []uuid.UUID{}}
	if m, err := strconv.Atoi(f.Duration); err != nil {
		f.Errors["duration_minutes"] = durationMessage
	} else {
		n.DurationMinutes = m
	}
	if cents, err := money.Parse(f.Price, currency); err != nil || f.Price == "" {
		f.Errors["price_cents"] = "Enter the price as a number with at most " + strconv.Itoa(money.Decimals(currency)) +
			" decimals, for example " + money.Plain(3000, currency) + "."
	} else {
		n.PriceCents = cents
	}
	if form, err := c.FormParams(); err == nil {
		for _, raw := range form["staff_id"] {
			f.StaffIDs = append(f.StaffIDs, raw)
			id, err := uuid.Parse(raw)
			if err != nil {
				f.Errors["staff_ids"] = staffIDsMessage
				continue
			}
			n.StaffIDs = append(n.StaffIDs, id)
		}
	}
	return f, n
}

const (
	durationMessage = "Enter the length in whole minutes, from 5 to 480."
	staffIDsMessage = "Choose people from the list (or none: anyone can do it)."
)

// serviceMessage rewords the catalog's refusal of a service for the owner, as the
// form field it is about.
func serviceMessage(p *problem.Error, currency string) (field, msg string) {
	switch {
	case p.Kind == problem.Conflict:
		return "name", "You already have a service of that name. Use another, or edit that one."
	case p.Field == "duration_minutes":
		return p.Field, durationMessage
	case p.Field == "price_cents":
		return p.Field, "Enter a price above zero and at most " + money.Format(money.MaxAmount, currency) + "."
	case p.Field == "staff_ids":
		return p.Field, staffIDsMessage
	}
	return "name", "Enter a name of 1 to 100 characters."
}

func (d *Dashboard) addService(c echo.Context) error {
	s := current(c)
	f, n := readServiceForm(c, s.Shop.Currency)
	status := http.StatusUnprocessableEntity
	if len(f.Errors) == 0 {
		_, err := d.catalog.AddService(c.Request().Context(), s.Shop.ID, n)
		p, isProblem := problem.As(err)
		switch {
		case err == nil:
			d.logger(c).Info("dashboard service added", "shop_id", s.Shop.ID)
			return c.Redirect(http.StatusSeeOther, ServicesPath+"?notice=added")
		case isProblem && (p.Kind == problem.Invalid || p.Kind == problem.Conflict):
			field, msg := serviceMessage(p, s.Shop.Currency)
			f.Errors[field], status = msg, catalogStatus(p)
		default:
			return d.internalError(c, "add service", err)
		}
	}
	v, err := d.servicesView(c, servicesView{Form: f})
	if err != nil {
		return d.internalError(c, "list services", err)
	}
	return d.render(c, status, "Check the service · "+s.Shop.Name, v)
}

// service finds the shop's service named by the path, or answers 404 (ok false).
func (d *Dashboard) service(c echo.Context) (catalog.Service, bool, error) {
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return catalog.Service{}, false, d.notFound(c)
	}
	svcs, err := d.catalog.Services(c.Request().Context(), current(c).Shop.ID)
	if err != nil {
		return catalog.Service{}, false, d.internalError(c, "list services", err)
	}
	for _, sv := range svcs {
		if sv.ID == id {
			return sv, true, nil
		}
	}
	return catalog.Service{}, false, d.notFound(c)
}

func (d *Dashboard) servicePage(c echo.Context) error {
	s := current(c)
	sv, ok, err := d.service(c)
	if !ok {
		return err
	}
	f := serviceForm{Name: sv.Name, Duration: strconv.Itoa(sv.DurationMinutes),
		Price: money.Plain(sv.PriceCents, s.Shop.Currency), Active: sv.Active}
	for _, id := range sv.StaffIDs {
		f.StaffIDs = append(f.StaffIDs, id.String())
	}
	people, err := d.catalog.Staff(c.Request().Context(), s.Shop.ID)
	if err != nil {
		return d.internalError(c, "list staff", err)
	}
	return d.render(c, http.StatusOK, sv.Name+" · "+s.Shop.Name,
		serviceView{ID: sv.ID, Currency: strings.ToUpper(s.Shop.Currency), People: people, Form: f})
}

func (d *Dashboard) saveService(c echo.Context) error {
	s := current(c)
	sv, ok, err := d.service(c)
	if !ok {
		return err
	}
	f, n := readServiceForm(c, s.Shop.Currency)
	status := http.StatusUnprocessableEntity
	if len(f.Errors) == 0 {
		_, err := d.catalog.UpdateService(c.Request().Context(), s.Shop.ID, sv.ID, catalog.ServiceChange{
			Name: &n.Name, DurationMinutes: &n.DurationMinutes, PriceCents: &n.PriceCents, StaffIDs: &n.StaffIDs, Active: &f.Active,
		})
		p, isProblem := problem.As(err)
		switch {
		case err == nil:
			d.logger(c).Info("dashboard service saved", "shop_id", s.Shop.ID, "service_id", sv.ID)
			return c.Redirect(http.StatusSeeOther, ServicesPath+"?notice=saved")
		case errors.Is(err, catalog.ErrServiceNotFound):
			return d.notFound(c)
		case isProblem && (p.Kind == problem.Invalid || p.Kind == problem.Conflict):
			field, msg := serviceMessage(p, s.Shop.Currency)
			f.Errors[field], status = msg, catalogStatus(p)
		default:
			return d.internalError(c, "save service", err)
		}
	}
	people, err := d.catalog.Staff(c.Request().Context(), s.Shop.ID)
	if err != nil {
		return d.internalError(c, "list staff", err)
	}
	return d.render(c, status, "Check the service · "+s.Shop.Name,
		serviceView{ID: sv.ID, Currency: strings.ToUpper(s.Shop.Currency), People: people, Form: f})
}
