package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/slotrecovery/slotrecovery/internal/calendar"
	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// The Integrations page: the shop's calendar feed (its address, a new address, whether
// it names customers in full), its booking systems (connectors.go) and its outbound webhook endpoints (add, enable, disable,
// a new signing secret, delete; each endpoint's recent deliveries, each with "Send
// again"). The actions are the JSON API's, through the same services: shops for the
// calendar's settings and address, hooks for the endpoints.

// IntegrationsPath is the Integrations page.
const IntegrationsPath = "/dashboard/integrations"

// recentDeliveries is how many of an endpoint's deliveries the page lists.
const recentDeliveries = 10

type integrationsView struct {
	Notice string
	// Error is about the page as a whole (an action that could not be done).
	Error    string
	Calendar calendarView
	// Hooks is false on a server without outbound webhooks: no endpoints card.
	Hooks     bool
	Endpoints []endpointView
	Form      endpointForm
	// Max is how many endpoints a shop may have.
	Max int
	// Book is false on a server without the appointment book: no booking systems card.
	Book          bool
	Connectors    []connectorView
	ConnectorForm connectorForm
	// MaxConnectors is how many connectors a shop may have.
	MaxConnectors int
}

// calendarView is the calendar feed's card.
type calendarView struct {
	URL, Webcal string
	FullDetails bool
	RotateError string
	// OldUntil, when not empty, is when the shop's previous address stops working (in
	// the shop's time zone).
	OldUntil string
}

// endpointView is one endpoint as its card shows it.
type endpointView struct {
	ID             uuid.UUID
	URL            string
	Description    string
	Events         string
	Disabled       bool
	DisabledReason string
	FailingSince   string
	// PreviousUntil is when the secret a rotation replaced stops signing too.
	PreviousUntil string
	Deliveries    []deliveryView
	// Error is an action on this endpoint that needs something (a confirmation).
	Error string
}

// deliveryView is one delivery in an endpoint's list.
type deliveryView struct {
	ID          uuid.UUID
	Type        string
	EventAt     string
	Status      string
	StatusClass string
	Attempts    int
	Last        string
	Next        string
}

// endpointForm is the "add an endpoint" form as typed.
type endpointForm struct {
	URL, Description string
	Events           []string
	Errors           map[string]string
	Other            string
}

// newSecretView is the answer to adding an endpoint or rotating its secret: the secret,
// shown on this page only.
type newSecretView struct {
	URL     string
	Secret  string
	Rotated bool
}

// calendarViewOf is the shop's feed card.
func (d *Dashboard) calendarViewOf(shop shops.Shop) calendarView {
	u := calendar.URL(d.cfg.PublicURL, shop.CalendarToken)
	webcal := "webcal://" + strings.TrimPrefix(strings.TrimPrefix(u, "https://"), "http://")
	v := calendarView{URL: u, Webcal: webcal, FullDetails: shop.CalendarFullDetails}
	if t := shop.OldCalendarAddressUntil; t != nil && d.cfg.Now().Before(*t) {
		v.OldUntil = t.In(shop.Location).Format("Mon 2 Jan 2006")
	}
	return v
}

// integrationsView reads what the page shows.
func (d *Dashboard) integrationsView(ctx context.Context, shop shops.Shop) (integrationsView, error) {
	v := integrationsView{Calendar: d.calendarViewOf(shop), Hooks: d.cfg.Hooks != nil}
	if err := d.connectorsOf(ctx, shop, &v); err != nil {
		return v, err
	}
	if d.cfg.Hooks == nil {
		return v, nil
	}
	v.Max = d.cfg.Hooks.MaxEndpoints()
	eps, err := d.cfg.Hooks.Endpoints(ctx, shop.ID)
	if err != nil {
		return v, err
	}
	now := d.cfg.Now()
	for _, e := range eps {
		ev := endpointView{ID: e.ID, URL: e.URL, Description: e.Description, Disabled: e.Disabled(),
			DisabledReason: e.DisabledReason, Events: eventsLabel(e.EnabledEvents)}
		if e.FailingSince != nil {
			ev.FailingSince = shortTime(*e.FailingSince, shop.Location, now.In(shop.Location))
		}
		if e.PreviousSecretExpiresAt != nil {
			ev.PreviousUntil = shortTime(*e.PreviousSecretExpiresAt, shop.Location, now.In(shop.Location))
		}
		page, err := d.cfg.Hooks.Deliveries(ctx, shop.ID, e.ID, hooks.DeliveryQuery{Limit: recentDeliveries})
		if err != nil {
			return v, err
		}
		for _, dl := range page.Deliveries {
			ev.Deliveries = append(ev.Deliveries, deliveryViewOf(dl, shop.Location, now))
		}
		v.Endpoints = append(v.Endpoints, ev)
	}
	return v, nil
}

// eventsLabel says which events an endpoint receives.
func eventsLabel(events []string) string {
	if slices.Contains(events, hooks.AllTypes) {
		return "All events, including those added later"
	}
	return strings.Join(events, ", ")
}

func deliveryViewOf(dl hooks.Delivery, loc *time.Location, now time.Time) deliveryView {
	today := now.In(loc)
	v := deliveryView{ID: dl.ID, Type: dl.EventType, EventAt: shortTime(dl.EventCreatedAt, loc, today), Attempts: dl.Attempts}
	switch dl.Status {
	case hooks.DeliverySucceeded:
		v.Status, v.StatusClass = "Delivered", "badge-ok"
	case hooks.DeliveryFailed:
		v.Status, v.StatusClass = "Failed", "badge-bad"
	default:
		v.Status, v.StatusClass = "Pending", "badge-wait"
		if dl.LastError != "" {
			v.Status = "Retrying"
		}
	}
	switch {
	case dl.LastStatusCode != nil && dl.LastError != "" && dl.Status != hooks.DeliverySucceeded:
		v.Last = dl.LastError
	case dl.LastStatusCode != nil:
		v.Last = fmt.Sprintf("answered %d", *dl.LastStatusCode)
	case dl.LastError != "":
		v.Last = dl.LastError
	}
	if dl.LastAttemptAt != nil && v.Last != "" {
		v.Last = shortTime(*dl.LastAttemptAt, loc, today) + ": " + v.Last
	}
	if dl.NextAttemptAt != nil && dl.Status == hooks.DeliveryPending {
		v.Next = shortTime(*dl.NextAttemptAt, loc, today)
	}
	return v
}

func (d *Dashboard) integrations(c echo.Context) error {
	s := current(c)
	v, err := d.integrationsView(c.Request().Context(), s.Shop)
	if err != nil {
		return d.internalError(c, "load integrations", err)
	}
	v.Notice = integrationNotices[c.QueryParam("notice")]
	return d.render(c, http.StatusOK, "Integrations · "+s.Shop.Name, v)
}

// integrationNotices are the page's notices after an action, by the query's notice.
var integrationNotices = map[string]string{
	"calendar_saved":   "Calendar setting saved. Subscribed calendars show it at their next refresh.",
	"calendar_rotated": "The calendar has a new address. The old one stopped working: subscribe to the new one below.",
	"disabled":         "The endpoint is disabled: no events are recorded or sent for it.",
	"enabled":          "The endpoint is enabled: it gets the events from now on.",
	"deleted":          "The endpoint was deleted, with its deliveries.",
	"resent":           "The delivery is being sent again now.",
	"connector_key":    "The signature key is saved: Square's deliveries are verified with it from now on.",
	"api_key_set":      "The API key is saved: customers' move-ups are now written into your booking system by themselves.",
	"api_key_removed":  "The API key is removed: move-ups are listed on the Book page for you to copy again.",
	"connector_deleted": "The connection was removed: its deliveries are refused from now on. " +
		"The appointments it brought stay in the book.",
}

// renderIntegrations shows the page again with what went wrong (status) and what the
// owner typed.
func (d *Dashboard) renderIntegrations(c echo.Context, status int, change func(*integrationsView)) error {
	s := current(c)
	v, err := d.integrationsView(c.Request().Context(), s.Shop)
	if err != nil {
		return d.internalError(c, "load integrations", err)
	}
	change(&v)
	return d.render(c, status, "Integrations · "+s.Shop.Name, v)
}

func (d *Dashboard) saveCalendar(c echo.Context) error {
	s := current(c)
	full := c.FormValue("full_details") == "yes"
	if _, err := d.shops.Update(c.Request().Context(), s.Shop.ID, shops.ShopChange{CalendarFullDetails: &full}); err != nil {
		return d.internalError(c, "save calendar setting", err)
	}
	d.logger(c).Info("dashboard calendar setting saved", "shop_id", s.Shop.ID, "full_details", full)
	return c.Redirect(http.StatusSeeOther, IntegrationsPath+"?notice=calendar_saved#calendar")
}

// rotateCalendar gives the feed a new address: the old one stops working at once, on
// every instance (subscribed calendars must subscribe again).
func (d *Dashboard) rotateCalendar(c echo.Context) error {
	s := current(c)
	if c.FormValue("confirm") != "yes" {
		return d.renderIntegrations(c, http.StatusUnprocessableEntity, func(v *integrationsView) {
			v.Calendar.RotateError = "Tick the box to confirm that the current address should stop working."
		})
	}
	if _, err := d.shops.RotateCalendarToken(c.Request().Context(), s.Shop.ID); err != nil {
		return d.internalError(c, "rotate calendar address", err)
	}
	d.logger(c).Info("dashboard calendar address rotated", "shop_id", s.Shop.ID)
	return c.Redirect(http.StatusSeeOther, IntegrationsPath+"?notice=calendar_rotated#calendar")
}

// endpointFields are the form's inputs by the API's field names.
var endpointFields = map[string]string{"url": "ep-url", "description": "ep-description", "enabled_events": "ep-events"}

func (d *Dashboard) createEndpoint(c echo.Context) error {
	s := current(c)
	if d.cfg.Hooks == nil {
		return d.notFound(c)
	}
	f := endpointForm{URL: strings.TrimSpace(c.FormValue("url")), Description: strings.TrimSpace(c.FormValue("description"))}
	if form, err := c.FormParams(); err == nil {
		f.Events = form["events"]
	}
	if f.URL == "" {
		f.Errors = map[string]string{"url": "Enter the address that receives the events, starting with https://."}
	} else {
		ep, secret, err := d.cfg.Hooks.CreateEndpoint(c.Request().Context(), s.Shop.ID, hooks.NewEndpoint{
			URL: f.URL, Description: f.Description, EnabledEvents: f.Events,
		})
		p, isProblem := problem.As(err)
		switch {
		case err == nil:
			d.logger(c).Info("dashboard webhook endpoint added", "shop_id", s.Shop.ID, "endpoint_id", ep.ID)
			return d.render(c, http.StatusCreated, "New webhook endpoint · "+s.Shop.Name, newSecretView{URL: ep.URL, Secret: secret})
		case isProblem && endpointFields[p.Field] != "":
			f.Errors = map[string]string{p.Field: friendlySetting(p)}
		case isProblem && (p.Kind == problem.Invalid || p.Kind == problem.Conflict):
			f.Other = friendlySetting(p)
		default:
			return d.internalError(c, "add webhook endpoint", err)
		}
	}
	return d.renderIntegrations(c, http.StatusUnprocessableEntity, func(v *integrationsView) { v.Form = f })
}

// endpointAction runs an action on the endpoint named in the path: not found (another
// shop's, or deleted) is the 404 page.
func (d *Dashboard) endpointAction(act func(c echo.Context, s *signedIn, id uuid.UUID) error) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := uuid.Parse(c.Param("id"))
		if err != nil || d.cfg.Hooks == nil {
			return d.notFound(c)
		}
		err = act(c, current(c), id)
		if errors.Is(err, hooks.ErrEndpointNotFound) || errors.Is(err, hooks.ErrDeliveryNotFound) {
			return d.notFound(c)
		}
		return err
	}
}

// setDisabled disables or enables an endpoint; enabling forgets the failures that
// disabled it.
func (d *Dashboard) setDisabled(disabled bool) echo.HandlerFunc {
	notice := "enabled"
	if disabled {
		notice = "disabled"
	}
	return d.endpointAction(func(c echo.Context, s *signedIn, id uuid.UUID) error {
		if _, err := d.cfg.Hooks.UpdateEndpoint(c.Request().Context(), s.Shop.ID, id, hooks.EndpointChange{Disabled: &disabled}); err != nil {
			if errors.Is(err, hooks.ErrEndpointNotFound) {
				return err
			}
			return d.internalError(c, "change webhook endpoint", err)
		}
		d.logger(c).Info("dashboard webhook endpoint "+notice, "shop_id", s.Shop.ID, "endpoint_id", id)
		return c.Redirect(http.StatusSeeOther, IntegrationsPath+"?notice="+notice+"#endpoint-"+id.String())
	})
}

// confirmed re-renders the page asking for the endpoint's confirmation box, unless it
// was ticked.
func (d *Dashboard) confirmed(c echo.Context, id uuid.UUID, msg string) (bool, error) {
	if c.FormValue("confirm") == "yes" {
		return true, nil
	}
	return false, d.renderIntegrations(c, http.StatusUnprocessableEntity, func(v *integrationsView) {
		for i := range v.Endpoints {
			if v.Endpoints[i].ID == id {
				v.Endpoints[i].Error = msg
			}
		}
	})
}

// rotateSecret gives an endpoint a new signing secret, shown once; the old one signs
// too for a day (hooks.SecretOverlap).
func (d *Dashboard) rotateSecret(c echo.Context, s *signedIn, id uuid.UUID) error {
	if _, err := d.cfg.Hooks.Endpoint(c.Request().Context(), s.Shop.ID, id); err != nil {
		return d.orInternal(c, "read webhook endpoint", err)
	}
	if ok, err := d.confirmed(c, id, "Tick the box to confirm a new signing secret."); !ok {
		return err
	}
	ep, secret, err := d.cfg.Hooks.RotateSecret(c.Request().Context(), s.Shop.ID, id)
	if err != nil {
		return d.orInternal(c, "rotate webhook secret", err)
	}
	d.logger(c).Info("dashboard webhook secret rotated", "shop_id", s.Shop.ID, "endpoint_id", id)
	return d.render(c, http.StatusOK, "New signing secret · "+s.Shop.Name, newSecretView{URL: ep.URL, Secret: secret, Rotated: true})
}

func (d *Dashboard) deleteEndpoint(c echo.Context, s *signedIn, id uuid.UUID) error {
	if _, err := d.cfg.Hooks.Endpoint(c.Request().Context(), s.Shop.ID, id); err != nil {
		return d.orInternal(c, "read webhook endpoint", err)
	}
	if ok, err := d.confirmed(c, id, "Tick the box to confirm that the endpoint and its deliveries should be deleted."); !ok {
		return err
	}
	if err := d.cfg.Hooks.DeleteEndpoint(c.Request().Context(), s.Shop.ID, id); err != nil {
		return d.orInternal(c, "delete webhook endpoint", err)
	}
	d.logger(c).Info("dashboard webhook endpoint deleted", "shop_id", s.Shop.ID, "endpoint_id", id)
	return c.Redirect(http.StatusSeeOther, IntegrationsPath+"?notice=deleted#endpoints")
}

// resend sends a delivery again now, whatever its status ("Send again").
func (d *Dashboard) resend(c echo.Context, s *signedIn, id uuid.UUID) error {
	delivery, err := uuid.Parse(c.Param("delivery_id"))
	if err != nil {
		return hooks.ErrDeliveryNotFound
	}
	_, err = d.cfg.Hooks.Resend(c.Request().Context(), s.Shop.ID, id, delivery)
	if p, ok := problem.As(err); ok && p.Kind == problem.Conflict {
		// Disabled, or the event's customer was erased: the page says which.
		return d.renderIntegrations(c, http.StatusConflict, func(v *integrationsView) {
			for i := range v.Endpoints {
				if v.Endpoints[i].ID == id {
					v.Endpoints[i].Error = friendlySetting(p)
				}
			}
		})
	}
	if err != nil {
		return d.orInternal(c, "send a delivery again", err)
	}
	d.logger(c).Info("dashboard webhook delivery sent again", "shop_id", s.Shop.ID, "endpoint_id", id, "delivery_id", delivery)
	return c.Redirect(http.StatusSeeOther, IntegrationsPath+"?notice=resent#endpoint-"+id.String())
}

// orInternal passes "not found" on (endpointAction answers the 404 page) and answers
// anything else as an internal error.
func (d *Dashboard) orInternal(c echo.Context, what string, err error) error {
	if errors.Is(err, hooks.ErrEndpointNotFound) || errors.Is(err, hooks.ErrDeliveryNotFound) {
		return err
	}
	return d.internalError(c, what, err)
}
