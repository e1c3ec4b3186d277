package offers_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/offers"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
)

func TestWaveScheduleNextWaves(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.New(t)
	queue, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	require.NoError(t, err)
	schedule := offers.NewWaveSchedule(queue)

	now := time.Now().UTC().Truncate(time.Second)
	twoWaves, reopened, done, none := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	insert := func(w jobs.Wave, at time.Time) {
		t.Helper()
		_, err := queue.Insert(ctx, w, &river.InsertOpts{ScheduledAt: at})
		require.NoError(t, err)
	}
	insert(jobs.Wave{OpeningID: twoWaves, Generation: 1, Wave: 3}, now.Add(20*time.Minute))
	insert(jobs.Wave{OpeningID: twoWaves, Generation: 1, Wave: 2}, now.Add(10*time.Minute))
	insert(jobs.Wave{OpeningID: reopened, Generation: 2, Wave: 1}, now.Add(-time.Minute)) // due, not yet run
	insert(jobs.Wave{OpeningID: done, Generation: 1, Wave: 1}, now.Add(time.Minute))
	_, err = pool.Exec(ctx, `UPDATE river_job SET state = 'completed', finalized_at = now() WHERE args->>'opening_id' = $1`, done.String())
	require.NoError(t, err)
	// Another job kind naming an opening is not a wave.
	_, err = queue.Insert(ctx, jobs.Refund{BookingID: none}, nil)
	require.NoError(t, err)

	got, err := schedule.NextWaves(ctx, []uuid.UUID{twoWaves, reopened, done, none})
	require.NoError(t, err)
	assert.Len(t, got, 2, "no wave is left for the completed one, none was ever scheduled for the last")
	if w, ok := got[twoWaves]; assert.True(t, ok) {
		assert.Equal(t, 1, w.Generation)
		assert.Equal(t, 2, w.Wave, "the earliest pending wave")
		assert.WithinDuration(t, now.Add(10*time.Minute), w.At, time.Second)
	}
	if w, ok := got[reopened]; assert.True(t, ok) {
		assert.Equal(t, offers.ScheduledWave{Generation: 2, Wave: 1, At: w.At}, w)
		assert.WithinDuration(t, now.Add(-time.Minute), w.At, time.Second)
	}

	got, err = schedule.NextWaves(ctx, nil)
	require.NoError(t, err)
	assert.Empty(t, got)
}
