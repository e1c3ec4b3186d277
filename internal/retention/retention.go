// Package retention deletes what the server keeps only for a while: Stripe's webhook
// events (their payloads, only the fields the server reads, tie payments to bookings and
// accounts), the inbound texts (numbers and
// words), the text send claims, the carriers' delivery reports, the outbound webhook
// events with their deliveries and attempts, and the Idempotency-Keys. A periodic job
// (jobs.Purge) deletes every row older than its table's keep period: the retention
// period (RETENTION_DAYS) for most, 30 days for webhook events (hooks.Retention) and 24
// hours for idempotency keys (idempotency.TTL). Each table's owner package deletes its
// own rows, one batch at a time (inbound.Purge, outbox.PurgeClaims,
// delivery.Purge, ledger.PurgeStripeEvents, hooks.Purge,
// idempotency.Purge); cmd/server hands the list to the Worker (Config.Purges), which
// runs the batches until one comes back short, decides when, and counts. It knows no
// owner.
package retention

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/metrics"
)

// DefaultPeriod is how long rows are kept when Config.Period is zero.
const DefaultPeriod = 30 * 24 * time.Hour

// MinPeriod is the shortest retention allowed. Stripe retries a webhook for up to 3
// days: its event must still be stored then, so that the redelivery is answered with
// the stored result instead of being applied again. A day more is the margin.
const MinPeriod = 4 * 24 * time.Hour

// Config configures the Worker; zero fields mean the defaults.
type Config struct {
	// Period is how long rows are kept in the tables without a keep period of their own
	// (all but webhook events and idempotency keys); default DefaultPeriod, at least
	// MinPeriod.
	Period time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger receives what each run deleted; nil discards it.
	Logger *slog.Logger
	// Metrics counts the rows deleted; nil counts nothing.
	Metrics *metrics.Metrics
	// Purges lists every table the retention applies to, each with its owner's batch.
	Purges []Purge
}

// Batch deletes, from one table, up to limit rows older than before, and says how many
// it deleted. The table's owner package writes it: it alone deletes its rows.
type Batch func(ctx context.Context, conn db.DBTX, before time.Time, limit int32) (int64, error)

// batchRows bounds the rows one batch deletes, so that a first purge of a large table
// never holds its locks for long.
const batchRows = 1000

// Purge is one table's purge, by its owner package.
type Purge struct {
	// Table names the table, in logs and the purged-rows metric.
	Table string
	Batch Batch
	// Keep is how long the table's rows are kept; 0 means the configured Period.
	Keep time.Duration
}

// run deletes everything older than before through batch, one batch after another until
// one comes back short, and returns how many rows it deleted in all.
func run(ctx context.Context, conn db.DBTX, batch Batch, before time.Time) (int64, error) {
	var total int64
	for {
		n, err := batch(ctx, conn, before, batchRows)
		total += n
		if err != nil || n < batchRows {
			return total, err
		}
	}
}

// Worker runs jobs.Purge.
type Worker struct {
	river.WorkerDefaults[jobs.Purge]
	conn db.DBTX
	cfg  Config
	log  *slog.Logger
}

// NewWorker returns a Worker deleting from conn (the server's pool).
func NewWorker(conn db.DBTX, cfg Config) (*Worker, error) {
	cfg.Period = cmp.Or(cfg.Period, DefaultPeriod)
	if cfg.Period < MinPeriod {
		return nil, fmt.Errorf("retention: period %s is shorter than the minimum %s (Stripe retries events for 3 days)", cfg.Period, MinPeriod)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Worker{conn: conn, cfg: cfg, log: cfg.Logger}, nil
}

// Timeout implements river.Worker: a first purge of a large table takes a while; it
// stays well below the server's rescue horizon.
func (w *Worker) Timeout(*river.Job[jobs.Purge]) time.Duration { return 5 * time.Minute }

// Work implements river.Worker.
func (w *Worker) Work(ctx context.Context, _ *river.Job[jobs.Purge]) error {
	return w.Purge(ctx)
}

// Purge deletes, from every table the retention applies to, the rows older than the
// table's keep period. A table that fails does not stop the others; the error names it, and the next
// run (or River's retry) deletes what is left.
func (w *Worker) Purge(ctx context.Context) error {
	now := w.cfg.Now()
	var errs []error
	for _, p := range w.cfg.Purges {
		before := now.Add(-cmp.Or(p.Keep, w.cfg.Period))
		n, err := run(ctx, w.conn, p.Batch, before)
		w.cfg.Metrics.Purged(p.Table, n)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if n > 0 {
			w.log.InfoContext(ctx, "retention purge", "table", p.Table, "rows", n, "before", before.UTC())
		}
	}
	return errors.Join(errs...)
}
