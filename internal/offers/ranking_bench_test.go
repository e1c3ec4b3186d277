package offers_test

import (
	"context"
	_ "embed"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/cooldown"
	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/offers"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/testkit/customertest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/redistest"
)

// eligibleBefore is CustomerListEligible as it was before the rankings (issue 47), with
// positional parameters: the benchmark's "before", run in the same sitting.
//
//go:embed testdata/eligible_before.sql
var eligibleBefore string

// benchWave sets the benchmarks' scene: a 10,000-customer list with a history (three
// offers each over the last half year, a booking for half of them, some lapsed holds
// and no-shows) and an opening to judge them for.
func benchWave(b *testing.B) (context.Context, *pgxpool.Pool, *cooldown.Store, *offers.Service, uuid.UUID) {
	pool, _ := pgtest.New(b)
	rdb, prefix := redistest.New(b)
	ctx := context.Background()
	now := time.Now()
	cool, err := cooldown.New(rdb, cooldown.Config{Prefix: prefix})
	require.NoError(b, err)
	shopsSvc := shops.New(pool, shops.Config{})
	svc := offers.New(pool, nil, nil, cool, shopsSvc, customertest.NewWith(b, pool, customers.Config{}), nil, offers.Config{})
	shop, _, err := shopsSvc.Create(ctx, shops.NewShop{Name: "Big", Timezone: "Europe/London", SMSNumber: "+447700900001",
		Currency: "gbp", PaymentMode: shops.PaymentNone})
	require.NoError(b, err)
	for _, sql := range []string{
		`INSERT INTO customers (shop_id, phone, name, sms_opt_in, priority, created_at)
		 SELECT $1, '+1555' || lpad(i::text, 7, '0'), 'C' || i, true, (i % 10 = 0)::int, $2::timestamptz - i * interval '1 minute'
		 FROM generate_series(1, 10000) i`,
		`INSERT INTO slot_openings (shop_id, starts_at, duration_minutes, service, price_cents, status, created_at, updated_at)
		 SELECT $1, $2::timestamptz - i * interval '4 hours', 45, 'Colour', 6000, 'expired', $2::timestamptz - i * interval '4 hours', $2
		 FROM generate_series(1, 1000) i`,
		`INSERT INTO slot_offers (opening_id, customer_id, shop_id, generation, wave, status, created_at, sent_at)
		 SELECT o.id, c.id, $1, 1, 1, 'lost', o.created_at, o.created_at
		 FROM (SELECT id, row_number() OVER (ORDER BY created_at) AS n FROM customers WHERE shop_id = $1) c
		 CROSS JOIN generate_series(0, 2) k
		 JOIN (SELECT id, created_at, row_number() OVER (ORDER BY created_at) - 1 AS m FROM slot_openings WHERE shop_id = $1) o
		   ON o.m = (c.n * 7 + k * 331) % 1000
		 WHERE $2::timestamptz IS NOT NULL`,
		`INSERT INTO bookings (opening_id, customer_id, shop_id, status, amount_cents, currency, created_at, updated_at, no_show_at)
		 SELECT o.opening_id, o.customer_id, $1, CASE WHEN c.n % 10 = 0 THEN 'payment_failed' ELSE 'cancelled' END, 6000, 'gbp',
		     o.created_at, o.created_at, CASE WHEN c.n % 20 = 1 THEN o.created_at END
		 FROM (SELECT id, row_number() OVER (ORDER BY created_at) AS n FROM customers WHERE shop_id = $1) c
		 JOIN LATERAL (SELECT * FROM slot_offers so WHERE so.customer_id = c.id ORDER BY so.created_at DESC LIMIT 1) o ON true
		 WHERE c.n % 2 = 0 AND $2::timestamptz IS NOT NULL`,
		`INSERT INTO slot_openings (shop_id, starts_at, duration_minutes, service, price_cents, status, created_at, updated_at)
		 VALUES ($1, $2::timestamptz + interval '5 hours', 45, 'Colour', 6000, 'open', $2, $2)`,
	} {
		_, err := pool.Exec(ctx, sql, shop.ID, now)
		require.NoError(b, err)
	}
	_, err = pool.Exec(ctx, `VACUUM ANALYZE`)
	require.NoError(b, err)
	var openingID uuid.UUID
	require.NoError(b, pool.QueryRow(ctx, `SELECT id FROM slot_openings WHERE shop_id = $1 AND status = 'open'`, shop.ID).Scan(&openingID))
	return ctx, pool, cool, svc, openingID
}

// judgeBefore runs what a wave read before the rankings: CustomerListEligible as it was,
// and the cooldowns of those it may text.
func judgeBefore(ctx context.Context, b *testing.B, pool *pgxpool.Pool, cool *cooldown.Store, p db.CustomerListEligibleParams) {
	rows, err := pool.Query(ctx, eligibleBefore, p.WithServices, p.OpeningMinutes, p.StartMinute, p.StaffID, p.Service,
		p.ShopID, p.LocalDow, p.EndMinute, p.MaxPerDay, p.DayStart, p.DayEnd, p.OpeningID, p.Generation, p.MaxRows)
	require.NoError(b, err)
	ids, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var id, serviceID uuid.UUID
		var phone, name, fitName string
		var prio, fitMinutes int32
		var fitPrice int64
		err := r.Scan(&id, &phone, &name, &prio, &serviceID, &fitName, &fitMinutes, &fitPrice)
		return id.String(), err
	})
	require.NoError(b, err)
	require.Len(b, ids, 5000)
	_, err = cool.Cooling(ctx, ids)
	require.NoError(b, err)
}

// BenchmarkWaveRanking: what a wave reads to pick its customers (the judging statement
// and the cooldowns of those it may text) over a 10,000-customer list (benchWave),
// before the rankings and under each ranking.
func BenchmarkWaveRanking(b *testing.B) {
	ctx, pool, cool, svc, openingID := benchWave(b)
	b.Run("before", func(b *testing.B) {
		p, err := svc.WaveParams(ctx, openingID, shops.RankingPriority)
		require.NoError(b, err)
		for b.Loop() {
			judgeBefore(ctx, b, pool, cool, p)
		}
	})
	for _, r := range shops.Rankings {
		b.Run(string(r), func(b *testing.B) {
			p, err := svc.WaveParams(ctx, openingID, r)
			require.NoError(b, err)
			for b.Loop() {
				n, _, err := svc.JudgeWave(ctx, p)
				require.NoError(b, err)
				require.Equal(b, 5000, n)
			}
		})
	}
}

// BenchmarkWaveRankingInterleaved is BenchmarkWaveRanking with the five runs taken in
// turn inside each iteration, so that a machine whose load drifts (other work on the
// same cores) weighs on all of them alike: it reports each one's ms per run and its
// ratio to before.
func BenchmarkWaveRankingInterleaved(b *testing.B) {
	ctx, pool, cool, svc, openingID := benchWave(b)
	before, err := svc.WaveParams(ctx, openingID, shops.RankingPriority)
	require.NoError(b, err)
	params := map[shops.Ranking]db.CustomerListEligibleParams{}
	for _, r := range shops.Rankings {
		params[r], err = svc.WaveParams(ctx, openingID, r)
		require.NoError(b, err)
	}
	spent := map[string]time.Duration{}
	runs := 0
	for b.Loop() {
		start := time.Now()
		judgeBefore(ctx, b, pool, cool, before)
		spent["before"] += time.Since(start)
		for _, r := range shops.Rankings {
			start := time.Now()
			n, _, err := svc.JudgeWave(ctx, params[r])
			require.NoError(b, err)
			require.Equal(b, 5000, n)
			spent[string(r)] += time.Since(start)
		}
		runs++
	}
	for name, d := range spent {
		b.ReportMetric(float64(d.Milliseconds())/float64(runs), name+"_ms")
		if name != "before" {
			b.ReportMetric(float64(d)/float64(spent["before"]), name+"/before")
		}
	}
}
