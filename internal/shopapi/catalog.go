package shopapi

import (
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/slotrecovery/slotrecovery/api"
	"github.com/slotrecovery/slotrecovery/internal/catalog"
)

// registerCatalog adds the routes of the shop's staff and services.
func (h *Handlers) registerCatalog(e *echo.Echo) {
	e.POST("/api/staff", h.addStaff, h.requireShop)
	e.GET("/api/staff", h.listStaff, h.requireShop)
	e.PATCH("/api/staff/:id", h.patchStaff, h.requireShop)
	e.POST("/api/services", h.addService, h.requireShop)
	e.GET("/api/services", h.listServices, h.requireShop)
	e.PATCH("/api/services/:id", h.patchService, h.requireShop)
}

func newStaffJSON(s catalog.Staff) api.StaffMember {
	return api.StaffMember{ID: s.ID, Name: s.Name, Active: s.Active}
}

func newServiceJSON(s catalog.Service) api.Service {
	return api.Service{ID: s.ID, Name: s.Name, DurationMinutes: s.DurationMinutes, PriceCents: s.PriceCents,
		StaffIDs: s.StaffIDs, Active: s.Active}
}

type staffRequest struct {
	Name string `json:"name"`
}

type staffPatchRequest struct {
	Name   optional[string] `json:"name"`
	Active optional[bool]   `json:"active"`
}

type serviceRequest struct {
	Name            string      `json:"name"`
	DurationMinutes int         `json:"duration_minutes"`
	PriceCents      int64       `json:"price_cents"`
	StaffIDs        []uuid.UUID `json:"staff_ids"`
}

type servicePatchRequest struct {
	Name            optional[string]      `json:"name"`
	DurationMinutes optional[int]         `json:"duration_minutes"`
	PriceCents      optional[int64]       `json:"price_cents"`
	StaffIDs        optional[[]uuid.UUID] `json:"staff_ids"`
	Active          optional[bool]        `json:"active"`
}

// pathID reads the :id path parameter; a malformed one names nothing (notFound).
func pathID(c echo.Context, notFound error) (uuid.UUID, error) {
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return uuid.Nil, notFound
	}
	return id, nil
}

func (h *Handlers) addStaff(c echo.Context) error {
	var req staffRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	s, err := h.Catalog.AddStaff(c.Request().Context(), shopOf(c).ID, req.Name)
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, "/api/staff/"+s.ID.String())
	return c.JSON(http.StatusCreated, newStaffJSON(s))
}

func (h *Handlers) listStaff(c echo.Context) error {
	list, err := h.Catalog.Staff(c.Request().Context(), shopOf(c).ID)
	if err != nil {
		return err
	}
	out := api.StaffList{Staff: make([]api.StaffMember, 0, len(list))}
	for _, s := range list {
		out.Staff = append(out.Staff, newStaffJSON(s))
	}
	return c.JSON(http.StatusOK, out)
}

func (h *Handlers) patchStaff(c echo.Context) error {
	id, err := pathID(c, catalog.ErrStaffNotFound)
	if err != nil {
		return err
	}
	var req staffPatchRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	var ch catalog.StaffChange
	if ch.Name, err = ptr(req.Name, "name"); err != nil {
		return err
	}
	if ch.Active, err = ptr(req.Active, "active"); err != nil {
		return err
	}
	s, err := h.Catalog.UpdateStaff(c.Request().Context(), shopOf(c).ID, id, ch)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newStaffJSON(s))
}

func (h *Handlers) addService(c echo.Context) error {
	var req serviceRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	s, err := h.Catalog.AddService(c.Request().Context(), shopOf(c).ID, catalog.NewService{
		Name: req.Name, DurationMinutes: req.DurationMinutes, PriceCents: req.PriceCents, StaffIDs: req.StaffIDs,
	})
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, "/api/services/"+s.ID.String())
	return c.JSON(http.StatusCreated, newServiceJSON(s))
}

func (h *Handlers) listServices(c echo.Context) error {
	list, err := h.Catalog.Services(c.Request().Context(), shopOf(c).ID)
	if err != nil {
		return err
	}
	out := api.ServiceList{Services: make([]api.Service, 0, len(list))}
	for _, s := range list {
		out.Services = append(out.Services, newServiceJSON(s))
	}
	return c.JSON(http.StatusOK, out)
}

func (h *Handlers) patchService(c echo.Context) error {
	id, err := pathID(c, catalog.ErrServiceNotFound)
	if err != nil {
		return err
	}
	var req servicePatchRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	var ch catalog.ServiceChange
	if ch.Name, err = ptr(req.Name, "name"); err != nil {
		return err
	}
	if ch.DurationMinutes, err = ptr(req.DurationMinutes, "duration_minutes"); err != nil {
		return err
	}
	if ch.PriceCents, err = ptr(req.PriceCents, "price_cents"); err != nil {
		return err
	}
	if req.StaffIDs.Set {
		ids := req.StaffIDs.Value
		if req.StaffIDs.Null || ids == nil {
			ids = []uuid.UUID{}
		}
		ch.StaffIDs = &ids
	}
	if ch.Active, err = ptr(req.Active, "active"); err != nil {
		return err
	}
	s, err := h.Catalog.UpdateService(c.Request().Context(), shopOf(c).ID, id, ch)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newServiceJSON(s))
}
