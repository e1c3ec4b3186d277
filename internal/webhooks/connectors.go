package webhooks

import (
	"cmp"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/slotrecovery/slotrecovery/internal/book"
	"github.com/slotrecovery/slotrecovery/internal/connectors"
	"github.com/slotrecovery/slotrecovery/internal/connectors/calcom"
	"github.com/slotrecovery/slotrecovery/internal/connectors/square"
	"github.com/slotrecovery/slotrecovery/internal/httperr"
	"github.com/slotrecovery/slotrecovery/internal/problem"
)

// Where cal.com and Square post a connector's webhooks (connectors.WebhookPath): the
// connector's id in the path names the shop and the secret.
const (
	CalcomPath = "/webhooks/calcom/:connector_id"
	SquarePath = "/webhooks/square/:connector_id"
)

// Connectors receives the booking systems' webhooks into the shops' appointment books:
// verify with the connector's secret, read (the vendor's adapter), apply (book.Apply),
// answer. Nothing of a delivery is read before its signature is checked, and every
// delivery's outcome, refusals included, is kept as the connector's last delivery.
type Connectors struct {
	Book *book.Service
	// PublicURL is the server's external base URL: Square signs the notification URL,
	// which is PublicURL and the connector's path.
	PublicURL string
	// Timeout bounds the work on one delivery; default 8 s, inside Square's 10 s (past
	// it Square counts the delivery failed and retries it, which the book makes
	// harmless).
	Timeout time.Duration
	Logger  *slog.Logger
}

// ConnectorAnswer is the body of a 200: the delivery was verified and what became of it.
type ConnectorAnswer struct {
	// Received is always true.
	Received bool `json:"received"`
	// Result is applied, duplicate or ignored (book.DeliveryResult).
	Result string `json:"result"`
	// Appointments counts the appointments it recorded.
	Appointments int `json:"appointments"`
}

// Calcom handles a delivery of cal.com's webhook to a calcom connector.
func (h *Connectors) Calcom(c echo.Context) error { return h.handle(c, connectors.SourceCalcom) }

// Square handles a delivery of Square's webhook to a square connector.
func (h *Connectors) Square(c echo.Context) error { return h.handle(c, connectors.SourceSquare) }

var (
	errConnectorSignature = &httperr.Error{Status: http.StatusUnauthorized, Code: "bad_signature",
		Message: "the signature is missing or not the connector's"}
	errConnectorBody = &httperr.Error{Status: http.StatusRequestEntityTooLarge, Code: "body_too_large",
		Message: "the delivery is larger than 1 MiB"}
)

// handle answers one delivery to a connector of kind: 404 for no such connector, 413
// for a body over connectors.MaxBody, 401 for a signature that is not the connector's,
// 400 for a signed body that is not the vendor's payload, 422 for an appointment the book
// refuses, 200 once it is recorded (or was before: a redelivery), and 500 when it could
// not be recorded now (the vendor retries).
func (h *Connectors) handle(c echo.Context, kind connectors.Source) error {
	req := c.Request()
	ctx := req.Context()
	id, err := uuid.Parse(c.Param("connector_id"))
	if err != nil {
		return book.ErrConnectorNotFound
	}
	// The signature covers the raw bytes: read them (capped), check the signature, and
	// only then decode.
	body, err := io.ReadAll(io.LimitReader(req.Body, connectors.MaxBody+1))
	if len(body) > connectors.MaxBody {
		return errConnectorBody
	}
	if err != nil {
		return httperr.BadRequest("unreadable_body", "the request body could not be read")
	}
	r, err := h.Book.Receiver(ctx, kind, id)
	if err != nil {
		return err
	}
	var d connectors.Delivery
	switch kind {
	case connectors.SourceCalcom:
		d, err = calcom.Read(r.Secret, body, req.Header.Get(calcom.SignatureHeader))
	case connectors.SourceSquare:
		d, err = square.Read(r.Secret, h.notificationURL(kind, id), body, req.Header.Get(square.SignatureHeader))
	}
	switch {
	case errors.Is(err, connectors.ErrSignature):
		h.record(ctx, r, "", book.ResultBadSignature)
		return errConnectorSignature
	case err != nil:
		h.record(ctx, r, "", book.ResultBadPayload)
		return httperr.BadRequest("bad_payload", "the signed body is not a "+string(kind)+" webhook delivery the server reads")
	}
	actx, cancel := context.WithTimeout(ctx, cmp.Or(h.Timeout, 8*time.Second))
	defer cancel()
	res, err := h.Book.Apply(actx, r, d)
	if err != nil {
		var p *problem.Error
		if errors.As(err, &p) {
			h.record(ctx, r, d.Event, book.ResultRejected)
			return err
		}
		h.record(ctx, r, d.Event, book.ResultFailed)
		return err // logged by httperr, answered "internal error": the vendor retries
	}
	h.record(ctx, r, d.Event, res.Result)
	h.logger().InfoContext(ctx, "connector delivery", "connector_id", r.ID, "shop_id", r.ShopID, "kind", kind,
		"event", d.Event, "result", res.Result, "appointments", len(res.Results))
	return c.JSON(http.StatusOK, ConnectorAnswer{Received: true, Result: string(res.Result), Appointments: len(res.Results)})
}

// notificationURL is the URL Square posts a connector's deliveries to and signs.
func (h *Connectors) notificationURL(kind connectors.Source, id uuid.UUID) string {
	return strings.TrimRight(h.PublicURL, "/") + connectors.WebhookPath(kind, id.String())
}

// record keeps the delivery's outcome as the connector's last, even when the vendor has
// hung up meanwhile.
func (h *Connectors) record(ctx context.Context, r book.Receiver, event string, result book.DeliveryResult) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if err := h.Book.RecordResult(rctx, r.ID, event, result); err != nil {
		h.logger().WarnContext(ctx, "connector delivery not recorded", "connector_id", r.ID, "result", result, "err", err)
	}
	if result == book.ResultBadSignature || result == book.ResultBadPayload {
		h.logger().WarnContext(ctx, "connector delivery refused", "connector_id", r.ID, "shop_id", r.ShopID,
			"kind", r.Kind, "result", result)
	}
}

func (h *Connectors) logger() *slog.Logger {
	if h.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return h.Logger
}
