package ledger

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
)

// A booking may owe its customer two things the YES path normally gives at once: the
// payment link (Book's own attempt can fail, time out, or die with its process before
// the link is stored) and the news itself (the answer to the YES can be lost on its way
// back). The booking sweep, a periodic job, finds both among the live bookings of the
// last sweepWindow and finishes them. It replaced two River jobs per booking (a checkout
// safety net and a notice), whose inserts, fetches and completions cost Postgres about a
// third of a YES's work under load. A sweep costs nothing per YES, and one killed with
// its process does not hold the next one up (sweepLock).

// sweepWindow is how far back the sweep looks: well past the hold and its extension,
// after which EnsureCheckout fails a booking still without a link, so a sweep that was
// down for a while still finishes everything that can still matter.
const sweepWindow = 2 * time.Hour

// sweepBatch bounds the bookings of each kind one sweep handles; the next sweep takes
// the rest.
const sweepBatch = 100

// sweepParallel bounds the payment-provider calls one sweep makes at once.
const sweepParallel = 4

// SweepResult says what one sweep did.
type SweepResult struct {
	// Links is how many bookings the sweep tried to make a link for; LinkErrors how many
	// of those attempts ended in an error (retried later, or the booking failed).
	Links      int `json:"links"`
	LinkErrors int `json:"link_errors"`
	// Notices is how many bookings the sweep checked for an untold customer.
	Notices int `json:"notices"`
	// Skipped is true when another sweep was running: this one did nothing.
	Skipped bool `json:"skipped,omitempty"`
}

// SweepEvery is how often the booking sweep runs.
func (s *Service) SweepEvery() time.Duration { return s.cfg.SweepEvery }

// SweepBookings makes the payment links the YES path could not make (CheckoutRetryDelay
// after the booking, then less and less often while the provider fails, at most
// maxCheckoutRetryDelay apart) and texts the customers whose answer may not have reached
// them (NoticeDelay after the booking). One sweep runs at a time (sweepLock); should two
// ever overlap, each link attempt is claimed first, and a notice is marked told in the
// transaction that queues it, so neither is done twice.
func (s *Service) SweepBookings(ctx context.Context) (SweepResult, error) {
	var res SweepResult
	unlock, ok, err := s.sweepLock(ctx)
	if err != nil || !ok {
		res.Skipped = err == nil
		return res, err
	}
	defer unlock()
	now := s.cfg.Now()
	links, err := queries.BookingsOwedLink(ctx, s.pool, db.BookingsOwedLinkParams{
		NotBefore: now.Add(-sweepWindow).UTC(), BookedBefore: now.Add(-s.cfg.CheckoutRetryDelay).UTC(),
		Now: now.UTC(), MaxRows: sweepBatch,
	})
	if err != nil {
		return res, fmt.Errorf("list bookings owed a link: %w", err)
	}
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		errs []error
		sem  = make(chan struct{}, sweepParallel)
	)
	for _, b := range links {
		id := b.ID
		taken, err := queries.BookingTakeLinkAttempt(ctx, s.pool, db.BookingTakeLinkAttemptParams{
			ID: id, RetryAt: now.Add(s.linkRetryWait(now.Sub(b.CreatedAt))).UTC(), Now: now.UTC(),
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("claim link attempt for booking %s: %w", id, err))
			continue
		}
		if taken == 0 {
			continue // stored, ended, or another sweep holds it
		}
		res.Links++
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := s.EnsureCheckout(ctx, id); err != nil {
				mu.Lock()
				res.LinkErrors++
				mu.Unlock()
				if errors.Is(err, ErrCheckoutRefused) || errors.Is(err, errUnconfigured) {
					return // the booking failed; EnsureCheckout logged it
				}
				s.log.WarnContext(ctx, "payment link not made yet; the sweep tries again", "booking_id", id, "err", err)
			}
		}()
	}
	wg.Wait()

	// After the links: a link made just now is texted with the news, so no notice is due.
	untold, err := queries.BookingsOwedNotice(ctx, s.pool, db.BookingsOwedNoticeParams{
		NotBefore: now.Add(-sweepWindow).UTC(), BookedBefore: now.Add(-s.cfg.NoticeDelay).UTC(), MaxRows: sweepBatch,
	})
	if err != nil {
		return res, errors.Join(append(errs, fmt.Errorf("list untold bookings: %w", err))...)
	}
	for _, id := range untold {
		res.Notices++
		if err := s.Notify(ctx, id); err != nil {
			errs = append(errs, fmt.Errorf("notify booking %s: %w", id, err))
		}
	}
	return res, errors.Join(errs...)
}

// sweepLockKey is the advisory lock one booking sweep holds while it runs.
const sweepLockKey = 0x51_07_b0_0c // "slot booking"

// sweepLock lets one booking sweep run at a time across the instances (runAlone).
func (s *Service) sweepLock(ctx context.Context) (unlock func(), ok bool, err error) {
	return runAlone(ctx, s.pool, sweepLockKey)
}

// runAlone takes the advisory lock key on a connection of its own, for a periodic job
// that must run once at a time across the instances; ok is false when another run holds
// it. The lock ends with its connection, so a run killed with its process never holds
// the next one up, as a River job unique while it runs would until River's rescue.
func runAlone(ctx context.Context, pool *pgxpool.Pool, key int64) (unlock func(), ok bool, err error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("acquire connection for lock %#x: %w", key, err)
	}
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", key).Scan(&ok); err != nil || !ok {
		conn.Release()
		if err != nil {
			return nil, false, fmt.Errorf("take lock %#x: %w", key, err)
		}
		return nil, false, nil
	}
	return func() {
		if _, err := conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", key); err != nil {
			// Never hand a connection that may still hold the lock back to the pool.
			_ = conn.Hijack().Close(context.WithoutCancel(ctx))
			return
		}
		conn.Release()
	}, true, nil
}

// linkRetryWait is how long a link attempt on a booking of this age keeps other sweeps
// off it: at least as long as the attempt itself can take (EnsureCheckout's provider
// call), and otherwise half the booking's age, from CheckoutRetryDelay up to
// maxCheckoutRetryDelay: a long outage is retried less and less often, as a doubling
// backoff would, without counting attempts.
func (s *Service) linkRetryWait(age time.Duration) time.Duration {
	wait := min(max(s.cfg.CheckoutRetryDelay, age/2), maxCheckoutRetryDelay)
	return max(wait, 2*s.cfg.CheckoutTimeout+5*time.Second)
}

// SweepWorker runs jobs.BookingSweep.
type SweepWorker struct {
	river.WorkerDefaults[jobs.BookingSweep]
	Service *Service
}

// Work implements river.Worker.
func (w *SweepWorker) Work(ctx context.Context, _ *river.Job[jobs.BookingSweep]) error {
	res, err := w.Service.SweepBookings(ctx)
	if res.Links > 0 || res.Notices > 0 {
		w.Service.log.InfoContext(ctx, "booking sweep", "links", res.Links, "link_errors", res.LinkErrors, "notices", res.Notices)
	}
	// Kept on the job (metadata's "output"): what each run did, for operators and tests.
	recordOutput(ctx, w.Service.log, res)
	return err
}

// recordOutput keeps what a periodic job's run did on its row (metadata's "output"). It
// is a record, not the work: failing to keep it (outside a River worker, as in tests
// that call Work) is logged, never the run's error.
func recordOutput(ctx context.Context, log *slog.Logger, v any) {
	if err := river.RecordOutput(ctx, v); err != nil {
		log.DebugContext(ctx, "job output not recorded", "err", err)
	}
}

// Timeout implements river.Worker: a batch of provider calls, sweepParallel at a time.
func (w *SweepWorker) Timeout(*river.Job[jobs.BookingSweep]) time.Duration { return 3 * time.Minute }
