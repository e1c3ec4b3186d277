package offers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/slotrecovery/slotrecovery/internal/jobs"
)

// ScheduledWave is an opening's next offer wave that has not run yet.
type ScheduledWave struct {
	Generation int
	Wave       int
	// At is when the wave is due; it may be past when the wave waits for a worker.
	At time.Time
}

// WaveSchedule reads when openings' next offer waves are due. Waves are River jobs
// (jobs.Wave) whose arguments this package writes and reads, so the question is asked
// here rather than by each reader of River's tables.
type WaveSchedule struct {
	jobs *river.Client[pgx.Tx]
}

// NewWaveSchedule returns a WaveSchedule reading River's jobs in pool. It holds an
// insert-only River client that is never started: it lists jobs through River's API
// and runs none.
func NewWaveSchedule(pool *pgxpool.Pool) (*WaveSchedule, error) {
	if pool == nil {
		return nil, errors.New("offers: wave schedule: pool is required")
	}
	c, err := river.NewClient(riverpgxv5.New(pool), &river.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, fmt.Errorf("offers: wave schedule: river client: %w", err)
	}
	return &WaveSchedule{jobs: c}, nil
}

// NextWaves returns, for each opening in openingIDs that has one, its earliest wave job
// still to run (available, scheduled, retryable or pending), whatever its generation:
// the caller compares it with the opening's.
func (s *WaveSchedule) NextWaves(ctx context.Context, openingIDs []uuid.UUID) (map[uuid.UUID]ScheduledWave, error) {
	out := map[uuid.UUID]ScheduledWave{}
	if len(openingIDs) == 0 {
		return out, nil
	}
	strs := make([]string, len(openingIDs))
	for i, id := range openingIDs {
		strs[i] = id.String()
	}
	params := river.NewJobListParams().
		Kinds(jobs.Wave{}.Kind()).
		States(rivertype.JobStateAvailable, rivertype.JobStateScheduled, rivertype.JobStateRetryable, rivertype.JobStatePending).
		// River's documented escape hatch; the opening ids travel as a bound parameter.
		Where("args->>'opening_id' = any(@opening_ids::text[])", river.NamedArgs{"opening_ids": strs}).
		First(min(10*len(openingIDs)+10, 10_000))
	res, err := s.jobs.JobList(ctx, params)
	if err != nil {
		return nil, fmt.Errorf("list wave jobs: %w", err)
	}
	for _, j := range res.Jobs {
		var w jobs.Wave
		if err := json.Unmarshal(j.EncodedArgs, &w); err != nil {
			continue
		}
		cur, seen := out[w.OpeningID]
		if !seen || j.ScheduledAt.Before(cur.At) {
			out[w.OpeningID] = ScheduledWave{Generation: w.Generation, Wave: w.Wave, At: j.ScheduledAt}
		}
	}
	return out, nil
}
