package shopapi

import (
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/slotrecovery/slotrecovery/api"
	"github.com/slotrecovery/slotrecovery/internal/hooks"
)

// ---- endpoints ----

func newWebhookEndpointJSON(e hooks.Endpoint) api.WebhookEndpoint {
	out := api.WebhookEndpoint{
		ID: e.ID, URL: e.URL, Description: e.Description, EnabledEvents: e.EnabledEvents, Disabled: e.Disabled(),
		DisabledAt: utc(e.DisabledAt), FailingSince: utc(e.FailingSince), PreviousSecretExpiresAt: utc(e.PreviousSecretExpiresAt),
		CreatedAt: e.CreatedAt.UTC(), UpdatedAt: e.UpdatedAt.UTC(),
	}
	if e.Disabled() {
		r := e.DisabledReason
		out.DisabledReason = &r
	}
	return out
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

type webhookEndpointRequest struct {
	URL           string   `json:"url"`
	Description   string   `json:"description"`
	EnabledEvents []string `json:"enabled_events"`
	Disabled      bool     `json:"disabled"`
}

type webhookEndpointPatchRequest struct {
	URL           optional[string]   `json:"url"`
	Description   optional[string]   `json:"description"`
	EnabledEvents optional[[]string] `json:"enabled_events"`
	Disabled      optional[bool]     `json:"disabled"`
}

func (h *Handlers) createWebhookEndpoint(c echo.Context) error {
	var req webhookEndpointRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	ep, secret, err := h.Hooks.CreateEndpoint(c.Request().Context(), shopOf(c).ID, hooks.NewEndpoint{
		URL: req.URL, Description: req.Description, EnabledEvents: req.EnabledEvents, Disabled: req.Disabled,
	})
	if err != nil {
		return err
	}
	// The secret is in this answer and nowhere else: keep it out of caches.
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	c.Response().Header().Set(echo.HeaderLocation, "/api/webhook_endpoints/"+ep.ID.String())
	out := newWebhookEndpointJSON(ep)
	// A retry with the same Idempotency-Key gets this answer without the secret: kept,
	// it would outlive a rotation or the endpoint itself, and be a copy of it at rest.
	replay := out
	replay.SecretShownOnce = true
	if err := keepForReplay(c, replay); err != nil {
		return err
	}
	out.Secret = secret
	return c.JSON(http.StatusCreated, out)
}

func (h *Handlers) listWebhookEndpoints(c echo.Context) error {
	list, err := h.Hooks.Endpoints(c.Request().Context(), shopOf(c).ID)
	if err != nil {
		return err
	}
	out := api.WebhookEndpointList{WebhookEndpoints: make([]api.WebhookEndpoint, 0, len(list))}
	for _, e := range list {
		out.WebhookEndpoints = append(out.WebhookEndpoints, newWebhookEndpointJSON(e))
	}
	return c.JSON(http.StatusOK, out)
}

// endpointID reads the :id path parameter; a malformed one names no endpoint (404).
func endpointID(c echo.Context) (uuid.UUID, error) {
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return uuid.Nil, hooks.ErrEndpointNotFound
	}
	return id, nil
}

func (h *Handlers) getWebhookEndpoint(c echo.Context) error {
	id, err := endpointID(c)
	if err != nil {
		return err
	}
	ep, err := h.Hooks.Endpoint(c.Request().Context(), shopOf(c).ID, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newWebhookEndpointJSON(ep))
}

func (h *Handlers) patchWebhookEndpoint(c echo.Context) error {
	id, err := endpointID(c)
	if err != nil {
		return err
	}
	var req webhookEndpointPatchRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	var ch hooks.EndpointChange
	if ch.URL, err = ptr(req.URL, "url"); err != nil {
		return err
	}
	if ch.Description, err = ptr(req.Description, "description"); err != nil {
		return err
	}
	if ch.EnabledEvents, err = ptr(req.EnabledEvents, "enabled_events"); err != nil {
		return err
	}
	if ch.Disabled, err = ptr(req.Disabled, "disabled"); err != nil {
		return err
	}
	ep, err := h.Hooks.UpdateEndpoint(c.Request().Context(), shopOf(c).ID, id, ch)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newWebhookEndpointJSON(ep))
}

func (h *Handlers) deleteWebhookEndpoint(c echo.Context) error {
	id, err := endpointID(c)
	if err != nil {
		return err
	}
	if err := h.Hooks.DeleteEndpoint(c.Request().Context(), shopOf(c).ID, id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (h *Handlers) rotateWebhookSecret(c echo.Context) error {
	id, err := endpointID(c)
	if err != nil {
		return err
	}
	ep, secret, err := h.Hooks.RotateSecret(c.Request().Context(), shopOf(c).ID, id)
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	out := newWebhookEndpointJSON(ep)
	out.Secret = secret
	return c.JSON(http.StatusOK, out)
}

// ---- deliveries ----

func newWebhookDeliveryJSON(d hooks.Delivery) api.WebhookDelivery {
	out := api.WebhookDelivery{
		ID: d.ID, EventID: hooks.EventID(d.EventID), EventType: d.EventType, EventCreatedAt: d.EventCreatedAt.UTC(),
		Status: d.Status, Attempts: d.Attempts, NextAttemptAt: utc(d.NextAttemptAt), LastAttemptAt: utc(d.LastAttemptAt),
		LastStatusCode: d.LastStatusCode, LastError: nonEmpty(d.LastError), CreatedAt: d.CreatedAt.UTC(),
		FinishedAt: utc(d.FinishedAt),
	}
	if d.Status == hooks.DeliverySucceeded {
		out.LastError = nil
	}
	return out
}

func (h *Handlers) listWebhookDeliveries(c echo.Context) error {
	id, err := endpointID(c)
	if err != nil {
		return err
	}
	q := hooks.DeliveryQuery{Status: c.QueryParam("status"), Cursor: c.QueryParam("cursor")}
	n, err := queryLimit(c, hooks.MaxDeliveryPage)
	if err != nil {
		return err
	}
	q.Limit = n
	page, err := h.Hooks.Deliveries(c.Request().Context(), shopOf(c).ID, id, q)
	if err != nil {
		return err
	}
	out := api.WebhookDeliveryList{Deliveries: make([]api.WebhookDelivery, 0, len(page.Deliveries))}
	for _, d := range page.Deliveries {
		out.Deliveries = append(out.Deliveries, newWebhookDeliveryJSON(d))
	}
	if page.Next != "" {
		out.NextCursor = &page.Next
	}
	return c.JSON(http.StatusOK, out)
}

// deliveryIDs reads the :id and :delivery_id path parameters.
func deliveryIDs(c echo.Context) (endpoint, delivery uuid.UUID, err error) {
	if endpoint, err = endpointID(c); err != nil {
		return
	}
	if delivery, err = uuid.Parse(c.Param("delivery_id")); err != nil {
		return uuid.Nil, uuid.Nil, hooks.ErrDeliveryNotFound
	}
	return endpoint, delivery, nil
}

func (h *Handlers) getWebhookDelivery(c echo.Context) error {
	ep, id, err := deliveryIDs(c)
	if err != nil {
		return err
	}
	d, err := h.Hooks.Delivery(c.Request().Context(), shopOf(c).ID, ep, id)
	if err != nil {
		return err
	}
	out := api.WebhookDeliveryDetail{WebhookDelivery: newWebhookDeliveryJSON(d.Delivery), Payload: d.Payload,
		AttemptLog: make([]api.WebhookAttempt, 0, len(d.Attempts))}
	for _, a := range d.Attempts {
		out.AttemptLog = append(out.AttemptLog, api.WebhookAttempt{At: a.At.UTC(), Manual: a.Manual, StatusCode: a.StatusCode,
			DurationMs: a.Duration.Milliseconds(), ResponseHead: a.ResponseHead, Error: nonEmpty(a.Error)})
	}
	return c.JSON(http.StatusOK, out)
}

func (h *Handlers) retryWebhookDelivery(c echo.Context) error {
	ep, id, err := deliveryIDs(c)
	if err != nil {
		return err
	}
	d, err := h.Hooks.Resend(c.Request().Context(), shopOf(c).ID, ep, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, newWebhookDeliveryJSON(d))
}
