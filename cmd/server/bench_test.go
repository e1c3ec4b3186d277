package main

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkYesOverHTTP measures YES → answer over real HTTP on one server instance:
// signature check, message storage, the Redis lock, the booking transaction, (for
// checkout shops) the Stripe call to stripe-mock, the cooldown and the TwiML answer. Each
// YES books a different opening, 16 at a time. It reports bookings/s and latency
// percentiles.
func BenchmarkYesOverHTTP(b *testing.B) {
	for _, mode := range []string{"none", "checkout"} {
		b.Run("payment="+mode, func(b *testing.B) {
			e := newEnv(b)
			base := e.start(nil, fastTune)
			shop := e.newShop(base, mode, map[string]any{"wave_size": 1})
			phones := e.bulkCustomers(shop, b.N, 0)
			// One opening per customer, each with a sent offer, straight in SQL: the
			// benchmark is about the YES path, not the waves.
			_, err := e.pool.Exec(context.Background(), `
				WITH c AS (SELECT id, row_number() OVER (ORDER BY phone) AS i FROM customers WHERE shop_id = $1),
				o AS (
					INSERT INTO slot_openings (shop_id, starts_at, duration_minutes, service, price_cents, status, created_at, updated_at)
					SELECT $1, now() + interval '5 hours' + make_interval(mins => i::int), 30, 'Haircut', 4500, 'open', now(), now() FROM c
					RETURNING id, starts_at)
				INSERT INTO slot_offers (opening_id, customer_id, shop_id, generation, wave, status, created_at, sent_at)
				SELECT o.id, c.id, $1, 1, 1, 'sent', now(), now()
				FROM (SELECT id, row_number() OVER (ORDER BY starts_at) AS i FROM o) o JOIN c USING (i)`, shop.ID)
			require.NoError(b, err)

			lat := make([]time.Duration, b.N)
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			for range 16 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						i := int(next.Add(1)) - 1
						if i >= b.N {
							return
						}
						t0 := time.Now()
						a := e.text(base, phones[i], shop.SMSNumber, "YES")
						lat[i] = time.Since(t0)
						if a.Outcome != "booked" {
							b.Errorf("YES %d: %d %s %s", i, a.Status, a.Outcome, a.Body)
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "bookings/s")
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50_ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99_ms")
		})
	}
}
