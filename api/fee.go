package api

import "time"

// Fee is a fee charged (or owed) on a booking (issue 48): a no-show's or a late
// cancellation's, at most one per booking.
type Fee struct {
	// Kind is no_show or late_cancel.
	Kind string `json:"kind"`
	// Outcome is charged; requires_action (the customer's bank wants them to confirm
	// it: they are texted to pay it themselves); declined (DeclineCode and Message say
	// why, in Stripe's words); no_card (no card was kept to charge); or pending (being
	// charged: ask again).
	Outcome     string `json:"outcome"`
	AmountCents int64  `json:"amount_cents"`
	Currency    string `json:"currency"`
	// PaymentIntentID is the fee's payment on the shop's Stripe account.
	PaymentIntentID *string `json:"payment_intent_id"`
	DeclineCode     *string `json:"decline_code"`
	Message         *string `json:"message"`
	// ApplicationFeeCents is the platform's share of a charged fee.
	ApplicationFeeCents int64     `json:"application_fee_cents"`
	At                  time.Time `json:"at"`
}
