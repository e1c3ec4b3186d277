package pacing_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/pacing"
	"github.com/slotrecovery/slotrecovery/internal/testkit/redistest"
)

// TestPacerSpacesTextsAcrossInstances: two pacers (two instances) sharing Redis let one
// sender send no faster than its rate together; another sender is not held back.
func TestPacerSpacesTextsAcrossInstances(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	a, b := pacing.New(rdb, prefix), pacing.New(rdb, prefix)
	ctx := context.Background()
	const rate, texts = 10, 12
	var mu sync.Mutex
	var times []time.Time
	var wg sync.WaitGroup
	start := time.Now()
	for i := range texts {
		p := a
		if i%2 == 1 {
			p = b
		}
		wg.Go(func() {
			require.NoError(t, p.Wait(ctx, "+15550001000", rate))
			mu.Lock()
			times = append(times, time.Now())
			mu.Unlock()
		})
	}
	wg.Wait()
	// 12 texts at 10/s with no burst: the last may go no sooner than 1.1 s after the
	// first. (An upper bound would only measure how busy the machine is.)
	require.GreaterOrEqual(t, time.Since(start), 1000*time.Millisecond, "12 texts at 10/s went out in %s", time.Since(start))

	// At 1/s, a sender that just sent must wait a second; another sender need not.
	require.NoError(t, a.Wait(ctx, "+15550001001", 1))
	short, cancel := context.WithTimeout(ctx, 900*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, b.Wait(short, "+15550001001", 1), context.DeadlineExceeded, "the second text of a 1/s sender within 0.9 s")
	other, cancelOther := context.WithTimeout(ctx, 900*time.Millisecond)
	defer cancelOther()
	require.NoError(t, b.Wait(other, "+15550002000", 1), "another sender waited for the first one's texts")
}

// TestPacerBurstsAtMostAHundredthOfASecond: a fast sender (500/s) may send the texts of a
// hundredth of a second at once (5), never more: the n-th text goes no sooner than
// (n-5)/500 s after the first, across two instances.
func TestPacerBurstsAtMostAHundredthOfASecond(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	a, b := pacing.New(rdb, prefix), pacing.New(rdb, prefix)
	ctx := context.Background()
	const rate, burst, texts = 500, 5, 100
	var mu sync.Mutex
	var times []time.Time
	var wg sync.WaitGroup
	start := time.Now()
	for i := range texts {
		p := a
		if i%2 == 1 {
			p = b
		}
		wg.Go(func() {
			require.NoError(t, p.Wait(ctx, "+15550004000", rate))
			mu.Lock()
			times = append(times, time.Now())
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.SortFunc(times, func(x, y time.Time) int { return x.Compare(y) })
	for n, at := range times {
		// A millisecond of slack for the clocks of Redis and of this process.
		least := time.Duration(max(n+1-burst, 0))*time.Second/rate - time.Millisecond
		require.GreaterOrEqual(t, at.Sub(start), least, "text %d of a 500/s sender went out %s after the start", n+1, at.Sub(start))
	}
}

// TestPacerStopsWithItsContext: a wait ends when its context does.
func TestPacerStopsWithItsContext(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	p := pacing.New(rdb, prefix)
	require.NoError(t, p.Wait(context.Background(), "+15550003000", 1))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, p.Wait(ctx, "+15550003000", 1), context.DeadlineExceeded)
}

// BenchmarkPacerAtAShortCodesTopRate: 32 senders in parallel (a wave's sends) through one
// pacer at 1,000 texts a second; the rate it reaches is printed as texts/s (the ceiling is
// 1,000).
func BenchmarkPacerAtAShortCodesTopRate(b *testing.B) {
	rdb, prefix := redistest.New(b)
	p := pacing.New(rdb, prefix)
	ctx := context.Background()
	const rate, parallel = 1000, 32
	b.ResetTimer()
	start := time.Now()
	work := make(chan struct{})
	var wg sync.WaitGroup
	for range parallel {
		wg.Go(func() {
			for range work {
				if err := p.Wait(ctx, "+15550009000", rate); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	for range b.N {
		work <- struct{}{}
	}
	close(work)
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "texts/s")
}

// slowRedis adds latency to every command, as a busy machine's Redis has.
type slowRedis struct{ by time.Duration }

func (slowRedis) DialHook(next redis.DialHook) redis.DialHook { return next }
func (s slowRedis) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		time.Sleep(s.by)
		return next(ctx, cmd)
	}
}
func (slowRedis) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestPacerSharesAGrantAmongItsWaiters: with 2 ms to Redis and back, a 1,000/s sender's
// texts waiting in one instance do not each pay a round trip (that held a sender at
// 1 ÷ the latency): a round trip grants the texts the rate allows for all the waiters,
// and the spacing still holds (the n-th text no sooner than (n-burst)/rate).
func TestPacerSharesAGrantAmongItsWaiters(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	trips := redistest.CountRoundTrips(t, rdb)
	rdb.AddHook(slowRedis{by: 2 * time.Millisecond})
	p := pacing.New(rdb, prefix)
	ctx := context.Background()
	const rate, burst, texts, parallel = 1000, 10, 300, 32
	var mu sync.Mutex
	var times []time.Time
	work := make(chan struct{})
	var wg sync.WaitGroup
	start := time.Now()
	for range parallel {
		wg.Go(func() {
			for range work {
				require.NoError(t, p.Wait(ctx, "+15550005000", rate))
				mu.Lock()
				times = append(times, time.Now())
				mu.Unlock()
			}
		})
	}
	for range texts {
		work <- struct{}{}
	}
	close(work)
	wg.Wait()
	// One round trip a text (and more for the refusals) was the old way; at 2 ms each,
	// every trip finds at least two texts' worth of the rate.
	require.Less(t, trips.Calls(), int64(texts*2/3), "round trips to Redis for %d texts", texts)
	slices.SortFunc(times, func(x, y time.Time) int { return x.Compare(y) })
	for n, at := range times {
		least := time.Duration(max(n+1-burst, 0))*time.Second/rate - time.Millisecond
		require.GreaterOrEqual(t, at.Sub(start), least, "text %d went out %s after the start", n+1, at.Sub(start))
	}
}

// TestPacerPacesEveryRate: senders whose burst is one text at rates whose interval is
// no exact binary fraction (a toll-free number's 3 a second, 50, 150) send their first
// text at once and the next ones at their rate, as a long code (1) and a short code
// (1,000) do.
func TestPacerPacesEveryRate(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	p := pacing.New(rdb, prefix)
	for _, rate := range []int{1, 3, 50, 150, 1000} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		start := time.Now()
		const texts = 3
		for i := range texts {
			require.NoError(t, p.Wait(ctx, fmt.Sprintf("+1555000%04d", rate), rate), "rate %d, text %d", rate, i+1)
		}
		cancel()
		burst := max(1, rate/100)
		least := time.Duration(max(texts-burst, 0))*time.Second/time.Duration(rate) - time.Millisecond
		require.GreaterOrEqual(t, time.Since(start), least, "rate %d: %d texts", rate, texts)
	}
}
