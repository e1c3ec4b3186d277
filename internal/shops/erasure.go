package shops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/idempotency"
	"github.com/slotrecovery/slotrecovery/internal/inbox"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
)

// EraseCustomer erases a customer at the owner's request, in one transaction: the name,
// phone and preferences are gone, the texts they sent lose their number and words
// (found by shop and number through an index), their conversations in the owner's
// inbox go with every text (inbox.Forget), and they are opted out for good. The row
// stays, so their past offers and bookings (and the shop's totals) are kept, anonymised.
// Of the number only a keyed hash is kept (a suppression, see OptOutNumber), so that the
// person, added again, comes back opted out and a text queued before is not sent. The
// outbound events that name them lose their data (and are not sent, nor sent again), API
// answers kept for an Idempotency-Key that hold their number go, and so do the River
// jobs of texts to them (sms_text: their arguments hold the number and the words),
// whatever their state; one running at that moment is deleted once it ends (a
// ForgetTextJobs job, which holds only job ids).
func (s *Service) EraseCustomer(ctx context.Context, shopID, id uuid.UUID) error {
	if s.jobsErr != nil {
		return fmt.Errorf("erase customer %s: river client: %w", id, s.jobsErr)
	}
	now := s.cfg.Now().UTC()
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		row, err := queries.CustomerGetForShopForUpdate(ctx, tx, db.CustomerGetForShopForUpdateParams{ID: id, ShopID: shopID})
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrCustomerNotFound
		}
		if err != nil {
			return fmt.Errorf("get customer %s: %w", id, err)
		}
		if err := queries.CustomerEraseMessages(ctx, tx, db.CustomerEraseMessagesParams{ShopID: uuid.NullUUID{UUID: shopID, Valid: true}, Phone: row.Phone}); err != nil {
			return fmt.Errorf("erase customer %s messages: %w", id, err)
		}
		// The owner's inbox: their conversations, by customer and by number, with every
		// text either way. After the inbound log's rows (the order the inbound path
		// takes: its text, then the conversation), before the customer's row changes.
		if _, err := inbox.Forget(ctx, tx, shopID, id, row.Phone); err != nil {
			return fmt.Errorf("erase customer %s conversations: %w", id, err)
		}
		if _, err := queries.CustomerErase(ctx, tx, db.CustomerEraseParams{ID: id, ShopID: shopID, Now: now}); err != nil {
			return fmt.Errorf("erase customer %s: %w", id, err)
		}
		if err := s.suppress(ctx, tx, shopID, row.Phone, suppressedErased, now); err != nil {
			return err
		}
		// The copies kept for a while elsewhere: events not yet sent (or kept for the
		// owner to send again), and API answers kept for their Idempotency-Key.
		if err := hooks.ForgetCustomer(ctx, tx, shopID, id, row.Phone, now); err != nil {
			return err
		}
		if err := idempotency.ForgetText(ctx, tx, shopID, row.Phone); err != nil {
			return err
		}
		return s.forgetTextJobs(ctx, tx, shopID, row.Phone, now)
	})
}

// forgetBatch bounds the jobs one statement deletes (River's cap is 10,000).
const forgetBatch = 1000

// forgetTextJobs deletes, in tx, the River jobs of texts from shopID to number, in
// every state but running: queued, scheduled, retrying, and the finished ones River
// keeps for a while (completed, cancelled, discarded), whose arguments and errors hold
// the number and the words. River's index on the arguments (GIN) finds them. A job
// running now (or taken by another transaction at this moment) cannot be deleted under
// it: ForgetTextJobs deletes it once it ends, and meanwhile the text is not sent (the
// outbox asks PhoneErased first).
func (s *Service) forgetTextJobs(ctx context.Context, tx pgx.Tx, shopID uuid.UUID, number string, now time.Time) error {
	if number == "" {
		return nil
	}
	filter, err := json.Marshal(map[string]string{"shop_id": shopID.String(), "to": number})
	if err != nil {
		return fmt.Errorf("forget text jobs: %w", err)
	}
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
	if _, err := s.jobs.InsertTx(ctx, tx, ForgetTextJobs{IDs: ids}, &river.InsertOpts{ScheduledAt: now.Add(forgetRetry)}); err != nil {
		return fmt.Errorf("enqueue the deletion of running text jobs: %w", err)
	}
	return nil
}

// forgetRetry is how long ForgetTextJobs waits for a running text's job to end: a text
// is sent in well under a second, and the provider's call times out in 10 s.
const forgetRetry = 15 * time.Second

// ForgetTextJobs are River jobs of texts to an erased customer that were running when
// the erasure committed: deleted once they end. It holds their ids only.
type ForgetTextJobs struct {
	IDs []int64 `json:"ids"`
}

// Kind is the job's kind, stored with it: never rename it.
func (ForgetTextJobs) Kind() string { return "customer_erasure_jobs" }

// InsertOpts puts it on the texts' queue. Snoozing while a job still runs costs no
// attempt, so the attempts only count errors.
func (ForgetTextJobs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: jobs.QueueTexts, MaxAttempts: 25}
}

// ForgetTextJobsWorker deletes the jobs a ForgetTextJobs names; one still running snoozes
// the job until it has ended (a job whose process died is running until River's rescue,
// then retried, and the outbox does not send to an erased number).
type ForgetTextJobsWorker struct {
	river.WorkerDefaults[ForgetTextJobs]
}

// Work deletes the jobs.
func (w *ForgetTextJobsWorker) Work(ctx context.Context, job *river.Job[ForgetTextJobs]) error {
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

// PhoneErased reports whether number belonged to one of shopID's erased customers, so a
// text queued before the erasure is not sent.
func (s *Service) PhoneErased(ctx context.Context, shopID uuid.UUID, number string) (bool, error) {
	erased, err := queries.SuppressionErased(ctx, s.pool, db.SuppressionErasedParams{ShopID: shopID, PhoneHmacs: s.phoneHashes(shopID, number)})
	if err != nil {
		return false, fmt.Errorf("check erased phone: %w", err)
	}
	return erased, nil
}
