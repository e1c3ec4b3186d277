// Package connectors is the neutral vocabulary between the booking systems a shop keeps
// its appointments in and the appointment book (internal/book): one appointment shape,
// whatever the vendor. Each vendor has its own adapter below it (calcom, square, ics):
// it verifies a delivery's signature before reading anything, and reads the vendor's
// payload into Appointments; the vendor's words (BOOKING_CANCELLED,
// CANCELLED_BY_SELLER, VEVENT) never leave the adapter.
package connectors

import (
	"errors"
	"strconv"
	"time"

	"github.com/google/uuid"
)

// Source is the system an appointment comes from.
type Source string

// Sources. The book's own records of bookings made by a YES are SourceSlotRecovery.
const (
	SourceAPI          Source = "api"
	SourceCalcom       Source = "calcom"
	SourceSquare       Source = "square"
	SourceICS          Source = "ics"
	SourceSlotRecovery Source = "slotrecovery"
)

// Sources lists every Source.
var Sources = []Source{SourceAPI, SourceCalcom, SourceSquare, SourceICS, SourceSlotRecovery}

// Valid reports whether s is one of Sources.
func (s Source) Valid() bool {
	for _, v := range Sources {
		if s == v {
			return true
		}
	}
	return false
}

// Status is where an appointment stands.
type Status string

// Statuses. Cancelled and Moved free the appointment's time; Completed and NoShow are
// the end of one that took place (or should have).
const (
	StatusBooked    Status = "booked"
	StatusCancelled Status = "cancelled"
	StatusMoved     Status = "moved"
	StatusCompleted Status = "completed"
	StatusNoShow    Status = "no_show"
)

// Statuses lists every Status.
var Statuses = []Status{StatusBooked, StatusCancelled, StatusMoved, StatusCompleted, StatusNoShow}

// Valid reports whether s is one of Statuses.
func (s Status) Valid() bool {
	for _, v := range Statuses {
		if s == v {
			return true
		}
	}
	return false
}

// Frees reports whether an appointment in s no longer holds its time.
func (s Status) Frees() bool { return s == StatusCancelled || s == StatusMoved }

// Appointment is one appointment as its source last described it: the one shape the
// book takes (book.Service.Upsert), from an adapter or from the owners' API.
type Appointment struct {
	// Source and ExternalID name the appointment in its system (cal.com's booking uid,
	// Square's booking id, a feed event's UID and RECURRENCE-ID, the owner's own id).
	Source     Source
	ExternalID string
	Status     Status
	StartsAt   time.Time
	// DurationMinutes is its length, 1 to 1440.
	DurationMinutes int
	// Service is what is booked, as the source names it ("" when it does not).
	Service string
	// Phone is the customer's number as the source wrote it, E.164 or national; the book
	// reads it in the shop's country. "" when the source has none.
	Phone string
	// CustomerName is the name the source gives ("" when none).
	CustomerName string
	// ExternalStaff is the source's id of the person the appointment is with (Square's
	// team member id, cal.com's organizer e-mail), kept for mapping onto the shop's
	// staff; StaffID is that person of the shop's when the caller knows it (the API),
	// uuid.Nil otherwise.
	ExternalStaff string
	StaffID       uuid.UUID
	// PriceCents is what the appointment costs when the source says (0: unknown).
	PriceCents int64
	// Version and UpdatedAt order the source's descriptions of one appointment: a
	// description with a lower (Version, UpdatedAt), compared in that order, is older
	// than one with a higher. Sources without versions (cal.com, feeds) leave Version 0
	// and order by UpdatedAt alone; an UpdatedAt left zero is the time the book hears of
	// it.
	Version   int64
	UpdatedAt time.Time
	// Replaces is the ExternalID of the appointment this one takes the place of, when
	// the source makes a new booking for a move (cal.com's reschedule: the new booking's
	// rescheduleUid); "" otherwise.
	Replaces string
}

// Delivery is what one signed webhook delivery says.
type Delivery struct {
	// ID names the delivery for deduplication: the vendor's event id, or what stands for
	// one (cal.com has none: its trigger and booking uid).
	ID string
	// Event is the vendor's name of the event, for logs and the last-delivery record.
	Event string
	// Appointments are the appointments it describes, in the order to apply them; none
	// for an event the book has no use for (answer it 2xx all the same).
	Appointments []Appointment
}

// Errors the adapters return. A handler answers ErrSignature with 401 and records it;
// ErrPayload with 400.
var (
	// ErrSignature means the delivery is not signed with the connector's secret.
	ErrSignature = errors.New("connectors: bad signature")
	// ErrPayload means a signed delivery does not read as the vendor's payload.
	ErrPayload = errors.New("connectors: unreadable payload")
)

// MaxBody is the largest webhook body the adapters read: a handler reads at most this
// much (and refuses more) before it verifies.
const MaxBody = 1 << 20

// WebhookPath is the path where a connector of source s, whose id is id, receives its
// vendor's webhooks (the server's PUBLIC_URL before it is the URL the vendor posts to
// and, for Square, signs); "" for a source that posts none (a calendar feed is polled).
func WebhookPath(s Source, id string) string {
	switch s {
	case SourceCalcom, SourceSquare:
		return "/webhooks/" + string(s) + "/" + id
	}
	return ""
}

// Feed is what one poll of a calendar feed found.
type Feed struct {
	// NotModified is true when the feed answered that nothing changed since the
	// validators the poll sent (304): Appointments is then empty and means nothing.
	NotModified bool
	// Appointments are the feed's appointments: the whole of it, a snapshot.
	Appointments []Appointment
	// ETag and LastModified are the feed's validators, for the next poll's conditional
	// request ("" when it sent none).
	ETag, LastModified string
}

// Move is a move-up to write back to the system that keeps the appointment: its
// booking ExternalID, to start at To instead of From.
type Move struct {
	ExternalID string
	From, To   time.Time
	// Key is the idempotency key of the write: the same for every attempt of one move.
	Key string
}

// Moved is what the vendor answered a move written back.
type Moved struct {
	// ExternalID names the booking at its new time: a new one for cal.com (a reschedule
	// makes a new booking), the same for Square.
	ExternalID string
	// Version is the booking's version after the move (Square; 0 for cal.com).
	Version int64
}

// VendorError is a vendor's API refusing a request: its HTTP status and its reason,
// in its own words for the owner (never the key).
type VendorError struct {
	Vendor  string
	Status  int
	Code    string
	Message string
	// Final marks a refusal that no retry can change, whatever its status.
	Final bool
}

func (e *VendorError) Error() string {
	msg := e.Vendor + " answered " + strconv.Itoa(e.Status)
	if e.Code != "" {
		msg += " " + e.Code
	}
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}

// Permanent reports whether retrying cannot help: Final, the key refused (401, 403),
// the booking gone (404, 410) or the request refused as it stands (400, 422).
func (e *VendorError) Permanent() bool {
	if e.Final {
		return true
	}
	switch e.Status {
	case 400, 401, 403, 404, 410, 422:
		return true
	}
	return false
}
