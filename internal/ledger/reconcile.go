package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/payments"
)

// Reconcile stands in for lost webhooks: it reads back from the payment provider the
// pending bookings whose checkout expired more than ReconcileGrace ago and applies what
// the provider reports, through the same transitions as the events. A booking that
// never got a checkout, or whose checkout the provider does not know, is failed like an
// expired one. A booking found unresolved (still open at the provider, or an error) is
// left alone for ReconcileBackoff, doubling each time up to ReconcileBackoffMax, so it
// never holds up newer ones. A run stops early, leaving the rest to the next, when its
// context has less than one provider call's time left. It returns how many bookings really changed; errors of single
// bookings are logged.
func (s *Service) Reconcile(ctx context.Context) (int, error) {
	now := s.cfg.Now()
	rows, err := queries.BookingListStale(ctx, s.pool, db.BookingListStaleParams{
		Before: now.Add(-s.cfg.ReconcileGrace).UTC(), Now: now.UTC(), MaxRows: int32(s.cfg.ReconcileBatch),
	})
	if err != nil {
		return 0, fmt.Errorf("list stale bookings: %w", err)
	}
	changed := 0
	for i, row := range rows {
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < s.cfg.ProviderTimeout {
			s.log.InfoContext(ctx, "reconcile run out of time; the next run goes on", "left", len(rows)-i)
			break
		}
		res, err := s.reconcileOne(ctx, row)
		if err != nil {
			if ctx.Err() != nil {
				return changed, ctx.Err()
			}
			s.log.WarnContext(ctx, "reconcile booking", "booking_id", row.ID, "err", err)
			s.m.PaymentEvent("reconcile", "error")
			s.deferReconcile(ctx, row)
			continue
		}
		s.m.PaymentEvent("reconcile", string(res))
		switch {
		case res == ResultStillOpen:
			s.deferReconcile(ctx, row)
		case res.Changed():
			changed++
			s.log.InfoContext(ctx, "booking reconciled", "booking_id", row.ID, "result", res)
		}
	}
	return changed, nil
}

// reconcileOne reads one stale booking's checkout back and applies what it says. The
// failure applies only if the booking still has the checkout and expiry listed: the
// booking sweep may have stored a checkout meanwhile.
func (s *Service) reconcileOne(ctx context.Context, row db.BookingListStaleRow) (Result, error) {
	saw := &seen{sessionID: row.StripeCheckoutSessionID.String, expiresAt: row.CheckoutExpiresAt}
	// Read back on the account the checkout was made on, the only one that knows it.
	account := row.StripeAccount.String
	paid, paymentIntentID := false, ""
	if row.StripeCheckoutSessionID.Valid {
		if s.provider == nil {
			return "", errUnconfigured
		}
		cctx, cancel := context.WithTimeout(ctx, s.cfg.ProviderTimeout)
		sess, err := s.provider.GetCheckout(cctx, account, saw.sessionID)
		cancel()
		switch {
		case errors.Is(err, payments.ErrNotFound):
			// The provider has no such checkout (made with another key or account): nobody can
			// pay it, as if the booking had never got one.
			s.log.WarnContext(ctx, "checkout unknown to the payment provider", "booking_id", row.ID, "session_id", saw.sessionID)
		case err != nil:
			return "", fmt.Errorf("read checkout: %w", err)
		case sess.State == payments.SessionPaid:
			paid, paymentIntentID = true, sess.PaymentIntentID
		case sess.State == payments.SessionExpired:
		default:
			// Still open (clocks disagree) or a delayed payment still settling: its
			// own event or a later run decides.
			return ResultStillOpen, nil
		}
	}
	// Each booking is decided at its own moment: a run may take minutes, and the
	// lead-time cutoff may pass during it.
	now := s.cfg.Now()
	var res Result
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		if paid {
			// A payment is applied whatever changed meanwhile: the money is real.
			res, err = s.paid(ctx, tx, row.ID, saw.sessionID, paymentIntentID, nil, now)
		} else {
			res, err = s.failed(ctx, tx, row.ID, saw.sessionID, saw, nil, now)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	s.counted(res)
	return res, nil
}

// deferReconcile leaves an unresolved booking alone for a while, longer each time.
func (s *Service) deferReconcile(ctx context.Context, row db.BookingListStaleRow) {
	wait := s.cfg.ReconcileBackoff
	for range row.ReconcileAttempts {
		if wait >= s.cfg.ReconcileBackoffMax {
			break
		}
		wait *= 2
	}
	wait = min(wait, s.cfg.ReconcileBackoffMax)
	err := queries.BookingDeferReconcile(ctx, s.pool, db.BookingDeferReconcileParams{
		ID: row.ID, After: s.cfg.Now().Add(wait).UTC(),
	})
	if err != nil {
		// The next run reads it again; no harm beyond the wasted call.
		s.log.WarnContext(ctx, "defer reconcile", "booking_id", row.ID, "err", err)
	}
}

// ReconcileWorker runs jobs.Reconcile.
type ReconcileWorker struct {
	river.WorkerDefaults[jobs.Reconcile]
	Service *Service
}

// reconcileLockKey is the advisory lock one reconciliation holds while it runs.
const reconcileLockKey = 0x51_07_7e_c0 // "slot reconcile"

// Work implements river.Worker. One run at a time across the instances (runAlone): a
// second returns at once, and a run killed with its process holds none up.
func (w *ReconcileWorker) Work(ctx context.Context, _ *river.Job[jobs.Reconcile]) error {
	unlock, ok, err := runAlone(ctx, w.Service.pool, reconcileLockKey)
	if err != nil {
		return err
	}
	if !ok {
		// Kept on the job (metadata's "output"), as the count of a run that worked is.
		recordOutput(ctx, w.Service.log, map[string]bool{"skipped": true})
		return nil
	}
	defer unlock()
	n, err := w.Service.Reconcile(ctx)
	recordOutput(ctx, w.Service.log, map[string]int{"reconciled": n})
	if _, lerr := w.Service.RecordLostRefunds(ctx); lerr != nil {
		err = errors.Join(err, lerr)
	}
	return err
}

// Timeout implements river.Worker: one run may make ReconcileBatch provider calls, each
// bounded by ProviderTimeout; Reconcile stops on its own before the deadline.
func (w *ReconcileWorker) Timeout(*river.Job[jobs.Reconcile]) time.Duration {
	return time.Duration(w.Service.cfg.ReconcileBatch)*w.Service.cfg.ProviderTimeout + 30*time.Second
}
