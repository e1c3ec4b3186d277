package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/config"
	"github.com/slotrecovery/slotrecovery/internal/pgtest"
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
