package payments

import "time"

// Checkout Session statuses, as in Session.Status and Event.SessionStatus.
const (
	SessionOpen     = "open"
	SessionComplete = "complete"
	SessionExpired  = "expired"
)

// Checkout Session payment statuses, as in Session.PaymentStatus and
// Event.PaymentStatus.
const (
	PaymentPaid              = "paid"
	PaymentUnpaid            = "unpaid"
	PaymentNoPaymentRequired = "no_payment_required"
)

// CheckoutRequest describes the payment for one booking.
type CheckoutRequest struct {
	// BookingID identifies the booking; it becomes the session's
	// client_reference_id and metadata.booking_id, the PaymentIntent's
	// metadata.booking_id, and (with ExpiresAt) the idempotency key.
	BookingID string
	// AmountCents is the price in the currency's smallest unit; positive.
	AmountCents int64
	// Currency is an ISO 4217 code in lower case, e.g. "usd".
	Currency string
	// Description names the line item the customer sees, e.g.
	// "Haircut at Joe's, Sat 22 Nov 15:00".
	Description string
	// ExpiresAt is when the session stops accepting payment: Stripe requires
	// 30 minutes to 24 hours ahead (pick 31 minutes for a quick turnover).
	// A retry must send the same value, so store it with the booking: Stripe
	// refuses an idempotency key reused with different parameters.
	ExpiresAt time.Time
	// SuccessURL is where Checkout sends the customer after paying.
	// Required.
	SuccessURL string
	// CancelURL is where Checkout's back button leads; optional.
	CancelURL string
}

// Checkout is a created Checkout Session.
type Checkout struct {
	// SessionID is the Checkout Session id (cs_…).
	SessionID string
	// URL is the payment page to send to the customer.
	URL string
	// PaymentIntentID is the PaymentIntent id (pi_…). Since API version
	// 2022-08-01 Stripe creates the PaymentIntent only when the customer
	// submits the form, so it is usually empty here; webhook events carry it.
	PaymentIntentID string
	// ExpiresAt is when the session expires, as Stripe reports it.
	ExpiresAt time.Time
}

// Session is a Checkout Session as read back from Stripe.
type Session struct {
	// ID is the Checkout Session id.
	ID string
	// Status is SessionOpen, SessionComplete or SessionExpired.
	Status string
	// PaymentStatus is PaymentPaid, PaymentUnpaid or PaymentNoPaymentRequired.
	PaymentStatus string
	// PaymentIntentID is the PaymentIntent id, empty until the customer pays.
	PaymentIntentID string
	// BookingID comes from metadata.booking_id, else client_reference_id.
	BookingID string
	// URL is the payment page; empty once the session is complete or expired.
	URL string
	// ExpiresAt is when the session expires.
	ExpiresAt time.Time
	// AmountTotal is the total in the currency's smallest unit.
	AmountTotal int64
	// Currency is the ISO 4217 code in lower case.
	Currency string
}

// The event types the webhook acts on.
const (
	// EventCheckoutCompleted: the customer finished Checkout; the payment
	// is done when PaymentStatus is PaymentPaid, still pending otherwise.
	EventCheckoutCompleted = "checkout.session.completed"
	// EventCheckoutAsyncSucceeded: a delayed payment method succeeded.
	EventCheckoutAsyncSucceeded = "checkout.session.async_payment_succeeded"
	// EventCheckoutAsyncFailed: a delayed payment method failed.
	EventCheckoutAsyncFailed = "checkout.session.async_payment_failed"
	// EventCheckoutExpired: the session expired unpaid.
	EventCheckoutExpired = "checkout.session.expired"
	// EventPaymentFailed: a payment attempt failed; the Checkout Session
	// stays open for another card until it is expired.
	EventPaymentFailed = "payment_intent.payment_failed"
)

// Event is a verified Stripe webhook event with the fields the booking flow
// reads. The object fields are filled for checkout.session.* and
// payment_intent.* events and empty for other types.
type Event struct {
	// ID is the event id (evt_…), the key for deduplication.
	ID string
	// Type is the event type, e.g. EventCheckoutCompleted.
	Type string
	// Created is when Stripe created the event.
	Created time.Time
	// APIVersion is the API version the event was rendered with.
	APIVersion string
	// Livemode is false for test-mode events.
	Livemode bool

	// BookingID comes from the object's metadata.booking_id, else (for
	// Checkout Sessions) its client_reference_id.
	BookingID string
	// SessionID is the Checkout Session id, for checkout.session.* events.
	SessionID string
	// PaymentIntentID is the PaymentIntent id (possibly empty for a session
	// that was never paid).
	PaymentIntentID string
	// SessionStatus is the session's status (SessionOpen, SessionComplete,
	// SessionExpired), for checkout.session.* events.
	SessionStatus string
	// PaymentStatus is the session's payment status (PaymentPaid, …), for
	// checkout.session.* events.
	PaymentStatus string
	// AmountTotal is the session's amount_total or the PaymentIntent's amount.
	AmountTotal int64
	// Currency is the ISO 4217 code in lower case.
	Currency string
}
