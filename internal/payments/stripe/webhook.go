package stripe

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	stripego "github.com/stripe/stripe-go/v76"
	"github.com/stripe/stripe-go/v76/webhook"

	"github.com/slotrecovery/slotrecovery/internal/payments"
)

// DefaultWebhookTolerance is how old a signature ParseEvent accepts when
// given a zero tolerance: Stripe's recommended 300 seconds.
const DefaultWebhookTolerance = webhook.DefaultTolerance

// The Stripe event types ParseEvent classifies into the ledger's kinds
// (payments.EventKind); every other type is payments.EventOther.
const (
	// EventCheckoutCompleted: the customer finished Checkout; the payment is
	// done when the session's payment_status is PaymentPaid (or
	// PaymentNoPaymentRequired), still pending otherwise.
	EventCheckoutCompleted = "checkout.session.completed"
	// EventCheckoutAsyncSucceeded: a delayed payment method succeeded.
	EventCheckoutAsyncSucceeded = "checkout.session.async_payment_succeeded"
	// EventCheckoutAsyncFailed: a delayed payment method failed; the session
	// is over, unpaid.
	EventCheckoutAsyncFailed = "checkout.session.async_payment_failed"
	// EventCheckoutExpired: the session expired unpaid.
	EventCheckoutExpired = "checkout.session.expired"
	// EventPaymentFailed: a payment attempt failed (a declined card); the
	// Checkout Session stays open for another card until it is expired. A fee's
	// payment (metadata.fee, ChargeFee) failing is payments.EventFeeFailed instead.
	EventPaymentFailed = "payment_intent.payment_failed"
	// EventPaymentSucceeded: a payment succeeded; only a fee's (metadata.fee) is
	// classified (payments.EventFeeCharged): a checkout's is read from the session's
	// events.
	EventPaymentSucceeded = "payment_intent.succeeded"
	// EventAccountUpdated: a connected account changed (charges or payouts
	// enabled, requirements due).
	EventAccountUpdated = "account.updated"
	// EventAccountDeauthorized: a connected account disconnected from the
	// platform.
	EventAccountDeauthorized = "account.application.deauthorized"
)

// A Checkout Session's payment_status values.
const (
	PaymentPaid              = "paid"
	PaymentUnpaid            = "unpaid"
	PaymentNoPaymentRequired = "no_payment_required"
)

// A Checkout Session's status values.
const (
	sessionOpen     = "open"
	sessionComplete = "complete"
	sessionExpired  = "expired"
)

// eventKind classifies a Stripe event for the ledger. paymentStatus is the
// session's payment_status (checkout.session.* events only); fee is the payment's or
// the session's metadata.fee (a fee's: only its payment's success or failure counts).
func eventKind(typ, paymentStatus string, fee payments.FeeKind) payments.EventKind {
	if fee != "" {
		switch typ {
		case EventPaymentSucceeded:
			return payments.EventFeeCharged
		case EventPaymentFailed:
			return payments.EventFeeFailed
		}
		return payments.EventOther
	}
	switch typ {
	case EventCheckoutCompleted:
		if paid(paymentStatus) {
			return payments.EventPaid
		}
		return payments.EventPending
	case EventCheckoutAsyncSucceeded:
		return payments.EventPaid
	case EventCheckoutExpired, EventCheckoutAsyncFailed:
		return payments.EventExpired
	case EventPaymentFailed:
		return payments.EventFailed
	case EventAccountUpdated, EventAccountDeauthorized:
		return payments.EventAccountChanged
	}
	return payments.EventOther
}

// sessionState translates a Checkout Session's status and payment_status.
// An unknown status reads as open: the ledger then waits for an event or a
// later read rather than act on it.
func sessionState(status, paymentStatus string) payments.SessionState {
	switch status {
	case sessionComplete:
		if paid(paymentStatus) {
			return payments.SessionPaid
		}
		return payments.SessionPending
	case sessionExpired:
		return payments.SessionExpired
	}
	return payments.SessionOpen
}

func paid(paymentStatus string) bool {
	return paymentStatus == PaymentPaid || paymentStatus == PaymentNoPaymentRequired
}

// ParseEvent verifies a webhook body against its Stripe-Signature header and
// decodes it. It tries each secret in turn, so that both the old and the new
// endpoint secret are accepted while one is rotated; empty secrets are
// skipped. A zero (or negative) tolerance means DefaultWebhookTolerance.
//
// The event's Kind says what it means to the ledger (see eventKind) and its Payload,
// which the ledger stores, is what ParseEvent read of payload and nothing else (see
// storedEvent): no customer's or account owner's details. It reads, through
// ParseEvent, as the same event. Account is the connected
// account the event came from
// (the signed event's "account"; "" for the platform's own events), and an account
// change carries the account's new state (AccountState).
//
// It returns an error wrapping payments.ErrBadSignature (and the webhook package's
// reason) for a bad, missing or stale signature, and one wrapping
// payments.ErrBadPayload for a signed body that does not decode.
func ParseEvent(payload []byte, sigHeader string, secrets []string, tolerance time.Duration) (payments.Event, error) {
	if tolerance <= 0 {
		tolerance = DefaultWebhookTolerance
	}
	opts := webhook.ConstructEventOptions{
		Tolerance: tolerance,
		// stripe-go v76 refuses events rendered with any API version but
		// its own (2023-10-16), and the endpoint's version is set in the
		// Stripe dashboard, not here. Accepting others is safe for us: the
		// signature is checked before the version, so verification is
		// unaffected, and we read only id, type, created and a handful of
		// checkout.session and payment_intent fields (metadata,
		// client_reference_id, status, payment_status, payment_intent,
		// amount_total/amount, currency; an account's charges_enabled,
		// payouts_enabled, details_submitted, requirements.currently_due; the
		// event's account) that have kept their names and shapes in every API
		// version since 2020. We decode those into our
		// own small structs, never into stripe-go's typed objects.
		IgnoreAPIVersionMismatch: true,
	}
	var lastErr error
	for _, secret := range secrets {
		if secret == "" {
			continue
		}
		ev, err := webhook.ConstructEventWithOptions(payload, sigHeader, secret, opts)
		if err == nil {
			return decodeEvent(ev)
		}
		if !signatureError(err) {
			// The signature matched; the JSON did not decode.
			return payments.Event{}, fmt.Errorf("%w: %w", payments.ErrBadPayload, err)
		}
		lastErr = err
	}
	if lastErr == nil {
		return payments.Event{}, fmt.Errorf("%w: no webhook secret configured", payments.ErrBadSignature)
	}
	return payments.Event{}, fmt.Errorf("%w: %w", payments.ErrBadSignature, lastErr)
}

func signatureError(err error) bool {
	return errors.Is(err, webhook.ErrNotSigned) ||
		errors.Is(err, webhook.ErrInvalidHeader) ||
		errors.Is(err, webhook.ErrNoValidSignature) ||
		errors.Is(err, webhook.ErrTooOld)
}

// sessionObject holds the checkout.session fields we read; they are what a stored event
// keeps of the session (storedEvent), under these names. Object is the object's kind.
type sessionObject struct {
	ID                string            `json:"id"`
	Object            string            `json:"object"`
	ClientReferenceID string            `json:"client_reference_id"`
	Metadata          map[string]string `json:"metadata"`
	PaymentIntent     json.RawMessage   `json:"payment_intent"`
	PaymentStatus     string            `json:"payment_status"`
	AmountTotal       int64             `json:"amount_total"`
	Currency          string            `json:"currency"`
}

// accountObject holds the account fields we read (account.updated), which a stored
// event keeps of the account.
type accountObject struct {
	ID               string `json:"id"`
	Object           string `json:"object"`
	ChargesEnabled   bool   `json:"charges_enabled"`
	PayoutsEnabled   bool   `json:"payouts_enabled"`
	DetailsSubmitted bool   `json:"details_submitted"`
	Requirements     *struct {
		CurrentlyDue []string `json:"currently_due"`
	} `json:"requirements"`
}

// paymentIntentObject holds the payment_intent fields we read, which a stored event
// keeps of the payment intent.
type paymentIntentObject struct {
	ID       string            `json:"id"`
	Object   string            `json:"object"`
	Metadata map[string]string `json:"metadata"`
	Amount   int64             `json:"amount"`
	Currency string            `json:"currency"`
}

func decodeEvent(se stripego.Event) (payments.Event, error) {
	ev := payments.Event{
		ID:         se.ID,
		Type:       string(se.Type),
		Created:    unixTime(se.Created),
		APIVersion: se.APIVersion,
		Livemode:   se.Livemode,
		Account:    se.Account,
	}
	var stored any // what is read of data.object, kept in the stored payload
	var paymentStatus string
	if se.ID == "" || se.Type == "" {
		return payments.Event{}, fmt.Errorf("%w: event without id or type", payments.ErrBadPayload)
	}
	var raw []byte
	if se.Data != nil {
		raw = se.Data.Raw
	}
	switch {
	case strings.HasPrefix(ev.Type, "checkout.session."):
		var o sessionObject
		if err := decodeObject(raw, &o); err != nil {
			return payments.Event{}, fmt.Errorf("%w: event %s: checkout session: %w", payments.ErrBadPayload, ev.ID, err)
		}
		pi, err := objectID(o.PaymentIntent)
		if err != nil {
			return payments.Event{}, fmt.Errorf("%w: event %s: payment_intent: %w", payments.ErrBadPayload, ev.ID, err)
		}
		// An expanded payment intent is kept as its id: its fields (a receipt email,
		// the card's billing details) are not read.
		o.PaymentIntent = nil
		if pi != "" {
			o.PaymentIntent, _ = json.Marshal(pi)
		}
		stored = o
		ev.BookingID = cmp.Or(o.Metadata["booking_id"], o.ClientReferenceID)
		// A fee's checkout (CheckoutRequest.Fee): its payment's event tells the fee's
		// outcome; the session's own events are not the booking's payment.
		ev.Fee = payments.FeeKind(o.Metadata["fee"])
		ev.SessionID = o.ID
		ev.PaymentIntentID = pi
		paymentStatus = o.PaymentStatus
		ev.AmountTotal = o.AmountTotal
		ev.Currency = o.Currency
	case strings.HasPrefix(ev.Type, "payment_intent."):
		var o paymentIntentObject
		if err := decodeObject(raw, &o); err != nil {
			return payments.Event{}, fmt.Errorf("%w: event %s: payment intent: %w", payments.ErrBadPayload, ev.ID, err)
		}
		stored = o
		ev.BookingID = o.Metadata["booking_id"]
		ev.Fee = payments.FeeKind(o.Metadata["fee"])
		ev.PaymentIntentID = o.ID
		ev.AmountTotal = o.Amount
		ev.Currency = o.Currency
	case ev.Type == EventAccountUpdated:
		var o accountObject
		if err := decodeObject(raw, &o); err != nil {
			return payments.Event{}, fmt.Errorf("%w: event %s: account: %w", payments.ErrBadPayload, ev.ID, err)
		}
		if o.ID == "" || (ev.Account != "" && o.ID != ev.Account) {
			return payments.Event{}, fmt.Errorf("%w: event %s: the account changed is not the event's account", payments.ErrBadPayload, ev.ID)
		}
		stored = o
		st := &payments.Account{ID: o.ID, ChargesEnabled: o.ChargesEnabled, PayoutsEnabled: o.PayoutsEnabled, DetailsSubmitted: o.DetailsSubmitted}
		if o.Requirements != nil {
			st.RequirementsDue = append([]string{}, o.Requirements.CurrentlyDue...)
		}
		ev.AccountState = st
	case ev.Type == EventAccountDeauthorized:
		// data.object is the platform's application, not the account: the event's
		// account is the one that left.
		if ev.Account == "" {
			return payments.Event{}, fmt.Errorf("%w: event %s: a deauthorization names no account", payments.ErrBadPayload, ev.ID)
		}
		ev.AccountState = &payments.Account{ID: ev.Account, Disconnected: true}
	}
	if stored == nil {
		// Another type's object, when it is one (raw is the value as sent: an object
		// starts with its brace); null and other values are not kept.
		var o otherObject
		if len(raw) > 0 && raw[0] == '{' && json.Unmarshal(raw, &o) == nil {
			stored = o
		}
	}
	ev.Payload = storedPayload(se, stored)
	ev.Kind = eventKind(ev.Type, paymentStatus, ev.Fee)
	return ev, nil
}

func decodeObject(raw []byte, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		return errors.New("data.object is missing")
	}
	return json.Unmarshal(raw, v)
}

// objectID reads a field that Stripe sends either as an id string or, when
// expanded, as an object with an id; null or absent gives "".
func objectID(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var id string
	if err := json.Unmarshal(raw, &id); err == nil {
		return id, nil
	}
	var obj struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return "", err
	}
	return obj.ID, nil
}
