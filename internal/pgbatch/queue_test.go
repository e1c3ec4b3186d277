package pgbatch_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/pgbatch"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestQueuedStatementsCommitTogether: what is queued runs in one round trip, each
// statement's tag comes back in order, and a statement that fails undoes the ones
// before it.
func TestQueuedStatementsCommitTogether(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	_, err := pool.Exec(ctx, `CREATE TABLE batch_a (id int PRIMARY KEY); CREATE TABLE batch_b (id int PRIMARY KEY)`)
	require.NoError(t, err)
	count := func(table string) int {
		t.Helper()
		var n int
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM `+table).Scan(&n))
		return n
	}

	var q pgbatch.Queue
	tag, err := q.Exec(ctx, `INSERT INTO batch_a VALUES ($1), ($2)`, 1, 2)
	require.NoError(t, err)
	require.Zero(t, tag.RowsAffected(), "nothing has run yet")
	_, err = q.Exec(ctx, `INSERT INTO batch_b SELECT id FROM batch_a WHERE id > $1`, 1)
	require.NoError(t, err)
	require.Equal(t, 2, q.Len())
	tags, err := q.Send(ctx, pool)
	require.NoError(t, err)
	require.Len(t, tags, 2)
	require.EqualValues(t, 2, tags[0].RowsAffected())
	require.EqualValues(t, 1, tags[1].RowsAffected(), "the second statement sees the first one's rows")

	var failing pgbatch.Queue
	_, _ = failing.Exec(ctx, `INSERT INTO batch_a VALUES ($1)`, 3)
	_, _ = failing.Exec(ctx, `INSERT INTO batch_b VALUES ($1)`, 2) // a duplicate key
	_, err = failing.Send(ctx, pool)
	require.ErrorContains(t, err, "statement 2 of 2")
	require.Equal(t, 2, count("batch_a"), "the first statement was undone with the second")
	require.Equal(t, 1, count("batch_b"))

	var empty pgbatch.Queue
	tags, err = empty.Send(ctx, pool)
	require.NoError(t, err)
	require.Empty(t, tags)
}

// TestOnlyExecCanBeQueued: a statement whose rows would be read cannot be queued.
func TestOnlyExecCanBeQueued(t *testing.T) {
	t.Parallel()
	var q pgbatch.Queue
	_, err := q.Query(context.Background(), `SELECT 1`)
	require.ErrorIs(t, err, pgbatch.ErrNotQueued)
	var n int
	require.ErrorIs(t, q.QueryRow(context.Background(), `SELECT 1`).Scan(&n), pgbatch.ErrNotQueued)
	require.Zero(t, q.Len())
}
