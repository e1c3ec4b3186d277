package ledger

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/inbox"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/payments"
	"github.com/slotrecovery/slotrecovery/internal/pgvalue"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// RefundBooking refunds one payment of a booking and tells the customer: a late payment
// of a failed booking, a second payment of a confirmed one, or the payment of a booking
// its customer cancelled (CancelByCustomer). The payment is
// paymentIntentID, else the booking's, else its checkout's. The payment that
// holds a confirmed booking is never refunded. The refund is made on the account that
// took the payment (the booking's: the platform's own, or the shop's connected account),
// and gives the platform's application fee back with it: the customer gets everything,
// and the shop does not pay the platform for money it returned.
//
// Checking first and calling the provider without a lock is safe: the refund of a failed
// booking's payment was decided (refund_requested_at) in the transaction that enqueued
// this job, and from then on the booking can no longer be confirmed; a confirmed booking
// never changes its payment. The provider's idempotency key is per (booking, payment), so
// a retry after a lost answer cannot refund twice, and a payment it reports refunded
// already counts as done.
//
// Once the provider has refunded, booking.refunded is recorded (internal/hooks) with the
// refund's text, once per (booking, payment): money went back, whichever payment it was.
// Its data shows the booking as it stands: payment_failed with its refund_id for a late
// payment (the slot went to someone else), or confirmed for a second payment of a
// confirmed booking (paid twice through an orphan checkout; the booking stands, paid
// once).
func (s *Service) RefundBooking(ctx context.Context, bookingID uuid.UUID, paymentIntentID string) error {
	b, err := queries.BookingGet(ctx, s.pool, bookingID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get booking %s: %w", bookingID, err)
	}
	if s.provider == nil {
		return errUnconfigured
	}
	cctx, cancel := context.WithTimeout(ctx, s.cfg.ProviderTimeout)
	defer cancel()
	pi := cmp.Or(paymentIntentID, b.StripePaymentIntentID.String)
	if pi == "" && b.StripeCheckoutSessionID.Valid {
		sess, err := s.provider.GetCheckout(cctx, b.StripeAccount.String, b.StripeCheckoutSessionID.String)
		if err != nil && !payments.Transient(err) {
			return river.JobCancel(fmt.Errorf("find payment of booking %s: %w", b.ID, err))
		}
		if err != nil {
			return fmt.Errorf("find payment of booking %s: %w", b.ID, err)
		}
		pi = sess.PaymentIntentID
	}
	if pi == "" {
		return river.JobCancel(fmt.Errorf("booking %s: %w", b.ID, errNoPayment))
	}
	duplicate := false
	switch b.Status {
	case BookingConfirmed:
		if !b.StripePaymentIntentID.Valid || b.StripePaymentIntentID.String == pi {
			// The payment that holds the booking (or one that cannot be told from it).
			s.log.WarnContext(ctx, "refund of a confirmed booking's payment refused", "booking_id", b.ID)
			return nil
		}
		duplicate = true
	case BookingMoved:
		// The booking moved up and its payment with it (MoveTx): that payment holds the
		// booking it moved to and is never refunded here; another one is a duplicate.
		at, err := queries.BookingMovedPayment(ctx, s.pool, b.ID)
		if err != nil {
			return fmt.Errorf("follow moved booking %s: %w", b.ID, err)
		}
		if !at.StripePaymentIntentID.Valid || at.StripePaymentIntentID.String == pi {
			s.log.WarnContext(ctx, "refund of a moved booking's payment refused", "booking_id", b.ID)
			return nil
		}
		duplicate = true
		// The moved row keeps no fee of its own (MoveTx): the duplicate paid the fee the
		// payment that moved carries, and it goes back with it.
		b.ApplicationFeeCents = at.ApplicationFeeCents
	case BookingPendingPayment:
		// No refund is decided for a pending booking: its payment will confirm it.
		return river.JobCancel(fmt.Errorf("booking %s is pending: %w", b.ID, errRefundNotDue))
	}

	refundID, err := s.provider.Refund(cctx, payments.RefundRequest{
		BookingID: b.ID.String(), PaymentIntentID: pi, Account: b.StripeAccount.String,
		RefundApplicationFee: b.StripeAccount.Valid && b.ApplicationFeeCents > 0,
	})
	if err != nil {
		if !payments.Transient(err) {
			return river.JobCancel(fmt.Errorf("refund booking %s: %w", b.ID, err))
		}
		return fmt.Errorf("refund booking %s: %w", b.ID, err)
	}
	now := s.cfg.Now()
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// An earlier run may have recorded this payment's refund as failed (its job ran
		// out of attempts, and a redelivered event queued another): it is done now.
		if err := queries.BookingClearRefundFailed(ctx, tx, db.BookingClearRefundFailedParams{
			ID: b.ID, PaymentIntentID: pgvalue.TextOrNull(pi), Now: now.UTC(),
		}); err != nil {
			return fmt.Errorf("clear refund failure: %w", err)
		}
		if !duplicate {
			_, err := queries.BookingSetRefund(ctx, tx, db.BookingSetRefundParams{
				ID: b.ID, RefundID: pgvalue.TextOrNull(refundID), PaymentIntentID: pgvalue.TextOrNull(pi), Now: now.UTC(),
			})
			// No row: an earlier run stored this refund, or the booking's first late
			// payment's. The text below is keyed per payment, so it is sent once each.
			if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("store refund: %w", err)
			}
		}
		first, err := s.textRefunded(ctx, tx, b, pi, duplicate)
		if err != nil || !first {
			return err // !first: an earlier run recorded this refund, and its event
		}
		return hooks.RecordOpening(ctx, tx, b.ShopID, hooks.BookingRefunded, now, b.OpeningID, b.ID)
	})
}

// textRefunded enqueues the refund's text, unique per (booking, payment): first is false
// when it was enqueued before (an earlier run of the refund recorded it).
func (s *Service) textRefunded(ctx context.Context, tx pgx.Tx, b db.Booking, paymentIntentID string, duplicate bool) (first bool, err error) {
	shop, err := shops.Read(ctx, tx, b.ShopID)
	if err != nil {
		return false, err
	}
	op, err := queries.OpeningGet(ctx, tx, b.OpeningID)
	if err != nil {
		return false, fmt.Errorf("get opening: %w", err)
	}
	customer, err := queries.CustomerGet(ctx, tx, b.CustomerID)
	if err != nil {
		return false, fmt.Errorf("get customer: %w", err)
	}
	w := wordsFor(shop, customer)
	var body string
	switch {
	case duplicate:
		body = w.DuplicateRefunded(&shop, op.Service, op.StartsAt)
	case b.Status == BookingCancelled:
		// The customer cancelled a paid booking (CancelByCustomer).
		body = w.CancelRefunded(&shop, op.Service, op.StartsAt)
	default:
		body = w.Refunded(&shop, op.Service, op.StartsAt)
	}
	queued, err := s.queueText(ctx, tx, inbox.Outgoing{
		Key: "refunded:" + b.ID.String() + ":" + paymentIntentID, ShopID: shop.ID, From: shop.SMSNumber, To: customer.Phone,
		CustomerID: customer.ID, Body: body,
	})
	if err != nil {
		return false, fmt.Errorf("enqueue refund text: %w", err)
	}
	return queued, nil
}

// errNoPayment: neither the job, the booking nor its checkout names the payment
// to refund.
var errNoPayment = errors.New("ledger: no payment to refund")

// errRefundNotDue: the booking is pending, so no refund of it was decided. Its job is
// cancelled, and nothing is owed to anyone.
var errRefundNotDue = errors.New("ledger: no refund is due")

// The reasons a refund failed, the label of slotrecovery_refunds_failed_total.
const (
	// RefundFailedRefused: the provider refused the refund (or the payment could not be
	// found) in a way retrying cannot change.
	RefundFailedRefused = "refused"
	// RefundFailedRetriesExhausted: the refund job's last attempt failed too.
	RefundFailedRetriesExhausted = "retries_exhausted"
)

// refundFailedTimeout bounds recording a failed refund, whatever time the job had left.
const refundFailedTimeout = 10 * time.Second

// recordRefundFailed records on the booking that its payment paymentIntentID (empty:
// unknown) could not be refunded, and why, for the owner to refund it by hand; and
// counts it. It is called once per refund job that gives up.
func (s *Service) recordRefundFailed(ctx context.Context, bookingID uuid.UUID, paymentIntentID, kind string, cause error) error {
	if paymentIntentID == "" {
		if b, err := queries.BookingGet(ctx, s.pool, bookingID); err == nil {
			paymentIntentID = b.StripePaymentIntentID.String
		}
	}
	n, err := queries.BookingSetRefundFailed(ctx, s.pool, db.BookingSetRefundFailedParams{
		ID: bookingID, PaymentIntentID: pgvalue.TextOrNull(paymentIntentID), Reason: pgvalue.TextOrNull(refundFailureReason(cause)), Now: s.cfg.Now().UTC(),
	})
	if err != nil {
		return fmt.Errorf("record failed refund of booking %s: %w", bookingID, err)
	}
	if n > 0 {
		s.m.RefundFailed(kind)
	}
	return nil
}

// maxReasonLen bounds the reason stored with a failed refund.
const maxReasonLen = 300

// refundFailureReason says why a refund failed, in words for the shop's owner: the
// provider's own message when it answered, else what kind of failure it was. The words
// name the provider the owner refunds by hand in (the dashboard does too): they are the
// owner's, not the ledger's logic. Never an internal
// error's text.
func refundFailureReason(err error) string {
	var pe *payments.Error
	switch {
	case errors.As(err, &pe):
		r := "Stripe refused the refund"
		if code := cmp.Or(pe.Code, pe.Type); code != "" {
			r += " (" + code + ")"
		}
		if pe.Msg != "" {
			r += ": " + pe.Msg
		}
		if len(r) > maxReasonLen {
			r = strings.ToValidUTF8(r[:maxReasonLen], "") + "…"
		}
		return r
	case errors.Is(err, errNoPayment), errors.Is(err, payments.ErrNotFound):
		return "The payment to refund could not be found at Stripe."
	case errors.Is(err, payments.ErrInvalid):
		return "The refund request was invalid (the payment id looks wrong)."
	case errors.Is(err, errUnconfigured):
		return "Payments are not configured on the server, so the refund could not be made."
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return "Stripe did not answer in time, on every attempt."
	case errors.Is(err, errRefundLost):
		return "The server stopped while making the refund, on its last attempt; it may or may not have reached Stripe: check the payment there."
	}
	return "The refund kept failing (Stripe or the database could not be reached)."
}

// DismissRefundFailed records, at now, that the owner of shopID refunded by hand the
// payment whose refund failed on booking bookingID: it leaves the dashboard's list of
// refunds needing attention. The failure stays on the booking, and a later one shows
// again. It reports false when there was nothing to dismiss (another shop's booking, no
// failed refund on it, or dismissed already). It runs on q, the caller's connection
// (the dashboard's pool).
func DismissRefundFailed(ctx context.Context, q db.DBTX, shopID, bookingID uuid.UUID, now time.Time) (bool, error) {
	n, err := queries.BookingDismissRefundFailed(ctx, q, db.BookingDismissRefundFailedParams{
		ID: bookingID, ShopID: shopID, Now: now.UTC(),
	})
	if err != nil {
		return false, fmt.Errorf("dismiss failed refund of booking %s: %w", bookingID, err)
	}
	return n == 1, nil
}

// RefundFailedLost counts a refund job River gave up on without its last attempt
// reaching the worker (the process running it was killed, and River's rescuer discarded
// it); see RecordLostRefunds.
const RefundFailedLost = "lost"

// lostRefundsSQL finds the refund jobs River discarded lately whose booking records no
// failed refund: the worker records one whenever it gives up, so these are jobs whose
// last attempt died with its process. It reads River's table directly: the job's
// arguments are this package's (jobs.Refund), and sqlc does not see River's schema.
const lostRefundsSQL = `
SELECT b.id, coalesce(j.args->>'payment_intent_id', '')
FROM river_job j JOIN bookings b ON b.id = (j.args->>'booking_id')::uuid
WHERE j.kind = 'booking_refund' AND j.state = 'discarded' AND j.finalized_at > $1
  AND b.refund_failed_at IS NULL
LIMIT 100`

// RecordLostRefunds records, for the owner to refund by hand, the refunds whose jobs
// River discarded without the worker seeing their last attempt (killed mid-run, then
// discarded by River's rescuer): RefundWorker records every other refund it gives up
// on. Reconcile calls it; it returns how many it recorded.
func (s *Service) RecordLostRefunds(ctx context.Context) (int, error) {
	rows, err := s.pool.Query(ctx, lostRefundsSQL, s.cfg.Now().Add(-7*24*time.Hour).UTC())
	if err != nil {
		return 0, fmt.Errorf("find lost refunds: %w", err)
	}
	type lost struct {
		booking uuid.UUID
		pi      string
	}
	found, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (lost, error) {
		var l lost
		return l, r.Scan(&l.booking, &l.pi)
	})
	if err != nil {
		return 0, fmt.Errorf("find lost refunds: %w", err)
	}
	for _, l := range found {
		if err := s.recordRefundFailed(ctx, l.booking, l.pi, RefundFailedLost, errRefundLost); err != nil {
			return 0, err
		}
		s.log.ErrorContext(ctx, "refund job lost with its process: the owner must refund by hand", "booking_id", l.booking)
	}
	return len(found), nil
}

// errRefundLost is the cause recorded for a refund whose job was lost.
var errRefundLost = errors.New("ledger: the refund job was lost with its process")

// RefundWorker runs jobs.Refund.
type RefundWorker struct {
	river.WorkerDefaults[jobs.Refund]
	Service *Service
}

// Work implements river.Worker. A refund that will not happen, because the provider
// refused it for good or because this was the job's last attempt, is recorded on the
// booking and counted (slotrecovery_refunds_failed_total), and the owner's dashboard lists it
// for a refund by hand: River discarding the job must not be the end of it. If even
// that cannot be recorded (the database is down), the job is snoozed, which uses no
// attempt, and tries the refund again later.
func (w *RefundWorker) Work(ctx context.Context, job *river.Job[jobs.Refund]) error {
	err := w.Service.RefundBooking(ctx, job.Args.BookingID, job.Args.PaymentIntentID)
	if err == nil || errors.Is(err, errRefundNotDue) {
		return err
	}
	kind := RefundFailedRetriesExhausted
	if errors.As(err, new(*river.JobCancelError)) {
		kind = RefundFailedRefused
	} else if job.Attempt < job.MaxAttempts {
		return err // River tries again later
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refundFailedTimeout)
	defer cancel()
	if rerr := w.Service.recordRefundFailed(rctx, job.Args.BookingID, job.Args.PaymentIntentID, kind, err); rerr != nil {
		w.Service.log.ErrorContext(ctx, "failed refund not recorded; trying again later", "booking_id", job.Args.BookingID, "err", rerr)
		return river.JobSnooze(time.Minute)
	}
	w.Service.log.ErrorContext(ctx, "refund failed: the owner must refund by hand", "booking_id", job.Args.BookingID,
		"reason", kind, "attempt", job.Attempt, "err", err)
	return err
}
