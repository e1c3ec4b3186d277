package main

import (
	"context"
	"net/url"
	"runtime"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/config"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
)

// TestPostgresSessionsUseGenericPlans: the server's connections plan each statement once
// (see openPostgres), unless DATABASE_URL says otherwise.
func TestPostgresSessionsUseGenericPlans(t *testing.T) {
	t.Parallel()
	_, dbURL := pgtest.New(t)
	ctx := context.Background()
	mode := func(url string) string {
		t.Helper()
		pool, err := openPostgres(ctx, config.Config{DatabaseURL: url})
		require.NoError(t, err)
		defer pool.Close()
		var m string
		require.NoError(t, pool.QueryRow(ctx, `SHOW plan_cache_mode`).Scan(&m))
		return m
	}
	require.Equal(t, "force_generic_plan", mode(dbURL))
	require.Equal(t, "auto", mode(dbURL+"&plan_cache_mode=auto"), "DATABASE_URL's own setting is kept")
}

// TestPoolFitsTheCores: without pool_max_conns in DATABASE_URL the pool has four
// connections a core, at least 8; DATABASE_URL's own size is kept.
func TestPoolFitsTheCores(t *testing.T) {
	t.Parallel()
	require.Equal(t, []int32{8, 8, 16, 64}, []int32{defaultPoolConns(1), defaultPoolConns(2), defaultPoolConns(4), defaultPoolConns(16)})

	_, dbURL := pgtest.New(t)
	u, err := url.Parse(dbURL)
	require.NoError(t, err)
	q := u.Query()
	q.Del("pool_max_conns")
	u.RawQuery = q.Encode()
	ctx := context.Background()
	size := func(url string) int32 {
		t.Helper()
		pool, err := openPostgres(ctx, config.Config{DatabaseURL: url})
		require.NoError(t, err)
		defer pool.Close()
		return pool.Config().MaxConns
	}
	require.Equal(t, defaultPoolConns(runtime.GOMAXPROCS(0)), size(u.String()))
	q.Set("pool_max_conns", "3")
	u.RawQuery = q.Encode()
	require.EqualValues(t, 3, size(u.String()), "DATABASE_URL's own size is kept")
}

// TestUUIDsTravelAsBytes: the server's connections read ids into google/uuid values
// straight from their 16 bytes (not through sql.Scanner and the string form), and every
// shape the queries use reads back what was written: an id, a NULL or present
// uuid.NullUUID, an array of ids, and a NULL into a plain id (the zero id, as before).
func TestUUIDsTravelAsBytes(t *testing.T) {
	t.Parallel()
	_, dbURL := pgtest.New(t)
	ctx := context.Background()
	pool, err := openPostgres(ctx, config.Config{DatabaseURL: dbURL})
	require.NoError(t, err)
	defer pool.Close()

	var id uuid.UUID
	var nid uuid.NullUUID
	require.NoError(t, pool.AcquireFunc(ctx, func(conn *pgxpool.Conn) error {
		tm := conn.Conn().TypeMap()
		assert.IsType(t, scanBinaryUUID{}, tm.PlanScan(pgtype.UUIDOID, pgtype.BinaryFormatCode, &id))
		assert.IsType(t, scanBinaryNullUUID{}, tm.PlanScan(pgtype.UUIDOID, pgtype.BinaryFormatCode, &nid))
		return nil
	}))

	want := uuid.New()
	require.NoError(t, pool.QueryRow(ctx, `SELECT $1::uuid`, want).Scan(&id))
	require.Equal(t, want, id)
	require.NoError(t, pool.QueryRow(ctx, `SELECT $1::uuid`, want).Scan(&nid))
	require.Equal(t, uuid.NullUUID{UUID: want, Valid: true}, nid)
	require.NoError(t, pool.QueryRow(ctx, `SELECT NULL::uuid`).Scan(&nid))
	require.Equal(t, uuid.NullUUID{}, nid)
	require.NoError(t, pool.QueryRow(ctx, `SELECT NULL::uuid`).Scan(&id))
	require.Equal(t, uuid.Nil, id, "NULL into a plain id is the zero id, as uuid.UUID's own Scan has it")

	ids := []uuid.UUID{uuid.New(), want, uuid.New()}
	var back []uuid.UUID
	require.NoError(t, pool.QueryRow(ctx, `SELECT $1::uuid[]`, ids).Scan(&back))
	require.Equal(t, ids, back)
	var text string
	require.NoError(t, pool.QueryRow(ctx, `SELECT $1::uuid::text`, want).Scan(&text))
	require.Equal(t, want.String(), text, "ids are sent as themselves")
}
