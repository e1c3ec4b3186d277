package book

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"github.com/slotrecovery/slotrecovery/internal/jobs"
)

// declareBatch is how many claims one run of DeclarePendingWorker takes; the claims
// pending at once are the few whose declaration failed, so a run rarely has more.
const declareBatch = 200

// DeclarePendingWorker runs jobs.AppointmentsDeclare: DeclarePending on the claims
// left pending.
type DeclarePendingWorker struct {
	river.WorkerDefaults[jobs.AppointmentsDeclare]
	Service *Service
}

// Work implements river.Worker. An error is retried; the next period's run takes what
// this one left anyway.
func (w *DeclarePendingWorker) Work(ctx context.Context, _ *river.Job[jobs.AppointmentsDeclare]) error {
	_, err := w.Service.DeclarePending(ctx, declareBatch)
	return err
}

// Timeout implements river.Worker: a batch of short transactions, well below the
// server's rescue horizon.
func (w *DeclarePendingWorker) Timeout(*river.Job[jobs.AppointmentsDeclare]) time.Duration {
	return 2 * time.Minute
}
