package hooks

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/api"
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
	// AppointmentCreated: the shop's book first heard of an appointment, booked
	// (internal/book: a connector's delivery, a calendar feed, the owners' API).
	AppointmentCreated = "appointment.created"
	// AppointmentCancelled: an appointment of the book became cancelled (by its source,
	// gone from a feed, or by the owner).
	AppointmentCancelled = "appointment.cancelled"
	// AppointmentMoved: an appointment of the book was moved (its source marked it
	// moved, or it is booked at another time, length or person); the data carries the
	// time it held before (AppointmentEvent.Previous).
	AppointmentMoved = "appointment.moved"
)

// Types lists every event type, in the order the documentation gives them.
var Types = []string{
	OpeningDeclared, OpeningFilled, OpeningReopened, OpeningExpired, OpeningCancelled,
	BookingConfirmed, BookingRefunded, CustomerOptedOut, CustomerOptedIn, MessageReceived, SMSSenderUpdated,
	AppointmentCreated, AppointmentCancelled, AppointmentMoved,
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
// (api.MessageReceived).
func IsMessageType(typ string) bool {
	return strings.HasPrefix(typ, "message.")
}

// IsCustomerType reports whether events of type typ carry a customer.
func IsCustomerType(typ string) bool {
	return strings.HasPrefix(typ, "customer.")
}

// IsAppointmentType reports whether events of type typ carry an appointment of the
// shop's book (AppointmentEvent).
func IsAppointmentType(typ string) bool {
	return strings.HasPrefix(typ, "appointment.")
}

// AppointmentEvent is the data of the appointment.* events: the appointment as the
// owners' API shows it after the change (api.Appointment, its phone whole, as the
// customer.* events show a customer's), and, for appointment.moved, the time it held
// before.
type AppointmentEvent struct {
	api.Appointment
	// Previous is the time the appointment held before the change (appointment.moved
	// only: the time a booking system moved it from, which the change freed); left out
	// of the other events.
	Previous *AppointmentTime `json:"previous,omitempty"`
}

// AppointmentTime is a time an appointment held: its start, length and person.
type AppointmentTime struct {
	StartsAt        time.Time `json:"starts_at"`
	DurationMinutes int       `json:"duration_minutes"`
	// Staff is the person it was with; null when not known.
	Staff *api.Staff `json:"staff"`
}

// queries is this package's one way to its SQL: sqlc's Queries holds no state, and
// each call is given the pool or the transaction it runs on.
var queries = db.New()

// Record records an event of type typ for shopID at `at`, inside the caller's
// transaction q (or statement: pass the pool only when the change is that one
// statement's), when the shop has an enabled endpoint subscribed to typ; otherwise it
// writes nothing and costs one index probe. data is the event's data, rendered now with
// the api package's type of the object as it stands after the change (the one the
// owners' API answers with): api.Customer for customer.* events, api.MessageReceived
// for message.received, api.SMSSenderUpdated for sms_sender.updated, AppointmentEvent
// for appointment.* events. It is stored
// rendered and sent as it is. Opening and booking events use RecordOpening.
func Record(ctx context.Context, q db.DBTX, shopID uuid.UUID, typ string, at time.Time, data any) error {
	if err := checkData(typ, data); err != nil {
		return err
	}
	b, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("hooks: encode %s data: %w", typ, err)
	}
	if _, err := queries.WebhookEventRecord(ctx, q, db.WebhookEventRecordParams{
		ShopID: shopID, Type: typ, CreatedAt: at.UTC(), Subject: b,
	}); err != nil {
		return fmt.Errorf("record %s event: %w", typ, err)
	}
	return nil
}

// checkData refuses data of another type than typ's events carry (one shape per
// object on the wire), and data that names no object: an empty event is a bug, not
// something to send.
func checkData(typ string, data any) error {
	if !slices.Contains(Types, typ) {
		return fmt.Errorf("hooks: unknown event type %q", typ)
	}
	var id uuid.UUID
	var ok bool
	switch d := data.(type) {
	case api.Opening:
		ok, id = IsOpeningType(typ), d.ID
	case api.Customer:
		ok, id = IsCustomerType(typ), d.ID
	case api.MessageReceived:
		ok, id = IsMessageType(typ), d.ConversationID
	case api.SMSSenderUpdated:
		ok, id = typ == SMSSenderUpdated, d.ShopID
	case AppointmentEvent:
		ok, id = IsAppointmentType(typ) && (d.Previous != nil) == (typ == AppointmentMoved), d.ID
	}
	if !ok {
		return fmt.Errorf("hooks: %s events carry the api type of their object, not %T", typ, data)
	}
	if id == uuid.Nil {
		return fmt.Errorf("hooks: %s event data names no object", typ)
	}
	return nil
}

// RecordOpening records an opening or booking event (typ is an opening.* or booking.*
// type) for shopID's opening, inside the caller's transaction q, after the change: its
// data is the opening as the API shows it (api.Opening), rendered now from the rows as
// they stand in q (the opening, the booking bookingID or the latest when uuid.Nil, who
// holds it, the offers texted, the shop's currency: webhook_opening_facts). Like
// Record, it writes nothing when the shop has no enabled endpoint subscribed to typ,
// and then costs one statement, one index probe; otherwise a second statement records
// the event.
func RecordOpening(ctx context.Context, q db.DBTX, shopID uuid.UUID, typ string, at time.Time, openingID, bookingID uuid.UUID) error {
	if !slices.Contains(Types, typ) || !IsOpeningType(typ) {
		return fmt.Errorf("hooks: %q is not an opening or booking event type", typ)
	}
	raw, err := queries.WebhookOpeningFacts(ctx, q, db.WebhookOpeningFactsParams{
		ShopID: shopID, Type: typ, OpeningID: openingID,
		BookingID: uuid.NullUUID{UUID: bookingID, Valid: bookingID != uuid.Nil},
	})
	if errors.Is(err, pgx.ErrNoRows) { // no subscribed endpoint, or not this shop's opening
		return nil
	}
	if err != nil {
		return fmt.Errorf("read opening %s for its %s event: %w", openingID, typ, err)
	}
	f, err := decodeFacts(raw)
	if err != nil {
		return err
	}
	return Record(ctx, q, shopID, typ, at, f.opening())
}

// ClaimData renders, before a YES's claim runs, the data of the events the claim records
// if it books (opening.filled, and booking.confirmed for a booking confirmed at once):
// the opening as the claim leaves it, filled at now by the claimant, with the booking
// bookingID (confirmed at once, or pending payment), of the offer's service at its
// price. facts are what the customer's claimable offers were read with (webhook_opening_facts of the opening, once
// per opening in a statement, with webhook_claim_facts of the offer and the claimant
// over it), only when the shop had an endpoint subscribed to those events; the
// claim inserts the data only if it books and the endpoint is still there. now is the
// claim's: the booking's created_at and the opening's filled_at.
func ClaimData(facts []byte, bookingID uuid.UUID, confirmed bool, now time.Time) ([]byte, error) {
	f, err := decodeFacts(facts)
	if err != nil {
		return nil, err
	}
	o := f.opening()
	at := now.UTC().Truncate(time.Microsecond) // as Postgres keeps it
	o.Status, o.FilledAt = openingFilled, &at
	status := api.BookingPendingPayment
	if confirmed {
		status = api.BookingConfirmed
	}
	b := &api.Booking{ID: bookingID, Status: status, AmountCents: o.PriceCents, Service: o.Service, DurationMinutes: o.DurationMinutes}
	if off := f.Offer; off != nil {
		b.Service = cmp.Or(off.Service, b.Service)
		b.DurationMinutes = cmp.Or(off.DurationMinutes, b.DurationMinutes)
		if off.PriceCents != nil {
			b.AmountCents = *off.PriceCents
		}
	}
	o.Booking = b
	data, err := json.Marshal(o.Normal())
	if err != nil {
		return nil, fmt.Errorf("hooks: encode claim's event data: %w", err)
	}
	return data, nil
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

// DecodeOpening reads what an opening or booking event stored (its data, or a subject
// recorded before 0050, in the API's shape too) as the api.Opening it sends.
func DecodeOpening(stored []byte) (api.Opening, error) {
	d, err := legacyData(OpeningFilled, stored)
	if err != nil {
		return api.Opening{}, err
	}
	return d.(api.Opening), nil
}
