package shopapi

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/slotrecovery/slotrecovery/api"
	"github.com/slotrecovery/slotrecovery/internal/book"
	"github.com/slotrecovery/slotrecovery/internal/connectors"
)

// registerConnectors adds the routes of the shop's connectors: the booking systems that
// keep its appointment book (cal.com, Square, a calendar feed).
func (h *Handlers) registerConnectors(e *echo.Echo) {
	e.POST("/api/connectors", h.createConnector, h.requireShop)
	e.GET("/api/connectors", h.listConnectors, h.requireShop)
	e.GET("/api/connectors/:id", h.getConnector, h.requireShop)
	e.PATCH("/api/connectors/:id", h.patchConnector, h.requireShop)
	e.DELETE("/api/connectors/:id", h.deleteConnector, h.requireShop)
	e.PUT("/api/connectors/:id/api_key", h.putConnectorAPIKey, h.requireShop)
	e.DELETE("/api/connectors/:id/api_key", h.deleteConnectorAPIKey, h.requireShop)
}

// apiKeyRequest is the body of PUT /api/connectors/{id}/api_key.
type apiKeyRequest struct {
	APIKey string `json:"api_key"`
}

// putConnectorAPIKey gives a cal.com or Square connector the vendor's API key: the
// shop's move-ups of that vendor's appointments are written back through its API. The
// key is never shown again (has_api_key says it is held).
func (h *Handlers) putConnectorAPIKey(c echo.Context) error {
	id, err := pathID(c, book.ErrConnectorNotFound)
	if err != nil {
		return err
	}
	var req apiKeyRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	x, err := h.Book.SetAPIKey(c.Request().Context(), shopOf(c).ID, id, req.APIKey)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.connectorJSON(x))
}

// deleteConnectorAPIKey removes a connector's API key: moves are listed to copy again.
func (h *Handlers) deleteConnectorAPIKey(c echo.Context) error {
	id, err := pathID(c, book.ErrConnectorNotFound)
	if err != nil {
		return err
	}
	x, err := h.Book.ClearAPIKey(c.Request().Context(), shopOf(c).ID, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.connectorJSON(x))
}

// connectorRequest is the body of POST /api/connectors.
type connectorRequest struct {
	Kind        string `json:"kind"`
	Description string `json:"description"`
	// SignatureKey is Square's subscription signature key (may come later, by PATCH).
	SignatureKey string `json:"signature_key"`
	// URL is a calendar feed's secret address (kind ics).
	URL string `json:"url"`
}

// connectorPatch is the body of PATCH /api/connectors/{id}; absent fields stay.
type connectorPatch struct {
	Description  *string `json:"description"`
	SignatureKey *string `json:"signature_key"`
}

// connectorJSON is c as the API shows it, with its webhook URL under the server's
// PUBLIC_URL.
func (h *Handlers) connectorJSON(c book.Connector) api.Connector {
	out := api.Connector{ID: c.ID, Kind: string(c.Kind), Description: c.Description,
		SignatureKeySet: c.HasSecret, HasAPIKey: c.HasAPIKey, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
	if p := connectors.WebhookPath(c.Kind, c.ID.String()); p != "" {
		u := strings.TrimRight(h.PublicURL, "/") + p
		out.WebhookURL = &u
	}
	if d := c.LastDelivery; d != nil {
		out.LastDelivery = &api.ConnectorDelivery{At: d.At, Event: d.Event, Result: string(d.Result)}
	}
	return out
}

func (h *Handlers) createConnector(c echo.Context) error {
	var req connectorRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	created, err := h.Book.CreateConnector(c.Request().Context(), shopOf(c).ID, book.NewConnector{
		Kind: connectors.Source(strings.TrimSpace(req.Kind)), Description: req.Description,
		SignatureKey: req.SignatureKey, URL: req.URL,
	})
	if err != nil {
		return err
	}
	out := h.connectorJSON(created.Connector)
	out.Secret = created.Secret
	// The secret is in this answer and nowhere else: keep it out of caches.
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	c.Response().Header().Set(echo.HeaderLocation, "/api/connectors/"+out.ID.String())
	return c.JSON(http.StatusCreated, out)
}

func (h *Handlers) listConnectors(c echo.Context) error {
	cs, err := h.Book.Connectors(c.Request().Context(), shopOf(c).ID)
	if err != nil {
		return err
	}
	out := api.ConnectorList{Connectors: make([]api.Connector, len(cs))}
	for i, x := range cs {
		out.Connectors[i] = h.connectorJSON(x)
	}
	return c.JSON(http.StatusOK, out)
}

func (h *Handlers) getConnector(c echo.Context) error {
	id, err := pathID(c, book.ErrConnectorNotFound)
	if err != nil {
		return err
	}
	x, err := h.Book.Connector(c.Request().Context(), shopOf(c).ID, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.connectorJSON(x))
}

func (h *Handlers) patchConnector(c echo.Context) error {
	id, err := pathID(c, book.ErrConnectorNotFound)
	if err != nil {
		return err
	}
	var req connectorPatch
	if err := decode(c, &req); err != nil {
		return err
	}
	x, err := h.Book.UpdateConnector(c.Request().Context(), shopOf(c).ID, id,
		book.ConnectorChange{Description: req.Description, SignatureKey: req.SignatureKey})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.connectorJSON(x))
}

func (h *Handlers) deleteConnector(c echo.Context) error {
	id, err := pathID(c, book.ErrConnectorNotFound)
	if err != nil {
		return err
	}
	if err := h.Book.DeleteConnector(c.Request().Context(), shopOf(c).ID, id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
