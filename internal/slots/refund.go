package slots

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/payments"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/texts"
)

// RefundBooking refunds one payment of a booking and tells the customer: a late payment
// of a failed booking, or a second payment of a confirmed one. The payment is
// paymentIntentID, else the booking's, else its Checkout Session's. The payment that
// holds a confirmed booking is never refunded.
//
// Checking first and calling Stripe without a lock is safe: the refund of a failed
// booking's payment was decided (refund_requested_at) in the transaction that enqueued
// this job, and from then on the booking can no longer be confirmed; a confirmed booking
// never changes its payment. Stripe's idempotency key is per (booking, payment), so a
// retry after a lost answer cannot refund twice, and a payment Stripe reports refunded
// already counts as done.
func (p *Payments) RefundBooking(ctx context.Context, bookingID uuid.UUID, paymentIntentID string) error {
	b, err := p.s.q.BookingGet(ctx, p.s.pool, bookingID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get booking %s: %w", bookingID, err)
	}
	if p.stripe == nil {
		return errUnconfigured
	}
	cctx, cancel := context.WithTimeout(ctx, p.cfg.StripeTimeout)
	defer cancel()
	pi := cmp.Or(paymentIntentID, b.StripePaymentIntentID.String)
	if pi == "" && b.StripeCheckoutSessionID.Valid {
		sess, err := p.stripe.GetCheckout(cctx, b.StripeCheckoutSessionID.String)
		if err != nil && !payments.Transient(err) {
			return river.JobCancel(fmt.Errorf("find payment of booking %s: %w", b.ID, err))
		}
		if err != nil {
			return fmt.Errorf("find payment of booking %s: %w", b.ID, err)
		}
		pi = sess.PaymentIntentID
	}
	if pi == "" {
		return river.JobCancel(fmt.Errorf("booking %s: no payment to refund", b.ID))
	}
	duplicate := false
	switch b.Status {
	case BookingConfirmed:
		if !b.StripePaymentIntentID.Valid || b.StripePaymentIntentID.String == pi {
			// The payment that holds the booking (or one that cannot be told from it).
			p.log.WarnContext(ctx, "refund of a confirmed booking's payment refused", "booking_id", b.ID)
			return nil
		}
		duplicate = true
	case BookingPendingPayment:
		// No refund is decided for a pending booking: its payment will confirm it.
		return river.JobCancel(fmt.Errorf("booking %s is pending: its payment is not refunded", b.ID))
	}

	refundID, err := p.stripe.Refund(cctx, pi, b.ID.String())
	if err != nil {
		if !payments.Transient(err) {
			return river.JobCancel(fmt.Errorf("refund booking %s: %w", b.ID, err))
		}
		return fmt.Errorf("refund booking %s: %w", b.ID, err)
	}
	now := p.s.cfg.Now()
	return pgx.BeginFunc(ctx, p.s.pool, func(tx pgx.Tx) error {
		if !duplicate {
			_, err := p.s.q.BookingSetRefund(ctx, tx, db.BookingSetRefundParams{
				ID: b.ID, RefundID: pgText(refundID), PaymentIntentID: pgText(pi), Now: now.UTC(),
			})
			// No row: an earlier run stored this refund, or the booking's first late
			// payment's. The text below is keyed per payment, so it is sent once each.
			if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("store refund: %w", err)
			}
		}
		return p.textRefunded(ctx, tx, b, pi, duplicate)
	})
}

func (p *Payments) textRefunded(ctx context.Context, tx pgx.Tx, b db.Booking, paymentIntentID string, duplicate bool) error {
	shop, err := shops.Read(ctx, tx, b.ShopID)
	if err != nil {
		return err
	}
	op, err := p.s.q.OpeningGet(ctx, tx, b.OpeningID)
	if err != nil {
		return fmt.Errorf("get opening: %w", err)
	}
	customer, err := p.s.q.CustomerGet(ctx, tx, b.CustomerID)
	if err != nil {
		return fmt.Errorf("get customer: %w", err)
	}
	body := texts.Refunded(shop, op.Service, op.StartsAt)
	if duplicate {
		body = texts.DuplicateRefunded(shop, op.Service, op.StartsAt)
	}
	if _, err := p.s.queue.InsertTx(ctx, tx, jobs.Text{
		Key: "refunded:" + b.ID.String() + ":" + paymentIntentID, ShopID: shop.ID, From: shop.SMSNumber, To: customer.Phone,
		Body: body,
	}, nil); err != nil {
		return fmt.Errorf("enqueue refund text: %w", err)
	}
	return nil
}

// RefundWorker runs jobs.Refund.
type RefundWorker struct {
	river.WorkerDefaults[jobs.Refund]
	Payments *Payments
}

// Work implements river.Worker.
func (w *RefundWorker) Work(ctx context.Context, job *river.Job[jobs.Refund]) error {
	return w.Payments.RefundBooking(ctx, job.Args.BookingID, job.Args.PaymentIntentID)
}
