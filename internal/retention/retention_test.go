package retention_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/delivery"
	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/idempotency"
	"github.com/slotrecovery/slotrecovery/internal/inbound"
	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/metrics"
	"github.com/slotrecovery/slotrecovery/internal/outbox"
	"github.com/slotrecovery/slotrecovery/internal/retention"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var now = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

// seed stores one row in each purged table, received (or claimed) at `at`, under name.
func seed(t *testing.T, pool *pgxpool.Pool, name string, at time.Time) {
	t.Helper()
	ctx := context.Background()
	_, err := pool.Exec(ctx, `INSERT INTO stripe_events (event_id, type, payload, received_at, result, handled_at)
		VALUES ($1, 'checkout.session.completed', '{"customer_details":{"email":"a@example.com"}}', $2, 'confirmed', $2)`, "evt_"+name, at)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO inbound_messages (message_sid, shop_id, from_phone, to_phone, body, received_at, outcome, reply, handled_at)
		VALUES ($1, $2, '+15555550123', '+15555550100', 'YES', $3, 'booked', 'yours', $3)`, "SM"+name, uuid.New(), at)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO text_claims (key, shop_id, claimed_at, message_sid) VALUES ($1, $2, $3, 'SMx')`,
		"reply:"+name, uuid.New(), at)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO delivery_reports (message_sid, status, reason, received_at) VALUES ($1, 'delivered', 'other', $2)`,
		"SMdr_"+name, at)
	require.NoError(t, err)
}

func keys(t *testing.T, pool *pgxpool.Pool) (events, texts, claims []string) {
	t.Helper()
	ctx := context.Background()
	q := func(sql string) []string {
		var out []string
		require.NoError(t, pool.QueryRow(ctx, sql).Scan(&out))
		return out
	}
	return q(`SELECT COALESCE(array_agg(event_id ORDER BY event_id), '{}') FROM stripe_events`),
		q(`SELECT COALESCE(array_agg(message_sid ORDER BY message_sid), '{}') FROM inbound_messages`),
		q(`SELECT COALESCE(array_agg(key ORDER BY key), '{}') FROM text_claims`)
}

func purged(t *testing.T, reg *prometheus.Registry, table string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != "slotrecovery_retention_purged_rows_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if m.GetLabel()[0].GetValue() == table {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// TestPurgeDeletesWhatOutlivedTheRetention: webhook events,
// inbound texts and send claims older than the retention period are deleted; those
// inside it, an event within Stripe's 3 days of retries among them, are untouched.
func TestPurgeDeletesWhatOutlivedTheRetention(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	seed(t, pool, "a_old", now.Add(-40*24*time.Hour))
	seed(t, pool, "b_just_old", now.Add(-30*24*time.Hour-time.Minute))
	seed(t, pool, "c_just_kept", now.Add(-30*24*time.Hour+time.Minute))
	seed(t, pool, "d_retrying", now.Add(-2*24*time.Hour))
	seed(t, pool, "e_new", now)

	reg := prometheus.NewRegistry()
	w, err := retention.NewWorker(pool, retention.Config{Purges: owners(), Now: func() time.Time { return now }, Metrics: metrics.New(reg)})
	require.NoError(t, err)
	require.NoError(t, w.Purge(context.Background()))

	events, texts, claims := keys(t, pool)
	require.Equal(t, []string{"evt_c_just_kept", "evt_d_retrying", "evt_e_new"}, events)
	require.Equal(t, []string{"SMc_just_kept", "SMd_retrying", "SMe_new"}, texts)
	require.Equal(t, []string{"reply:c_just_kept", "reply:d_retrying", "reply:e_new"}, claims)
	var reports []string
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT array_agg(message_sid ORDER BY message_sid) FROM delivery_reports`).Scan(&reports))
	require.Equal(t, []string{"SMdr_c_just_kept", "SMdr_d_retrying", "SMdr_e_new"}, reports)
	for _, table := range []string{"stripe_events", "inbound_messages", "text_claims", "delivery_reports"} {
		require.Equal(t, 2.0, purged(t, reg, table), table)
	}

	// Nothing more is old: a second run deletes nothing.
	require.NoError(t, w.Purge(context.Background()))
	events2, texts2, claims2 := keys(t, pool)
	require.Equal(t, events, events2)
	require.Equal(t, texts, texts2)
	require.Equal(t, claims, claims2)
}

// TestPurgeHonoursThePeriodAndDeletesInBatches: a shorter period deletes more, and a
// backlog larger than one statement's batch is deleted in full by one run.
func TestPurgeHonoursThePeriodAndDeletesInBatches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.New(t)
	_, err := pool.Exec(ctx, `INSERT INTO text_claims (key, shop_id, claimed_at)
		SELECT 'k' || g, gen_random_uuid(), $1::timestamptz - g * interval '1 second' FROM generate_series(1, 2500) g`,
		now.Add(-6*24*time.Hour))
	require.NoError(t, err)
	seed(t, pool, "kept", now.Add(-4*24*time.Hour))

	w, err := retention.NewWorker(pool, retention.Config{Purges: owners(), Period: 5 * 24 * time.Hour, Now: func() time.Time { return now }})
	require.NoError(t, err)
	require.NoError(t, w.Purge(ctx))
	_, _, claims := keys(t, pool)
	require.Equal(t, []string{"reply:kept"}, claims)
}

// TestPeriodBelowStripesRetriesIsRefused: an event must outlive Stripe's 3 days of
// retries, or a redelivery would be applied a second time.
func TestPeriodBelowStripesRetriesIsRefused(t *testing.T) {
	t.Parallel()
	_, err := retention.NewWorker(nil, retention.Config{Period: 3 * 24 * time.Hour})
	require.Error(t, err)
	_, err = retention.NewWorker(nil, retention.Config{Period: retention.MinPeriod})
	require.NoError(t, err)
}

// TestTablesKeepTheirOwnPeriods: outbound webhook events (with their deliveries and
// attempts) are kept 30 days and idempotency keys 24 hours, whatever RETENTION_DAYS says;
// the other tables follow it.
func TestTablesKeepTheirOwnPeriods(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.New(t)
	var shop uuid.UUID
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO shops (name, timezone, sms_number, currency, payment_mode, wave_size,
		wave_interval_seconds, min_lead_minutes, cooldown_seconds, api_key_hash, created_at,
		calendar_token_hash)
		VALUES ('Kept', 'UTC', '+15555550100', 'usd', 'none', 5, 600, 60, 0, '\x01', now(), '\x02') RETURNING id`).Scan(&shop))
	for name, at := range map[string]time.Time{
		"old": now.Add(-31 * 24 * time.Hour), "kept": now.Add(-29 * 24 * time.Hour),
	} {
		_, err := pool.Exec(ctx, `INSERT INTO webhook_events (shop_id, type, created_at, subject) VALUES ($1, $2, $3, '{}')`,
			shop, "customer.opted_in."+name, at)
		require.NoError(t, err)
	}
	for name, at := range map[string]time.Time{"old": now.Add(-25 * time.Hour), "kept": now.Add(-23 * time.Hour)} {
		_, err := pool.Exec(ctx, `INSERT INTO idempotency_keys (shop_id, key, request_hash, holder, created_at, locked_at)
			VALUES ($1, $2, '\x00', gen_random_uuid(), $3, $3)`, shop, name, at)
		require.NoError(t, err)
	}
	// A stored text a week old: kept under RETENTION_DAYS=10, unlike the webhook event
	// of 31 days and the key of 25 hours.
	seed(t, pool, "week", now.Add(-7*24*time.Hour))

	reg := prometheus.NewRegistry()
	w, err := retention.NewWorker(pool, retention.Config{Purges: owners(), Period: 10 * 24 * time.Hour, Now: func() time.Time { return now }, Metrics: metrics.New(reg)})
	require.NoError(t, err)
	require.NoError(t, w.Purge(ctx))

	strs := func(sql string) []string {
		var out []string
		require.NoError(t, pool.QueryRow(ctx, sql).Scan(&out))
		return out
	}
	require.Equal(t, []string{"customer.opted_in.kept"}, strs(`SELECT COALESCE(array_agg(type), '{}') FROM webhook_events`))
	require.Equal(t, []string{"kept"}, strs(`SELECT COALESCE(array_agg(key), '{}') FROM idempotency_keys`))
	_, texts, _ := keys(t, pool)
	require.Equal(t, []string{"SMweek"}, texts)
	require.Equal(t, 1.0, purged(t, reg, "webhook_events"))
	require.Equal(t, 1.0, purged(t, reg, "idempotency_keys"))
}

// owners lists the tables the server purges, each by its owner, as cmd/server hands
// them to the Worker.
func owners() []retention.Purge {
	return []retention.Purge{
		{Table: "stripe_events", Batch: ledger.PurgeStripeEvents},
		{Table: "inbound_messages", Batch: inbound.Purge},
		{Table: "text_claims", Batch: outbox.PurgeClaims},
		{Table: "delivery_reports", Batch: delivery.Purge},
		{Table: "webhook_events", Batch: hooks.Purge, Keep: hooks.Retention},
		{Table: "idempotency_keys", Batch: idempotency.Purge, Keep: idempotency.TTL},
	}
}
