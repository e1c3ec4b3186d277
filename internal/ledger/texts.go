package ledger

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/texts"
)

// The transactional texts of a booking's payment outcome, queued in the transition's
// transaction (the wording is internal/texts').

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
		BookingID: l.b.ID, WhileBookingStatus: slots.BookingPaymentFailed,
	}, nil)
	if err != nil {
		return fmt.Errorf("enqueue lapsed text: %w", err)
	}
	return nil
}
