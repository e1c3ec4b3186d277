package ledger

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/rivertype"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/inbox"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/texts"
)

// The transactional texts of a booking's payment outcome, queued in the transition's
// transaction (the wording is internal/texts').

// BookedText is what a customer who holds a booking is told of it, in w, wherever it
// is told (the answer to their YES, the booking sweep's notice, the link made late, the
// confirmation after payment): the confirmation when nothing is left to pay, else the
// payment link, else that the link follows in a separate text.
func BookedText(w texts.Words, shop shops.Shop, service string, startsAt time.Time, confirmed bool, url string) string {
	switch {
	case confirmed:
		return w.Confirmed(shop, service, startsAt)
	case url != "":
		return w.Link(shop, service, startsAt, url, slots.PayWithin)
	default:
		return w.BookedLinkFollows(shop, service, startsAt)
	}
}

// queueText queues a transactional text to customer in tx (the outbox sends it) and
// shows it in their conversation with the shop (internal/inbox: queued, then sent or
// not by the outbox), so the owner reads the customer's replies beside it. A text
// queued before (the same key) is neither queued nor recorded again.
func (s *Service) queueText(ctx context.Context, tx pgx.Tx, t jobs.Text, customer uuid.UUID) (*rivertype.JobInsertResult, error) {
	res, err := s.queue.InsertTx(ctx, tx, t, nil)
	if err != nil || res.UniqueSkippedAsDuplicate || t.To == "" {
		return res, err
	}
	_, err = inbox.RecordOut(ctx, tx, inbox.OutboundText{
		ShopID: t.ShopID, Phone: t.To, CustomerID: customer, Body: t.Body, At: s.cfg.Now(), Key: t.Key,
	})
	return res, err
}

// wordsFor is the language customer is texted in: theirs, or else the shop's.
func wordsFor(shop shops.Shop, customer db.Customer) texts.Words {
	return texts.In(language.Code(customer.Language.String).Or(shop.Language))
}

func (s *Service) textConfirmed(ctx context.Context, tx pgx.Tx, l locked) error {
	_, err := s.queueText(ctx, tx, jobs.Text{
		Key: "confirmed:" + l.b.ID.String(), ShopID: l.shop.ID, From: l.shop.SMSNumber, To: l.customer.Phone,
		Body: BookedText(wordsFor(l.shop, l.customer), l.shop, l.op.Service, l.op.StartsAt, true, ""), NotAfter: l.op.StartsAt,
	}, l.customer.ID)
	if err != nil {
		return fmt.Errorf("enqueue confirmation text: %w", err)
	}
	return nil
}

func (s *Service) textLapsed(ctx context.Context, tx pgx.Tx, l locked) error {
	_, err := s.queueText(ctx, tx, jobs.Text{
		Key: "lapsed:" + l.b.ID.String(), ShopID: l.shop.ID, From: l.shop.SMSNumber, To: l.customer.Phone,
		Body:      wordsFor(l.shop, l.customer).Lapsed(l.shop, l.op.Service, l.op.StartsAt),
		BookingID: l.b.ID, WhileBookingStatus: BookingPaymentFailed,
	}, l.customer.ID)
	if err != nil {
		return fmt.Errorf("enqueue lapsed text: %w", err)
	}
	return nil
}
