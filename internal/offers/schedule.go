package offers

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
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
	jobs JobLister
}

// JobLister lists River's jobs; the server's River client is one.
type JobLister interface {
	JobList(ctx context.Context, params *river.JobListParams) (*river.JobListResult, error)
}

// NewWaveSchedule returns a WaveSchedule asking jobs, the server's River client (one per
// instance: its pool and its configuration).
func NewWaveSchedule(jobs JobLister) *WaveSchedule {
	return &WaveSchedule{jobs: jobs}
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
