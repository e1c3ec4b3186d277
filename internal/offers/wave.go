package offers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/texts"
)

// waveTimeout is WaveWorker's Timeout.
const waveTimeout = 5 * time.Minute

// orphanAge is how long after its claim an offer still sending must have been claimed by
// a run that is over, when RunWave cannot know better. A River attempt can
// (WaveWorker.Work): every offer still sending when a later attempt starts was claimed
// by an earlier one, which is over (River runs one attempt of a job at a time). A run
// called directly may run beside another run of the same wave, whose recent claims are
// its own business.
const orphanAge = 90 * time.Second

// WaveResult says what a wave did.
type WaveResult struct {
	Texted   int
	Failed   int
	Stopped  string    // why nothing was texted: "not_found", "not_open", "old_generation", "expired"
	SnoozeTo time.Time // set when quiet hours postpone the wave
}

// RunWave runs one wave of an opening's offers. It is safe to run again after a crash
// or an error: offers already recorded are reused and a claimed offer is never texted
// twice.
func (s *Service) RunWave(ctx context.Context, w jobs.Wave) (WaveResult, error) {
	return s.runWave(ctx, w, s.cfg.Now().Add(-orphanAge))
}

// runWave is RunWave for a run that knows every offer of the wave claimed before
// orphansBefore was claimed by a run that is over (zero: that no run claimed any).
func (s *Service) runWave(ctx context.Context, w jobs.Wave, orphansBefore time.Time) (WaveResult, error) {
	// Offers an earlier run claimed (sending) and never marked: it was killed mid-send,
	// or could not record what it sent (Postgres gone for a moment). Each may have gone
	// out. They are settled as sent with no message id, like a send whose outcome is
	// unknown, rather than left claimed (neither claimable nor counted) for ever or texted
	// twice; and before anything else: the opening may have been cancelled, expired or
	// reopened since, and the run stops then.
	if !orphansBefore.IsZero() {
		if err := s.settleOrphans(ctx, w, orphansBefore); err != nil {
			return WaveResult{}, err
		}
	}
	op, err := queries.OpeningForWave(ctx, s.pool, w.OpeningID)
	if errors.Is(err, pgx.ErrNoRows) {
		return WaveResult{Stopped: "not_found"}, nil
	}
	if err != nil {
		return WaveResult{}, fmt.Errorf("get opening: %w", err)
	}
	if !op.Open {
		return WaveResult{Stopped: "not_open"}, nil
	}
	if int(op.Generation) != w.Generation {
		return WaveResult{Stopped: "old_generation"}, nil
	}
	shop, err := s.shops.Get(ctx, op.ShopID)
	if err != nil {
		return WaveResult{}, err
	}
	now := s.cfg.Now()
	cutoff := shop.Cutoff(op.StartsAt)
	if !now.Before(cutoff) {
		if err := s.openings.Expire(ctx, op.ID, now); err != nil {
			return WaveResult{}, fmt.Errorf("expire opening: %w", err)
		}
		return WaveResult{Stopped: "expired"}, nil
	}
	// The grace period after a declaration: the first wave of the first round waits,
	// so an owner who declared by mistake can cancel before anyone is texted. (A later
	// round, after a failed payment, is not a fresh declaration and does not wait.)
	if w.Generation == 1 && w.Wave == 1 {
		if at := op.CreatedAt.Add(shop.Policy.FirstWaveDelay); now.Before(at) {
			return WaveResult{SnoozeTo: at}, nil
		}
	}
	if q := shop.Policy.Quiet; q != nil && q.Contains(now.In(shop.Location)) {
		return WaveResult{SnoozeTo: q.EndAfter(now.In(shop.Location))}, nil
	}

	batch, err := queries.OfferListWave(ctx, s.pool, db.OfferListWaveParams{OpeningID: op.ID, Generation: op.Generation, Wave: int32(w.Wave)})
	if err != nil {
		return WaveResult{}, fmt.Errorf("list wave offers: %w", err)
	}
	if len(batch) == 0 {
		if err := s.recordWave(ctx, shop, op, w, now); err != nil {
			return WaveResult{}, err
		}
		if batch, err = queries.OfferListWave(ctx, s.pool, db.OfferListWaveParams{OpeningID: op.ID, Generation: op.Generation, Wave: int32(w.Wave)}); err != nil {
			return WaveResult{}, fmt.Errorf("list wave offers: %w", err)
		}
	}
	// Each customer reads the offer in their language, the shop's when theirs is unknown,
	// naming the service offered to them (the opening's own without services) and the
	// opening's person.
	type bodyKey struct {
		lang    language.Code
		service string
		price   int64
	}
	bodies := map[bodyKey]string{}
	moveUps := map[uuid.UUID]string{}
	body := func(o db.OfferListWaveRow) string {
		if from := cmp.Or(o.MoveFromAt, o.MoveFromBookingAt); from != nil {
			// A move-up offer: the earlier time instead of the booking it would move (an
			// appointment of the book or a YES booking).
			if b, ok := moveUps[o.ID]; ok {
				return b
			}
			lang := language.Code(o.Language.String).Or(shop.Language)
			moveUps[o.ID] = texts.In(lang).MoveUpOffer(&shop, op.Service, op.StartsAt, *from)
			return moveUps[o.ID]
		}
		k := bodyKey{language.Code(o.Language.String).Or(shop.Language), op.Service, op.PriceCents}
		if o.Service != "" {
			k.service, k.price = o.Service, o.PriceCents
		}
		if _, ok := bodies[k]; !ok {
			bodies[k] = texts.In(k.lang).OfferWith(&shop, k.service, op.StaffName, op.StartsAt, k.price)
		}
		return bodies[k]
	}
	for _, o := range batch {
		body(o) // written before the texts go out in parallel
	}
	return s.send(ctx, shop, batch, body, cutoff)
}

// settleOrphans settles the offers of wave w still claimed for sending by a run that
// claimed them before staleBefore (see RunWave and Healer).
func (s *Service) settleOrphans(ctx context.Context, w jobs.Wave, staleBefore time.Time) error {
	return settleOrphans(ctx, s.pool, s.log, w, staleBefore)
}

func settleOrphans(ctx context.Context, q db.DBTX, log *slog.Logger, w jobs.Wave, staleBefore time.Time) error {
	n, err := queries.OfferSettleOrphans(ctx, q, db.OfferSettleOrphansParams{
		OpeningID: w.OpeningID, Generation: int32(w.Generation), Wave: int32(w.Wave), StaleBefore: staleBefore.UTC(),
	})
	if err != nil {
		return fmt.Errorf("settle offers of a killed run: %w", err)
	}
	if n > 0 {
		log.WarnContext(ctx, "offers claimed by a killed wave settled as sent (outcome unknown)", "opening_id", w.OpeningID,
			"generation", w.Generation, "wave", w.Wave, "count", n)
	}
	return nil
}

// WaveWorker runs jobs.Wave.
type WaveWorker struct {
	river.WorkerDefaults[jobs.Wave]
	Service *Service
}

// Timeout bounds one run (waveTimeout). River's default (1 min) would cut even an unpaced
// wave of 1000 texts short, with Twilio slow. A wave longer than that at its send rate (a
// long code's 1 text a second and more than 300 customers) is cut and retried within a
// minute, going on where it stopped; a shorter timeout lets River's rescuer take over a
// wave killed mid-run sooner (cmd/server's rescue horizon must stay above it).
func (w *WaveWorker) Timeout(*river.Job[jobs.Wave]) time.Duration { return waveTimeout }

// NextRetry retries a failed wave (Postgres, Redis or Twilio unavailable) soon and
// steadily, at most a minute apart, rather than River's growing backoff: offers are
// only worth sending before the slot starts.
func (w *WaveWorker) NextRetry(job *river.Job[jobs.Wave]) time.Time {
	d := time.Duration(job.Attempt*job.Attempt) * time.Second
	return time.Now().Add(min(d, time.Minute))
}

// Work implements river.Worker.
func (w *WaveWorker) Work(ctx context.Context, job *river.Job[jobs.Wave]) error {
	// A first attempt has nothing to settle (no run of this job claimed anything): it
	// saves the statement. A later one follows an attempt that is over (failed, timed
	// out, or rescued): what that left claimed is settled now, not orphanAge later, and
	// nothing of this wave is claimed by this attempt yet.
	orphansBefore := time.Time{}
	if job.Attempt > 1 {
		orphansBefore = w.Service.cfg.Now()
	}
	res, err := w.Service.runWave(ctx, job.Args, orphansBefore)
	switch {
	case err != nil:
		w.Service.m.WaveRun("error")
		return err
	case !res.SnoozeTo.IsZero():
		w.Service.m.WaveRun("quiet_hours")
		return river.JobSnooze(time.Until(res.SnoozeTo))
	case res.Stopped != "":
		w.Service.m.WaveRun(res.Stopped)
	default:
		w.Service.m.WaveRun("texted")
	}
	return nil
}
