package webhooks

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/slotrecovery/slotrecovery/internal/httperr"
	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/metrics"
	"github.com/slotrecovery/slotrecovery/internal/payments"
	"github.com/slotrecovery/slotrecovery/internal/payments/stripe"
)

// StripePath is where Stripe posts the platform account's own webhook events.
const StripePath = "/webhooks/stripe"

// StripeConnectPath is where Stripe posts connected accounts' events (a Connect
// endpoint, registered apart in Stripe with a signing secret of its own), when the
// server runs with STRIPE_CONNECT=on. A route of its own rather than one route trying
// both secrets: Stripe registers the two kinds of endpoint separately, each with its own
// secret and event list, and an operator reading a log or a metric sees at once which
// one an event came through.
const StripeConnectPath = "/webhooks/stripe/connect"

// MaxStripeBody caps a Stripe event body. Stripe's events are a few kilobytes; 1 MiB
// leaves room for large objects without letting anyone make us buffer more.
const MaxStripeBody = 1 << 20

// Stripe handles Stripe's webhook events, for one endpoint: the platform's own
// (StripePath) or the Connect endpoint (StripeConnectPath, Connect true).
type Stripe struct {
	// Ledger stores and applies the events.
	Ledger *ledger.Service
	// Secrets are the endpoint's signing secrets: one, or the new and the old one
	// while the secret is rotated. A signature by any of them is accepted.
	Secrets []string
	// Connect is true for the Connect endpoint: its events come from connected
	// accounts, and each names its account. The ledger lets a payment event act only
	// on a booking whose payment that account took.
	Connect bool
	// Tolerance is how old a signature may be; zero means Stripe's 300 s.
	Tolerance time.Duration
	// Logger logs refusals and outcomes.
	Logger *slog.Logger
	// Metrics counts events by type and result; nil counts nothing.
	Metrics *metrics.Metrics
}

// StripeAnswer is the body of a 200: the event was stored, with what it led to.
type StripeAnswer struct {
	// Received is always true.
	Received bool `json:"received"`
	// Result is the ledger.Result the event led to.
	Result string `json:"result"`
	// Replayed is true when the event was handled before and Result is the stored one.
	Replayed bool `json:"replayed,omitempty"`
}

// Handle verifies, stores and applies one event. A bad, missing or stale signature, or
// a signed body that is not an event, is a 400 and a body over MaxStripeBody a 413, both
// changing nothing. A stored event gets a 200, whether it changed a booking or was
// ignored (unknown type, unknown booking, redelivery, Stripe not configured), so Stripe
// does not retry it; only a passing failure to store or apply it (the database or Stripe
// unreachable) is a 500, which Stripe retries.
func (h *Stripe) Handle(c echo.Context) error {
	req := c.Request()
	ctx := req.Context()
	// The signature covers the raw bytes, so they are read (capped) before anything is
	// decoded; nothing is stored before the signature is checked.
	body, err := io.ReadAll(io.LimitReader(req.Body, MaxStripeBody+1))
	if len(body) > MaxStripeBody {
		// Checked before err: the cap is this handler's, whatever reader sits in front.
		return &httperr.Error{Status: http.StatusRequestEntityTooLarge, Code: "body_too_large", Message: "the event is larger than 1 MiB"}
	}
	if err != nil {
		return httperr.BadRequest("unreadable_body", "the request body could not be read")
	}
	// ParseEvent verifies before it decodes, accepts events rendered with other API
	// versions (see there why that is safe) and classifies the event into the ledger's
	// kind: nothing here decides on Stripe's event types.
	ev, err := stripe.ParseEvent(body, req.Header.Get("Stripe-Signature"), h.Secrets, h.Tolerance)
	ev.Connect = h.Connect
	switch {
	case errors.Is(err, payments.ErrBadSignature):
		h.Logger.WarnContext(ctx, "stripe signature rejected", "connect", h.Connect, "err", err)
		h.Metrics.PaymentEvent("unverified", "bad_signature")
		return httperr.BadRequest("bad_signature", "Stripe-Signature is missing, wrong or too old")
	case err != nil:
		h.Logger.WarnContext(ctx, "stripe event rejected", "connect", h.Connect, "err", err)
		h.Metrics.PaymentEvent("unverified", "bad_payload")
		return httperr.BadRequest("bad_payload", "the body is not a Stripe event")
	}
	res, err := h.Ledger.HandleEvent(ctx, ev)
	if err != nil {
		h.Metrics.PaymentEvent(ev.Type, "error")
		// httperr logs it and answers "internal error"; Stripe retries the event.
		return err
	}
	if !res.Replayed {
		h.Metrics.PaymentEvent(ev.Type, string(res.Result))
	}
	h.Logger.InfoContext(ctx, "stripe event handled", "event_id", ev.ID, "type", ev.Type, "kind", ev.Kind,
		"connect", h.Connect, "account", ev.Account, "booking_id", ev.BookingID, "result", res.Result, "replayed", res.Replayed)
	return c.JSON(http.StatusOK, StripeAnswer{Received: true, Result: string(res.Result), Replayed: res.Replayed})
}
