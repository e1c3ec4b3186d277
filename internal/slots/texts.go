package slots

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// LinkText is the SMS that carries a payment link: the answer to a winning YES, or the
// text the checkout job sends when the link could not be made in time.
func LinkText(shop shops.Shop, service string, startsAt time.Time, url string) string {
	return fmt.Sprintf("%s: %s %s is yours! Pay within 30 min to keep it: %s",
		shop.Name, service, shop.When(startsAt), url)
}

// ConfirmedText tells a customer the payment went through.
func ConfirmedText(shop shops.Shop, service string, startsAt time.Time) string {
	return fmt.Sprintf("%s: you're booked for %s %s. See you then!",
		shop.Name, service, shop.When(startsAt))
}

// LapsedText tells a customer their hold ended because the payment did not go through.
func LapsedText(shop shops.Shop, service string, startsAt time.Time) string {
	return fmt.Sprintf("%s: your hold on %s %s has lapsed because the payment didn't go through. You have not been charged.",
		shop.Name, service, shop.When(startsAt))
}

// RefundedText tells a customer their late payment was refunded.
func RefundedText(shop shops.Shop, service string, startsAt time.Time) string {
	return fmt.Sprintf("%s: sorry, your payment for %s %s arrived after the slot had gone to someone else. We've refunded it in full.",
		shop.Name, service, shop.When(startsAt))
}

// DuplicateRefundedText tells a customer that a second payment for a slot they had
// already paid for was refunded.
func DuplicateRefundedText(shop shops.Shop, service string, startsAt time.Time) string {
	return fmt.Sprintf("%s: you paid twice for %s %s. We've refunded the second payment in full; you're still booked.",
		shop.Name, service, shop.When(startsAt))
}

func (s *Service) textConfirmed(ctx context.Context, tx pgx.Tx, l locked) error {
	_, err := s.queue.InsertTx(ctx, tx, jobs.Text{
		Key: "confirmed:" + l.b.ID.String(), ShopID: l.shop.ID, From: l.shop.SMSNumber, To: l.customer.Phone,
		Body: ConfirmedText(l.shop, l.op.Service, l.op.StartsAt), NotAfter: l.op.StartsAt,
	}, nil)
	if err != nil {
		return fmt.Errorf("enqueue confirmation text: %w", err)
	}
	return nil
}

func (s *Service) textLapsed(ctx context.Context, tx pgx.Tx, l locked) error {
	_, err := s.queue.InsertTx(ctx, tx, jobs.Text{
		Key: "lapsed:" + l.b.ID.String(), ShopID: l.shop.ID, From: l.shop.SMSNumber, To: l.customer.Phone,
		Body:      LapsedText(l.shop, l.op.Service, l.op.StartsAt),
		BookingID: l.b.ID, WhileBookingStatus: BookingPaymentFailed,
	}, nil)
	if err != nil {
		return fmt.Errorf("enqueue lapsed text: %w", err)
	}
	return nil
}
