// Package square reads Square's booking webhooks into the book's appointment shape
// (internal/connectors). A delivery is verified before anything in it is read: the
// x-square-hmacsha256-signature header is the base64 HMAC-SHA256 of the notification URL
// (as the subscription names it) followed by the raw body, keyed with the
// subscription's signature key. Square's own published test vector passes
// (square_test.go).
//
// Events read: booking.created and booking.updated (Square has no cancel event: a
// cancellation is an update whose status is CANCELLED_BY_CUSTOMER, CANCELLED_BY_SELLER
// or DECLINED). A booking's version orders its descriptions; the event id is the
// delivery's (Delivery.ID). Every other event is a delivery with no appointments.
//
// Square's booking names no service or customer by name, only by id: Service is left
// empty (a shop with services offers each customer their own) and Phone too (reading
// the customer's number needs Square's Customers API and the connector's token).
package square

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/slotrecovery/slotrecovery/internal/connectors"
)

// SignatureHeader is the header that carries a delivery's signature.
const SignatureHeader = "X-Square-Hmacsha256-Signature"

// Sign returns the signature Square sends for body posted to notificationURL under key
// (tests and simulate).
func Sign(key, notificationURL string, body []byte) string {
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(notificationURL))
	m.Write(body)
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// Verify checks that signature is body's, posted to notificationURL, under key. An empty
// key or URL, or a missing signature, is connectors.ErrSignature.
func Verify(key, notificationURL string, body []byte, signature string) error {
	signature = strings.TrimSpace(signature)
	if key == "" || notificationURL == "" || signature == "" {
		return connectors.ErrSignature
	}
	got, err := base64.StdEncoding.DecodeString(signature)
	if err != nil || len(got) != sha256.Size {
		return connectors.ErrSignature
	}
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(notificationURL))
	m.Write(body)
	if !hmac.Equal(got, m.Sum(nil)) {
		return connectors.ErrSignature
	}
	return nil
}

// Read verifies a delivery and reads it: what a handler calls with the raw body (at
// most connectors.MaxBody), the connector's notification URL and the SignatureHeader.
func Read(key, notificationURL string, body []byte, signature string) (connectors.Delivery, error) {
	if err := Verify(key, notificationURL, body, signature); err != nil {
		return connectors.Delivery{}, err
	}
	return Parse(body)
}

// event is Square's webhook envelope, as far as the book reads it.
type event struct {
	MerchantID string `json:"merchant_id"`
	Type       string `json:"type"`
	EventID    string `json:"event_id"`
	CreatedAt  string `json:"created_at"`
	Data       struct {
		Type   string `json:"type"`
		ID     string `json:"id"`
		Object struct {
			Booking *booking `json:"booking"`
		} `json:"object"`
	} `json:"data"`
}

type booking struct {
	ID                  string    `json:"id"`
	Version             int64     `json:"version"`
	Status              string    `json:"status"`
	UpdatedAt           string    `json:"updated_at"`
	StartAt             string    `json:"start_at"`
	CustomerID          string    `json:"customer_id"`
	AppointmentSegments []segment `json:"appointment_segments"`
}

type segment struct {
	DurationMinutes     int    `json:"duration_minutes"`
	IntermissionMinutes int    `json:"intermission_minutes"`
	TeamMemberID        string `json:"team_member_id"`
	ServiceVariationID  string `json:"service_variation_id"`
}

// statuses maps Square's booking statuses to the book's.
var statuses = map[string]connectors.Status{
	"PENDING":               connectors.StatusBooked, // awaiting the seller: the time is held
	"ACCEPTED":              connectors.StatusBooked,
	"CANCELLED_BY_CUSTOMER": connectors.StatusCancelled,
	"CANCELLED_BY_SELLER":   connectors.StatusCancelled,
	"DECLINED":              connectors.StatusCancelled,
	"NO_SHOW":               connectors.StatusNoShow,
}

// Parse reads a verified delivery's body. A body that is not Square's JSON, or a
// booking event without a booking id, a known status or a readable time, is
// connectors.ErrPayload.
func Parse(body []byte) (connectors.Delivery, error) {
	var e event
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(&e); err != nil {
		return connectors.Delivery{}, fmt.Errorf("%w: %v", connectors.ErrPayload, err)
	}
	if e.EventID == "" || e.Type == "" {
		return connectors.Delivery{}, fmt.Errorf("%w: no event_id or type", connectors.ErrPayload)
	}
	out := connectors.Delivery{ID: e.EventID, Event: e.Type}
	if e.Type != "booking.created" && e.Type != "booking.updated" {
		return out, nil
	}
	b := e.Data.Object.Booking
	if b == nil || strings.TrimSpace(b.ID) == "" {
		return connectors.Delivery{}, fmt.Errorf("%w: no booking", connectors.ErrPayload)
	}
	status, ok := statuses[b.Status]
	if !ok {
		return connectors.Delivery{}, fmt.Errorf("%w: booking status %q", connectors.ErrPayload, b.Status)
	}
	start, err := time.Parse(time.RFC3339Nano, b.StartAt)
	if err != nil {
		return connectors.Delivery{}, fmt.Errorf("%w: start_at: %v", connectors.ErrPayload, err)
	}
	// Without the booking's own updated_at, the event's time orders it (after its
	// version, which Square always sends).
	updated, err := time.Parse(time.RFC3339Nano, b.UpdatedAt)
	if err != nil {
		if updated, err = time.Parse(time.RFC3339Nano, e.CreatedAt); err != nil {
			return connectors.Delivery{}, fmt.Errorf("%w: no updated_at or created_at", connectors.ErrPayload)
		}
	}
	if b.Version < 0 {
		return connectors.Delivery{}, fmt.Errorf("%w: version %d", connectors.ErrPayload, b.Version)
	}
	minutes, staff := 0, ""
	for _, s := range b.AppointmentSegments {
		if s.DurationMinutes < 0 || s.IntermissionMinutes < 0 || s.DurationMinutes > 1440 || s.IntermissionMinutes > 1440 {
			return connectors.Delivery{}, fmt.Errorf("%w: a segment of %d minutes", connectors.ErrPayload, s.DurationMinutes)
		}
		minutes += s.DurationMinutes + s.IntermissionMinutes
		if staff == "" {
			staff = s.TeamMemberID
		}
	}
	if minutes < 1 || minutes > 1440 {
		return connectors.Delivery{}, fmt.Errorf("%w: a booking of %d minutes", connectors.ErrPayload, minutes)
	}
	out.Appointments = []connectors.Appointment{{
		Source: connectors.SourceSquare, ExternalID: b.ID, Status: status, StartsAt: start.UTC(),
		DurationMinutes: minutes, ExternalStaff: staff, Version: b.Version, UpdatedAt: updated.UTC(),
	}}
	return out, nil
}
