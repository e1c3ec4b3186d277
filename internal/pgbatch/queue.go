// Package pgbatch lets the sqlc queries of several packages share one round trip to
// Postgres: each package writes its own table with its own query, and the statements
// go together.
package pgbatch

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// ErrNotQueued is what Query and QueryRow give: only statements whose result is a
// command tag (sqlc's :exec and :execrows) can be queued.
var ErrNotQueued = errors.New("pgbatch: only :exec and :execrows statements can be queued")

// Queue is a sqlc DBTX whose Exec queues the statement instead of running it. Send
// runs what was queued in one round trip and one implicit transaction (the statements
// go up to a single Sync): all of them commit, or none does. The command tag Exec
// returns is empty; a statement's real outcome is its Result (Last), filled by Send.
type Queue struct {
	b       pgx.Batch
	results []*Result
}

// Result is what one queued statement did, known once Send has run it.
type Result struct {
	tag pgconn.CommandTag
}

// RowsAffected is how many rows the statement changed: 0 before Send has run it, and
// for a nil Result (a statement that was never queued).
func (r *Result) RowsAffected() int64 {
	if r == nil {
		return 0
	}
	return r.tag.RowsAffected()
}

// Exec queues sql with its arguments.
func (q *Queue) Exec(_ context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	q.b.Queue(sql, args...)
	q.results = append(q.results, &Result{})
	return pgconn.CommandTag{}, nil
}

// Last is the Result of the statement queued last (nil when nothing is queued): a
// caller names each statement's outcome as it queues it, instead of reading Send's
// outcomes by position.
func (q *Queue) Last() *Result {
	if len(q.results) == 0 {
		return nil
	}
	return q.results[len(q.results)-1]
}

// Query cannot be queued: it returns ErrNotQueued.
func (q *Queue) Query(context.Context, string, ...any) (pgx.Rows, error) {
	return nil, ErrNotQueued
}

// QueryRow cannot be queued: its Scan returns ErrNotQueued.
func (q *Queue) QueryRow(context.Context, string, ...any) pgx.Row { return errRow{} }

// Len is how many statements are queued; the next one queued is at index Len().
func (q *Queue) Len() int { return q.b.Len() }

// Sender is what Send runs the statements on: a pool, a connection or a transaction.
type Sender interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// Send runs the queued statements on conn and fills their Results. On an error
// nothing they did is kept (unless conn is a transaction the caller goes on with).
func (q *Queue) Send(ctx context.Context, conn Sender) (err error) {
	n := q.b.Len()
	if n == 0 {
		return nil
	}
	br := conn.SendBatch(ctx, &q.b)
	defer func() {
		if cerr := br.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	for i := range n {
		tag, err := br.Exec()
		if err != nil {
			return fmt.Errorf("statement %d of %d: %w", i+1, n, err)
		}
		q.results[i].tag = tag
	}
	return nil
}

type errRow struct{}

func (errRow) Scan(...any) error { return ErrNotQueued }
