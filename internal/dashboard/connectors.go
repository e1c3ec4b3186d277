package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/slotrecovery/slotrecovery/internal/book"
	"github.com/slotrecovery/slotrecovery/internal/connectors"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// The Integrations page's "Booking systems" card: the shop's connectors (cal.com,
// Square, a calendar feed) that keep its appointment book, each with the webhook URL to
// paste into the vendor and its last delivery; add one (its URL and any secret shown
// once), give a Square connector its signature key, remove one. The actions are the
// API's (/api/connectors), through the same book.Service calls: the same limits, checks
// and wording.

// connectorView is one connector as its card shows it.
type connectorView struct {
	ID          uuid.UUID
	Kind        connectors.Source
	Description string
	// WebhookURL is where the vendor posts ("" for a calendar feed, which is polled).
	WebhookURL string
	// NeedsKey is a Square connector without its signature key: every delivery is
	// refused until it is given.
	NeedsKey bool
	// HasAPIKey: the connector holds the vendor's API key, so move-ups are written back.
	HasAPIKey bool
	Created   string
	// Last is the last delivery and its result ("401 bad signature 3 min ago"), "" before
	// the first.
	Last string
	// LastBad marks a last delivery that was refused or failed.
	LastBad bool
	// Error is an action on this connector that needs something (a confirmation, a
	// key).
	Error string
}

// connectorForm is the "add a booking system" form as typed.
type connectorForm struct {
	Kind, Description, SignatureKey, URL string
	Errors                               map[string]string
	Other                                string
}

// newConnectorView is the answer to adding a connector: its webhook URL and cal.com's
// secret, shown on this page only.
type newConnectorView struct {
	Kind       connectors.Source
	WebhookURL string
	Secret     string
	HasKey     bool
}

// connectorKinds are the kinds the form offers, in its order, with their labels.
var connectorKinds = []connectors.Source{connectors.SourceCalcom, connectors.SourceSquare, connectors.SourceICS}

// kindLabel is how the page names a connector's kind.
func kindLabel(k connectors.Source) string {
	switch k {
	case connectors.SourceCalcom:
		return "cal.com"
	case connectors.SourceSquare:
		return "Square"
	case connectors.SourceICS:
		return "Calendar feed"
	}
	return string(k)
}

// webhookURL is the address a connector's vendor posts to, under the server's
// PUBLIC_URL, as the API shows it; "" for a kind that posts none.
func (d *Dashboard) webhookURL(c book.Connector) string {
	if p := connectors.WebhookPath(c.Kind, c.ID.String()); p != "" {
		return strings.TrimRight(d.cfg.PublicURL, "/") + p
	}
	return ""
}

// deliveryLabels say what became of a delivery; the webhook answered the vendor the
// status before them (internal/webhooks/connectors.go), a feed's poll none.
var deliveryLabels = map[book.DeliveryResult]struct {
	status int
	text   string
	bad    bool
}{
	book.ResultApplied:      {http.StatusOK, "applied", false},
	book.ResultDuplicate:    {http.StatusOK, "duplicate, nothing to do", false},
	book.ResultIgnored:      {http.StatusOK, "ignored (an event the book does not use)", false},
	book.ResultNotModified:  {0, "not modified", false},
	book.ResultBadSignature: {http.StatusUnauthorized, "bad signature", true},
	book.ResultBadPayload:   {http.StatusBadRequest, "not a payload the server reads", true},
	book.ResultRejected:     {http.StatusUnprocessableEntity, "an appointment in it was refused", true},
	book.ResultFailed:       {http.StatusInternalServerError, "could not be recorded (retried)", true},
}

// lastDelivery is a connector's last delivery in words, and whether it went wrong.
func lastDelivery(kind connectors.Source, l *book.LastDelivery, now time.Time) (string, bool) {
	if l == nil {
		return "", false
	}
	lbl, ok := deliveryLabels[l.Result]
	text := string(l.Result)
	if ok {
		text = lbl.text
		if lbl.status != 0 && kind != connectors.SourceICS {
			text = fmt.Sprintf("%d %s", lbl.status, text)
		}
	}
	if l.Event != "" {
		text += " (" + l.Event + ")"
	}
	return text + " " + ago(l.At, now), lbl.bad
}

// ago is how long before now t was: "just now", "3 min ago", "5 h ago", "2 days ago".
func ago(t, now time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h ago", int(d/time.Hour))
	}
	return fmt.Sprintf("%d days ago", int(d/(24*time.Hour)))
}

// connectorsOf reads the shop's connectors for the card.
func (d *Dashboard) connectorsOf(ctx context.Context, shop shops.Shop, v *integrationsView) error {
	if d.cfg.Book == nil {
		return nil
	}
	cs, err := d.cfg.Book.Connectors(ctx, shop.ID)
	if err != nil {
		return err
	}
	v.Book, v.MaxConnectors = true, book.MaxConnectors
	now := d.cfg.Now()
	for _, x := range cs {
		cv := connectorView{ID: x.ID, Kind: x.Kind, Description: x.Description, WebhookURL: d.webhookURL(x), HasAPIKey: x.HasAPIKey,
			NeedsKey: x.Kind == connectors.SourceSquare && !x.HasSecret,
			Created:  shortTime(x.CreatedAt, shop.Location, now.In(shop.Location))}
		cv.Last, cv.LastBad = lastDelivery(x.Kind, x.LastDelivery, now)
		v.Connectors = append(v.Connectors, cv)
	}
	return nil
}

// connectorFields are the form's inputs by the API's field names.
var connectorFields = map[string]string{"kind": "cn-kind", "description": "cn-description",
	"signature_key": "cn-key", "url": "cn-url"}

func (d *Dashboard) createConnector(c echo.Context) error {
	s := current(c)
	f := connectorForm{Kind: strings.TrimSpace(c.FormValue("kind")), Description: c.FormValue("description"),
		SignatureKey: c.FormValue("signature_key"), URL: c.FormValue("url")}
	created, err := d.cfg.Book.CreateConnector(c.Request().Context(), s.Shop.ID, book.NewConnector{
		Kind: connectors.Source(f.Kind), Description: f.Description, SignatureKey: f.SignatureKey, URL: f.URL,
	})
	p, isProblem := problem.As(err)
	switch {
	case err == nil:
		x := created.Connector
		d.logger(c).Info("dashboard connector added", "shop_id", s.Shop.ID, "connector_id", x.ID, "kind", x.Kind)
		return d.render(c, http.StatusCreated, "New booking system · "+s.Shop.Name, newConnectorView{
			Kind: x.Kind, WebhookURL: d.webhookURL(x), Secret: created.Secret, HasKey: x.HasSecret,
		})
	case isProblem && connectorFields[p.Field] != "":
		f.Errors = map[string]string{p.Field: friendlySetting(p)}
	case isProblem && (p.Kind == problem.Invalid || p.Kind == problem.Conflict):
		f.Other = friendlySetting(p)
	default:
		return d.internalError(c, "add connector", err)
	}
	// A secret typed is not shown back: the owner pastes it again.
	f.SignatureKey = ""
	return d.renderIntegrations(c, http.StatusUnprocessableEntity, func(v *integrationsView) { v.ConnectorForm = f })
}

// connectorAction runs an action on the connector named in the path: not found
// (another shop's, or removed) is the 404 page.
func (d *Dashboard) connectorAction(act func(c echo.Context, s *signedIn, id uuid.UUID) error) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := uuid.Parse(c.Param("id"))
		if err != nil {
			return d.notFound(c)
		}
		s := current(c)
		if _, err := d.cfg.Book.Connector(c.Request().Context(), s.Shop.ID, id); errors.Is(err, book.ErrConnectorNotFound) {
			return d.notFound(c)
		} else if err != nil {
			return d.internalError(c, "read connector", err)
		}
		err = act(c, s, id)
		if errors.Is(err, book.ErrConnectorNotFound) {
			return d.notFound(c)
		}
		return err
	}
}

// connectorError shows the page again with msg on connector id's card.
func (d *Dashboard) connectorError(c echo.Context, status int, id uuid.UUID, msg string) error {
	return d.renderIntegrations(c, status, func(v *integrationsView) {
		for i := range v.Connectors {
			if v.Connectors[i].ID == id {
				v.Connectors[i].Error = msg
			}
		}
	})
}

// setConnectorKey gives a Square connector the signature key Square shows for the
// subscription (made once the subscription names the connector's URL), or a new one.
func (d *Dashboard) setConnectorKey(c echo.Context, s *signedIn, id uuid.UUID) error {
	key := c.FormValue("signature_key")
	_, err := d.cfg.Book.UpdateConnector(c.Request().Context(), s.Shop.ID, id, book.ConnectorChange{SignatureKey: &key})
	if p, ok := problem.As(err); ok && p.Kind == problem.Invalid {
		return d.connectorError(c, http.StatusUnprocessableEntity, id, friendlySetting(p))
	}
	if err != nil {
		return d.orConnectorInternal(c, "set connector key", err)
	}
	d.logger(c).Info("dashboard connector key set", "shop_id", s.Shop.ID, "connector_id", id)
	return c.Redirect(http.StatusSeeOther, IntegrationsPath+"?notice=connector_key#connector-"+id.String())
}

// setConnectorAPIKey gives a cal.com or Square connector the vendor's API key (an
// empty one, with remove=yes, takes it away): move-ups are then written back.
func (d *Dashboard) setConnectorAPIKey(c echo.Context, s *signedIn, id uuid.UUID) error {
	ctx := c.Request().Context()
	var err error
	notice := "api_key_set"
	if c.FormValue("remove") == "yes" {
		_, err = d.cfg.Book.ClearAPIKey(ctx, s.Shop.ID, id)
		notice = "api_key_removed"
	} else {
		_, err = d.cfg.Book.SetAPIKey(ctx, s.Shop.ID, id, strings.TrimSpace(c.FormValue("api_key")))
	}
	if p, ok := problem.As(err); ok && p.Kind == problem.Invalid {
		return d.connectorError(c, http.StatusUnprocessableEntity, id, friendlySetting(p))
	}
	if err != nil {
		return d.orConnectorInternal(c, "set connector API key", err)
	}
	d.logger(c).Info("dashboard connector API key changed", "shop_id", s.Shop.ID, "connector_id", id, "notice", notice)
	return c.Redirect(http.StatusSeeOther, IntegrationsPath+"?notice="+notice+"#connector-"+id.String())
}

func (d *Dashboard) deleteConnector(c echo.Context, s *signedIn, id uuid.UUID) error {
	if c.FormValue("confirm") != "yes" {
		return d.connectorError(c, http.StatusUnprocessableEntity, id,
			"Tick the box to confirm that the connection should be removed.")
	}
	if err := d.cfg.Book.DeleteConnector(c.Request().Context(), s.Shop.ID, id); err != nil {
		return d.orConnectorInternal(c, "delete connector", err)
	}
	d.logger(c).Info("dashboard connector deleted", "shop_id", s.Shop.ID, "connector_id", id)
	return c.Redirect(http.StatusSeeOther, IntegrationsPath+"?notice=connector_deleted#connectors")
}

// orConnectorInternal passes "not found" on (connectorAction answers the 404 page) and
// answers anything else as an internal error.
func (d *Dashboard) orConnectorInternal(c echo.Context, what string, err error) error {
	if errors.Is(err, book.ErrConnectorNotFound) {
		return err
	}
	return d.internalError(c, what, err)
}
