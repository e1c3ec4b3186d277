package migrate_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/migrate"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// TestUpIsIdempotentAndConcurrent starts eight migrators at once on a fresh database,
// then eight more on the migrated one: the advisory lock makes them take turns, none
// fails, and the second eight apply nothing.
func TestUpIsIdempotentAndConcurrent(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	// Empty the database so the migrations really run concurrently from scratch.
	_, err := pool.Exec(ctx, "DROP SCHEMA public CASCADE; CREATE SCHEMA public")
	require.NoError(t, err)

	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = migrate.Up(ctx, pool, quiet())
		}()
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	all, err := migrate.All()
	require.NoError(t, err)
	var n int
	require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM schema_migrations").Scan(&n))
	require.Equal(t, len(all), n)
	require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM river_job").Scan(&n))
	before := applied(t, pool)

	// Eight more on the now migrated database (every restart of the server): nothing
	// fails and nothing is applied again.
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = migrate.Up(ctx, pool, quiet())
		}()
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err, "up on a migrated database")
	}
	require.Equal(t, before, applied(t, pool), "up on a migrated database applied something again")
}

// applied lists the schema's and River's applied migrations with when they were
// applied, so that a second run that applied one again would show.
func applied(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `
		SELECT 'schema ' || version || ' ' || name || ' ' || applied_at FROM schema_migrations
		UNION ALL
		SELECT 'river ' || line || ' ' || version || ' ' || created_at FROM river_migration
		ORDER BY 1`)
	require.NoError(t, err)
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.NotEmpty(t, out)
	return out
}

// TestSchemaFileMatchesMigrations keeps db/schema.sql (what sqlc reads) and the
// migrations (what production runs) describing the same tables, columns, constraints
// and indexes.
func TestSchemaFileMatchesMigrations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	migrated, _ := pgtest.New(t)
	fromFile, _ := pgtest.New(t)
	_, err := fromFile.Exec(ctx, "DROP SCHEMA public CASCADE; CREATE SCHEMA public")
	require.NoError(t, err)
	schema, err := os.ReadFile("../../db/schema.sql")
	require.NoError(t, err)
	_, err = fromFile.Exec(ctx, string(schema))
	require.NoError(t, err)
	require.Equal(t, describe(t, fromFile), describe(t, migrated))
}

func describe(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `
		SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '')
		FROM information_schema.columns
		WHERE table_schema = 'public' AND table_name NOT LIKE 'river%' AND table_name <> 'schema_migrations'
		UNION ALL
		SELECT 'index ' || indexdef FROM pg_indexes
		WHERE schemaname = 'public' AND tablename NOT LIKE 'river%' AND tablename <> 'schema_migrations'
		UNION ALL
		SELECT 'constraint ' || conrelid::regclass || ' ' || pg_get_constraintdef(oid)
		FROM pg_constraint
		WHERE connamespace = 'public'::regnamespace AND conrelid::regclass::text NOT LIKE 'river%'
		  AND conrelid::regclass::text <> 'schema_migrations'
		ORDER BY 1`)
	require.NoError(t, err)
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.NotEmpty(t, out)
	return out
}

// TestReplayedSecretsForgotten: 0025 rewrites the answers kept, before the release that
// stopped keeping secrets, for Idempotency-Key retries of POST /api/webhook_endpoints:
// the secret goes, secret_shown_once says so, the rest stays (so a retry still replays
// instead of making a second endpoint); other answers are untouched, and running it
// again changes nothing.
func TestReplayedSecretsForgotten(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.New(t)
	shop, _, err := shops.New(pool, shops.Config{}).Create(ctx, shops.NewShop{Name: "S", Timezone: "UTC",
		SMSNumber: "+15555550100", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	insert := func(key, location, body string) {
		t.Helper()
		_, err := pool.Exec(ctx, `INSERT INTO idempotency_keys (shop_id, key, request_hash, created_at, holder, locked_at,
			status, content_type, location, body) VALUES ($1, $2, '\x00', now(), gen_random_uuid(), now(), 201,
			'application/json', $3, convert_to($4, 'UTF8'))`, shop.ID, key, location, body)
		require.NoError(t, err)
	}
	insert("ep", "/api/webhook_endpoints/8b2d", `{"id":"8b2d","url":"https://a.example/","secret":"whsec_c2VjcmV0"}`+"\n")
	insert("cust", "/api/customers/1c3e", `{"id":"1c3e","name":"Bea","notes":{"secret":"whsec_not_an_endpoint"}}`+"\n")
	all, err := migrate.All()
	require.NoError(t, err)
	var sql string
	for _, m := range all {
		if m.Name == "0025_replayed_secrets.sql" {
			sql = m.SQL
		}
	}
	require.NotEmpty(t, sql, "the migration is embedded")
	body := func(key string) string {
		t.Helper()
		var b string
		require.NoError(t, pool.QueryRow(ctx, `SELECT convert_from(body, 'UTF8') FROM idempotency_keys WHERE key = $1`, key).Scan(&b))
		return b
	}
	for range 2 {
		_, err = pool.Exec(ctx, sql)
		require.NoError(t, err)
		require.JSONEq(t, `{"id":"8b2d","url":"https://a.example/","secret_shown_once":true}`, body("ep"))
		require.JSONEq(t, `{"id":"1c3e","name":"Bea","notes":{"secret":"whsec_not_an_endpoint"}}`, body("cust"))
	}
}

// TestOpeningSubjectsRewritten: 0040 rewrites opening events recorded in the former
// subject shape ({opening, booking, filler, offers_sent, currency}) into the API's
// (api.Opening), which hooks.DecodeOpening reads; an erased subject ('{}') and other
// events are untouched, and running it again changes nothing.
func TestOpeningSubjectsRewritten(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.New(t)
	shop, _, err := shops.New(pool, shops.Config{}).Create(ctx, shops.NewShop{Name: "S", Timezone: "UTC",
		SMSNumber: "+15555550100", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	insert := func(typ, subject string) (id uuid.UUID) {
		t.Helper()
		require.NoError(t, pool.QueryRow(ctx, `INSERT INTO webhook_events (shop_id, type, created_at, subject)
			VALUES ($1, $2, now(), $3::jsonb) RETURNING id`, shop.ID, typ, subject).Scan(&id))
		return id
	}
	const opening = `"opening":{"id":"0f8b6a56-2d0c-4a8e-9d5e-3d1d0b8f6a01","shop_id":"0f8b6a56-2d0c-4a8e-9d5e-3d1d0b8f6a02",
		"starts_at":"2026-11-28T15:00:00+00:00","duration_minutes":45,"service":"Cut","price_cents":3500,"status":"filled",
		"generation":2,"version":3,"created_at":"2026-11-27T10:00:00.5+00:00","updated_at":"2026-11-27T10:00:00+00:00",
		"filled_at":"2026-11-27T11:00:00+00:00","filled_by":"0f8b6a56-2d0c-4a8e-9d5e-3d1d0b8f6a03"}`
	filled := insert("opening.filled", `{`+opening+`,"booking":{"id":"0f8b6a56-2d0c-4a8e-9d5e-3d1d0b8f6a04","status":"pending_payment",
		"amount_cents":3500,"payment_url":null,"stripe_checkout_session_id":"cs_1","refund_id":null,"created_at":"2026-11-27T11:00:00+00:00",
		"confirmed_at":null,"application_fee_cents":100},"filler":{"id":"0f8b6a56-2d0c-4a8e-9d5e-3d1d0b8f6a03","phone":"+15555550111","name":"Bea"},
		"offers_sent":4,"currency":"usd"}`)
	declared := insert("opening.declared", `{`+opening+`,"booking":null,"filler":null,"offers_sent":0,"currency":"usd"}`)
	erased := insert("opening.filled", `{}`)
	customer := insert("customer.opted_out", `{"ID":"0f8b6a56-2d0c-4a8e-9d5e-3d1d0b8f6a03","opening":"not an opening event"}`)

	all, err := migrate.All()
	require.NoError(t, err)
	var sql string
	for _, m := range all {
		if m.Name == "0040_opening_wire_subject.sql" {
			sql = m.SQL
		}
	}
	require.NotEmpty(t, sql, "the migration is embedded")
	subject := func(id uuid.UUID) string {
		t.Helper()
		var s string
		require.NoError(t, pool.QueryRow(ctx, `SELECT subject::text FROM webhook_events WHERE id = $1`, id).Scan(&s))
		return s
	}
	const opened = `"id":"0f8b6a56-2d0c-4a8e-9d5e-3d1d0b8f6a01","shop_id":"0f8b6a56-2d0c-4a8e-9d5e-3d1d0b8f6a02",
		"starts_at":"2026-11-28T15:00:00+00:00","duration_minutes":45,"service":"Cut","price_cents":3500,"currency":"usd",
		"status":"filled","generation":2,"created_at":"2026-11-27T10:00:00.5+00:00","filled_at":"2026-11-27T11:00:00+00:00"`
	for range 2 {
		_, err = pool.Exec(ctx, sql)
		require.NoError(t, err)
		require.JSONEq(t, `{`+opened+`,"offers_sent":4,
			"filled_by":{"customer_id":"0f8b6a56-2d0c-4a8e-9d5e-3d1d0b8f6a03","phone":"+15555550111","name":"Bea"},
			"booking":{"id":"0f8b6a56-2d0c-4a8e-9d5e-3d1d0b8f6a04","status":"pending_payment","amount_cents":3500,
				"payment_url":null,"stripe_checkout_session_id":"cs_1","application_fee_cents":100,"service":"Cut","duration_minutes":45}}`, subject(filled))
		require.JSONEq(t, `{`+opened+`,"offers_sent":0,"filled_by":null,"booking":null}`, subject(declared))
		require.JSONEq(t, `{}`, subject(erased))
		require.JSONEq(t, `{"ID":"0f8b6a56-2d0c-4a8e-9d5e-3d1d0b8f6a03","opening":"not an opening event"}`, subject(customer))
	}
	o, err := hooks.DecodeOpening([]byte(subject(filled)))
	require.NoError(t, err)
	require.Equal(t, "Bea", o.FilledBy.Name)
	require.EqualValues(t, 3400, o.Booking.NetCents)
	require.EqualValues(t, 3500, o.Booking.PriceCents)
	require.Nil(t, o.Staff)
	require.Equal(t, "2026-11-28T15:00:00Z", o.StartsAt.Format(time.RFC3339))
}
