package slots

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

// Reconcile stands in for lost webhooks: it reads back from Stripe the pending bookings
// whose session expired more than ReconcileGrace ago and applies what Stripe reports,
// through the same transitions as the events. A booking that never got a session, or
// whose session Stripe does not know, is failed like an expired one. A booking found
// unresolved (still open at Stripe, or an error) is left alone for ReconcileBackoff,
// doubling each time up to ReconcileBackoffMax, so it never holds up newer ones. A run
// stops early, leaving the rest to the next, when its context has less than one Stripe
// call's time left. It returns how many bookings really changed; errors of single
// bookings are logged.
func (p *Payments) Reconcile(ctx context.Context) (int, error) {
	now := p.s.cfg.Now()
	rows, err := p.s.q.BookingListStale(ctx, p.s.pool, db.BookingListStaleParams{
		Before: now.Add(-p.cfg.ReconcileGrace).UTC(), Now: now.UTC(), MaxRows: int32(p.cfg.ReconcileBatch),
	})
	if err != nil {
		return 0, fmt.Errorf("list stale bookings: %w", err)
	}
	changed := 0
	for i, row := range rows {
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < p.cfg.ProviderTimeout {
			p.log.InfoContext(ctx, "reconcile run out of time; the next run goes on", "left", len(rows)-i)
			break
		}
		res, err := p.reconcileOne(ctx, row)
		if err != nil {
			if ctx.Err() != nil {
				return changed, ctx.Err()
			}
			p.log.WarnContext(ctx, "reconcile booking", "booking_id", row.ID, "err", err)
			p.m.StripeEvent("reconcile", "error")
			p.deferReconcile(ctx, row)
			continue
		}
		p.m.StripeEvent("reconcile", string(res))
		switch {
		case res == ResultStillOpen:
			p.deferReconcile(ctx, row)
		case res.Changed():
			changed++
			p.log.InfoContext(ctx, "booking reconciled", "booking_id", row.ID, "result", res)
		}
	}
	return changed, nil
}

// reconcileOne reads one stale booking's session back and applies what it says. The
// failure applies only if the booking still has the session and expiry listed: the
// booking sweep may have stored a session meanwhile.
func (p *Payments) reconcileOne(ctx context.Context, row db.BookingListStaleRow) (Result, error) {
	saw := &seen{sessionID: row.StripeCheckoutSessionID.String, expiresAt: row.CheckoutExpiresAt}
	paid, paymentIntentID := false, ""
	if row.StripeCheckoutSessionID.Valid {
		if p.provider == nil {
			return "", errUnconfigured
		}
		cctx, cancel := context.WithTimeout(ctx, p.cfg.ProviderTimeout)
		sess, err := p.provider.GetCheckout(cctx, saw.sessionID)
		cancel()
		switch {
		case errors.Is(err, payments.ErrNotFound):
			// Stripe has no such session (made with another key or account): nobody can
			// pay it, as if the booking had never got one.
			p.log.WarnContext(ctx, "checkout session unknown to the payment provider", "booking_id", row.ID, "session_id", saw.sessionID)
		case err != nil:
			return "", fmt.Errorf("read checkout session: %w", err)
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
	now := p.s.cfg.Now()
	var res Result
	err := pgx.BeginFunc(ctx, p.s.pool, func(tx pgx.Tx) error {
		var err error
		if paid {
			// A payment is applied whatever changed meanwhile: the money is real.
			res, err = p.s.paid(ctx, tx, row.ID, saw.sessionID, paymentIntentID, now)
		} else {
			res, err = p.s.failed(ctx, tx, row.ID, saw.sessionID, saw, now)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	p.counted(res)
	return res, nil
}

// deferReconcile leaves an unresolved booking alone for a while, longer each time.
func (p *Payments) deferReconcile(ctx context.Context, row db.BookingListStaleRow) {
	wait := p.cfg.ReconcileBackoff
	for range row.ReconcileAttempts {
		if wait >= p.cfg.ReconcileBackoffMax {
			break
		}
		wait *= 2
	}
	wait = min(wait, p.cfg.ReconcileBackoffMax)
	err := p.s.q.BookingDeferReconcile(ctx, p.s.pool, db.BookingDeferReconcileParams{
		ID: row.ID, After: p.s.cfg.Now().Add(wait).UTC(),
	})
	if err != nil {
		// The next run reads it again; no harm beyond the wasted call.
		p.log.WarnContext(ctx, "defer reconcile", "booking_id", row.ID, "err", err)
	}
}

// ReconcileWorker runs jobs.Reconcile.
type ReconcileWorker struct {
	river.WorkerDefaults[jobs.Reconcile]
	Payments *Payments
}

// reconcileLockKey is the advisory lock one reconciliation holds while it runs.
const reconcileLockKey = 0x51_07_7e_c0 // "slot reconcile"

// Work implements river.Worker. One run at a time across the instances (runAlone): a
// second returns at once, and a run killed with its process holds none up.
func (w *ReconcileWorker) Work(ctx context.Context, _ *river.Job[jobs.Reconcile]) error {
	unlock, ok, err := runAlone(ctx, w.Payments.s.pool, reconcileLockKey)
	if err != nil {
		return err
	}
	if !ok {
		// Kept on the job (metadata's "output"), as the count of a run that worked is.
		recordOutput(ctx, w.Payments.log, map[string]bool{"skipped": true})
		return nil
	}
	defer unlock()
	n, err := w.Payments.Reconcile(ctx)
	recordOutput(ctx, w.Payments.log, map[string]int{"reconciled": n})
	if _, lerr := w.Payments.RecordLostRefunds(ctx); lerr != nil {
		err = errors.Join(err, lerr)
	}
	return err
}

// Timeout implements river.Worker: one run may make ReconcileBatch Stripe calls, each
// bounded by ProviderTimeout; Reconcile stops on its own before the deadline.
func (w *ReconcileWorker) Timeout(*river.Job[jobs.Reconcile]) time.Duration {
	return time.Duration(w.Payments.cfg.ReconcileBatch)*w.Payments.cfg.ProviderTimeout + 30*time.Second
}
