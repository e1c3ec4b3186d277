package redislock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// maxReleaseWait bounds the release at the end of Do. Waiting longer than the
// TTL is pointless anyway, since the lock frees itself then.
const maxReleaseWait = 5 * time.Second

// Do obtains the lock on key (as Obtain does, with opt), runs fn, and releases
// the lock when fn returns.
//
// While fn runs, Do refreshes the lock to ttl every ttl/3. If a refresh finds
// the lock gone, or refreshes fail (Redis unreachable) until the lock would
// run out before the next attempt, Do cancels fn's context; context.Cause on
// that context, and the error Do returns, then wrap ErrNotHeld (and the Redis
// error, if any). fn should stop promptly when its context ends.
//
// The release runs even if ctx has ended (on a context.WithoutCancel copy,
// with a timeout of at most ttl) and never touches a key that is no longer
// ours.
//
// Do returns the error from Obtain without calling fn, or else fn's error
// joined with the loss of the lock and with any error from the release, so
// errors.Is finds each of them.
func (c *Client) Do(ctx context.Context, key string, ttl time.Duration, opt *Options, fn func(ctx context.Context) error) error {
	lock, err := c.Obtain(ctx, key, ttl, opt)
	if err != nil {
		return err
	}

	fnCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	stop := make(chan struct{})
	var lost error
	var wg sync.WaitGroup
	wg.Go(func() {
		lost = keepAlive(ctx, lock, ttl, stop)
		if lost != nil {
			cancel(lost)
		}
	})

	fnErr := fn(fnCtx)
	close(stop)
	wg.Wait()

	releaseCtx, cancelRelease := context.WithTimeout(context.WithoutCancel(ctx), min(ttl, maxReleaseWait))
	defer cancelRelease()
	releaseErr := lock.Release(releaseCtx)
	if lost != nil && errors.Is(releaseErr, ErrNotHeld) {
		// Already reported as lost; saying it twice adds nothing.
		releaseErr = nil
	}
	return errors.Join(fnErr, lost, releaseErr)
}

// keepAlive refreshes lock every ttl/3 until stop is closed. It returns nil
// when stopped, or an error wrapping ErrNotHeld once the lock is gone or
// could expire before the next refresh.
func keepAlive(ctx context.Context, lock *Lock, ttl time.Duration, stop <-chan struct{}) error {
	// Refreshes must outlive a cancelled ctx: fn may still be running, and
	// the lock must stay ours until it returns.
	ctx = context.WithoutCancel(ctx)
	interval := max(ttl/3, time.Millisecond)
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	lastOK := lock.obtained // the lock lasts at least ttl from here
	for {
		select {
		case <-stop:
			return nil
		case <-ticker.C:
		}
		sent := time.Now()
		refreshCtx, cancel := context.WithTimeout(ctx, interval)
		err := lock.Refresh(refreshCtx, ttl)
		cancel()
		switch {
		case err == nil:
			lastOK = sent
		case errors.Is(err, ErrNotHeld):
			return fmt.Errorf("lock %s lost while in use: %w", lock.key, err)
		case time.Since(lastOK)+interval >= ttl:
			// The last confirmed refresh (or the obtain) runs out before the
			// next tick, so the lock may expire and be taken while fn still
			// runs: stop fn now, before that can happen.
			return fmt.Errorf("lock %s unconfirmed since %s: %w: %w", lock.key, lastOK.Format(time.RFC3339Nano), ErrNotHeld, err)
		}
	}
}
