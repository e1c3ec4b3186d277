package api

import (
	"time"

	"github.com/google/uuid"
)

// Customer is a customer as the JSON API answers it (GET /api/customers/{id}) and as
// the customer.* webhook events carry it.
type Customer struct {
	ID       uuid.UUID `json:"id"`
	Phone    string    `json:"phone"`
	Name     string    `json:"name"`
	SMSOptIn bool      `json:"sms_opt_in"`
	Priority int       `json:"priority"`
	// OptedOut is true once the customer replied STOP (OptedOutAt says when).
	OptedOut  bool      `json:"opted_out"`
	CreatedAt time.Time `json:"created_at"`
	// Status is opted_in, not_opted_in, opted_out (replied STOP) or unreachable.
	Status      string      `json:"status"`
	OptedOutAt  *time.Time  `json:"opted_out_at"`
	Preferences Preferences `json:"preferences"`
	// Language is the customer's own, null when they are texted in the shop's.
	Language *string `json:"language"`
	// PossiblyReassignedAt is when the number answered "wrong number": it may have
	// changed hands (null: no such answer since the owner last checked).
	PossiblyReassignedAt *time.Time `json:"possibly_reassigned_at"`
	// MoveUp says the customer wants earlier times offered for the appointments they
	// hold (move-up offers); false by default.
	MoveUp bool `json:"move_up"`
	// PausedUntil is when the customer's PAUSE by text ends: no offers until then
	// (RESUME ends it sooner and clears it; a past time is a pause that has ended); null
	// when they have not paused.
	PausedUntil *time.Time `json:"paused_until"`
	// Stats are the customer's offers, bookings and attendance (GET /api/customers/{id}/stats):
	// in the owners' API answers; left out of the customer.* webhook events.
	Stats *CustomerStats `json:"stats,omitempty"`
}

// Preferences are a customer's preferences; empty lists mean "any".
type Preferences struct {
	// Days are three-letter day names: mon, tue, wed, thu, fri, sat, sun.
	Days    []string `json:"days"`
	Windows []Window `json:"windows"`
	// Services are the services they want, in the order they want them.
	Services []string `json:"services"`
	// StaffIDs are the only people whose openings they want; left out when empty, so a
	// customer who wants anyone reads as before people existed.
	StaffIDs []uuid.UUID `json:"staff_ids,omitempty"`
}

// Window is a daily time window, "HH:MM" in the shop's time zone: Start inclusive, End
// exclusive (End may be "24:00").
type Window struct {
	Start string `json:"start"`
	End   string `json:"end"`
}

// CustomerList is a page of a shop's customers (GET /api/customers).
type CustomerList struct {
	Customers []Customer `json:"customers"`
	// NextCursor is null on the last page.
	NextCursor *string `json:"next_cursor"`
}

// CustomerImport is the answer of a CSV import of customers (POST
// /api/customers/import): the counts, and each row's result.
type CustomerImport struct {
	Created   int                 `json:"created"`
	Updated   int                 `json:"updated"`
	Unchanged int                 `json:"unchanged"`
	Rejected  int                 `json:"rejected"`
	Rows      []CustomerImportRow `json:"rows"`
}

// CustomerImportRow is one row's result in a CustomerImport.
type CustomerImportRow struct {
	Line       int        `json:"line"`
	Phone      string     `json:"phone"`
	Result     string     `json:"result"`
	CustomerID *uuid.UUID `json:"customer_id"`
	Reason     string     `json:"reason,omitempty"`
}
