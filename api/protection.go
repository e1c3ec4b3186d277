package api

import (
	"time"

	"github.com/google/uuid"
)

// BookingProtection is a booking's no-show protection (GET
// /api/bookings/{id}/protection, issue 48): what its payment page charged and kept, the
// policy the customer accepted there, and its fee. It names no one: the customer's
// erasure keeps it, as the consent record is kept.
type BookingProtection struct {
	BookingID uuid.UUID `json:"booking_id"`
	Status    string    `json:"status"`
	// PriceCents is the price booked; Currency its currency.
	PriceCents int64  `json:"price_cents"`
	Currency   string `json:"currency"`
	// Mode is the payment mode of the booking's page (checkout, deposit, card); null
	// for a booking without protection (a plain checkout, a shop taking no payment).
	Mode *string `json:"mode"`
	// ChargedCents is what the page charged at the YES; DepositCents and BalanceCents
	// a deposit booking's deposit and what is left for the visit (0 otherwise).
	ChargedCents int64 `json:"charged_cents"`
	DepositCents int64 `json:"deposit_cents"`
	BalanceCents int64 `json:"balance_cents"`
	// KeepCard: the page kept the customer's card for a fee.
	KeepCard bool `json:"keep_card"`
	// Policy is the cancellation policy shown and, once the page was completed,
	// accepted; null for none.
	Policy *AcceptedPolicy `json:"policy"`
	// Fee is the booking's fee; null for none.
	Fee *Fee `json:"fee"`
}

// AcceptedPolicy is the policy a booking's payment page showed, and its acceptance.
type AcceptedPolicy struct {
	Version            int    `json:"policy_version"`
	SHA256             string `json:"sha256"`
	Text               string `json:"text"`
	LateCancelHours    int    `json:"late_cancel_hours"`
	NoShowFeeCents     int64  `json:"no_show_fee_cents"`
	LateCancelFeeCents int64  `json:"late_cancel_fee_cents"`
	// AcceptedAt is when the customer completed the page (null: not yet), through
	// CheckoutSession. IP and UserAgent are null: Stripe's Checkout reports neither.
	AcceptedAt      *time.Time `json:"accepted_at"`
	CheckoutSession *string    `json:"checkout_session"`
	IP              *string    `json:"ip"`
	UserAgent       *string    `json:"user_agent"`
}

// LateCancellation is the answer to POST /api/bookings/{id}/late_cancel: the booking is
// cancelled as its customer's late cancellation.
type LateCancellation struct {
	BookingID uuid.UUID `json:"booking_id"`
	// Late: the booking had accepted terms, whose late-cancellation rules applied.
	Late bool `json:"late"`
	// DepositKept: a deposit booking's deposit is not refunded; Refunded: the payment is
	// refunded in full (a booking without terms, or a full payment).
	DepositKept bool `json:"deposit_kept"`
	Refunded    bool `json:"refunded"`
	// Opening is what became of the opening: reopened, expired, or "" when the booking
	// did not hold it.
	Opening string `json:"opening"`
	// Fee is the late-cancel fee, when the terms have one; null otherwise.
	Fee *Fee `json:"fee"`
}
