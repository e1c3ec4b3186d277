package api

import (
	"time"

	"github.com/google/uuid"
)

// Opening is an opening as the JSON API answers it (GET /api/openings/{id}) and as the
// opening.* and booking.* webhook events carry it as their data: the one type that
// names its JSON fields.
type Opening struct {
	ID              uuid.UUID `json:"id"`
	ShopID          uuid.UUID `json:"shop_id"`
	StartsAt        time.Time `json:"starts_at"`
	DurationMinutes int       `json:"duration_minutes"`
	Service         string    `json:"service"`
	PriceCents      int64     `json:"price_cents"`
	Currency        string    `json:"currency"`
	Status          string    `json:"status"`
	OffersSent      int       `json:"offers_sent"`
	FilledBy        *Filler   `json:"filled_by"`
	Booking         *Booking  `json:"booking"`
	Generation      int       `json:"generation"`
	CreatedAt       time.Time `json:"created_at"`
	// FilledAt is when the opening was last filled; null before.
	FilledAt *time.Time `json:"filled_at"`
	// Staff is the person whose freed time this is; null: anyone's.
	Staff *Staff `json:"staff"`
	// ParentID is the opening this one is the rest of, after a shorter booking.
	ParentID *uuid.UUID `json:"parent_id"`
	// Source is where the opening came from: OpeningFromAppointment (a cancelled
	// appointment of the shop's book declared it, AppointmentID names it) or
	// OpeningFromOwner (the API or the dashboard; the rest of a gap says so in ParentID).
	Source        string     `json:"source"`
	AppointmentID *uuid.UUID `json:"appointment_id"`
	// Chain is, for an opening a move-up freed (a customer took an earlier time and left
	// this one), its place in the chain of moves; left out otherwise.
	Chain *Chain `json:"chain,omitempty"`
	// Warnings, in the answer to a declaration only, say what the owner should know of
	// an opening accepted anyway (a first wave the number cannot send in time).
	Warnings []string `json:"warnings,omitempty"`
}

// Chain is an opening's place in a chain of move-ups: ID is the chain's (its first
// opening's id), Position the moves that made this opening (1 for the first), MovedFrom
// the appointment whose customer moved away from this time.
type Chain struct {
	ID        uuid.UUID `json:"id"`
	Position  int       `json:"position"`
	MovedFrom uuid.UUID `json:"moved_from"`
}

// Filler is the customer holding an opening.
type Filler struct {
	CustomerID uuid.UUID `json:"customer_id"`
	Phone      string    `json:"phone"`
	Name       string    `json:"name"`
}

// Staff is a person of the shop.
type Staff struct {
	ID   uuid.UUID `json:"id"`
	Name string    `json:"name"`
}

// A booking's Status on the wire, as the ledger (internal/ledger), which decides them,
// names them too.
const (
	BookingPendingPayment = "pending_payment"
	BookingConfirmed      = "confirmed"
	BookingPaymentFailed  = "payment_failed"
	BookingCancelled      = "cancelled"
	// BookingMoved: a booking made by a YES that its customer moved up to an earlier
	// opening; its payment went with it to the booking it became.
	BookingMoved = "moved"
)

// Booking is an opening's latest booking: what was booked (Service, DurationMinutes,
// PriceCents), and its payment.
type Booking struct {
	ID                      uuid.UUID `json:"id"`
	Status                  string    `json:"status"`
	AmountCents             int64     `json:"amount_cents"`
	PaymentURL              *string   `json:"payment_url"`
	StripeCheckoutSessionID *string   `json:"stripe_checkout_session_id"`
	// ApplicationFeeCents is the platform's fee on the payment (Stripe Connect; 0
	// without), and NetCents what the shop receives: AmountCents less the fee.
	ApplicationFeeCents int64 `json:"application_fee_cents"`
	NetCents            int64 `json:"net_cents"`
	// Service is what was booked, lasting DurationMinutes from the opening's start, at
	// PriceCents (the amount charged).
	Service         string `json:"service"`
	DurationMinutes int    `json:"duration_minutes"`
	PriceCents      int64  `json:"price_cents"`
}

// Normal returns o as it is sent: times in UTC, starts_at to the second, and each
// derived field (net_cents) worked out from what it derives from. The API and the
// webhook events both send an opening through it, whatever made it.
func (o Opening) Normal() Opening {
	if o.Source == "" {
		o.Source = OpeningFromOwner
	}
	o.StartsAt = o.StartsAt.UTC().Truncate(time.Second)
	o.CreatedAt = o.CreatedAt.UTC()
	if o.FilledAt != nil {
		t := o.FilledAt.UTC()
		o.FilledAt = &t
	}
	if o.Booking != nil {
		b := *o.Booking
		b.NetCents = b.AmountCents - b.ApplicationFeeCents
		b.PriceCents = b.AmountCents
		o.Booking = &b
	}
	return o
}

// Opening.Source's values.
const (
	OpeningFromOwner       = "owner"
	OpeningFromAppointment = "appointment"
)

// OpeningList is GET /api/openings' answer.
type OpeningList struct {
	Openings []Opening `json:"openings"`
}
