package shopapi

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/slotrecovery/slotrecovery/api"
	"github.com/slotrecovery/slotrecovery/internal/book"
	"github.com/slotrecovery/slotrecovery/internal/connectors"
	"github.com/slotrecovery/slotrecovery/internal/phone"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// registerAppointments adds the routes of the shop's appointment book.
func (h *Handlers) registerAppointments(e *echo.Echo) {
	e.PUT("/api/appointments/:source/:external_id", h.putAppointment, h.requireShop)
	e.GET("/api/appointments", h.listAppointments, h.requireShop)
	e.GET("/api/appointments/:id", h.getAppointment, h.requireShop)
	e.POST("/api/appointments/:id/cancel", h.cancelAppointment, h.requireShop)
}

// appointmentRequest is the body of PUT /api/appointments/{source}/{external_id}: the
// whole appointment as the owner's system describes it now.
type appointmentRequest struct {
	// Status is absent or null for booked.
	Status *string `json:"status"`
	// StartsAt and UpdatedAt are strings parsed here, so that a bad time is a 422
	// naming its field rather than a JSON error.
	StartsAt        *string `json:"starts_at"`
	DurationMinutes int     `json:"duration_minutes"`
	Service         string  `json:"service"`
	PriceCents      int64   `json:"price_cents"`
	// Phone is absent, null or "" for none; otherwise E.164.
	Phone        *string `json:"phone"`
	CustomerName string  `json:"customer_name"`
	// StaffID is absent or null for no one known; a string parsed here, so that a
	// malformed id is a 422 naming it.
	StaffID *string `json:"staff_id"`
	// Version and UpdatedAt order the owner's descriptions (connectors.Appointment):
	// an older one changes nothing. UpdatedAt absent: the time it arrives.
	Version   int64   `json:"version"`
	UpdatedAt *string `json:"updated_at"`
}

// appointment reads the request as the book's one appointment shape; the book checks
// the rest (the status, the length, the price, the person's being the shop's).
func (r appointmentRequest) appointment(source, externalID string) (connectors.Appointment, error) {
	a := connectors.Appointment{
		Source: connectors.Source(source), ExternalID: externalID, Status: connectors.StatusBooked,
		DurationMinutes: r.DurationMinutes, Service: r.Service, CustomerName: r.CustomerName,
		PriceCents: r.PriceCents, Version: r.Version,
	}
	if a.Source != connectors.SourceAPI {
		// calcom, square and ics appointments are their connectors' to write: the owner's
		// own writes would be undone by the next delivery, or undo it.
		return a, problem.Invalidf("source", "source must be api (the owner's own system): calcom, square and ics appointments come from their connectors")
	}
	if r.Status != nil {
		a.Status = connectors.Status(*r.Status)
	}
	if r.StartsAt == nil || *r.StartsAt == "" {
		return a, problem.Invalidf("starts_at", "starts_at is required, RFC 3339, e.g. 2026-11-22T15:00:00Z")
	}
	t, err := time.Parse(time.RFC3339, *r.StartsAt)
	if err != nil {
		return a, problem.Invalidf("starts_at", "starts_at must be an RFC 3339 time such as 2026-11-22T15:00:00Z")
	}
	a.StartsAt = t
	if r.UpdatedAt != nil && *r.UpdatedAt != "" {
		t, err := time.Parse(time.RFC3339, *r.UpdatedAt)
		if err != nil {
			return a, problem.Invalidf("updated_at", "updated_at must be an RFC 3339 time such as 2026-11-20T09:30:00Z, or absent")
		}
		a.UpdatedAt = t
	}
	if r.Phone != nil && strings.TrimSpace(*r.Phone) != "" {
		p := strings.TrimSpace(*r.Phone)
		if !phone.Valid(p) {
			return a, problem.Invalidf("phone", "phone must be in E.164 form, e.g. +15555550123, or null")
		}
		a.Phone = p
	}
	if r.StaffID != nil && *r.StaffID != "" {
		id, err := uuid.Parse(*r.StaffID)
		if err != nil {
			return a, problem.Invalidf("staff_id", "staff_id must be the id of one of the shop's staff (GET /api/staff), or null")
		}
		a.StaffID = id
	}
	return a, nil
}

func (h *Handlers) putAppointment(c echo.Context) error {
	var req appointmentRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	in, err := req.appointment(pathParam(c, "source"), pathParam(c, "external_id"))
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	shop := shopOf(c)
	res, err := h.Book.Upsert(ctx, shop, in)
	if err != nil {
		return err
	}
	out, err := h.appointmentView(ctx, shop, res.Appointment)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if res.Created {
		status = http.StatusCreated
		c.Response().Header().Set(echo.HeaderLocation, "/api/appointments/"+out.ID.String())
	}
	return c.JSON(status, out)
}

// pathParam is the path parameter name, unescaped: echo routes on the escaped path when
// it has escapes that matter (an external id with "/" sent as %2F), and its parameters
// are then escaped too.
func pathParam(c echo.Context, name string) string {
	v := c.Param(name)
	if c.Request().URL.RawPath == "" {
		return v // routed on the unescaped path
	}
	if u, err := url.PathUnescape(v); err == nil {
		return u
	}
	return v
}

func (h *Handlers) listAppointments(c echo.Context) error {
	q := book.Query{Cursor: c.QueryParam("cursor"), Status: connectors.Status(c.QueryParam("status"))}
	var err error
	if q.Limit, err = queryLimit(c, book.MaxPage); err != nil {
		return err
	}
	if q.From, err = queryTime(c, "from"); err != nil {
		return err
	}
	if q.To, err = queryTime(c, "to"); err != nil {
		return err
	}
	if s := c.QueryParam("staff_id"); s != "" {
		if q.StaffID, err = uuid.Parse(s); err != nil {
			return problem.Invalidf("staff_id", "staff_id must be the id of one of the shop's staff (GET /api/staff)")
		}
	}
	page, err := h.Book.List(c.Request().Context(), shopOf(c).ID, q)
	if err != nil {
		return err
	}
	ids := make([]uuid.UUID, 0, len(page.Appointments))
	for _, a := range page.Appointments {
		ids = append(ids, a.ID)
	}
	declared, err := h.Book.Latest(c.Request().Context(), shopOf(c).ID, ids)
	if err != nil {
		return err
	}
	out := api.AppointmentList{Appointments: make([]api.Appointment, 0, len(page.Appointments))}
	for _, a := range page.Appointments {
		j := a.API() // phones come masked
		if d, ok := declared[a.ID]; ok {
			j.Opening = d.API()
		}
		out.Appointments = append(out.Appointments, j)
	}
	if page.Next != "" {
		out.NextCursor = &page.Next
	}
	return c.JSON(http.StatusOK, out)
}

// queryTime reads an RFC 3339 time from the query parameter name; zero when absent.
func queryTime(c echo.Context, name string) (time.Time, error) {
	s := c.QueryParam(name)
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, problem.Invalidf(name, "%s must be an RFC 3339 time such as 2026-11-22T00:00:00Z", name)
	}
	return t, nil
}

func (h *Handlers) getAppointment(c echo.Context) error {
	id, err := pathID(c, book.ErrNotFound)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	shop := shopOf(c)
	a, err := h.Book.Get(ctx, shop.ID, id)
	if err != nil {
		return err
	}
	out, err := h.appointmentView(ctx, shop, a)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

// cancelAppointment is the owner's cancellation: the book declares the opening of the
// time it frees as a source's cancellation would. Cancelling a cancelled appointment
// answers it as it is; one moved, completed or a no-show is 409.
func (h *Handlers) cancelAppointment(c echo.Context) error {
	id, err := pathID(c, book.ErrNotFound)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	shop := shopOf(c)
	res, err := h.Book.Cancel(ctx, shop, id)
	if err != nil {
		return err
	}
	out, err := h.appointmentView(ctx, shop, res.Appointment)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

// appointmentView is one appointment as the API shows it, with what its latest release
// declared.
func (h *Handlers) appointmentView(ctx context.Context, shop shops.Shop, a book.Appointment) (api.Appointment, error) {
	out := a.API()
	if a.Releases == 0 {
		return out, nil // it never freed a time
	}
	declared, err := h.Book.Latest(ctx, shop.ID, []uuid.UUID{a.ID})
	if err != nil {
		return api.Appointment{}, err
	}
	if d, ok := declared[a.ID]; ok {
		out.Opening = d.API()
	}
	return out, nil
}
