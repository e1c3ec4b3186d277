package ratelimit_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/ratelimit"
	"github.com/slotrecovery/slotrecovery/internal/testkit/redistest"
)

// newRedis returns this test's Redis and key prefix; the limiter's keys, which
// redis_rate puts under "rate:", are deleted at cleanup as well.
func newRedis(t *testing.T) (redis.UniversalClient, string) {
	t.Helper()
	rdb, prefix := redistest.New(t)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := redistest.DeletePrefix(ctx, rdb, "rate:"+prefix); err != nil {
			t.Errorf("delete rate:%s*: %v", prefix, err)
		}
	})
	return rdb, prefix
}

// TestAllowHoldsAcrossInstances: two limiters (two instances) on one Redis allow
// together exactly the burst, however many ask at once; another key is not touched.
func TestAllowHoldsAcrossInstances(t *testing.T) {
	t.Parallel()
	rdb, prefix := newRedis(t)
	a := ratelimit.New(rdb, ratelimit.Config{Prefix: prefix})
	b := ratelimit.New(rdb, ratelimit.Config{Prefix: prefix})
	limit := ratelimit.Limit{Burst: 10, Every: time.Hour}
	ctx := context.Background()

	var allowed, refused atomic.Int64
	var wg sync.WaitGroup
	for i := range 200 {
		l := []*ratelimit.Limiter{a, b}[i%2]
		wg.Go(func() {
			res, err := l.Allow(ctx, "client:198.51.100.1", limit)
			require.NoError(t, err)
			if res.Allowed {
				require.Zero(t, res.RetryAfter)
				allowed.Add(1)
				return
			}
			refused.Add(1)
			require.Greater(t, res.RetryAfter, 59*time.Minute, "one more in about an hour")
			require.LessOrEqual(t, res.RetryAfter, time.Hour)
		})
	}
	wg.Wait()
	require.Equal(t, int64(10), allowed.Load())
	require.Equal(t, int64(190), refused.Load())

	res, err := b.Allow(ctx, "client:198.51.100.2", limit)
	require.NoError(t, err)
	require.True(t, res.Allowed, "another key has its own bucket")
	other := ratelimit.New(rdb, ratelimit.Config{Prefix: prefix + "other:"})
	res, err = other.Allow(ctx, "client:198.51.100.1", limit)
	require.NoError(t, err)
	require.True(t, res.Allowed, "another prefix (deployment) has its own buckets")
}

// TestCheckTakesNothing: Check answers like Allow would, without spending the event.
func TestCheckTakesNothing(t *testing.T) {
	t.Parallel()
	rdb, prefix := newRedis(t)
	l := ratelimit.New(rdb, ratelimit.Config{Prefix: prefix})
	limit := ratelimit.Limit{Burst: 3, Every: 10 * time.Minute}
	ctx := context.Background()

	for range 20 {
		res, err := l.Check(ctx, "k", limit)
		require.NoError(t, err)
		require.True(t, res.Allowed)
	}
	for i := range 3 {
		res, err := l.Allow(ctx, "k", limit)
		require.NoError(t, err)
		require.True(t, res.Allowed, "event %d of the burst: the checks took none", i+1)
	}
	res, err := l.Check(ctx, "k", limit)
	require.NoError(t, err)
	require.False(t, res.Allowed)
	require.Greater(t, res.RetryAfter, 9*time.Minute+50*time.Second)
	require.LessOrEqual(t, res.RetryAfter, 10*time.Minute)
	denied, err := l.Allow(ctx, "k", limit)
	require.NoError(t, err)
	require.False(t, denied.Allowed)
	require.InDelta(t, float64(denied.RetryAfter), float64(res.RetryAfter), float64(time.Second), "Check and Allow agree on the wait")
}

// TestReturnGivesBackOneEvent: an event given back can be taken again, and giving back
// never lets a bucket hold more than its burst.
func TestReturnGivesBackOneEvent(t *testing.T) {
	t.Parallel()
	rdb, prefix := newRedis(t)
	l := ratelimit.New(rdb, ratelimit.Config{Prefix: prefix})
	limit := ratelimit.Limit{Burst: 3, Every: time.Hour}
	ctx := context.Background()
	allow := func(key string) bool {
		res, err := l.Allow(ctx, key, limit)
		require.NoError(t, err)
		return res.Allowed
	}

	for range 3 {
		require.True(t, allow("spent"))
	}
	require.False(t, allow("spent"))
	require.NoError(t, l.Return(ctx, "spent", limit))
	require.True(t, allow("spent"), "the returned event")
	require.False(t, allow("spent"))

	for range 5 {
		require.NoError(t, l.Return(ctx, "full", limit))
	}
	for range 3 {
		require.True(t, allow("full"))
	}
	require.False(t, allow("full"), "returns to a full bucket add nothing")

	// Many requests reserve an event each and give it back: the bucket ends as it began.
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			res, err := l.Allow(ctx, "reserved", limit)
			require.NoError(t, err)
			if res.Allowed {
				require.NoError(t, l.Return(ctx, "reserved", limit))
			}
		})
	}
	wg.Wait()
	for range 3 {
		require.True(t, allow("reserved"))
	}
	require.False(t, allow("reserved"))
}

// TestBucketsRefill: once the wait the limiter announced has passed, the next event is
// allowed.
func TestBucketsRefill(t *testing.T) {
	t.Parallel()
	rdb, prefix := newRedis(t)
	l := ratelimit.New(rdb, ratelimit.Config{Prefix: prefix})
	limit := ratelimit.Limit{Burst: 1, Every: 300 * time.Millisecond}
	ctx := context.Background()
	res, err := l.Allow(ctx, "k", limit)
	require.NoError(t, err)
	require.True(t, res.Allowed)
	res, err = l.Allow(ctx, "k", limit)
	require.NoError(t, err)
	require.False(t, res.Allowed)
	require.LessOrEqual(t, res.RetryAfter, 300*time.Millisecond)
	deadline := time.Now().Add(10 * time.Second)
	for !res.Allowed {
		require.True(t, time.Now().Before(deadline), "still refused 10 s after a wait of 300 ms: %+v", res)
		time.Sleep(res.RetryAfter)
		res, err = l.Allow(ctx, "k", limit)
		require.NoError(t, err)
	}
}

// TestUnreachableRedisIsAnError: no answer is not a yes; the caller decides whether
// to fail open or closed.
func TestUnreachableRedisIsAnError(t *testing.T) {
	t.Parallel()
	l := ratelimit.New(redistest.Unreachable(t), ratelimit.Config{})
	limit := ratelimit.Limit{Burst: 1, Every: time.Second}
	ctx := context.Background()
	_, err := l.Allow(ctx, "k", limit)
	require.ErrorIs(t, err, ratelimit.ErrUnavailable)
	require.ErrorContains(t, err, "ratelimit: redis unavailable: ")
	_, err = l.Check(ctx, "k", limit)
	require.ErrorIs(t, err, ratelimit.ErrUnavailable)
	require.ErrorIs(t, l.Return(ctx, "k", limit), ratelimit.ErrUnavailable)
}

// TestInvalidLimit: a limit without a burst or a period is refused, not treated as
// "no limit".
func TestInvalidLimit(t *testing.T) {
	t.Parallel()
	rdb, prefix := newRedis(t)
	l := ratelimit.New(rdb, ratelimit.Config{Prefix: prefix})
	for _, limit := range []ratelimit.Limit{{}, {Burst: 1}, {Every: time.Second}, {Burst: -1, Every: time.Second}} {
		_, err := l.Allow(context.Background(), "k", limit)
		require.True(t, errors.Is(err, ratelimit.ErrInvalidLimit), "%+v: %v", limit, err)
	}
}

// TestOnRedisCluster: every call touches one key, so a cluster serves it.
func TestOnRedisCluster(t *testing.T) {
	t.Parallel()
	rdb := redistest.Cluster(t)
	prefix := redistest.Prefix(t, rdb)
	t.Cleanup(func() { _ = redistest.DeletePrefix(context.Background(), rdb, "rate:"+prefix) })
	l := ratelimit.New(rdb, ratelimit.Config{Prefix: prefix})
	limit := ratelimit.Limit{Burst: 2, Every: time.Hour}
	ctx := context.Background()
	for i := range 20 {
		key := "client:" + string(rune('a'+i)) // keys spread over the cluster's slots
		for j := range 3 {
			res, err := l.Allow(ctx, key, limit)
			require.NoError(t, err)
			require.Equal(t, j < 2, res.Allowed, "%s event %d", key, j+1)
		}
		res, err := l.Check(ctx, key, limit)
		require.NoError(t, err)
		require.False(t, res.Allowed)
		require.NoError(t, l.Return(ctx, key, limit))
		res, err = l.Check(ctx, key, limit)
		require.NoError(t, err)
		require.True(t, res.Allowed)
	}
}

func TestClientKey(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"198.51.100.7":         "198.51.100.7",
		"::ffff:198.51.100.7":  "198.51.100.7",
		"2001:db8:1:2::1":      "2001:db8:1:2::/64",
		"2001:db8:1:2:ffff::9": "2001:db8:1:2::/64",
		"2001:db8:1:3::1":      "2001:db8:1:3::/64",
		"not an address":       "not an address",
		"":                     "",
	} {
		require.Equal(t, want, ratelimit.ClientKey(in), in)
	}
}
