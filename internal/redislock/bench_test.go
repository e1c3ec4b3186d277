package redislock_test

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slotrecovery/slotrecovery/internal/redislock"
	"github.com/slotrecovery/slotrecovery/internal/testkit/redistest"
)

// BenchmarkObtainRelease measures one uncontended obtain and release with its notice
// (two round trips, as the server's claims make them) on a single Redis, from one
// goroutine and from many.
func BenchmarkObtainRelease(b *testing.B) {
	rdb, prefix := redistest.New(b)
	locks := redislock.New(rdb)
	ctx := b.Context()
	channel := prefix + "released"

	b.Run("serial", func(b *testing.B) {
		key := prefix + "serial"
		for b.Loop() {
			lock, err := locks.Obtain(ctx, key, time.Second)
			if err != nil {
				b.Fatal(err)
			}
			if err := lock.ReleaseAndNotify(ctx, channel, ""); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	})

	b.Run("parallel", func(b *testing.B) {
		b.SetParallelism(32) // 32 × GOMAXPROCS goroutines
		var next atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			// One key per goroutine: this measures throughput, not contention.
			key := prefix + "parallel:" + strconv.FormatInt(next.Add(1), 10)
			for pb.Next() {
				lock, err := locks.Obtain(ctx, key, time.Second)
				if err != nil {
					b.Error(err)
					return
				}
				if err := lock.ReleaseAndNotify(ctx, channel, ""); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	})
}
