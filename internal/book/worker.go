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

// feedBatch is how many feeds one run of PollFeedsWorker polls at most; the rest are due
// for the next run.
const feedBatch = 500

// PollFeedsWorker runs jobs.AppointmentsPollFeeds: PollFeeds through Reader.
type PollFeedsWorker struct {
	river.WorkerDefaults[jobs.AppointmentsPollFeeds]
	Service *Service
	Reader  FeedReader
}

// Work implements river.Worker. A feed's failure is its connector's last delivery, not
// the job's: the error returned is only what could not be recorded.
func (w *PollFeedsWorker) Work(ctx context.Context, _ *river.Job[jobs.AppointmentsPollFeeds]) error {
	_, err := w.Service.PollFeeds(ctx, w.Reader, feedBatch)
	return err
}

// Timeout implements river.Worker: polls of a few seconds each, several at once, well
// below the server's rescue horizon; feeds left when it ends are polled by the next run.
func (w *PollFeedsWorker) Timeout(*river.Job[jobs.AppointmentsPollFeeds]) time.Duration {
	return 3 * time.Minute
}

// WriteBackWorker runs jobs.AppointmentWriteBack: WriteBack of one move.
type WriteBackWorker struct {
	river.WorkerDefaults[jobs.AppointmentWriteBack]
	Service *Service
}

// Work implements river.Worker. A passing failure is returned, for River to retry with
// its backoff; the last attempt leaves the move to the owner instead.
func (w *WriteBackWorker) Work(ctx context.Context, job *river.Job[jobs.AppointmentWriteBack]) error {
	_, err := w.Service.WriteBack(ctx, job.Args.ShopID, job.Args.AppointmentID, job.Attempt >= job.MaxAttempts)
	return err
}

// Timeout implements river.Worker: at most a few calls of 10 s each.
func (w *WriteBackWorker) Timeout(*river.Job[jobs.AppointmentWriteBack]) time.Duration {
	return time.Minute
}
