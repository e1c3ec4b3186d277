// Package erasure erases a shop's customer at the owner's request: every copy of what
// they were and wrote, in one transaction, across the packages that keep one.
package erasure

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/slotrecovery/slotrecovery/internal/book"
	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/idempotency"
	"github.com/slotrecovery/slotrecovery/internal/inbox"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/join"
)

// queries are the sqlc queries; they hold no state.
var queries = db.New()

// Jobs is what an erasure asks of River, in its own transaction: delete and list the
// texts' jobs, and enqueue the deletion of those still running. The server's one River
// client implements it.
type Jobs interface {
	InsertTx(ctx context.Context, tx pgx.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
	JobDeleteManyTx(ctx context.Context, tx pgx.Tx, params *river.JobDeleteManyParams) (*river.JobDeleteManyResult, error)
	JobListTx(ctx context.Context, tx pgx.Tx, params *river.JobListParams) (*river.JobListResult, error)
}

// Config configures the service.
type Config struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Service erases customers.
type Service struct {
	pool      *pgxpool.Pool
	customers *customers.Service
	jobs      Jobs
	cfg       Config
}

// New returns a Service.
func New(pool *pgxpool.Pool, c *customers.Service, j Jobs, cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Service{pool: pool, customers: c, jobs: j, cfg: cfg}
}

// Erase erases a customer at the owner's request, in one transaction: the name,
// phone and preferences are gone, the texts they sent lose their number and words
// (found by shop and number through an index), their conversations in the owner's
// inbox go with every text (inbox.Forget), their consent record keeps its proof without
// their address and browser (join.Forget), and they are opted out for good. The row
// stays, so their past offers and bookings (and the shop's totals) are kept, anonymised.
// Of the number only a keyed hash is kept (a suppression, see OptOutNumber), so that the
// person, added again, comes back opted out and a text queued before is not sent. The
// outbound events that name them lose their data (and are not sent, nor sent again), API
// answers kept for an Idempotency-Key that hold their number go, their appointments in
// the book lose their name and number (book.Forget), and so do the River
// jobs of texts to them (sms_text: their arguments hold the number and the words),
// whatever their state; one running at that moment is deleted once it ends (a
// ForgetTextJobs job, which holds only job ids).
func (s *Service) Erase(ctx context.Context, shopID, id uuid.UUID) error {
	now := s.cfg.Now().UTC()
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		number, err := s.customers.LockForErasure(ctx, tx, shopID, id)
		if err != nil {
			return err
		}
		if err := queries.CustomerEraseMessages(ctx, tx, db.CustomerEraseMessagesParams{ShopID: uuid.NullUUID{UUID: shopID, Valid: true}, Phone: number}); err != nil {
			return fmt.Errorf("erase customer %s messages: %w", id, err)
		}
		// The owner's inbox: their conversations, by customer and by number, with every
		// text either way. After the inbound log's rows (the order the inbound path
		// takes: its text, then the conversation), before the customer's row changes.
		forgotten, err := inbox.Forget(ctx, tx, shopID, id, number)
		if err != nil {
			return fmt.Errorf("erase customer %s conversations: %w", id, err)
		}
		// Their consent record keeps the proof (what was agreed to, when, how) without
		// the address and browser; their join requests go.
		if err := join.Forget(ctx, tx, shopID, id, number); err != nil {
			return fmt.Errorf("erase customer %s: %w", id, err)
		}
		if err := s.customers.Blank(ctx, tx, shopID, id, number, now); err != nil {
			return err
		}
		// The copies kept for a while elsewhere: events not yet sent (or kept for the
		// owner to send again), and API answers kept for their Idempotency-Key.
		if err := hooks.ForgetCustomer(ctx, tx, shopID, id, number, now); err != nil {
			return err
		}
		if err := idempotency.ForgetText(ctx, tx, shopID, number); err != nil {
			return err
		}
		// The owner's replies in their conversations were answered with the reply (its
		// words and id, no number) and kept for the Idempotency-Key: found by the id.
		for _, r := range forgotten.Replies {
			if err := idempotency.ForgetText(ctx, tx, shopID, r.String()); err != nil {
				return err
			}
		}
		// The appointment book keeps their appointments' times, not who they were with.
		if _, err := book.Forget(ctx, tx, shopID, id, number, now); err != nil {
			return err
		}
		// Texts to them, and the owner's alerts that quote their texts (to the owner's
		// own number, found by the conversation).
		if number != "" {
			filter, err := jobs.TextsTo(shopID, number)
			if err != nil {
				return fmt.Errorf("forget text jobs: %w", err)
			}
			if err := s.forgetTextJobs(ctx, tx, filter, now); err != nil {
				return err
			}
		}
		for _, c := range forgotten.Conversations {
			filter, err := jobs.TextsAbout(shopID, c)
			if err != nil {
				return fmt.Errorf("forget text jobs: %w", err)
			}
			if err := s.forgetTextJobs(ctx, tx, filter, now); err != nil {
				return err
			}
		}
		return nil
	})
}

// forgetBatch bounds the jobs one statement deletes (River's cap is 10,000).
const forgetBatch = 1000

// forgetTextJobs deletes, in tx, the River jobs of texts whose arguments contain filter
// (jobs.TextsTo: a shop's texts to a number; jobs.TextsAbout: those quoting a
// conversation), in every state but running: queued, scheduled, retrying, and the finished ones River
// keeps for a while (completed, cancelled, discarded), whose arguments and errors hold
// the number and the words. River's index on the arguments (GIN) finds them. A job
// running now (or taken by another transaction at this moment) cannot be deleted under
// it: ForgetTextJobs deletes it once it ends, and meanwhile the text is not sent (the
// outbox asks customers.OptedOut first).
func (s *Service) forgetTextJobs(ctx context.Context, tx pgx.Tx, filter []byte, now time.Time) error {
	where, args := "args @> @text_to::jsonb", river.NamedArgs{"text_to": string(filter)}
	kind := jobs.Text{}.Kind()
	for {
		res, err := s.jobs.JobDeleteManyTx(ctx, tx, river.NewJobDeleteManyParams().Kinds(kind).Where(where, args).First(forgetBatch))
		if err != nil {
			return fmt.Errorf("delete text jobs: %w", err)
		}
		if len(res.Jobs) < forgetBatch {
			break
		}
	}
	left, err := s.jobs.JobListTx(ctx, tx, river.NewJobListParams().Kinds(kind).Where(where, args).First(forgetBatch))
	if err != nil {
		return fmt.Errorf("list text jobs left: %w", err)
	}
	if len(left.Jobs) == 0 {
		return nil
	}
	ids := make([]int64, len(left.Jobs))
	for i, j := range left.Jobs {
		ids[i] = j.ID
	}
	if _, err := s.jobs.InsertTx(ctx, tx, jobs.ForgetTextJobs{IDs: ids}, &river.InsertOpts{ScheduledAt: now.Add(forgetRetry)}); err != nil {
		return fmt.Errorf("enqueue the deletion of running text jobs: %w", err)
	}
	return nil
}

// forgetRetry is how long ForgetTextJobs waits for a running text's job to end: a text
// is sent in well under a second, and the provider's call times out in 10 s.
const forgetRetry = 15 * time.Second

// ForgetTextJobsWorker deletes the jobs a ForgetTextJobs names; one still running snoozes
// the job until it has ended (a job whose process died is running until River's rescue,
// then retried, and the outbox does not send to an erased number).
type ForgetTextJobsWorker struct {
	river.WorkerDefaults[jobs.ForgetTextJobs]
}

// Work deletes the jobs.
func (w *ForgetTextJobsWorker) Work(ctx context.Context, job *river.Job[jobs.ForgetTextJobs]) error {
	client, err := river.ClientFromContextSafely[pgx.Tx](ctx)
	if err != nil {
		return fmt.Errorf("forget text jobs: %w", err)
	}
	running := 0
	for _, id := range job.Args.IDs {
		_, err := client.JobDelete(ctx, id)
		switch {
		case err == nil, errors.Is(err, rivertype.ErrNotFound):
		case errors.Is(err, rivertype.ErrJobRunning):
			running++
		default:
			return fmt.Errorf("delete text job %d: %w", id, err)
		}
	}
	if running > 0 {
		return river.JobSnooze(forgetRetry)
	}
	return nil
}
