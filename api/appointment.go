package api

import (
	"time"

	"github.com/google/uuid"
)

// Appointment is an appointment of the shop's book as the owners' API shows it (PUT
// /api/appointments/{source}/{external_id}, GET /api/appointments/{id}, a page of GET
// /api/appointments).
type Appointment struct {
	ID uuid.UUID `json:"id"`
	// External names it in its source; null for the book's own records.
	External *AppointmentExternal `json:"external"`
	// Customer is the shop's customer matched by phone; null when none is known.
	Customer *AppointmentCustomer `json:"customer"`
	// Phone is the customer's number in E.164 (masked in a page of the list, as
	// "+155******67"); null when the source gave none.
	Phone *string `json:"phone"`
	// CustomerName is the name the source gave ("" when none).
	CustomerName string `json:"customer_name"`
	// Staff is the shop's person it is with; null when not known.
	Staff           *Staff    `json:"staff"`
	Service         string    `json:"service"`
	PriceCents      int64     `json:"price_cents"`
	StartsAt        time.Time `json:"starts_at"`
	DurationMinutes int       `json:"duration_minutes"`
	// Status is booked, cancelled, moved, completed or no_show.
	Status string `json:"status"`
	// Source is api, calcom, square, ics or slotrecovery.
	Source string `json:"source"`
	// Version and UpdatedAt are the order of the description stored: an older one
	// changes nothing.
	Version   int64     `json:"version"`
	UpdatedAt time.Time `json:"updated_at"`
	CreatedAt time.Time `json:"created_at"`
	// Opening is what the appointment's latest release (its cancellation, or its move
	// away from a time) declared; left out when it freed no time still ahead.
	Opening *AppointmentOpening `json:"opening,omitempty"`
}

// AppointmentExternal names an appointment in its source.
type AppointmentExternal struct {
	Source string `json:"source"`
	ID     string `json:"id"`
}

// AppointmentCustomer is the shop's customer an appointment is matched to.
type AppointmentCustomer struct {
	ID   uuid.UUID `json:"id"`
	Name string    `json:"name"`
}

// AppointmentOpening is the opening a release of an appointment declared, or where its
// declaration stands.
type AppointmentOpening struct {
	// State is waiting (the shop's auto_declare is off: the owner offers it), pending
	// (to be declared shortly), declaring, declared (ID is the opening) or skipped
	// (Reason says why).
	State string `json:"state"`
	// ID is the opening declared; null until it is.
	ID *uuid.UUID `json:"id"`
	// Reason says why it was skipped (started, past_cutoff, already_open, booked_again,
	// superseded, no_price, no_service, or the code of the problem the declaration met);
	// null otherwise.
	Reason *string `json:"reason"`
	// StartsAt and DurationMinutes are the time freed.
	StartsAt        time.Time `json:"starts_at"`
	DurationMinutes int       `json:"duration_minutes"`
}

// AppointmentList is a page of the shop's appointments by start (GET
// /api/appointments).
type AppointmentList struct {
	Appointments []Appointment `json:"appointments"`
	// NextCursor is null on the last page.
	NextCursor *string `json:"next_cursor"`
}
