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
// statement's Result holds what it did, and a statement that fails undoes the ones
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
	require.Nil(t, q.Last(), "nothing is queued yet")
	tag, err := q.Exec(ctx, `INSERT INTO batch_a VALUES ($1), ($2)`, 1, 2)
	require.NoError(t, err)
	require.Zero(t, tag.RowsAffected(), "nothing has run yet")
	intoA := q.Last()
	_, err = q.Exec(ctx, `INSERT INTO batch_b SELECT id FROM batch_a WHERE id > $1`, 1)
	require.NoError(t, err)
	intoB := q.Last()
	require.Equal(t, 2, q.Len())
	require.Zero(t, intoA.RowsAffected(), "nothing has run yet")
	require.NoError(t, q.Send(ctx, pool))
	require.EqualValues(t, 2, intoA.RowsAffected())
	require.EqualValues(t, 1, intoB.RowsAffected(), "the second statement sees the first one's rows")
	var never *pgbatch.Result
	require.Zero(t, never.RowsAffected(), "a statement never queued changed nothing")

	var failing pgbatch.Queue
	_, _ = failing.Exec(ctx, `INSERT INTO batch_a VALUES ($1)`, 3)
	_, _ = failing.Exec(ctx, `INSERT INTO batch_b VALUES ($1)`, 2) // a duplicate key
	err = failing.Send(ctx, pool)
	require.ErrorContains(t, err, "statement 2 of 2")
	require.Equal(t, 2, count("batch_a"), "the first statement was undone with the second")
	require.Equal(t, 1, count("batch_b"))

	var empty pgbatch.Queue
	require.NoError(t, empty.Send(ctx, pool))
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
