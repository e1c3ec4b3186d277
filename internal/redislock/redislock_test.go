package redislock_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/redislock"
	"github.com/slotrecovery/slotrecovery/internal/redistest"
)

// env is what one case of the suite gets: a client on one backend and a key
// prefix of its own.
type env struct {
	rdb    redis.UniversalClient
	locks  *redislock.Client
	prefix string
}

func (e env) key(name string) string { return e.prefix + name }

// backends are the Redis deployments the whole suite runs on.
var backends = []struct {
	name   string
	client func(t *testing.T) (redis.UniversalClient, string)
}{
	{"single", func(t *testing.T) (redis.UniversalClient, string) { return redistest.New(t) }},
	{"cluster", func(t *testing.T) (redis.UniversalClient, string) {
		rdb := redistest.Cluster(t)
		return rdb, redistest.Prefix(t, rdb)
	}},
}

// TestLock runs every case on a single Redis and on a three-master cluster.
func TestLock(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T, e env)
	}{
		{"ObtainRelease", testObtainRelease},
		{"NotObtainedWhenHeld", testNotObtainedWhenHeld},
		{"InvalidTTL", testInvalidTTL},
		{"ExpiryFreesKey", testExpiryFreesKey},
		{"StaleHolderCannotTouchNewHolder", testStaleHolder},
		{"RefreshExtendsTTL", testRefreshExtendsTTL},
		{"RetryWaitsForRelease", testRetryWaitsForRelease},
		{"RetryBoundedByContext", testRetryBoundedByContext},
		{"LimitRetry", testLimitRetry},
		{"Contention", testContention},
		{"DoRunsAndReleases", testDoRunsAndReleases},
		{"DoNotObtained", testDoNotObtained},
		{"DoRefreshesPastTTL", testDoRefreshesPastTTL},
		{"DoCancelsWhenLost", testDoCancelsWhenLost},
		{"ReleaseNotifiesWatchers", testReleaseNotifiesWatchers},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			rdb, prefix := b.client(t)
			t.Parallel()
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					c.run(t, env{rdb: rdb, locks: redislock.New(rdb), prefix: prefix + c.name + ":"})
				})
			}
		})
	}
}

func testObtainRelease(t *testing.T, e env) {
	ctx := t.Context()
	key := e.key("lock")
	lock, err := e.locks.Obtain(ctx, key, 10*time.Second, nil)
	require.NoError(t, err)
	require.Equal(t, key, lock.Key())
	require.GreaterOrEqual(t, len(lock.Token()), 22, "16 random bytes, base64")
	require.Equal(t, lock.Token(), e.rdb.Get(ctx, key).Val())

	ttl, err := lock.TTL(ctx)
	require.NoError(t, err)
	require.Greater(t, ttl, 9*time.Second)
	require.LessOrEqual(t, ttl, 10*time.Second)

	other, err := e.locks.Obtain(ctx, e.key("other"), time.Second, nil)
	require.NoError(t, err)
	require.NotEqual(t, lock.Token(), other.Token(), "tokens are random")

	require.NoError(t, lock.Release(ctx))
	require.Zero(t, e.rdb.Exists(ctx, key).Val())
	require.ErrorIs(t, lock.Release(ctx), redislock.ErrNotHeld, "a second release")
	ttl, err = lock.TTL(ctx)
	require.NoError(t, err)
	require.Zero(t, ttl)

	again, err := e.locks.Obtain(ctx, key, time.Second, nil)
	require.NoError(t, err, "a released key can be obtained again")
	require.NoError(t, again.Release(ctx))
}

func testNotObtainedWhenHeld(t *testing.T, e env) {
	ctx := t.Context()
	key := e.key("lock")
	held, err := e.locks.Obtain(ctx, key, 10*time.Second, nil)
	require.NoError(t, err)

	for _, opt := range []*redislock.Options{nil, {}, {RetryStrategy: redislock.NoRetry()}} {
		lock, err := e.locks.Obtain(ctx, key, 10*time.Second, opt)
		require.ErrorIs(t, err, redislock.ErrNotObtained)
		require.Nil(t, lock)
	}
	require.Equal(t, held.Token(), e.rdb.Get(ctx, key).Val(), "the holder's token is untouched")
}

func testInvalidTTL(t *testing.T, e env) {
	ctx := t.Context()
	key := e.key("lock")
	for _, ttl := range []time.Duration{0, -time.Second, 500 * time.Microsecond} {
		_, err := e.locks.Obtain(ctx, key, ttl, nil)
		require.Error(t, err, "ttl %s", ttl)
		require.NotErrorIs(t, err, redislock.ErrNotObtained)
	}
	require.Zero(t, e.rdb.Exists(ctx, key).Val())

	lock, err := e.locks.Obtain(ctx, key, time.Second, nil)
	require.NoError(t, err)
	require.Error(t, lock.Refresh(ctx, 0))
	require.Error(t, e.locks.Do(ctx, e.key("do"), 0, nil, func(context.Context) error {
		t.Error("fn ran without a lock")
		return nil
	}))
}

func testExpiryFreesKey(t *testing.T, e env) {
	ctx := t.Context()
	key := e.key("lock")
	// A ttl long enough that a loaded machine still finds the key held right after.
	const ttl = time.Second
	start := time.Now()
	_, err := e.locks.Obtain(ctx, key, ttl, nil)
	require.NoError(t, err)
	_, err = e.locks.Obtain(ctx, key, time.Second, nil)
	require.ErrorIs(t, err, redislock.ErrNotObtained, "held within its ttl")

	var next *redislock.Lock
	require.Eventually(t, func() bool {
		next, err = e.locks.Obtain(ctx, key, time.Second, nil)
		return err == nil
	}, 10*ttl, 10*time.Millisecond, "the key never expired")
	require.GreaterOrEqual(t, time.Since(start), ttl-50*time.Millisecond, "freed before its ttl")
	require.NoError(t, next.Release(ctx))
}

// testStaleHolder is the race the token exists for: A's lock expires, B takes
// the key, and A (say, back from a long pause) must not free or extend B's
// lock.
func testStaleHolder(t *testing.T, e env) {
	ctx := t.Context()
	key := e.key("lock")
	stale, err := e.locks.Obtain(ctx, key, 50*time.Millisecond, nil)
	require.NoError(t, err)

	var current *redislock.Lock
	require.Eventually(t, func() bool {
		current, err = e.locks.Obtain(ctx, key, 10*time.Second, nil)
		return err == nil
	}, 30*time.Second, 5*time.Millisecond, "the stale lock's 50 ms ttl never ran out")

	require.ErrorIs(t, stale.Release(ctx), redislock.ErrNotHeld)
	require.ErrorIs(t, stale.Refresh(ctx, time.Hour), redislock.ErrNotHeld)
	ttl, err := stale.TTL(ctx)
	require.NoError(t, err)
	require.Zero(t, ttl)

	require.Equal(t, current.Token(), e.rdb.Get(ctx, key).Val(), "the new holder's token is unchanged")
	ttl, err = current.TTL(ctx)
	require.NoError(t, err)
	require.Greater(t, ttl, 9*time.Second, "the stale refresh did not touch the TTL")
	require.LessOrEqual(t, ttl, 10*time.Second)
	require.NoError(t, current.Release(ctx))
}

func testRefreshExtendsTTL(t *testing.T, e env) {
	ctx := t.Context()
	key := e.key("lock")
	// The first ttl is long enough that a loaded machine still refreshes in time.
	const first = time.Second
	start := time.Now()
	lock, err := e.locks.Obtain(ctx, key, first, nil)
	require.NoError(t, err)
	require.NoError(t, lock.Refresh(ctx, 10*time.Second))
	ttl, err := lock.TTL(ctx)
	require.NoError(t, err)
	require.Greater(t, ttl, 9*time.Second)

	time.Sleep(time.Until(start.Add(first + 100*time.Millisecond))) // past the original ttl
	_, err = e.locks.Obtain(ctx, key, time.Second, nil)
	require.ErrorIs(t, err, redislock.ErrNotObtained, "still held after the original ttl")

	require.NoError(t, lock.Refresh(ctx, 200*time.Millisecond), "refresh can shorten too")
	ttl, err = lock.TTL(ctx)
	require.NoError(t, err)
	require.LessOrEqual(t, ttl, 200*time.Millisecond)
	require.NoError(t, lock.Release(ctx))
}

// testRetryWaitsForRelease holds the key for each strategy in turn and frees it a
// little later: each one must find it held, wait, and then obtain it.
func testRetryWaitsForRelease(t *testing.T, e env) {
	ctx := t.Context()
	key := e.key("lock")
	const holdFor = 100 * time.Millisecond
	strategies := map[string]redislock.RetryStrategy{
		"linear":      redislock.LinearBackoff(10 * time.Millisecond),
		"exponential": redislock.ExponentialBackoff(time.Millisecond, 20*time.Millisecond),
	}
	for name, s := range strategies {
		held, err := e.locks.Obtain(ctx, key, 10*time.Second, nil)
		require.NoError(t, err, name)
		start := time.Now()
		released := make(chan error, 1)
		time.AfterFunc(holdFor, func() { released <- held.Release(context.Background()) })

		obtainCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		lock, err := e.locks.Obtain(obtainCtx, key, 10*time.Second, &redislock.Options{RetryStrategy: s})
		cancel()
		require.NoError(t, err, name)
		require.GreaterOrEqual(t, time.Since(start), holdFor, "%s: obtained while the key was still held", name)
		require.NoError(t, <-released, name)
		require.Equal(t, lock.Token(), e.rdb.Get(ctx, key).Val(), name)
		require.NoError(t, lock.Release(ctx), name)
	}
}

func testRetryBoundedByContext(t *testing.T, e env) {
	key := e.key("lock")
	_, err := e.locks.Obtain(t.Context(), key, 10*time.Second, nil)
	require.NoError(t, err)

	strategies := map[string]redislock.RetryStrategy{
		"linear":      redislock.LinearBackoff(10 * time.Millisecond),
		"exponential": redislock.ExponentialBackoff(time.Millisecond, 40*time.Millisecond),
	}
	for name, s := range strategies {
		opt := &redislock.Options{RetryStrategy: s}

		// The first attempt must find the key held before the deadline (else nobody
		// was seen holding it, and the error rightly does not say ErrNotObtained): a
		// second leaves a busy machine room, where 150 ms did not always.
		const deadline = time.Second
		ctx, cancel := context.WithTimeout(t.Context(), deadline)
		start := time.Now()
		_, err := e.locks.Obtain(ctx, key, time.Second, opt)
		cancel()
		require.ErrorIs(t, err, redislock.ErrNotObtained, name)
		elapsed := time.Since(start)
		// It gives up when the next wait (at most 40 ms) would pass the deadline.
		require.Greater(t, elapsed, deadline-100*time.Millisecond, "%s: gave up long before the deadline", name)
		// The key is held for 10 s: without the deadline it would retry that long.
		require.Less(t, elapsed, 5*time.Second, "%s: ran past the deadline", name)

		// Cancelled while it waits to retry: once an attempt has found the key held
		// (the strategy is asked for a wait), not after a clock that a busy machine
		// could run out before the first attempt.
		ctx, cancel = context.WithCancel(t.Context())
		start = time.Now()
		_, err = e.locks.Obtain(ctx, key, time.Second, &redislock.Options{RetryStrategy: &cancelOnRetry{RetryStrategy: s, cancel: cancel}})
		require.ErrorIs(t, err, redislock.ErrNotObtained, name)
		require.ErrorIs(t, err, context.Canceled, "%s: says why it stopped", name)
		require.Less(t, time.Since(start), 5*time.Second, "%s: ran past the cancel", name)
	}
}

// cancelOnRetry is a RetryStrategy that cancels a context when it is first asked
// for a wait, that is once an attempt has found the key held.
type cancelOnRetry struct {
	redislock.RetryStrategy
	cancel context.CancelFunc
}

func (c *cancelOnRetry) NextBackoff() time.Duration {
	c.cancel()
	return c.RetryStrategy.NextBackoff()
}

func testLimitRetry(t *testing.T, e env) {
	ctx := t.Context()
	key := e.key("lock")
	_, err := e.locks.Obtain(ctx, key, 10*time.Second, nil)
	require.NoError(t, err)

	// The same Options twice: the limit applies to each call, not to both.
	opt := &redislock.Options{RetryStrategy: redislock.LimitRetry(redislock.LinearBackoff(20*time.Millisecond), 3)}
	for range 2 {
		start := time.Now()
		_, err = e.locks.Obtain(ctx, key, time.Second, opt)
		require.ErrorIs(t, err, redislock.ErrNotObtained)
		require.NotErrorIs(t, err, context.Canceled)
		elapsed := time.Since(start)
		require.GreaterOrEqual(t, elapsed, 60*time.Millisecond, "three waits of 20ms")
		require.Less(t, elapsed, 5*time.Second, "the key is held for 10 s: the limit, not the key, ended it")
	}
}

// testContention has 200 goroutines fight for one key: at most one is ever
// inside, and every one of them gets in eventually.
func testContention(t *testing.T, e env) {
	const workers = 200
	key := e.key("lock")
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	opt := &redislock.Options{RetryStrategy: redislock.ExponentialBackoff(time.Millisecond, 25*time.Millisecond)}

	var inside, maxInside, done atomic.Int64
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			lock, err := e.locks.Obtain(ctx, key, 10*time.Second, opt)
			if err != nil {
				errs <- err
				return
			}
			n := inside.Add(1)
			for { // record the highest concurrency seen
				m := maxInside.Load()
				if n <= m || maxInside.CompareAndSwap(m, n) {
					break
				}
			}
			time.Sleep(200 * time.Microsecond)
			inside.Add(-1)
			done.Add(1)
			if err := lock.Release(context.WithoutCancel(ctx)); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.EqualValues(t, 1, maxInside.Load(), "two holders at once")
	require.EqualValues(t, workers, done.Load())
	require.Zero(t, e.rdb.Exists(ctx, key).Val())
}

var errFn = errors.New("fn failed")

func testDoRunsAndReleases(t *testing.T, e env) {
	ctx := t.Context()
	key := e.key("lock")
	ran := false
	err := e.locks.Do(ctx, key, 10*time.Second, nil, func(ctx context.Context) error {
		ran = true
		require.NoError(t, ctx.Err())
		require.Equal(t, int64(1), e.rdb.Exists(ctx, key).Val(), "held while fn runs")
		return nil
	})
	require.NoError(t, err)
	require.True(t, ran)
	require.Zero(t, e.rdb.Exists(ctx, key).Val(), "released after fn")

	err = e.locks.Do(ctx, key, 10*time.Second, nil, func(context.Context) error { return errFn })
	require.ErrorIs(t, err, errFn)
	require.NotErrorIs(t, err, redislock.ErrNotHeld)
	require.Zero(t, e.rdb.Exists(ctx, key).Val(), "released after fn failed")
}

func testDoNotObtained(t *testing.T, e env) {
	ctx := t.Context()
	key := e.key("lock")
	held, err := e.locks.Obtain(ctx, key, 10*time.Second, nil)
	require.NoError(t, err)
	err = e.locks.Do(ctx, key, time.Second, nil, func(context.Context) error {
		t.Error("fn ran without the lock")
		return nil
	})
	require.ErrorIs(t, err, redislock.ErrNotObtained)
	require.Equal(t, held.Token(), e.rdb.Get(ctx, key).Val())
}

func testDoRefreshesPastTTL(t *testing.T, e env) {
	ctx := t.Context()
	key := e.key("lock")
	// Refreshed every ttl/3, and each refresh must answer within ttl/3 too. At
	// 300 ms a 2-core machine busy with the race-enabled suite missed two 100 ms
	// answers in a row (Do then rightly gave the lock up); 1 s leaves a loaded
	// machine room while the lock is still held for three whole TTLs.
	const ttl = time.Second
	err := e.locks.Do(ctx, key, ttl, nil, func(ctx context.Context) error {
		for range 3 { // 3 × ttl in all
			select {
			case <-ctx.Done():
				return fmt.Errorf("fn cancelled: %w", context.Cause(ctx))
			case <-time.After(ttl):
			}
			if _, err := e.locks.Obtain(ctx, key, time.Second, nil); !errors.Is(err, redislock.ErrNotObtained) {
				return fmt.Errorf("lock not held past its ttl: %v", err)
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.Zero(t, e.rdb.Exists(ctx, key).Val())
}

// testDoCancelsWhenLost deletes the key behind Do's back and lets someone
// else take it: fn must be cancelled, and the new holder left alone.
func testDoCancelsWhenLost(t *testing.T, e env) {
	ctx := t.Context()
	key := e.key("lock")
	var thief *redislock.Lock
	// A ttl whose refreshes (every ttl/3, each allowed ttl/3) a busy machine still
	// answers in time: the loss must be what stops fn, not a slow answer first.
	err := e.locks.Do(ctx, key, time.Second, nil, func(ctx context.Context) error {
		if err := e.rdb.Del(ctx, key).Err(); err != nil {
			return err
		}
		var err error
		if thief, err = e.locks.Obtain(ctx, key, 10*time.Second, nil); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			require.ErrorIs(t, context.Cause(ctx), redislock.ErrNotHeld)
			return ctx.Err()
		case <-time.After(30 * time.Second):
			return errors.New("fn was not cancelled")
		}
	})
	require.ErrorIs(t, err, redislock.ErrNotHeld)
	require.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, thief)
	require.Equal(t, thief.Token(), e.rdb.Get(ctx, key).Val(), "Do's release freed the new holder's lock")
}

// TestUnreachable checks that an unreachable Redis is an error of its own,
// never ErrNotObtained, and is not retried.
func TestUnreachable(t *testing.T) {
	t.Parallel()
	locks := redislock.New(redistest.Unreachable(t))
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()

	start := time.Now()
	_, err := locks.Obtain(ctx, "unreachable", time.Second, &redislock.Options{RetryStrategy: redislock.LinearBackoff(time.Millisecond)})
	require.Error(t, err)
	require.NotErrorIs(t, err, redislock.ErrNotObtained)
	require.Less(t, time.Since(start), 5*time.Second, "redis errors are not retried (ctx would allow 10 s)")

	err = locks.Do(ctx, "unreachable", time.Second, nil, func(context.Context) error {
		t.Error("fn ran without a lock")
		return nil
	})
	require.Error(t, err)
	require.NotErrorIs(t, err, redislock.ErrNotObtained)
}

func TestObtainCancelledContext(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := redislock.New(rdb).Obtain(ctx, prefix+"lock", time.Second, nil)
	require.ErrorIs(t, err, context.Canceled)
	require.NotErrorIs(t, err, redislock.ErrNotObtained, "nobody was seen holding the key")
	require.Zero(t, rdb.Exists(t.Context(), prefix+"lock").Val())
}

// TestDoReleasesAfterCancel checks that a request that ends while fn runs
// still frees the lock.
func TestDoReleasesAfterCancel(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	key := prefix + "lock"
	ctx, cancel := context.WithCancel(t.Context())
	err := redislock.New(rdb).Do(ctx, key, 10*time.Second, nil, func(ctx context.Context) error {
		cancel()
		<-ctx.Done()
		return ctx.Err()
	})
	require.ErrorIs(t, err, context.Canceled)
	require.NotErrorIs(t, err, redislock.ErrNotHeld)
	require.Zero(t, rdb.Exists(t.Context(), key).Val(), "lock left behind")
}

func TestRetryStrategies(t *testing.T) {
	t.Parallel()
	require.Zero(t, redislock.NoRetry().NextBackoff())
	require.Zero(t, redislock.LinearBackoff(0).NextBackoff())

	linear := redislock.LinearBackoff(7 * time.Millisecond)
	for range 5 {
		require.Equal(t, 7*time.Millisecond, linear.NextBackoff())
	}

	limited := redislock.LimitRetry(redislock.LinearBackoff(time.Millisecond), 3)
	for range 3 {
		require.Equal(t, time.Millisecond, limited.NextBackoff())
	}
	require.Zero(t, limited.NextBackoff())
	require.Zero(t, redislock.LimitRetry(redislock.LinearBackoff(time.Millisecond), 0).NextBackoff())

	const lo, hi = 2 * time.Millisecond, 50 * time.Millisecond
	exp := redislock.ExponentialBackoff(lo, hi)
	step := lo
	for i := range 20 {
		d := exp.NextBackoff()
		require.GreaterOrEqual(t, d, max(lo, step/2), "wait %d", i)
		require.LessOrEqual(t, d, step, "wait %d", i)
		step = min(step*2, hi)
	}
	require.Equal(t, 5*time.Millisecond, redislock.ExponentialBackoff(5*time.Millisecond, time.Millisecond).NextBackoff(), "max below min")
	require.Positive(t, redislock.ExponentialBackoff(0, 0).NextBackoff())
}

// interrupter is a hook that lets the n-th script call reach Redis and then
// reports the caller's ctx as cancelled, as when ctx ends after the command
// was sent but before its reply was read.
type interrupter struct {
	n      atomic.Int64 // script calls left before the interrupted one; <= 0 is off
	cancel context.CancelFunc
	// between, if set, runs after each script call that is let through,
	// before the caller sees its answer.
	between func()
}

func (h *interrupter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *interrupter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if cmd.Name() != "evalsha" && cmd.Name() != "eval" {
			return err
		}
		if h.n.Add(-1) == 0 {
			h.cancel()
			return context.Canceled
		}
		if h.between != nil {
			h.between()
		}
		return err
	}
}

func (h *interrupter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestObtainInterrupted checks that an Obtain whose ctx ends while its
// command is in flight leaves no lock behind, even if the command landed.
func TestObtainInterrupted(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		held        bool // someone holds the key at first
		interrupt   int64
		notObtained bool
	}{
		{name: "FirstAttempt", interrupt: 1},
		{name: "WhileRetrying", held: true, interrupt: 2, notObtained: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rdb, prefix := redistest.New(t)
			locks := redislock.New(rdb)
			key := prefix + "lock"
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			h := &interrupter{cancel: cancel}
			h.n.Store(c.interrupt)
			if c.held {
				// Someone else holds the key (on a client of their own, outside
				// the hook) until the first attempt has found it held; the
				// retry then takes it and is interrupted.
				other, _ := redistest.New(t)
				held, err := redislock.New(other).Obtain(t.Context(), key, 10*time.Second, nil)
				require.NoError(t, err)
				h.between = func() { _ = held.Release(context.WithoutCancel(ctx)) }
			}
			rdb.AddHook(h)

			_, err := locks.Obtain(ctx, key, 10*time.Second, &redislock.Options{RetryStrategy: redislock.LinearBackoff(50 * time.Millisecond)})
			require.ErrorIs(t, err, context.Canceled)
			require.Equal(t, c.notObtained, errors.Is(err, redislock.ErrNotObtained), "ErrNotObtained in %v", err)
			require.Zero(t, rdb.Exists(t.Context(), key).Val(), "the interrupted attempt left a lock behind")
		})
	}
}

// breaker is a hook that fails every script call once broken is set, as if
// Redis had gone away, without sending anything.
type breaker struct{ broken atomic.Bool }

var errRedisDown = errors.New("redis down (simulated)")

func (h *breaker) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *breaker) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.broken.Load() && (cmd.Name() == "evalsha" || cmd.Name() == "eval") {
			cmd.SetErr(errRedisDown)
			return errRedisDown
		}
		return next(ctx, cmd)
	}
}

func (h *breaker) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestDoCancelsWhenUnconfirmed checks that Do stops fn when Redis cannot
// confirm the lock any more, before the lock can expire and be taken by
// someone else.
func TestDoCancelsWhenUnconfirmed(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	h := &breaker{}
	rdb.AddHook(h)
	// Long enough that a loaded machine still stops fn well before the lock
	// could expire: the refresh ticks at ttl/3 and fn must stop before ttl, so a
	// tick may come ttl/3 late. At 600 ms that was 200 ms, which a 2-core machine
	// running the race-enabled suite beside another CPU-heavy process can miss.
	const ttl = 3 * time.Second

	start := time.Now()
	var cancelledAfter time.Duration
	err := redislock.New(rdb).Do(t.Context(), prefix+"lock", ttl, nil, func(ctx context.Context) error {
		h.broken.Store(true)
		select {
		case <-ctx.Done():
			cancelledAfter = time.Since(start)
			return ctx.Err()
		case <-time.After(30 * time.Second):
			return errors.New("fn was not cancelled")
		}
	})
	require.ErrorIs(t, err, redislock.ErrNotHeld)
	require.ErrorIs(t, err, errRedisDown, "says why the lock could not be confirmed")
	require.ErrorIs(t, err, context.Canceled)
	// Refreshes fail at ttl/3 and 2ttl/3; after the second the lock could run
	// out before a third, so fn is stopped then, before it can expire.
	require.GreaterOrEqual(t, cancelledAfter, ttl/2)
	require.Less(t, cancelledAfter, ttl, "fn kept running after the lock may have expired")
}

// testReleaseNotifiesWatchers: ReleaseAndNotify frees the key and wakes every goroutine
// watching it, on every instance's Watcher, with the holder's note; watchers of other
// keys are not woken, and a stale holder publishes nothing.
func testReleaseNotifiesWatchers(t *testing.T, e env) {
	ctx := t.Context()
	channel := e.key("released")
	key, other := e.key("lock"), e.key("other")
	// Two watchers stand for two server instances.
	watchers := []*redislock.Watcher{redislock.NewWatcher(e.rdb, channel), redislock.NewWatcher(e.rdb, channel)}
	for _, w := range watchers {
		t.Cleanup(func() { _ = w.Close() })
		select {
		case <-w.Ready():
		case <-time.After(30 * time.Second):
			t.Fatal("subscription not confirmed within 30s")
		}
	}
	held, err := e.locks.Obtain(ctx, key, 10*time.Second, nil)
	require.NoError(t, err)

	const waiters = 20
	notes := make(chan string, 2*waiters)
	var ready, done sync.WaitGroup
	for i := range 2 * waiters {
		w := watchers[i%2]
		ch, stop := w.Watch(key)
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			defer stop()
			ready.Done()
			select {
			case n := <-ch:
				notes <- n
			case <-time.After(30 * time.Second):
				notes <- "timeout"
			}
		}()
	}
	otherCh, stopOther := watchers[0].Watch(other)
	defer stopOther()
	ready.Wait()

	// The new holder's key is free the moment a waiter is woken.
	require.NoError(t, held.ReleaseAndNotify(ctx, channel, "decided:a,b"))
	done.Wait()
	close(notes)
	for n := range notes {
		require.Equal(t, "decided:a,b", n)
	}
	require.Zero(t, e.rdb.Exists(ctx, key).Val(), "the key is deleted")
	for _, w := range watchers {
		require.Equal(t, []string{"decided:a,b"}, w.Recent(key), "every instance remembers the notice")
		require.Empty(t, w.Recent(other))
	}
	select {
	case n := <-otherCh:
		t.Fatalf("a watcher of another key was woken with %q", n)
	default:
	}

	// A holder whose lock expired and was taken by someone else changes nothing and
	// publishes nothing.
	stale, err := e.locks.Obtain(ctx, key, 50*time.Millisecond, nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return e.rdb.Exists(ctx, key).Val() == 0 }, 30*time.Second, 10*time.Millisecond, "the stale lock's 50 ms ttl never ran out")
	fresh, err := e.locks.Obtain(ctx, key, 10*time.Second, nil)
	require.NoError(t, err)
	ch, stop := watchers[1].Watch(key)
	defer stop()
	require.ErrorIs(t, stale.ReleaseAndNotify(ctx, channel, "stale"), redislock.ErrNotHeld)
	require.NoError(t, fresh.ReleaseAndNotify(ctx, channel, "fresh"))
	select {
	case n := <-ch:
		require.Equal(t, "fresh", n, "only the real holder's release is announced")
	case <-time.After(30 * time.Second):
		t.Fatal("the fresh holder's release was not announced within 30s")
	}
}
