package book

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/api"
	"github.com/slotrecovery/slotrecovery/internal/connectors"
	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/hooks"
)

// API is the appointment as the owners' API shows it (api.Appointment), without its
// opening (Declaration.API). Its phone is as it stands: whole from Get, masked from List (the API and the events share it).
func (a Appointment) API() api.Appointment {
	out := api.Appointment{
		ID: a.ID, CustomerName: a.Name, Service: a.Service, PriceCents: a.PriceCents,
		StartsAt: a.StartsAt.UTC(), DurationMinutes: a.DurationMinutes, Status: string(a.Status), Source: string(a.Source),
		Version: a.Version, UpdatedAt: a.UpdatedAt.UTC(), CreatedAt: a.CreatedAt.UTC(),
	}
	if a.Phone != "" {
		p := a.Phone
		out.Phone = &p
	}
	if x := a.External; x != nil {
		out.External = &api.AppointmentExternal{Source: string(x.Source), ID: x.ID}
	}
	if cu := a.Customer; cu != nil {
		out.Customer = &api.AppointmentCustomer{ID: cu.ID, Name: cu.Name}
	}
	if s := a.Staff; s != nil {
		out.Staff = &api.Staff{ID: s.ID, Name: s.Name}
	}
	return out
}

// API is the declaration as the owners' API shows it beside its appointment.
func (d Declaration) API() *api.AppointmentOpening {
	out := &api.AppointmentOpening{State: string(d.State), StartsAt: d.StartsAt.UTC(), DurationMinutes: d.DurationMinutes}
	if d.Reason != "" {
		r := d.Reason
		out.Reason = &r
	}
	if d.OpeningID != uuid.Nil {
		id := d.OpeningID
		out.ID = &id
	}
	return out
}

// before is what the book held of an appointment before a change: nothing (known
// false: first heard of), or the stored row and the name of the person it was with.
type before struct {
	known     bool
	row       db.Appointment
	staffName string
}

// changeEvent is the webhook event of the change from b to a (as stored after it), and
// for appointment.moved the time a held before: "" when the change is none of the
// book's events. Created is a first description of a booked appointment; cancelled, one
// that makes it cancelled (or first describes it so); moved, one that makes it moved (or
// first describes it so: the time it held is its own), or keeps it booked at another
// time, length or person. Anything else (a change of name or service, booked again
// after a cancellation, completed, a no-show) records no event.
func changeEvent(b before, a Appointment) (string, *hooks.AppointmentTime) {
	prev := connectors.Status(b.row.Status)
	switch {
	case !b.known && a.Status == connectors.StatusBooked:
		return hooks.AppointmentCreated, nil
	case a.Status == connectors.StatusCancelled && (!b.known || prev != connectors.StatusCancelled):
		return hooks.AppointmentCancelled, nil
	case a.Status == connectors.StatusMoved && !b.known:
		t := &hooks.AppointmentTime{StartsAt: a.StartsAt.UTC(), DurationMinutes: a.DurationMinutes}
		if a.Staff != nil {
			t.Staff = &api.Staff{ID: a.Staff.ID, Name: a.Staff.Name}
		}
		return hooks.AppointmentMoved, t
	case a.Status == connectors.StatusMoved && prev != connectors.StatusMoved,
		a.Status == connectors.StatusBooked && prev == connectors.StatusBooked &&
			(!a.StartsAt.Equal(b.row.StartsAt) || a.DurationMinutes != int(b.row.DurationMinutes) || staffOf(a) != b.row.StaffID.UUID):
		t := &hooks.AppointmentTime{StartsAt: b.row.StartsAt.UTC(), DurationMinutes: int(b.row.DurationMinutes)}
		if b.row.StaffID.Valid {
			t.Staff = &api.Staff{ID: b.row.StaffID.UUID, Name: b.staffName}
		}
		return hooks.AppointmentMoved, t
	}
	return "", nil
}

func staffOf(a Appointment) uuid.UUID {
	if a.Staff == nil {
		return uuid.Nil
	}
	return a.Staff.ID
}

// recordChange records, in tx (the change's own transaction, holding the appointment's
// row lock), the webhook event of res's change from b, if it is one (changeEvent), at
// now. A change that did not happen (a redelivery, an older description) never gets
// here: it records nothing.
func recordChange(ctx context.Context, tx pgx.Tx, b before, res Result, now time.Time) error {
	a := res.Appointment
	typ, prev := changeEvent(b, a)
	if typ == "" {
		return nil
	}
	data := hooks.AppointmentEvent{Appointment: a.API(), Previous: prev}
	if res.Declaration != nil {
		data.Opening = res.Declaration.API()
	}
	return hooks.Record(ctx, tx, a.ShopID, typ, now, data)
}
