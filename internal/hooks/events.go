package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/db"
)

// The event types. They are part of the public API (endpoints subscribe to them, and
// receivers branch on them): add, never rename.
const (
	// OpeningDeclared: a shop declared an opening (slots.Declare).
	OpeningDeclared = "opening.declared"
	// OpeningFilled: a customer's YES holds the opening (a booking, pending payment or,
	// in a shop without payments, confirmed at once).
	OpeningFilled = "opening.filled"
	// OpeningReopened: the hold lapsed (payment failed or expired) and the opening is
	// offered again.
	OpeningReopened = "opening.reopened"
	// OpeningExpired: nobody took the opening before its cutoff, or a hold lapsed inside
	// it.
	OpeningExpired = "opening.expired"
	// OpeningCancelled: the shop cancelled the opening.
	OpeningCancelled = "opening.cancelled"
	// BookingConfirmed: the booking is paid, or booked in a shop without payments.
	BookingConfirmed = "booking.confirmed"
	// BookingRefunded: a booking's payment was refunded (it came after the slot went to
	// someone else).
	BookingRefunded = "booking.refunded"
	// CustomerOptedOut: the customer replied STOP (or the carrier reports an opt-out).
	CustomerOptedOut = "customer.opted_out"
	// CustomerOptedIn: the customer replied START and is texted again.
	CustomerOptedIn = "customer.opted_in"
	// MessageReceived: a text waits for a person in the shop's inbox (a reply the
	// server could not act on, an unsure one, a text without a live offer).
	MessageReceived = "message.received"
	// SMSSenderUpdated: the shop's own sender was set up, or its A2P 10DLC registration's
	// status changed (internal/senders).
	SMSSenderUpdated = "sms_sender.updated"
)

// Types lists every event type, in the order the documentation gives them.
var Types = []string{
	OpeningDeclared, OpeningFilled, OpeningReopened, OpeningExpired, OpeningCancelled,
	BookingConfirmed, BookingRefunded, CustomerOptedOut, CustomerOptedIn, MessageReceived, SMSSenderUpdated,
}

// AllTypes is the enabled_events entry that subscribes an endpoint to every type,
// including those added later.
const AllTypes = "*"

// IsOpeningType reports whether events of type typ carry an opening (the opening.* and
// booking.* events: a booking is shown inside its opening, as the API shows it).
func IsOpeningType(typ string) bool {
	return strings.HasPrefix(typ, "opening.") || strings.HasPrefix(typ, "booking.")
}

// IsMessageType reports whether events of type typ carry an inbox text
// (inbox.Received).
func IsMessageType(typ string) bool {
	return strings.HasPrefix(typ, "message.")
}

// IsCustomerType reports whether events of type typ carry a customer.
func IsCustomerType(typ string) bool {
	return strings.HasPrefix(typ, "customer.")
}

// queries is this package's one way to its SQL: sqlc's Queries holds no state, and
// each call is given the pool or the transaction it runs on.
var queries = db.New()

// Record records an event of type typ for shopID at `at`, inside the caller's
// transaction q (or statement: pass the pool only when the change is that one
// statement's), when the shop has an enabled endpoint subscribed to typ; otherwise it
// writes nothing and costs one index probe. subject is the object as it stands after the
// change, JSON-encoded as it is; the Renderer turns it into the event's data when the
// event is dispatched. Customer events take the customers.Customer. Opening and booking
// events use RecordOpening, whose subject Postgres takes in the same statement.
func Record(ctx context.Context, q db.DBTX, shopID uuid.UUID, typ string, at time.Time, subject any) error {
	if !slices.Contains(Types, typ) {
		return fmt.Errorf("hooks: unknown event type %q", typ)
	}
	b, err := json.Marshal(subject)
	if err != nil {
		return fmt.Errorf("hooks: encode %s subject: %w", typ, err)
	}
	if _, err := queries.WebhookEventRecord(ctx, q, db.WebhookEventRecordParams{
		ShopID: shopID, Type: typ, CreatedAt: at.UTC(), Subject: b,
	}); err != nil {
		return fmt.Errorf("record %s event: %w", typ, err)
	}
	return nil
}

// RecordOpening records an opening or booking event (typ is an opening.* or booking.*
// type) for shopID's opening, inside the caller's transaction q, after the change: its
// subject is the opening's row and the booking's (bookingID, or the latest booking when
// uuid.Nil) as they stand in q, with who holds it, the offers texted and the shop's
// currency (webhook_opening_subject). Like Record, it writes nothing when the shop has no
// enabled endpoint subscribed to typ.
func RecordOpening(ctx context.Context, q db.DBTX, shopID uuid.UUID, typ string, at time.Time, openingID, bookingID uuid.UUID) error {
	if !slices.Contains(Types, typ) || !IsOpeningType(typ) {
		return fmt.Errorf("hooks: %q is not an opening or booking event type", typ)
	}
	_, err := queries.WebhookEventRecordOpening(ctx, q, db.WebhookEventRecordOpeningParams{
		ShopID: shopID, Type: typ, CreatedAt: at.UTC(), OpeningID: openingID,
		BookingID: uuid.NullUUID{UUID: bookingID, Valid: bookingID != uuid.Nil},
	})
	if err != nil && !errors.Is(err, pgx.ErrNoRows) { // no row: not this shop's opening
		return fmt.Errorf("record %s event of opening %s: %w", typ, openingID, err)
	}
	return nil
}

// OpeningSubject is the subject of an opening or booking event as Postgres records it
// (webhook_opening_subject): the opening's and the booking's rows as they stood at the
// event (the fields the API shows), who held the opening, how many offers had been
// texted and the shop's currency. The Renderer decodes it with DecodeOpening.
type OpeningSubject struct {
	Opening    SubjectOpening  `json:"opening"`
	Booking    *SubjectBooking `json:"booking"`
	Filler     *SubjectFiller  `json:"filler"`
	OffersSent int             `json:"offers_sent"`
	Currency   string          `json:"currency"`
}

// SubjectOpening is an opening's row (slot_openings) at an event.
type SubjectOpening struct {
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
	FilledBy        *uuid.UUID `json:"filled_by"`
}

// SubjectBooking is a booking's row (bookings) at an event.
type SubjectBooking struct {
	ID                      uuid.UUID  `json:"id"`
	Status                  string     `json:"status"`
	AmountCents             int64      `json:"amount_cents"`
	PaymentURL              *string    `json:"payment_url"`
	StripeCheckoutSessionID *string    `json:"stripe_checkout_session_id"`
	RefundID                *string    `json:"refund_id"`
	CreatedAt               time.Time  `json:"created_at"`
	ConfirmedAt             *time.Time `json:"confirmed_at"`
	// ApplicationFeeCents is the platform's fee on the payment (Stripe Connect).
	ApplicationFeeCents int64 `json:"application_fee_cents"`
}

// SubjectFiller is the customer holding the opening at an event.
type SubjectFiller struct {
	ID    uuid.UUID `json:"id"`
	Phone string    `json:"phone"`
	Name  string    `json:"name"`
}

// DecodeOpening reads an opening or booking event's subject.
func DecodeOpening(subject []byte) (OpeningSubject, error) {
	var s OpeningSubject
	if err := json.Unmarshal(subject, &s); err != nil {
		return s, fmt.Errorf("hooks: decode opening subject: %w", err)
	}
	if s.Opening.ID == uuid.Nil {
		return s, fmt.Errorf("hooks: opening subject without an opening")
	}
	return s, nil
}

// ForgetCustomer scrubs shopID's events that name the customer (an opening they held,
// the customer themself, or a text of theirs in the owner's inbox: by customer, or by
// phone, the number they had, which a text from before they were a customer carries
// alone; "" for none), inside the caller's transaction: their subject and body
// are dropped and they are not sent, nor sent again; and the logs of their deliveries
// lose what the receivers answered (the first bytes of each answer, the error texts,
// the last error quoted in an endpoint's automatic disabling),
// since a receiver that echoes the body it got (a request bin, a catch-all integration)
// answers with the customer's name and number. The customer's erasure calls it (what
// reached the shop's endpoints already is the shop's).
//
// Events, then deliveries, then attempts, each in a statement of its own that sees what
// committed before it: an attempt recorded meanwhile is either scrubbed here or keeps
// nothing (see record and the query WebhookDeliveriesForgetEvents).
func ForgetCustomer(ctx context.Context, q db.DBTX, shopID, customerID uuid.UUID, phone string, at time.Time) error {
	ids, err := queries.WebhookEventsForgetCustomer(ctx, q, db.WebhookEventsForgetCustomerParams{
		ShopID: shopID, CustomerID: customerID, Phone: phone, Now: at.UTC(),
	})
	if err != nil {
		return fmt.Errorf("forget customer %s in webhook events: %w", customerID, err)
	}
	if len(ids) == 0 {
		return nil
	}
	if _, err := queries.WebhookDeliveriesForgetEvents(ctx, q, ids); err != nil {
		return fmt.Errorf("forget customer %s in webhook deliveries: %w", customerID, err)
	}
	if _, err := queries.WebhookAttemptsForgetEvents(ctx, q, ids); err != nil {
		return fmt.Errorf("forget customer %s in webhook attempts: %w", customerID, err)
	}
	if _, err := queries.WebhookEndpointsForgetEvents(ctx, q, ids); err != nil {
		return fmt.Errorf("forget customer %s in webhook endpoints' reasons: %w", customerID, err)
	}
	return nil
}
