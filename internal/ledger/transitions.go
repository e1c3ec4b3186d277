package ledger

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/offers"
	"github.com/slotrecovery/slotrecovery/internal/pgcode"
	"github.com/slotrecovery/slotrecovery/internal/pgvalue"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
)

// The transitions of a booking's payment. They run inside the caller's transaction,
// take the opening's row lock and then the booking's (the order slots.Book uses), read the
// booking afresh under them and decide from that alone; their follow-up jobs are
// inserted, and their outbound webhook events recorded (internal/hooks), in the same
// transaction, after the changes they report.

// locked is a booking with its opening, both row-locked, and what texts need.
type locked struct {
	b        db.Booking
	op       db.SlotOpening
	shop     shops.Shop
	customer db.Customer
}

// seen is what a caller read of a pending booking before taking any lock, and decided
// from. A failure it asks for applies only if the booking still looks so under the lock:
// meanwhile the booking sweep may have stored a session or moved the expiry, and the
// customer may be paying it. Webhook events pass none: an event is the provider's word,
// not a conclusion from an earlier read.
type seen struct {
	sessionID string // "" when the booking had none
	expiresAt *time.Time
}

func seenOf(b db.Booking) *seen {
	return &seen{sessionID: b.StripeCheckoutSessionID.String, expiresAt: b.CheckoutExpiresAt}
}

func (s *seen) still(b db.Booking) bool {
	if s == nil {
		return true
	}
	if b.StripeCheckoutSessionID.String != s.sessionID {
		return false
	}
	if (b.CheckoutExpiresAt == nil) != (s.expiresAt == nil) {
		return false
	}
	return b.CheckoutExpiresAt == nil || b.CheckoutExpiresAt.Equal(*s.expiresAt)
}

// lock takes the booking's opening's row lock, found through the booking in the same
// statement, then the booking's (the order slots.Book uses: opening, then booking), and
// reads the booking under them: the one read of the booking a transition makes. An
// error wrapping ErrBookingNotFound means there is no such booking.
func (s *Service) lock(ctx context.Context, tx pgx.Tx, bookingID uuid.UUID) (locked, error) {
	var l locked
	var err error
	found := false
	if l.op, found, err = slots.LockBookedOpening(ctx, tx, bookingID); err != nil {
		return l, err
	}
	if !found {
		return l, fmt.Errorf("lock opening of booking %s: %w", bookingID, ErrBookingNotFound)
	}
	if l.b, err = queries.BookingLock(ctx, tx, bookingID); err != nil {
		return l, fmt.Errorf("lock booking: %w", err)
	}
	// The shop is read under a share lock (taken after the opening's, which nothing that
	// locks the shop's row first waits for while it is filled): a disconnection of its
	// Stripe account or a change of its charges, which hold the row while they look at
	// the openings, is then either committed before this reads it, or waits for this
	// transition; a lapsed hold cannot reopen its opening in a shop that just stopped
	// taking payments. With Connect (server configuration, as shops.Service sets it on
	// the shops it returns) its account must be able to take payments.
	if l.shop, err = shops.ReadForShare(ctx, tx, shops.Shop{ID: l.b.ShopID, Stripe: shops.StripeAccount{Required: s.cfg.Connect}}); err != nil {
		return l, err
	}
	if l.customer, err = queries.CustomerGet(ctx, tx, l.b.CustomerID); err != nil {
		return l, fmt.Errorf("get customer: %w", err)
	}
	return l, nil
}

// paid applies a successful payment. from is the account the payment event came from
// (nil for the ledger's own reads): the booking is left alone (ResultWrongAccount) unless
// that account takes its payment.
func (s *Service) paid(ctx context.Context, tx pgx.Tx, bookingID uuid.UUID, sessionID, paymentIntentID string, from *string, now time.Time) (Result, error) {
	l, err := s.lock(ctx, tx, bookingID)
	if err != nil {
		return "", err
	}
	b := l.b
	if !tookPayment(b, from) {
		return ResultWrongAccount, nil
	}
	if sessionID != "" && b.StripeCheckoutSessionID.Valid && b.StripeCheckoutSessionID.String != sessionID {
		// Money arrived through a session that is not the booking's. Unlike a failure,
		// a payment is real whichever session took it, so it is applied all the same.
		s.log.WarnContext(ctx, "payment on another checkout session", "booking_id", b.ID, "session_id", sessionID)
	}
	switch b.Status {
	case BookingConfirmed:
		if paymentIntentID != "" && b.StripePaymentIntentID.Valid && b.StripePaymentIntentID.String != paymentIntentID {
			// Paid twice (the booking's session and an orphan one): the payment that
			// confirmed the booking stays, this one goes back.
			if err := s.requestRefund(ctx, tx, b.ID, paymentIntentID); err != nil {
				return "", err
			}
			return ResultRefundedDuplicate, nil
		}
		return ResultAlreadyConfirmed, nil
	case BookingMoved:
		// The booking moved up and its payment with it (MoveTx): an event of that
		// payment (a redelivery) names the old booking and changes nothing; another
		// payment of it (an orphan session) goes back, as a duplicate does.
		return s.paidMoved(ctx, tx, b, sessionID, paymentIntentID)
	case BookingPendingPayment:
		if _, err := queries.BookingMarkConfirmed(ctx, tx, db.BookingMarkConfirmedParams{ID: b.ID, Now: now.UTC(), PaymentIntentID: pgvalue.TextOrNull(paymentIntentID)}); err != nil {
			return "", fmt.Errorf("confirm booking: %w", err)
		}
		if err := hooks.RecordOpening(ctx, tx, b.ShopID, hooks.BookingConfirmed, now, l.op.ID, b.ID); err != nil {
			return "", err
		}
		if err := accept(ctx, tx, b.ID, cmp.Or(sessionID, b.StripeCheckoutSessionID.String), now); err != nil {
			return "", err
		}
		if err := s.textConfirmed(ctx, tx, l); err != nil {
			return "", err
		}
		return ResultConfirmed, nil
	}
	return s.latePayment(ctx, tx, l, sessionID, paymentIntentID, now)
}

// latePayment handles money that arrived after its booking failed: the late payer gets
// the slot if nobody else holds it, it has not started and no refund was decided;
// otherwise the payment is refunded. The decision to refund is stored on the booking
// with the refund job, and from then on the booking never takes the slot back, so a
// customer is never both refunded and booked.
func (s *Service) latePayment(ctx context.Context, tx pgx.Tx, l locked, sessionID, paymentIntentID string, now time.Time) (Result, error) {
	b, op := l.b, l.op
	free := (op.Status == slots.StatusOpen || op.Status == slots.StatusExpired) && !op.FilledBy.Valid && now.Before(op.StartsAt)
	if b.Status == BookingPaymentFailed && b.RefundRequestedAt == nil && !b.RefundID.Valid && free {
		ok, err := s.retake(ctx, tx, l, sessionID, paymentIntentID, now)
		if err != nil {
			return "", err
		}
		if ok {
			return ResultConfirmedLate, nil
		}
	}
	if err := queries.BookingMarkRefundRequested(ctx, tx, db.BookingMarkRefundRequestedParams{ID: b.ID, Now: now.UTC()}); err != nil {
		return "", fmt.Errorf("mark refund requested: %w", err)
	}
	if err := s.requestRefund(ctx, tx, b.ID, paymentIntentID); err != nil {
		return "", err
	}
	return ResultRefunded, nil
}

// requestRefund enqueues the refund of one payment of a booking; the job is unique per
// (booking, payment), so a redelivered event enqueues nothing more.
func (s *Service) requestRefund(ctx context.Context, tx pgx.Tx, bookingID uuid.UUID, paymentIntentID string) error {
	if _, err := s.queue.InsertTx(ctx, tx, jobs.Refund{BookingID: bookingID, PaymentIntentID: paymentIntentID}, nil); err != nil {
		return fmt.Errorf("enqueue refund: %w", err)
	}
	return nil
}

// retake gives a free opening back to the late payer. It runs in a savepoint: should
// the partial unique index refuse the booking (another went live), the payment is
// refunded instead. The payment completed the page that showed the booking's terms: the
// acceptance is recorded as a payment in time records it.
func (s *Service) retake(ctx context.Context, tx pgx.Tx, l locked, sessionID, paymentIntentID string, now time.Time) (bool, error) {
	sp, err := tx.Begin(ctx)
	if err != nil {
		return false, fmt.Errorf("savepoint: %w", err)
	}
	defer func() { _ = sp.Rollback(ctx) }()
	if ok, err := slots.FillLate(ctx, sp, l.op.ID, l.b.CustomerID, now); !ok || err != nil {
		return false, err
	}
	_, err = queries.BookingMarkConfirmedLate(ctx, sp, db.BookingMarkConfirmedLateParams{ID: l.b.ID, Now: now.UTC(), PaymentIntentID: pgvalue.TextOrNull(paymentIntentID)})
	if errors.Is(err, pgx.ErrNoRows) || pgcode.Unique(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("confirm late booking: %w", err)
	}
	if err := accept(ctx, sp, l.b.ID, cmp.Or(sessionID, l.b.StripeCheckoutSessionID.String), now); err != nil {
		return false, err
	}
	// The new generation's offers are over: their YES now gets "taken".
	if err := offers.LoseOthers(ctx, sp, l.op.ID, l.b.OfferID.UUID); err != nil {
		return false, err
	}
	// The opening is filled again, by a booking confirmed at once: both events, as a
	// claim in a shop without payments records them, the opening's first.
	for _, typ := range []string{hooks.OpeningFilled, hooks.BookingConfirmed} {
		if err := hooks.RecordOpening(ctx, sp, l.b.ShopID, typ, now, l.op.ID, l.b.ID); err != nil {
			return false, err
		}
	}
	if err := s.textConfirmed(ctx, sp, l); err != nil {
		return false, err
	}
	if err := sp.Commit(ctx); err != nil {
		return false, fmt.Errorf("release savepoint: %w", err)
	}
	return true, nil
}

// failed applies a failed or expired payment, or a hold that ended without one. sessionID
// is the session the failure is about ("" when unknown or none); saw, if not nil, is
// what the caller decided from, and the booking is left alone (ResultStillOpen) if it
// changed since. from is the account the event came from (nil for the ledger's own
// decisions), as for paid.
func (s *Service) failed(ctx context.Context, tx pgx.Tx, bookingID uuid.UUID, sessionID string, saw *seen, from *string, now time.Time) (Result, error) {
	l, err := s.lock(ctx, tx, bookingID)
	if err != nil {
		return "", err
	}
	b := l.b
	if !tookPayment(b, from) {
		return ResultWrongAccount, nil
	}
	switch b.Status {
	case BookingConfirmed, BookingMoved:
		// Paid; a moved booking's payment is on the booking it moved to.
		return ResultKeptConfirmed, nil
	case BookingPaymentFailed:
		return ResultAlreadyFailed, nil
	}
	if !saw.still(b) {
		return ResultStillOpen, nil
	}
	if sessionID != "" && b.StripeCheckoutSessionID.Valid && b.StripeCheckoutSessionID.String != sessionID {
		// An orphan session from an earlier attempt expired; the booking's own
		// session may still be paid.
		return ResultOtherSession, nil
	}
	if _, err := queries.BookingMarkFailed(ctx, tx, db.BookingMarkFailedParams{ID: b.ID, Now: now.UTC()}); err != nil {
		return "", fmt.Errorf("mark booking failed: %w", err)
	}
	if b.OfferID.Valid {
		if err := offers.MarkPaymentFailed(ctx, tx, b.OfferID.UUID); err != nil {
			return "", err
		}
	}
	// The opening the lapsed booking held is offered again (or expires).
	res, err := s.release(ctx, tx, l, now)
	if err != nil {
		return "", err
	}
	if res == "" {
		res = ResultFailed
	}
	if err := s.textLapsed(ctx, tx, l); err != nil {
		return "", err
	}
	return res, nil
}

// lapse fails a pending booking whose payment link could not be made (the provider refused,
// or the hold ran out first), through the same transition as a failed payment: the
// slot reopens and the customer is told the hold lapsed. b is the booking as the caller
// read it; if it changed since (a link was stored meanwhile) it is left alone.
func (s *Service) lapse(ctx context.Context, b db.Booking) (Result, error) {
	var res Result
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		res, err = s.failed(ctx, tx, b.ID, "", seenOf(b), nil, s.cfg.Now())
		return err
	})
	if err != nil {
		return "", fmt.Errorf("fail booking %s: %w", b.ID, err)
	}
	return res, nil
}
