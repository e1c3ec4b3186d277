package stripe

import (
	"context"
	"errors"
	"fmt"

	stripego "github.com/stripe/stripe-go/v76"

	"github.com/slotrecovery/slotrecovery/internal/payments"
)

// createCardOnly creates a Checkout Session in setup mode: nothing is charged, and the
// card the customer enters is kept on the shop's account (r.Account), attached to a
// customer made for it, for a fee later (CheckoutCardOnly). Its idempotency key is the
// payment checkout's with "card_only" in it: a booking's card-only checkout is another
// request than its payment.
func (c *Client) createCardOnly(ctx context.Context, r payments.CheckoutRequest) (payments.Checkout, error) {
	params := &stripego.CheckoutSessionParams{
		Mode:               stripego.String(string(stripego.CheckoutSessionModeSetup)),
		Currency:           stripego.String(r.Currency),
		PaymentMethodTypes: stripego.StringSlice([]string{"card"}),
		ClientReferenceID:  stripego.String(r.BookingID),
		CustomerCreation:   stripego.String(string(stripego.CheckoutSessionCustomerCreationAlways)),
		SetupIntentData: &stripego.CheckoutSessionSetupIntentDataParams{
			Description: stripego.String(r.Description),
			Metadata:    map[string]string{"booking_id": r.BookingID},
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
	if r.Policy != "" {
		params.CustomText = &stripego.CheckoutSessionCustomTextParams{
			Submit: &stripego.CheckoutSessionCustomTextSubmitParams{Message: stripego.String(r.Policy)}}
	}
	params.Context = ctx
	params.AddMetadata("booking_id", r.BookingID)
	params.SetIdempotencyKey(withAccount("checkout:card_only:"+r.BookingID+":"+fmt.Sprint(r.ExpiresAt.Unix()), r.Account))
	onAccount(&params.Params, r.Account)
	s, err := c.api.CheckoutSessions.New(params)
	if err != nil {
		return payments.Checkout{}, fmt.Errorf("create card-only checkout for booking %s: %w", r.BookingID, translate(err))
	}
	return payments.Checkout{SessionID: s.ID, URL: s.URL, ExpiresAt: unixTime(s.ExpiresAt), Account: r.Account}, nil
}

// KeptCard reads back the card a completed checkout on account kept (its customer and
// payment method on that account): what a fee is charged to. payments.ErrNotFound
// when the checkout kept none (not completed, or not asked to keep one).
func (c *Client) KeptCard(ctx context.Context, account, sessionID string) (payments.KeptCard, error) {
	if sessionID == "" || account == "" {
		return payments.KeptCard{}, fmt.Errorf("kept card: %w: session id and account are required", payments.ErrInvalid)
	}
	if err := validateAccount(account); err != nil {
		return payments.KeptCard{}, fmt.Errorf("kept card of %s: %w", sessionID, err)
	}
	params := &stripego.CheckoutSessionParams{}
	params.AddExpand("setup_intent")
	params.AddExpand("payment_intent")
	params.Context = ctx
	onAccount(&params.Params, account)
	s, err := c.api.CheckoutSessions.Get(sessionID, params)
	if err != nil {
		return payments.KeptCard{}, fmt.Errorf("kept card of %s: %w", sessionID, translate(err))
	}
	var out payments.KeptCard
	if s.Customer != nil {
		out.Customer = s.Customer.ID
	}
	switch {
	case s.SetupIntent != nil && s.SetupIntent.PaymentMethod != nil:
		out.PaymentMethod = s.SetupIntent.PaymentMethod.ID
	case s.PaymentIntent != nil && s.PaymentIntent.PaymentMethod != nil && s.PaymentIntent.SetupFutureUsage != "":
		out.PaymentMethod = s.PaymentIntent.PaymentMethod.ID
	}
	if out.Customer == "" || out.PaymentMethod == "" {
		return payments.KeptCard{}, fmt.Errorf("kept card of %s: %w: the checkout kept no card", sessionID, payments.ErrNotFound)
	}
	return out, nil
}

// ChargeFee charges a fee (a no-show's, a late cancellation's) to a card kept on the
// shop's account, without the customer: a PaymentIntent confirmed off-session, a
// direct charge on r.Account carrying the platform's application fee. The idempotency
// key is the booking's and the fee's kind ("fee:<kind>:<booking>", and the account):
// a retry, or two owners clicking at once, never charge a booking's fee twice.
//
// A decline is an answer, not an error: FeeDeclined with the bank's reason, or
// FeeRequiresAction when the bank wants the customer to confirm (Stripe's
// authentication_required), whose PaymentIntent the customer can complete themselves.
// An error is a call that failed (payments.Transient tells whether to retry).
func (c *Client) ChargeFee(ctx context.Context, r payments.FeeRequest) (payments.FeeCharge, error) {
	if err := validateFee(r); err != nil {
		return payments.FeeCharge{}, fmt.Errorf("charge %s fee of booking %s: %w", r.Kind, r.BookingID, err)
	}
	fee := ApplicationFee(r.AmountCents, r.Currency, r.FeeBPS)
	params := &stripego.PaymentIntentParams{
		Amount:             stripego.Int64(r.AmountCents),
		Currency:           stripego.String(r.Currency),
		Customer:           stripego.String(r.Card.Customer),
		PaymentMethod:      stripego.String(r.Card.PaymentMethod),
		PaymentMethodTypes: stripego.StringSlice([]string{"card"}),
		OffSession:         stripego.Bool(true),
		Confirm:            stripego.Bool(true),
		Description:        stripego.String(r.Description),
	}
	if fee > 0 {
		params.ApplicationFeeAmount = stripego.Int64(fee)
	}
	params.Context = ctx
	params.AddMetadata("booking_id", r.BookingID)
	params.AddMetadata("fee", string(r.Kind))
	params.SetIdempotencyKey(withAccount("fee:"+string(r.Kind)+":"+r.BookingID, r.Account))
	onAccount(&params.Params, r.Account)
	pi, err := c.api.PaymentIntents.New(params)
	if err != nil {
		var se *stripego.Error
		if !errors.As(err, &se) || se.Type != stripego.ErrorTypeCard {
			return payments.FeeCharge{}, fmt.Errorf("charge %s fee of booking %s: %w", r.Kind, r.BookingID, translate(err))
		}
		out := payments.FeeCharge{Outcome: payments.FeeDeclined, DeclineCode: string(se.DeclineCode), Message: se.Msg}
		if se.Code == stripego.ErrorCodeAuthenticationRequired {
			out.Outcome = payments.FeeRequiresAction
		}
		if out.DeclineCode == "" {
			out.DeclineCode = string(se.Code)
		}
		if se.PaymentIntent != nil {
			out.PaymentIntentID = se.PaymentIntent.ID
		}
		return out, nil
	}
	out := payments.FeeCharge{PaymentIntentID: pi.ID}
	switch pi.Status {
	case stripego.PaymentIntentStatusSucceeded, stripego.PaymentIntentStatusProcessing:
		out.Outcome, out.ApplicationFeeCents = payments.FeeCharged, fee
	case stripego.PaymentIntentStatusRequiresAction, stripego.PaymentIntentStatusRequiresConfirmation:
		out.Outcome = payments.FeeRequiresAction
	default:
		out.Outcome = payments.FeeDeclined
		if pi.LastPaymentError != nil {
			out.DeclineCode, out.Message = string(pi.LastPaymentError.DeclineCode), pi.LastPaymentError.Msg
		}
	}
	return out, nil
}

func validateFee(r payments.FeeRequest) error {
	if err := validateBookingID(r.BookingID); err != nil {
		return err
	}
	if r.Kind != payments.FeeNoShow && r.Kind != payments.FeeLateCancel {
		return fmt.Errorf("%w: fee kind %q is not one we charge", payments.ErrInvalid, r.Kind)
	}
	if r.Account == "" {
		return fmt.Errorf("%w: a fee is charged on the shop's connected account, which kept the card", payments.ErrInvalid)
	}
	if err := validateAccount(r.Account); err != nil {
		return err
	}
	if r.Card.Customer == "" || r.Card.PaymentMethod == "" {
		return fmt.Errorf("%w: no kept card", payments.ErrInvalid)
	}
	if r.AmountCents <= 0 {
		return fmt.Errorf("%w: fee %d is not positive", payments.ErrInvalid, r.AmountCents)
	}
	if !validCurrency(r.Currency) {
		return fmt.Errorf("%w: currency %q is not a lower-case ISO 4217 code", payments.ErrInvalid, r.Currency)
	}
	if r.FeeBPS < 0 || r.FeeBPS > maxFeeBPS {
		return fmt.Errorf("%w: application fee of %d basis points is outside 0 to %d", payments.ErrInvalid, r.FeeBPS, maxFeeBPS)
	}
	if r.Description == "" {
		return fmt.Errorf("%w: description is required", payments.ErrInvalid)
	}
	return nil
}
