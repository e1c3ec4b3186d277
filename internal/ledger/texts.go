package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/inbox"
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
// payment link, else that the link follows in a separate text. It names the person
// (staff, "" for anyone), as the offer did; now is when it is told (the policy's line
// says what cancelling costs from then).
func BookedText(w texts.Words, shop shops.Shop, service, staff string, startsAt time.Time, confirmed bool, url string, now time.Time) string {
	service = w.ServiceWith(service, staff)
	switch {
	case confirmed:
		return w.Confirmed(&shop, service, startsAt)
	case url != "" && (shop.PaymentMode == shops.PaymentDeposit || shop.PaymentMode == shops.PaymentCard ||
		shop.Protection.LateCancelFeeCents > 0):
		// No-show protection: the texts say what the page takes, and the policy's line.
		return w.LinkProtected(&shop, service, startsAt, url, slots.PayWithin, now)
	case url != "":
		return w.Link(&shop, service, startsAt, url, slots.PayWithin)
	default:
		return w.BookedLinkFollows(&shop, service, startsAt)
	}
}

// queueText queues a transactional text to a customer in tx, shown in their
// conversation with the shop (inbox.Queue), at the ledger's clock. queued is false for
// a text queued before (the same key).
func (s *Service) queueText(ctx context.Context, tx pgx.Tx, o inbox.Outgoing) (queued bool, err error) {
	o.At = s.cfg.Now()
	return inbox.Queue(ctx, tx, s.queue, o)
}

// staffName is the name of the person whose time op offers, "" for anyone's (or one
// no longer in the catalogue): the booked texts name them as the offer did.
func staffName(ctx context.Context, q db.DBTX, op db.SlotOpening) (string, error) {
	if !op.StaffID.Valid {
		return "", nil
	}
	p, err := queries.StaffGet(ctx, q, db.StaffGetParams{ID: op.StaffID.UUID, ShopID: op.ShopID})
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the booked person: %w", err)
	}
	return p.Name, nil
}

// wordsFor is the language customer is texted in: theirs, or else the shop's.
func wordsFor(shop shops.Shop, customer db.Customer) texts.Words {
	return texts.In(language.Code(customer.Language.String).Or(shop.Language))
}

func (s *Service) textConfirmed(ctx context.Context, tx pgx.Tx, l locked) error {
	staff, err := staffName(ctx, tx, l.op)
	if err != nil {
		return err
	}
	_, err = s.queueText(ctx, tx, inbox.Outgoing{
		Key: "confirmed:" + l.b.ID.String(), ShopID: l.shop.ID, From: l.shop.SMSNumber, To: l.customer.Phone, CustomerID: l.customer.ID,
		Body: BookedText(wordsFor(l.shop, l.customer), l.shop, l.op.Service, staff, l.op.StartsAt, true, "", s.cfg.Now()), NotAfter: l.op.StartsAt,
	})
	if err != nil {
		return fmt.Errorf("enqueue confirmation text: %w", err)
	}
	return nil
}

func (s *Service) textLapsed(ctx context.Context, tx pgx.Tx, l locked) error {
	_, err := s.queueText(ctx, tx, inbox.Outgoing{
		Key: "lapsed:" + l.b.ID.String(), ShopID: l.shop.ID, From: l.shop.SMSNumber, To: l.customer.Phone, CustomerID: l.customer.ID,
		Body:      wordsFor(l.shop, l.customer).Lapsed(&l.shop, l.op.Service, l.op.StartsAt),
		BookingID: l.b.ID, WhileBookingStatus: BookingPaymentFailed,
	})
	if err != nil {
		return fmt.Errorf("enqueue lapsed text: %w", err)
	}
	return nil
}
