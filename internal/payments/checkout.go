package payments

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/stripe/stripe-go/v76"
)

// Stripe's limits on a Checkout Session's expires_at, counted from when the
// request reaches Stripe.
const (
	// MinCheckoutExpiry is the earliest a session may expire.
	MinCheckoutExpiry = 30 * time.Minute
	// MaxCheckoutExpiry is the latest a session may expire.
	MaxCheckoutExpiry = 24 * time.Hour
)

// maxBookingIDLen keeps the booking id within Stripe's limits:
// client_reference_id holds 200 characters and an idempotency key 255.
const maxBookingIDLen = 200

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

// CreateCheckout creates a Checkout Session in payment mode for one booking,
// paid by card only.
//
// The idempotency key is derived from the booking id and ExpiresAt, so a retry
// with the same expiry (after a timeout, or by a re-run job) returns the
// session the first call created rather than a second payment link for the
// same booking; a request with a later expiry is a new key, and so may make a
// second session.
func (c *Client) CreateCheckout(ctx context.Context, r CheckoutRequest) (Checkout, error) {
	if err := c.validateCheckout(r); err != nil {
		return Checkout{}, fmt.Errorf("create checkout for booking %s: %w", r.BookingID, err)
	}
	params := &stripe.CheckoutSessionParams{
		Mode: stripe.String(string(stripe.CheckoutSessionModePayment)),
		LineItems: []*stripe.CheckoutSessionLineItemParams{{
			PriceData: &stripe.CheckoutSessionLineItemPriceDataParams{
				Currency:   stripe.String(r.Currency),
				UnitAmount: stripe.Int64(r.AmountCents),
				ProductData: &stripe.CheckoutSessionLineItemPriceDataProductDataParams{
					Name: stripe.String(r.Description),
				},
			},
			Quantity: stripe.Int64(1),
		}},
		// Card only: a card payment succeeds or fails while the customer is on
		// the page. Bank debits and vouchers settle days later, long after the
		// 30-minute hold has given the slot to someone else, so they are not
		// offered (the dashboard's default methods could include them).
		PaymentMethodTypes: stripe.StringSlice([]string{"card"}),
		ClientReferenceID:  stripe.String(r.BookingID),
		PaymentIntentData: &stripe.CheckoutSessionPaymentIntentDataParams{
			Metadata: map[string]string{"booking_id": r.BookingID},
		},
		ExpiresAt:  stripe.Int64(r.ExpiresAt.Unix()),
		SuccessURL: stripe.String(r.SuccessURL),
	}
	if r.CancelURL != "" {
		params.CancelURL = stripe.String(r.CancelURL)
	}
	params.Context = ctx
	params.AddMetadata("booking_id", r.BookingID)
	params.SetIdempotencyKey(checkoutIdempotencyKey(r.BookingID, r.ExpiresAt))

	s, err := c.api.CheckoutSessions.New(params)
	if err != nil {
		return Checkout{}, fmt.Errorf("create checkout for booking %s: %w", r.BookingID, translate(err))
	}
	out := Checkout{SessionID: s.ID, URL: s.URL, ExpiresAt: unixTime(s.ExpiresAt)}
	if s.PaymentIntent != nil {
		out.PaymentIntentID = s.PaymentIntent.ID
	}
	return out, nil
}

// checkoutIdempotencyKey derives the key from the booking and its stored expiry: a retry
// with the same expiry replays Stripe's first answer, and a booking whose first attempt
// never reached Stripe in time can move to a later expiry under a new key (Stripe refuses
// an expiry less than 30 minutes ahead).
func checkoutIdempotencyKey(bookingID string, expiresAt time.Time) string {
	return "checkout:" + bookingID + ":" + strconv.FormatInt(expiresAt.Unix(), 10)
}

// refundIdempotencyKey is per payment, not per booking: a booking may have to refund
// two payments (a late one, and one made through an orphan session).
func refundIdempotencyKey(bookingID, paymentIntentID string) string {
	return "refund:" + bookingID + ":" + paymentIntentID
}

// maxIdempotencyKeyLen is Stripe's limit on an Idempotency-Key.
const maxIdempotencyKeyLen = 255

func (c *Client) validateCheckout(r CheckoutRequest) error {
	if err := validateBookingID(r.BookingID); err != nil {
		return err
	}
	if r.AmountCents <= 0 {
		return fmt.Errorf("%w: amount %d is not positive", ErrInvalid, r.AmountCents)
	}
	if !validCurrency(r.Currency) {
		return fmt.Errorf("%w: currency %q is not a lower-case ISO 4217 code", ErrInvalid, r.Currency)
	}
	if r.Description == "" {
		return fmt.Errorf("%w: description is required", ErrInvalid)
	}
	if r.ExpiresAt.IsZero() {
		return fmt.Errorf("%w: expiry time is required", ErrInvalid)
	}
	ahead := r.ExpiresAt.Sub(c.now())
	if ahead < MinCheckoutExpiry || ahead > MaxCheckoutExpiry {
		return fmt.Errorf("%w: expiry %s is %s ahead, outside stripe's %s to %s",
			ErrInvalid, r.ExpiresAt.UTC().Format(time.RFC3339), ahead.Round(time.Second), MinCheckoutExpiry, MaxCheckoutExpiry)
	}
	if !absoluteURL(r.SuccessURL) {
		return fmt.Errorf("%w: success url %q is not an absolute http(s) url", ErrInvalid, r.SuccessURL)
	}
	if r.CancelURL != "" && !absoluteURL(r.CancelURL) {
		return fmt.Errorf("%w: cancel url %q is not an absolute http(s) url", ErrInvalid, r.CancelURL)
	}
	return nil
}

func validateBookingID(id string) error {
	if id == "" {
		return fmt.Errorf("%w: booking id is required", ErrInvalid)
	}
	if len(id) > maxBookingIDLen {
		return fmt.Errorf("%w: booking id is longer than %d bytes", ErrInvalid, maxBookingIDLen)
	}
	return nil
}

func validCurrency(s string) bool {
	if len(s) != 3 {
		return false
	}
	for _, r := range s {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return true
}

func absoluteURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// ExpireCheckout ends an open Checkout Session so that it can no longer be
// paid, before the slot is offered to someone else. An already expired
// session counts as success. If the customer has already paid, it returns
// ErrAlreadyCompleted and the booking must stand.
func (c *Client) ExpireCheckout(ctx context.Context, sessionID string) error {
	if sessionID == "" {
		return fmt.Errorf("expire checkout: %w: session id is required", ErrInvalid)
	}
	params := &stripe.CheckoutSessionExpireParams{}
	params.Context = ctx
	_, err := c.api.CheckoutSessions.Expire(sessionID, params)
	if err == nil {
		return nil
	}
	// Stripe answers invalid_request_error for a session that is not open
	// any more, whether it completed or expired. Its status tells which; the
	// message text is not an API.
	var se *stripe.Error
	if !errors.As(err, &se) || se.Type != stripe.ErrorTypeInvalidRequest {
		return fmt.Errorf("expire checkout %s: %w", sessionID, translate(err))
	}
	s, gerr := c.GetCheckout(ctx, sessionID)
	if gerr != nil {
		// The read-back decides whether a retry can help, so it is the
		// error wrapped; the refusal is kept in the message.
		return fmt.Errorf("expire checkout %s: refused (%v), then %w", sessionID, translate(err), gerr)
	}
	switch s.Status {
	case SessionComplete:
		return fmt.Errorf("expire checkout %s: %w", sessionID, ErrAlreadyCompleted)
	case SessionExpired:
		return nil
	}
	return fmt.Errorf("expire checkout %s (status %s): %w", sessionID, s.Status, translate(err))
}

// GetCheckout reads a Checkout Session back from Stripe.
func (c *Client) GetCheckout(ctx context.Context, sessionID string) (Session, error) {
	if sessionID == "" {
		return Session{}, fmt.Errorf("get checkout: %w: session id is required", ErrInvalid)
	}
	params := &stripe.CheckoutSessionParams{}
	params.Context = ctx
	s, err := c.api.CheckoutSessions.Get(sessionID, params)
	if err != nil {
		return Session{}, fmt.Errorf("get checkout %s: %w", sessionID, translate(err))
	}
	out := Session{
		ID:            s.ID,
		Status:        string(s.Status),
		PaymentStatus: string(s.PaymentStatus),
		BookingID:     cmp.Or(s.Metadata["booking_id"], s.ClientReferenceID),
		URL:           s.URL,
		ExpiresAt:     unixTime(s.ExpiresAt),
		AmountTotal:   s.AmountTotal,
		Currency:      string(s.Currency),
	}
	if s.PaymentIntent != nil {
		out.PaymentIntentID = s.PaymentIntent.ID
	}
	return out, nil
}

// Refund refunds one payment of a booking in full and returns the refund id.
// The idempotency key is derived from the booking and the PaymentIntent
// ("refund:<booking>:<payment_intent>"), so a retry within Stripe's 24 hours
// cannot refund twice, and a booking's second payment gets its own refund.
// If Stripe answers that the payment is refunded already (a retry after the
// key expired, or a refund made by hand), the existing refund is read back
// and its id returned: that is success, not an error.
func (c *Client) Refund(ctx context.Context, paymentIntentID, bookingID string) (refundID string, err error) {
	if err := validateBookingID(bookingID); err != nil {
		return "", fmt.Errorf("refund booking %s: %w", bookingID, err)
	}
	if paymentIntentID == "" {
		return "", fmt.Errorf("refund booking %s: %w: payment intent id is required", bookingID, ErrInvalid)
	}
	key := refundIdempotencyKey(bookingID, paymentIntentID)
	if len(key) > maxIdempotencyKeyLen {
		return "", fmt.Errorf("refund booking %s: %w: payment intent id is too long", bookingID, ErrInvalid)
	}
	params := &stripe.RefundParams{PaymentIntent: stripe.String(paymentIntentID)}
	params.Context = ctx
	params.AddMetadata("booking_id", bookingID)
	params.SetIdempotencyKey(key)
	r, err := c.api.Refunds.New(params)
	if err == nil {
		return r.ID, nil
	}
	var se *stripe.Error
	if !errors.As(err, &se) || se.Code != stripe.ErrorCodeChargeAlreadyRefunded {
		return "", fmt.Errorf("refund booking %s: %w", bookingID, translate(err))
	}
	id, lerr := c.existingRefund(ctx, paymentIntentID)
	if lerr != nil {
		return "", fmt.Errorf("refund booking %s: already refunded (%v), then %w", bookingID, translate(err), lerr)
	}
	return id, nil
}

// existingRefund returns the newest refund of a payment that Stripe reports as
// refunded already.
func (c *Client) existingRefund(ctx context.Context, paymentIntentID string) (string, error) {
	params := &stripe.RefundListParams{PaymentIntent: stripe.String(paymentIntentID)}
	params.Context = ctx
	params.Limit = stripe.Int64(10)
	it := c.api.Refunds.List(params)
	for it.Next() {
		r := it.Refund()
		if r.Status != stripe.RefundStatusFailed && r.Status != stripe.RefundStatusCanceled {
			return r.ID, nil
		}
	}
	if err := it.Err(); err != nil {
		return "", fmt.Errorf("list refunds of %s: %w", paymentIntentID, translate(err))
	}
	return "", fmt.Errorf("list refunds of %s: %w: none found", paymentIntentID, ErrNotFound)
}

func unixTime(sec int64) time.Time {
	if sec == 0 {
		return time.Time{}
	}
	return time.Unix(sec, 0).UTC()
}
