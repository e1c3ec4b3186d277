package slots

import (
	"context"
	"errors"
	"time"

	"github.com/slotrecovery/slotrecovery/internal/metrics"
	"github.com/slotrecovery/slotrecovery/internal/redislock"
)

// RedisLocker adapts redislock to Locker: no retries (a claim that finds the slot
// locked waits for the release notice instead), releases that announce the holder's
// note on the watcher's channel, and release through a context that outlives the
// request's.
func RedisLocker(c *redislock.Client, w *redislock.Watcher, channel string, m *metrics.Metrics) Locker {
	return redisLocker{c: c, w: w, channel: channel, m: m}
}

// LockChannel is the Redis channel on which slot lock releases are announced.
const LockChannel = "slot_lock_released"

type redisLocker struct {
	c       *redislock.Client
	w       *redislock.Watcher
	channel string
	m       *metrics.Metrics
}

func (r redisLocker) TryLock(ctx context.Context, key string, ttl time.Duration) (func(string), error) {
	l, err := r.c.Obtain(ctx, key, ttl)
	switch {
	case errors.Is(err, redislock.ErrNotObtained):
		r.m.Lock("held")
		return nil, ErrLockHeld
	case err != nil:
		r.m.Lock("error")
		return nil, err
	}
	r.m.Lock("obtained")
	return func(note string) {
		// Release must happen even if the request was cancelled; a failure only means the
		// key lives until its TTL (and its waiters until their deadline).
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = l.ReleaseAndNotify(ctx, r.channel, note)
	}, nil
}

func (r redisLocker) Watch(key string) (<-chan string, func()) { return r.w.Watch(key) }

func (r redisLocker) Recent(key string) []string { return r.w.Recent(key) }
