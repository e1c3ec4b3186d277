package slots

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/texts"
)

// PayWithin is how long a payment link's text tells the customer they have to pay: the
// configured hold, a minute short so the text's own travel never makes it a promise the
// hold does not keep (30 min by default).
func (s *Service) PayWithin() time.Duration {
	return s.cfg.CheckoutHold - time.Minute
}

func (s *Service) textConfirmed(ctx context.Context, tx pgx.Tx, l locked) error {
	_, err := s.queue.InsertTx(ctx, tx, jobs.Text{
		Key: "confirmed:" + l.b.ID.String(), ShopID: l.shop.ID, From: l.shop.SMSNumber, To: l.customer.Phone,
		Body: texts.Confirmed(l.shop, l.op.Service, l.op.StartsAt), NotAfter: l.op.StartsAt,
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
		BookingID: l.b.ID, WhileBookingStatus: BookingPaymentFailed,
	}, nil)
	if err != nil {
		return fmt.Errorf("enqueue lapsed text: %w", err)
	}
	return nil
}
