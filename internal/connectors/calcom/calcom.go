// Package calcom reads cal.com's webhook deliveries into the book's appointment shape
// (internal/connectors). A delivery is verified before anything in it is read: the
// X-Cal-Signature-256 header is the hex HMAC-SHA256 of the raw body, keyed with the
// webhook's secret, with no timestamp (so deliveries are deduplicated by trigger and
// booking uid, Delivery.ID).
//
// Triggers read: BOOKING_CREATED (booked), BOOKING_CANCELLED (cancelled),
// BOOKING_RESCHEDULED (the new booking, uid, booked; the original one, rescheduleUid at
// rescheduleStartTime, moved). Every other trigger (BOOKING_REQUESTED, which awaits the
// organizer's approval, BOOKING_REJECTED, BOOKING_PAID, MEETING_ENDED...) is read as a
// delivery with no appointments, to be acknowledged.
package calcom

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/slotrecovery/slotrecovery/internal/connectors"
)

// SignatureHeader is the header that carries a delivery's signature.
const SignatureHeader = "X-Cal-Signature-256"

// noSecret is what cal.com sends in SignatureHeader for a webhook without a secret: a
// connector always has one, so this is refused like any wrong signature.
const noSecret = "no-secret-provided"

// Sign returns the signature cal.com sends for body under secret (tests and simulate).
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Verify checks that signature is body's under secret. An empty secret, a missing
// signature and cal.com's "no-secret-provided" are connectors.ErrSignature.
func Verify(secret string, body []byte, signature string) error {
	signature = strings.TrimSpace(signature)
	if secret == "" || signature == "" || signature == noSecret {
		return connectors.ErrSignature
	}
	got, err := hex.DecodeString(signature)
	if err != nil || len(got) != sha256.Size {
		return connectors.ErrSignature
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	if !hmac.Equal(got, m.Sum(nil)) {
		return connectors.ErrSignature
	}
	return nil
}

// Read verifies a delivery and reads it: what a handler calls with the raw body (at
// most connectors.MaxBody) and the SignatureHeader.
func Read(secret string, body []byte, signature string) (connectors.Delivery, error) {
	if err := Verify(secret, body, signature); err != nil {
		return connectors.Delivery{}, err
	}
	return Parse(body)
}

// delivery is cal.com's webhook body, as far as the book reads it.
type delivery struct {
	TriggerEvent string  `json:"triggerEvent"`
	CreatedAt    string  `json:"createdAt"`
	Payload      payload `json:"payload"`
}

type payload struct {
	UID                 string                     `json:"uid"`
	Title               string                     `json:"title"`
	EventTitle          string                     `json:"eventTitle"`
	Type                string                     `json:"type"`
	StartTime           string                     `json:"startTime"`
	EndTime             string                     `json:"endTime"`
	Length              int                        `json:"length"`
	Status              string                     `json:"status"`
	Price               int64                      `json:"price"`
	Organizer           person                     `json:"organizer"`
	Attendees           []person                   `json:"attendees"`
	Responses           map[string]json.RawMessage `json:"responses"`
	SMSReminderNumber   *string                    `json:"smsReminderNumber"`
	RescheduleUID       string                     `json:"rescheduleUid"`
	RescheduleStartTime string                     `json:"rescheduleStartTime"`
	RescheduleEndTime   string                     `json:"rescheduleEndTime"`
}

type person struct {
	Name        string  `json:"name"`
	Email       string  `json:"email"`
	PhoneNumber *string `json:"phoneNumber"`
}

// Parse reads a verified delivery's body. A body that is not cal.com's JSON, or a
// booking trigger without a uid or a readable time, is connectors.ErrPayload.
func Parse(body []byte) (connectors.Delivery, error) {
	var d delivery
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&d); err != nil {
		return connectors.Delivery{}, fmt.Errorf("%w: %v", connectors.ErrPayload, err)
	}
	if d.TriggerEvent == "" {
		return connectors.Delivery{}, fmt.Errorf("%w: no triggerEvent", connectors.ErrPayload)
	}
	out := connectors.Delivery{ID: d.TriggerEvent + ":" + d.Payload.UID, Event: d.TriggerEvent}
	var status connectors.Status
	switch d.TriggerEvent {
	case "BOOKING_CREATED":
		status = connectors.StatusBooked
	case "BOOKING_CANCELLED":
		status = connectors.StatusCancelled
	case "BOOKING_RESCHEDULED":
		status = connectors.StatusBooked
	default:
		return out, nil
	}
	p := d.Payload
	at, err := parseTime(d.CreatedAt)
	if err != nil {
		return connectors.Delivery{}, fmt.Errorf("%w: createdAt: %v", connectors.ErrPayload, err)
	}
	a, err := p.appointment(p.UID, p.StartTime, p.EndTime, status, at)
	if err != nil {
		return connectors.Delivery{}, err
	}
	// The new booking first: the original's freed time then finds it booked if the move
	// kept part of it.
	out.Appointments = append(out.Appointments, a)
	if d.TriggerEvent == "BOOKING_RESCHEDULED" && p.RescheduleUID != "" && p.RescheduleStartTime != "" {
		end := p.RescheduleEndTime
		if end == "" {
			if start, err := parseTime(p.RescheduleStartTime); err == nil {
				end = start.Add(time.Duration(a.DurationMinutes) * time.Minute).Format(time.RFC3339)
			}
		}
		out.Appointments[0].Replaces = p.RescheduleUID
		orig, err := p.appointment(p.RescheduleUID, p.RescheduleStartTime, end, connectors.StatusMoved, at)
		if err != nil {
			return connectors.Delivery{}, err
		}
		out.Appointments = append(out.Appointments, orig)
	}
	return out, nil
}

// appointment is the booking uid from start to end in status, as of at.
func (p payload) appointment(uid, start, end string, status connectors.Status, at time.Time) (connectors.Appointment, error) {
	if strings.TrimSpace(uid) == "" {
		return connectors.Appointment{}, fmt.Errorf("%w: no booking uid", connectors.ErrPayload)
	}
	s, err := parseTime(start)
	if err != nil {
		return connectors.Appointment{}, fmt.Errorf("%w: startTime: %v", connectors.ErrPayload, err)
	}
	minutes := p.Length
	if e, err := parseTime(end); err == nil && e.After(s) {
		minutes = int(e.Sub(s) / time.Minute)
	}
	if minutes < 1 || minutes > 1440 {
		return connectors.Appointment{}, fmt.Errorf("%w: a booking of %d minutes", connectors.ErrPayload, minutes)
	}
	a := connectors.Appointment{
		Source: connectors.SourceCalcom, ExternalID: uid, Status: status, StartsAt: s.UTC(), DurationMinutes: minutes,
		Service: firstOf(p.EventTitle, p.Type, p.Title), ExternalStaff: p.Organizer.Email, UpdatedAt: at.UTC(),
		Phone: p.phone(),
	}
	if p.Price > 0 {
		a.PriceCents = p.Price // cal.com keeps prices in the currency's minor unit
	}
	if len(p.Attendees) > 0 {
		a.CustomerName = p.Attendees[0].Name
	}
	return a, nil
}

// phone is the attendee's number: their phoneNumber, else the booking form's answer
// (attendeePhoneNumber, phone), else the SMS reminder number.
func (p payload) phone() string {
	if len(p.Attendees) > 0 && p.Attendees[0].PhoneNumber != nil && *p.Attendees[0].PhoneNumber != "" {
		return *p.Attendees[0].PhoneNumber
	}
	for _, k := range []string{"attendeePhoneNumber", "phone", "phoneNumber"} {
		if v := responseText(p.Responses[k]); v != "" {
			return v
		}
	}
	if p.SMSReminderNumber != nil {
		return *p.SMSReminderNumber
	}
	return ""
}

// responseText reads a booking form answer, given as {"label":..., "value":"..."} or as
// the bare value.
func responseText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var field struct {
		Value json.RawMessage `json:"value"`
	}
	if json.Unmarshal(raw, &field) == nil && len(field.Value) > 0 && json.Unmarshal(field.Value, &s) == nil {
		return s
	}
	return ""
}

func parseTime(s string) (time.Time, error) {
	return time.Parse(time.RFC3339Nano, s)
}

func firstOf(ss ...string) string {
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	return ""
}
