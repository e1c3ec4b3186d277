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
	"github.com/slotrecovery/slotrecovery/internal/testkit/redistest"
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
		{"Contention", testContention},
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

// release frees lock through ReleaseAndNotify, announcing nothing anyone waits for.
func (e env) release(ctx context.Context, lock *redislock.Lock) error {
	return lock.ReleaseAndNotify(ctx, e.key("released"), "")
}

func testObtainRelease(t *testing.T, e env) {
	ctx := t.Context()
	key := e.key("lock")
	lock, err := e.locks.Obtain(ctx, key, 10*time.Second)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(lock.Token()), 22, "16 random bytes, base64")
	require.Equal(t, lock.Token(), e.rdb.Get(ctx, key).Val())
	ttl := e.rdb.PTTL(ctx, key).Val()
	require.Greater(t, ttl, time.Duration(0), "the key expires")
	require.LessOrEqual(t, ttl, 10*time.Second)

	other, err := e.locks.Obtain(ctx, e.key("other"), time.Second)
	require.NoError(t, err)
	require.NotEqual(t, lock.Token(), other.Token(), "tokens are random")

	require.NoError(t, e.release(ctx, lock))
	require.Zero(t, e.rdb.Exists(ctx, key).Val())
	require.ErrorIs(t, e.release(ctx, lock), redislock.ErrNotHeld, "a second release")

	again, err := e.locks.Obtain(ctx, key, time.Second)
	require.NoError(t, err, "a released key can be obtained again")
	require.NoError(t, e.release(ctx, again))
}

func testNotObtainedWhenHeld(t *testing.T, e env) {
	ctx := t.Context()
	key := e.key("lock")
	held, err := e.locks.Obtain(ctx, key, 10*time.Second)
	require.NoError(t, err)

	lock, err := e.locks.Obtain(ctx, key, 10*time.Second)
	require.ErrorIs(t, err, redislock.ErrNotObtained)
	require.Nil(t, lock)
	require.Equal(t, held.Token(), e.rdb.Get(ctx, key).Val(), "the holder's token is untouched")
}

func testInvalidTTL(t *testing.T, e env) {
	ctx := t.Context()
	key := e.key("lock")
	for _, ttl := range []time.Duration{0, -time.Second, 500 * time.Microsecond} {
		_, err := e.locks.Obtain(ctx, key, ttl)
		require.Error(t, err, "ttl %s", ttl)
		require.NotErrorIs(t, err, redislock.ErrNotObtained)
	}
	require.Zero(t, e.rdb.Exists(ctx, key).Val())
}

func testExpiryFreesKey(t *testing.T, e env) {
	ctx := t.Context()
	key := e.key("lock")
	// A ttl long enough that a loaded machine still finds the key held right after.
	const ttl = time.Second
	start := time.Now()
	_, err := e.locks.Obtain(ctx, key, ttl)
	require.NoError(t, err)
	_, err = e.locks.Obtain(ctx, key, time.Second)
	require.ErrorIs(t, err, redislock.ErrNotObtained, "held within its ttl")

	var next *redislock.Lock
	require.Eventually(t, func() bool {
		next, err = e.locks.Obtain(ctx, key, time.Second)
		return err == nil
	}, 10*ttl, 10*time.Millisecond, "the key never expired")
	require.GreaterOrEqual(t, time.Since(start), ttl-50*time.Millisecond, "freed before its ttl")
	require.NoError(t, e.release(ctx, next))
}

// testStaleHolder is the race the token exists for: A's lock expires, B takes the key,
// and A (say, back from a long pause) must not free B's lock nor announce a release.
// Nothing here depends on how fast the machine is: it waits for the expiry, then
// checks what Redis holds.
func testStaleHolder(t *testing.T, e env) {
	ctx := t.Context()
	key := e.key("lock")
	stale, err := e.locks.Obtain(ctx, key, 50*time.Millisecond)
	require.NoError(t, err)

	var current *redislock.Lock
	require.Eventually(t, func() bool {
		current, err = e.locks.Obtain(ctx, key, time.Minute)
		return err == nil
	}, 30*time.Second, 5*time.Millisecond, "the stale lock's 50 ms ttl never ran out")

	require.ErrorIs(t, e.release(ctx, stale), redislock.ErrNotHeld)
	require.Equal(t, current.Token(), e.rdb.Get(ctx, key).Val(), "the new holder's token is unchanged")
	require.NoError(t, e.release(ctx, current))
	require.Zero(t, e.rdb.Exists(ctx, key).Val())
}

// testContention has 50 goroutines fight for one key the way the server's claims do:
// each watches the key's release notices before it tries, and on "held" waits for a
// notice (or, since a notice can be missed, a bounded while) before trying again. At
// most one is ever inside, and every one of them gets in.
func testContention(t *testing.T, e env) {
	const workers = 50
	key, channel := e.key("lock"), e.key("released")
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	w := redislock.NewWatcher(e.rdb, channel)
	t.Cleanup(func() { _ = w.Close() })
	select {
	case <-w.Ready():
	case <-ctx.Done():
		t.Fatal("subscription not confirmed within 60s")
	}

	var inside, maxInside, done atomic.Int64
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			notes, stop := w.Watch(key)
			defer stop()
			for {
				lock, err := e.locks.Obtain(ctx, key, 10*time.Second)
				if errors.Is(err, redislock.ErrNotObtained) {
					select {
					case <-notes:
					case <-time.After(time.Second):
					case <-ctx.Done():
						errs <- fmt.Errorf("still waiting for the key: %w", ctx.Err())
						return
					}
					continue
				}
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
				if err := lock.ReleaseAndNotify(context.WithoutCancel(ctx), channel, ""); err != nil {
					errs <- err
				}
				return
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
	held, err := e.locks.Obtain(ctx, key, 10*time.Second)
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
	stale, err := e.locks.Obtain(ctx, key, 50*time.Millisecond)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return e.rdb.Exists(ctx, key).Val() == 0 }, 30*time.Second, 10*time.Millisecond, "the stale lock's 50 ms ttl never ran out")
	fresh, err := e.locks.Obtain(ctx, key, 10*time.Second)
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

// TestUnreachable checks that an unreachable Redis is an error of its own, never
// ErrNotObtained.
func TestUnreachable(t *testing.T) {
	t.Parallel()
	locks := redislock.New(redistest.Unreachable(t))
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_, err := locks.Obtain(ctx, "unreachable", time.Second)
	require.Error(t, err)
	require.NotErrorIs(t, err, redislock.ErrNotObtained)
}

func TestObtainCancelledContext(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := redislock.New(rdb).Obtain(ctx, prefix+"lock", time.Second)
	require.ErrorIs(t, err, context.Canceled)
	require.NotErrorIs(t, err, redislock.ErrNotObtained, "nobody was seen holding the key")
	require.Zero(t, rdb.Exists(t.Context(), prefix+"lock").Val())
}

// interrupter is a hook that lets the first script call reach Redis and then reports
// the caller's ctx as cancelled, as when ctx ends after the command was sent but before
// its reply was read.
type interrupter struct {
	armed  atomic.Bool
	cancel context.CancelFunc
}

func (h *interrupter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *interrupter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if cmd.Name() != "evalsha" && cmd.Name() != "eval" {
			return err
		}
		if h.armed.CompareAndSwap(true, false) {
			h.cancel()
			return context.Canceled
		}
		return err
	}
}

func (h *interrupter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestObtainInterrupted checks that an Obtain whose ctx ends while its command is in
// flight leaves no lock behind, even though the command landed.
func TestObtainInterrupted(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	key := prefix + "lock"
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	h := &interrupter{cancel: cancel}
	h.armed.Store(true)
	rdb.AddHook(h)

	_, err := redislock.New(rdb).Obtain(ctx, key, 10*time.Second)
	require.ErrorIs(t, err, context.Canceled)
	require.NotErrorIs(t, err, redislock.ErrNotObtained)
	require.False(t, h.armed.Load(), "the obtain's script was not sent")
	require.Zero(t, rdb.Exists(t.Context(), key).Val(), "the interrupted attempt left a lock behind")
}
