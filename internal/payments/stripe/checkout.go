package stripe

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"
	"unicode/utf8"

	stripego "github.com/stripe/stripe-go/v76"

	"github.com/slotrecovery/slotrecovery/internal/payments"
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

// CreateCheckout creates a Checkout Session in payment mode for one booking,
// paid by card only.
//
// The idempotency key is derived from the booking id and ExpiresAt (and the
// account), so a retry with the same expiry (after a timeout, or by a re-run job)
// returns the session the first call created rather than a second payment link for
// the same booking; a request with a later expiry is a new key, and so may make a
// second session.
//
// With r.Account the session is made on that connected account (Stripe-Account):
// a direct charge, the shop's own payment, carrying the platform's application fee
// (r.FeeBPS, rounded by ApplicationFee) as payment_intent_data.application_fee_amount.
func (c *Client) CreateCheckout(ctx context.Context, r payments.CheckoutRequest) (payments.Checkout, error) {
	if err := c.validateCheckout(r); err != nil {
		return payments.Checkout{}, fmt.Errorf("create checkout for booking %s: %w", r.BookingID, err)
	}
	var fee int64
	if r.Account != "" {
		fee = ApplicationFee(r.AmountCents, r.Currency, r.FeeBPS)
	}
	if r.Mode == payments.CheckoutCardOnly {
		return c.createCardOnly(ctx, r)
	}
	params := &stripego.CheckoutSessionParams{
		Mode: stripego.String(string(stripego.CheckoutSessionModePayment)),
		LineItems: []*stripego.CheckoutSessionLineItemParams{{
			PriceData: &stripego.CheckoutSessionLineItemPriceDataParams{
				Currency:   stripego.String(r.Currency),
				UnitAmount: stripego.Int64(r.AmountCents),
				ProductData: &stripego.CheckoutSessionLineItemPriceDataProductDataParams{
					Name: stripego.String(r.Description),
				},
			},
			Quantity: stripego.Int64(1),
		}},
		// Card only: a card payment succeeds or fails while the customer is on
		// the page. Bank debits and vouchers settle days later, long after the
		// 30-minute hold has given the slot to someone else, so they are not
		// offered (the dashboard's default methods could include them).
		PaymentMethodTypes: stripego.StringSlice([]string{"card"}),
		ClientReferenceID:  stripego.String(r.BookingID),
		PaymentIntentData: &stripego.CheckoutSessionPaymentIntentDataParams{
			Metadata: map[string]string{"booking_id": r.BookingID},
		},
		ExpiresAt:  stripego.Int64(r.ExpiresAt.Unix()),
		SuccessURL: stripego.String(r.SuccessURL),
	}
	if r.CancelURL != "" {
		params.CancelURL = stripego.String(r.CancelURL)
	}
	if r.Locale != "" {
		params.Locale = stripego.String(r.Locale)
	}
	if fee > 0 {
		// Stripe refuses a zero fee on some accounts; no fee is no parameter.
		params.PaymentIntentData.ApplicationFeeAmount = stripego.Int64(fee)
	}
	if r.KeepCard {
		// The card is kept on the shop's account, attached to a customer made for it,
		// for a fee charged later without the customer; Checkout asks their consent.
		params.PaymentIntentData.SetupFutureUsage = stripego.String(string(stripego.PaymentIntentSetupFutureUsageOffSession))
		params.CustomerCreation = stripego.String(string(stripego.CheckoutSessionCustomerCreationAlways))
	}
	if r.Policy != "" {
		params.CustomText = &stripego.CheckoutSessionCustomTextParams{
			Submit: &stripego.CheckoutSessionCustomTextSubmitParams{Message: stripego.String(r.Policy)}}
	}
	params.Context = ctx
	params.AddMetadata("booking_id", r.BookingID)
	params.SetIdempotencyKey(checkoutIdempotencyKey(r.BookingID, r.ExpiresAt, r.Account))
	if r.Fee != "" {
		// A fee the customer pays themselves: its events are the fee's, and its key
		// the fee's (a booking's own checkout and its fee's are two requests).
		params.AddMetadata("fee", string(r.Fee))
		params.PaymentIntentData.Metadata["fee"] = string(r.Fee)
		params.SetIdempotencyKey(withAccount("checkout:fee:"+string(r.Fee)+":"+r.BookingID+":"+fmt.Sprint(r.ExpiresAt.Unix()), r.Account))
	}
	onAccount(&params.Params, r.Account)

	s, err := c.api.CheckoutSessions.New(params)
	if err != nil {
		return payments.Checkout{}, fmt.Errorf("create checkout for booking %s: %w", r.BookingID, translate(err))
	}
	out := payments.Checkout{SessionID: s.ID, URL: s.URL, ExpiresAt: unixTime(s.ExpiresAt),
		Account: r.Account, ApplicationFeeCents: fee}
	if s.PaymentIntent != nil {
		out.PaymentIntentID = s.PaymentIntent.ID
	}
	return out, nil
}

// checkoutIdempotencyKey derives the key from the booking and its stored expiry: a retry
// with the same expiry replays Stripe's first answer, and a booking whose first attempt
// never reached Stripe in time can move to a later expiry under a new key (Stripe refuses
// an expiry less than 30 minutes ahead). A connected account's checkout adds the
// account: the same booking on another account is another request. The platform's keys
// are as they always were, so a retry across an upgrade replays its first answer.
func checkoutIdempotencyKey(bookingID string, expiresAt time.Time, account string) string {
	return withAccount("checkout:"+bookingID+":"+strconv.FormatInt(expiresAt.Unix(), 10), account)
}

// refundIdempotencyKey is per payment, not per booking: a booking may have to refund
// two payments (a late one, and one made through an orphan session).
func refundIdempotencyKey(bookingID, paymentIntentID, account string) string {
	return withAccount("refund:"+bookingID+":"+paymentIntentID, account)
}

func withAccount(key, account string) string {
	if account == "" {
		return key
	}
	return key + ":" + account
}

// onAccount makes a request on a connected account (Stripe-Account); "" is the
// platform's own.
func onAccount(p interface{ SetStripeAccount(string) }, account string) {
	if account != "" {
		p.SetStripeAccount(account)
	}
}

// maxIdempotencyKeyLen is Stripe's limit on an Idempotency-Key.
const maxIdempotencyKeyLen = 255

func (c *Client) validateCheckout(r payments.CheckoutRequest) error {
	if err := validateBookingID(r.BookingID); err != nil {
		return err
	}
	switch r.Mode {
	case payments.CheckoutPay:
		if r.AmountCents <= 0 {
			return fmt.Errorf("%w: amount %d is not positive", payments.ErrInvalid, r.AmountCents)
		}
	case payments.CheckoutCardOnly:
		if r.AmountCents != 0 || r.FeeBPS != 0 {
			return fmt.Errorf("%w: a card-only checkout charges nothing: amount %d, fee %d basis points", payments.ErrInvalid, r.AmountCents, r.FeeBPS)
		}
	default:
		return fmt.Errorf("%w: checkout mode %q is not one we make", payments.ErrInvalid, r.Mode)
	}
	if (r.KeepCard || r.Mode == payments.CheckoutCardOnly) && r.Account == "" {
		// Cards live on the shop's own account: one kept on the platform could not be
		// charged for the shop without cloning it there.
		return fmt.Errorf("%w: a card is kept only on a connected account", payments.ErrInvalid)
	}
	if n := utf8.RuneCountInString(r.Policy); n > payments.MaxPolicyLen {
		return fmt.Errorf("%w: the policy has %d characters, more than stripe shows (%d)", payments.ErrInvalid, n, payments.MaxPolicyLen)
	}
	if !validCurrency(r.Currency) {
		return fmt.Errorf("%w: currency %q is not a lower-case ISO 4217 code", payments.ErrInvalid, r.Currency)
	}
	if r.Description == "" {
		return fmt.Errorf("%w: description is required", payments.ErrInvalid)
	}
	if r.Account == "" && r.FeeBPS != 0 {
		return fmt.Errorf("%w: an application fee needs a connected account", payments.ErrInvalid)
	}
	if r.FeeBPS < 0 || r.FeeBPS > maxFeeBPS {
		return fmt.Errorf("%w: application fee of %d basis points is outside 0 to %d", payments.ErrInvalid, r.FeeBPS, maxFeeBPS)
	}
	if err := validateAccount(r.Account); err != nil {
		return err
	}
	if r.ExpiresAt.IsZero() {
		return fmt.Errorf("%w: expiry time is required", payments.ErrInvalid)
	}
	ahead := r.ExpiresAt.Sub(c.now())
	if ahead < MinCheckoutExpiry || ahead > MaxCheckoutExpiry {
		return fmt.Errorf("%w: expiry %s is %s ahead, outside stripe's %s to %s",
			payments.ErrInvalid, r.ExpiresAt.UTC().Format(time.RFC3339), ahead.Round(time.Second), MinCheckoutExpiry, MaxCheckoutExpiry)
	}
	if !absoluteURL(r.SuccessURL) {
		return fmt.Errorf("%w: success url %q is not an absolute http(s) url", payments.ErrInvalid, r.SuccessURL)
	}
	if r.CancelURL != "" && !absoluteURL(r.CancelURL) {
		return fmt.Errorf("%w: cancel url %q is not an absolute http(s) url", payments.ErrInvalid, r.CancelURL)
	}
	return nil
}

func validateBookingID(id string) error {
	if id == "" {
		return fmt.Errorf("%w: booking id is required", payments.ErrInvalid)
	}
	if len(id) > maxBookingIDLen {
		return fmt.Errorf("%w: booking id is longer than %d bytes", payments.ErrInvalid, maxBookingIDLen)
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

// ExpireCheckout ends an open Checkout Session, made on account ("" for the
// platform's own), so that it can no longer be paid, before the slot is offered
// to someone else. An already expired session counts as success. If the customer
// has already paid, it returns payments.ErrAlreadyCompleted and the booking must
// stand.
func (c *Client) ExpireCheckout(ctx context.Context, account, sessionID string) error {
	if sessionID == "" {
		return fmt.Errorf("expire checkout: %w: session id is required", payments.ErrInvalid)
	}
	if err := validateAccount(account); err != nil {
		return fmt.Errorf("expire checkout %s: %w", sessionID, err)
	}
	params := &stripego.CheckoutSessionExpireParams{}
	params.Context = ctx
	onAccount(&params.Params, account)
	_, err := c.api.CheckoutSessions.Expire(sessionID, params)
	if err == nil {
		return nil
	}
	// Stripe answers invalid_request_error for a session that is not open
	// any more, whether it completed or expired. Its status tells which; the
	// message text is not an API.
	var se *stripego.Error
	if !errors.As(err, &se) || se.Type != stripego.ErrorTypeInvalidRequest {
		return fmt.Errorf("expire checkout %s: %w", sessionID, translate(err))
	}
	s, gerr := c.GetCheckout(ctx, account, sessionID)
	if gerr != nil {
		// The read-back decides whether a retry can help, so it is the
		// error wrapped; the refusal is kept in the message.
		return fmt.Errorf("expire checkout %s: refused (%v), then %w", sessionID, translate(err), gerr)
	}
	switch s.State {
	case payments.SessionPaid, payments.SessionPending:
		// Completed: paid, or paid with a method that settles later.
		return fmt.Errorf("expire checkout %s: %w", sessionID, payments.ErrAlreadyCompleted)
	case payments.SessionExpired:
		return nil
	}
	return fmt.Errorf("expire checkout %s (%s): %w", sessionID, s.State, translate(err))
}

// GetCheckout reads a Checkout Session, made on account ("" for the platform's
// own), back from Stripe.
func (c *Client) GetCheckout(ctx context.Context, account, sessionID string) (payments.Session, error) {
	if sessionID == "" {
		return payments.Session{}, fmt.Errorf("get checkout: %w: session id is required", payments.ErrInvalid)
	}
	if err := validateAccount(account); err != nil {
		return payments.Session{}, fmt.Errorf("get checkout %s: %w", sessionID, err)
	}
	params := &stripego.CheckoutSessionParams{}
	params.Context = ctx
	onAccount(&params.Params, account)
	s, err := c.api.CheckoutSessions.Get(sessionID, params)
	if err != nil {
		return payments.Session{}, fmt.Errorf("get checkout %s: %w", sessionID, translate(err))
	}
	out := payments.Session{
		ID:          s.ID,
		State:       sessionState(string(s.Status), string(s.PaymentStatus)),
		BookingID:   cmp.Or(s.Metadata["booking_id"], s.ClientReferenceID),
		URL:         s.URL,
		ExpiresAt:   unixTime(s.ExpiresAt),
		AmountTotal: s.AmountTotal,
		Currency:    string(s.Currency),
	}
	if s.PaymentIntent != nil {
		out.PaymentIntentID = s.PaymentIntent.ID
	}
	return out, nil
}

// Refund refunds one payment of a booking in full, on the account that took it
// (r.Account, "" for the platform's own), and returns the refund id. The
// idempotency key is derived from the booking and the PaymentIntent
// ("refund:<booking>:<payment_intent>", and the account), so a retry within
// Stripe's 24 hours cannot refund twice, and a booking's second payment gets its
// own refund. r.RefundApplicationFee gives the platform's fee back too. If Stripe
// answers that the payment is refunded already (a retry after the key expired, or
// a refund made by hand), the existing refund is read back and its id returned:
// that is success, not an error.
func (c *Client) Refund(ctx context.Context, r payments.RefundRequest) (refundID string, err error) {
	bookingID, paymentIntentID := r.BookingID, r.PaymentIntentID
	if err := validateBookingID(bookingID); err != nil {
		return "", fmt.Errorf("refund booking %s: %w", bookingID, err)
	}
	if paymentIntentID == "" {
		return "", fmt.Errorf("refund booking %s: %w: payment intent id is required", bookingID, payments.ErrInvalid)
	}
	if err := validateAccount(r.Account); err != nil {
		return "", fmt.Errorf("refund booking %s: %w", bookingID, err)
	}
	if r.RefundApplicationFee && r.Account == "" {
		return "", fmt.Errorf("refund booking %s: %w: only a connected account's payment has an application fee", bookingID, payments.ErrInvalid)
	}
	key := refundIdempotencyKey(bookingID, paymentIntentID, r.Account)
	if len(key) > maxIdempotencyKeyLen {
		return "", fmt.Errorf("refund booking %s: %w: payment intent id is too long", bookingID, payments.ErrInvalid)
	}
	params := &stripego.RefundParams{PaymentIntent: stripego.String(paymentIntentID)}
	if r.RefundApplicationFee {
		params.RefundApplicationFee = stripego.Bool(true)
	}
	params.Context = ctx
	params.AddMetadata("booking_id", bookingID)
	params.SetIdempotencyKey(key)
	onAccount(&params.Params, r.Account)
	rf, err := c.api.Refunds.New(params)
	if err == nil {
		return rf.ID, nil
	}
	var se *stripego.Error
	if !errors.As(err, &se) || se.Code != stripego.ErrorCodeChargeAlreadyRefunded {
		return "", fmt.Errorf("refund booking %s: %w", bookingID, translate(err))
	}
	id, lerr := c.existingRefund(ctx, r.Account, paymentIntentID)
	if lerr != nil {
		return "", fmt.Errorf("refund booking %s: already refunded (%v), then %w", bookingID, translate(err), lerr)
	}
	return id, nil
}

// existingRefund returns the newest refund of a payment that Stripe reports as
// refunded already.
func (c *Client) existingRefund(ctx context.Context, account, paymentIntentID string) (string, error) {
	params := &stripego.RefundListParams{PaymentIntent: stripego.String(paymentIntentID)}
	params.Context = ctx
	onAccount(&params.ListParams, account)
	params.Limit = stripego.Int64(10)
	it := c.api.Refunds.List(params)
	for it.Next() {
		r := it.Refund()
		if r.Status != stripego.RefundStatusFailed && r.Status != stripego.RefundStatusCanceled {
			return r.ID, nil
		}
	}
	if err := it.Err(); err != nil {
		return "", fmt.Errorf("list refunds of %s: %w", paymentIntentID, translate(err))
	}
	return "", fmt.Errorf("list refunds of %s: %w: none found", paymentIntentID, payments.ErrNotFound)
}

func unixTime(sec int64) time.Time {
	if sec == 0 {
		return time.Time{}
	}
	return time.Unix(sec, 0).UTC()
}
