package inbox

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/slotrecovery/slotrecovery/internal/jobs"
)

// Shown says how a queued text shows in the shop's conversation with its recipient.
type Shown uint8

const (
	// ShownQueued records the text in the conversation as queued; the outbox marks it
	// sent or not sent (MarkSent, MarkUnsent). The default.
	ShownQueued Shown = iota
	// ShownAlready is a text the conversation holds already: an answer recorded when the
	// webhook gave it and texted later, or an owner's reply recorded by Reply.
	ShownAlready
	// ShownNowhere is a text that belongs to no conversation of the shop's with a
	// customer: an alert to the owner's own phone.
	ShownNowhere
)

// Outgoing is one text for the outbox to send (internal/outbox), from a shop's number.
type Outgoing struct {
	// Key makes the text unique: the same key is queued and recorded once.
	Key    string
	ShopID uuid.UUID
	From   string
	To     string
	Body   string
	// CustomerID is the recipient as the shop's customer (uuid.Nil: not one, or not
	// known to the caller).
	CustomerID uuid.UUID
	// NotAfter, when set, drops the text if it has not gone out by then.
	NotAfter time.Time
	// BookingID and WhileBookingStatus, when set, send it only while the booking is
	// still in that status.
	BookingID          uuid.UUID
	WhileBookingStatus string
	Shown              Shown
	// At is when it was queued, as the conversation shows it.
	At time.Time
	// About is the conversation the text quotes when it goes to someone else (the
	// owner's alert of a customer's text): the customer's erasure deletes it with them.
	About uuid.UUID
	// ByOwner marks an owner's reply: it goes on its own queue (jobs.QueueOwnerTexts),
	// so that no number of them delays the texts customers wait for. Every other text
	// is the shop's own (an answer, a payment link, a confirmation, an alert).
	ByOwner bool
}

// Queue queues a text for the outbox in tx and records it in the shop's conversation
// with its recipient as o.Shown says, so the owner reads the customer's replies beside
// it: the one way the server queues a text. The job exists, and the record, only if tx
// commits. A text queued before (the same key) is neither queued nor recorded again:
// queued is false then.
func Queue(ctx context.Context, tx pgx.Tx, queue jobs.Inserter, o Outgoing) (queued bool, err error) {
	var opts *river.InsertOpts // jobs.Text's own: the texts' queue
	if o.ByOwner {
		opts = &river.InsertOpts{Queue: jobs.QueueOwnerTexts}
	}
	res, err := queue.InsertTx(ctx, tx, jobs.Text{
		Key: o.Key, ShopID: o.ShopID, From: o.From, To: o.To, Body: o.Body, NotAfter: o.NotAfter,
		BookingID: o.BookingID, WhileBookingStatus: o.WhileBookingStatus, About: o.About,
	}, opts)
	if err != nil {
		return false, fmt.Errorf("queue text %s: %w", o.Key, err)
	}
	if res.UniqueSkippedAsDuplicate {
		return false, nil
	}
	if o.Shown != ShownQueued || o.To == "" {
		return true, nil
	}
	if _, err := RecordOut(ctx, tx, OutboundText{
		ShopID: o.ShopID, Phone: o.To, CustomerID: o.CustomerID, Body: o.Body, At: o.At, Key: o.Key,
	}); err != nil {
		return false, err
	}
	return true, nil
}
