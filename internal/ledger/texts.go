package ledger

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/texts"
)

// The transactional texts of a booking's payment outcome, queued in the transition's
// transaction (the wording is internal/texts').

// BookedText is what a customer who holds a booking is told of it, wherever it is told
// (the answer to their YES, the booking sweep's notice, the link made late): the
// confirmation when nothing is left to pay, else the payment link, else that the link
// follows in a separate text.
func BookedText(shop shops.Shop, service string, startsAt time.Time, confirmed bool, url string) string {
	switch {
	case confirmed:
		return texts.Confirmed(shop, service, startsAt)
	case url != "":
		return texts.Link(shop, service, startsAt, url, slots.PayWithin)
	default:
		return texts.BookedLinkFollows(shop, service, startsAt)
	}
}

func (s *Service) textConfirmed(ctx context.Context, tx pgx.Tx, l locked) error {
	_, err := s.queue.InsertTx(ctx, tx, jobs.Text{
		Key: "confirmed:" + l.b.ID.String(), ShopID: l.shop.ID, From: l.shop.SMSNumber, To: l.customer.Phone,
		Body: BookedText(l.shop, l.op.Service, l.op.StartsAt, true, ""), NotAfter: l.op.StartsAt,
	}, nil)
	if err != nil {
		return fmt.Errorf("enqueue confirmation text: %w", err)
	}
	return nil
}

func (s *Service) textLapsed(ctx context.Context, tx pgx.Tx, l locked) error {
	_, err := s.queue.InsertTx(ctx, tx, jobs.Text{
		Key: "lapsed:" + l.b.ID.String(), ShopID: l.shop.ID, From: l.shop.SMSNumber, To: l.customer.Phone,
		Body:      texts.Lapsed(l.shop, l.op.Service, l.op.StartsAt),
		BookingID: l.b.ID, WhileBookingStatus: slots.BookingPaymentFailed,
	}, nil)
	if err != nil {
		return fmt.Errorf("enqueue lapsed text: %w", err)
	}
	return nil
}
