package cooldown_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/slotrecovery/slotrecovery/internal/testkit/redistest"
)

// BenchmarkCooling checks 1,000 ids, half of them cooling down, per call on a
// single Redis.
func BenchmarkCooling(b *testing.B) {
	ctx := b.Context()
	rdb, prefix := redistest.New(b)
	s := newStore(b, rdb, prefix)
	ids := make([]string, 1000)
	for i := range ids {
		ids[i] = strconv.Itoa(i)
		if i%2 == 0 {
			if err := s.Start(ctx, ids[i], time.Minute); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("ids=1000", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.Cooling(ctx, ids); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
		b.ReportMetric(float64(b.N)*float64(len(ids))/b.Elapsed().Seconds(), "ids/s")
	})
}
