package hooks

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/slotrecovery/slotrecovery/api"
)

// openingFilled is an opening's status once a YES holds it (slots' StatusFilled, which
// this package, below slots, cannot name).
const openingFilled = "filled"

// openingFacts are what the SQL function webhook_opening_facts gathers for an opening
// or booking event (with webhook_claim_facts over it for a claim about to run): the rows as they stand, under their tables' column names. Go alone
// renders them (opening): the wire's names are api.Opening's.
type openingFacts struct {
	Opening struct {
		ID              uuid.UUID  `json:"id"`
		ShopID          uuid.UUID  `json:"shop_id"`
		StartsAt        time.Time  `json:"starts_at"`
		DurationMinutes int        `json:"duration_minutes"`
		Service         string     `json:"service"`
		PriceCents      int64      `json:"price_cents"`
		Status          string     `json:"status"`
		Generation      int        `json:"generation"`
		CreatedAt       time.Time  `json:"created_at"`
		FilledAt        *time.Time `json:"filled_at"`
		StaffID         *uuid.UUID `json:"staff_id"`
		ParentID        *uuid.UUID `json:"parent_id"`
		Source          *string    `json:"source"`
		SourceID        *uuid.UUID `json:"source_id"`
		ChainID         *uuid.UUID `json:"chain_id"`
		ChainPosition   *int       `json:"chain_position"`
		ChainMovedFrom  *uuid.UUID `json:"chain_moved_from"`
	} `json:"opening"`
	Currency   string `json:"currency"`
	OffersSent int    `json:"offers_sent"`
	// Holder is the customer holding the opening (its filled_by), or the claimant of a
	// claim about to run.
	Holder *struct {
		ID    uuid.UUID `json:"id"`
		Phone string    `json:"phone"`
		Name  string    `json:"name"`
	} `json:"holder"`
	Staff *struct {
		ID   uuid.UUID `json:"id"`
		Name string    `json:"name"`
	} `json:"staff"`
	// Booking is the bookings row the event is about (or the opening's latest); none for
	// a claim about to run.
	Booking *struct {
		ID                      uuid.UUID `json:"id"`
		Status                  string    `json:"status"`
		AmountCents             int64     `json:"amount_cents"`
		PaymentURL              *string   `json:"payment_url"`
		StripeCheckoutSessionID *string   `json:"stripe_checkout_session_id"`
		ApplicationFeeCents     int64     `json:"application_fee_cents"`
		// Service and DurationMinutes are null for a booking of the opening's own.
		Service         *string `json:"service"`
		DurationMinutes *int    `json:"duration_minutes"`
	} `json:"booking"`
	// Offer is what the offer of a claim about to run offers (null fields: the
	// opening's own).
	Offer *struct {
		Service         string `json:"service"`
		DurationMinutes int    `json:"duration_minutes"`
		PriceCents      *int64 `json:"price_cents"`
	} `json:"offer"`
}

func decodeFacts(raw []byte) (openingFacts, error) {
	var f openingFacts
	if err := json.Unmarshal(raw, &f); err != nil {
		return f, fmt.Errorf("hooks: decode an opening's facts: %w", err)
	}
	if f.Opening.ID == uuid.Nil {
		return f, fmt.Errorf("hooks: an opening's facts without the opening")
	}
	return f, nil
}

// opening renders the facts as the API shows the opening (shopapi's GET
// /api/openings/{id} renders slots.Opening into the same api.Opening).
func (f openingFacts) opening() api.Opening {
	s := f.Opening
	o := api.Opening{
		ID: s.ID, ShopID: s.ShopID, StartsAt: s.StartsAt, DurationMinutes: s.DurationMinutes, Service: s.Service,
		PriceCents: s.PriceCents, Currency: f.Currency, Status: s.Status, OffersSent: f.OffersSent,
		Generation: s.Generation, CreatedAt: s.CreatedAt, FilledAt: s.FilledAt, ParentID: s.ParentID,
	}
	if s.Source != nil && *s.Source == api.OpeningFromAppointment {
		o.Source, o.AppointmentID = api.OpeningFromAppointment, s.SourceID
	}
	if s.ChainID != nil && s.ChainPosition != nil && s.ChainMovedFrom != nil {
		o.Chain = &api.Chain{ID: *s.ChainID, Position: *s.ChainPosition, MovedFrom: *s.ChainMovedFrom}
	}
	if h := f.Holder; h != nil {
		o.FilledBy = &api.Filler{CustomerID: h.ID, Phone: h.Phone, Name: h.Name}
	}
	if st := f.Staff; st != nil {
		o.Staff = &api.Staff{ID: st.ID, Name: st.Name}
	}
	if b := f.Booking; b != nil {
		o.Booking = &api.Booking{
			ID: b.ID, Status: b.Status, AmountCents: b.AmountCents,
			PaymentURL: nonEmpty(b.PaymentURL), StripeCheckoutSessionID: nonEmpty(b.StripeCheckoutSessionID),
			ApplicationFeeCents: b.ApplicationFeeCents, Service: s.Service, DurationMinutes: s.DurationMinutes,
		}
		if b.Service != nil {
			o.Booking.Service = *b.Service
		}
		if b.DurationMinutes != nil {
			o.Booking.DurationMinutes = *b.DurationMinutes
		}
	}
	return o.Normal()
}

// nonEmpty is nil for nil and "": the API shows a link not made yet as null.
func nonEmpty(s *string) *string {
	if s == nil || *s == "" {
		return nil
	}
	return s
}
