package jobs

import (
	"github.com/google/uuid"
	"github.com/riverqueue/river"
)

// AppointmentWriteBack writes a move-up of a cal.com or Square appointment back to the
// vendor through its API with the connector's key (internal/book: WriteBack). The book
// enqueues it in the move's own transaction.
type AppointmentWriteBack struct {
	ShopID        uuid.UUID `json:"shop_id"`
	AppointmentID uuid.UUID `json:"appointment_id"`
}

// Kind is the job's kind, stored with it: never rename it.
func (AppointmentWriteBack) Kind() string { return "appointment_write_back" }

// WriteBackAttempts is how many times a move is tried before it is left to the owner:
// River's backoff (attempt⁴ seconds) spreads eight over about two and a half hours, long
// enough to ride out a vendor's outage, short enough that the owner still has time to
// copy a move of tomorrow by hand.
const WriteBackAttempts = 8

// InsertOpts implements river.JobArgsWithInsertOpts: unique per appointment whatever
// its state (an appointment is moved once, so its move is written once even if the
// transaction that moved it were retried); retried with River's backoff.
func (AppointmentWriteBack) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueOffers, MaxAttempts: WriteBackAttempts, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}
