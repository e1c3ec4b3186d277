package offers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
)

// A wave job whose process dies (killed, out of memory, its host lost) stays "running"
// in River's table until River's rescuer retries it, RescueStuckJobsAfter later (7
// minutes in cmd/server; it must exceed every job's own timeout, or a slow live job
// would run twice beside itself). Meanwhile the opening's customers wait untexted.
//
// A Healer resumes such a wave within a minute. Each instance's Healer records that its
// River client is alive (client_heartbeats, every BeatEvery) and, every SweepEvery,
// looks at the wave jobs running: one whose client has not beaten for DeadAfter is
// resumed at once — in one transaction its offers still claimed for sending are
// settled as sent (each may have gone out: the claim is the fence, so none is ever
// texted twice) and the job is made available again, as River's rescuer would. The
// next run texts the offers still queued. With the defaults a dead client's wave runs
// again at most DeadAfter + SweepEvery + BeatEvery + River's fetch interval (about 46
// s) after its last heartbeat.
//
// A client that never beat (an instance of an earlier version, during a rolling
// deploy) is not known to be dead and is left to River's rescuer. A client taken for
// dead that is alive (its heartbeats failed for DeadAfter while it went on sending)
// cannot text twice either; the offer it was texting may count as sent before its text
// goes out, and one whose send then fails is not retried.

// HealConfig configures a Healer; zero fields mean the defaults.
type HealConfig struct {
	// BeatEvery is how often the instance records its client alive; default 5 s.
	BeatEvery time.Duration
	// DeadAfter is how long a client may go without a heartbeat before its waves are
	// resumed elsewhere; default 30 s (six missed beats: a slow instance is not taken
	// for dead). Instances' clocks must agree to well within it.
	DeadAfter time.Duration
	// SweepEvery is how often the instance looks for waves of dead clients; default 10 s.
	SweepEvery time.Duration
	// Forget is how long a dead client's heartbeat row is kept; default 24 h.
	Forget time.Duration
	Now    func() time.Time
	Logger *slog.Logger
}

// Healer keeps its instance's River client marked alive and resumes the waves of dead
// ones (see above).
type Healer struct {
	pool *pgxpool.Pool
	jobs *river.Client[pgx.Tx]
	cfg  HealConfig
	log  *slog.Logger
}

// NewHealer returns a Healer for client, the instance's River client (its ID is the one
// recorded alive; it lists and resumes the wave jobs).
func NewHealer(pool *pgxpool.Pool, client *river.Client[pgx.Tx], cfg HealConfig) (*Healer, error) {
	if pool == nil || client == nil {
		return nil, errors.New("offers: healer: pool and river client are required")
	}
	if cfg.BeatEvery == 0 {
		cfg.BeatEvery = 5 * time.Second
	}
	if cfg.DeadAfter == 0 {
		cfg.DeadAfter = 30 * time.Second
	}
	if cfg.SweepEvery == 0 {
		cfg.SweepEvery = 10 * time.Second
	}
	if cfg.Forget == 0 {
		cfg.Forget = 24 * time.Hour
	}
	if cfg.DeadAfter < 2*cfg.BeatEvery {
		return nil, fmt.Errorf("offers: healer: DeadAfter (%s) must be at least two heartbeats (%s)", cfg.DeadAfter, cfg.BeatEvery)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Healer{pool: pool, jobs: client, cfg: cfg, log: cfg.Logger}, nil
}

// Run beats every BeatEvery and sweeps every SweepEvery until ctx ends (then it returns
// nil). A failed beat or sweep is logged and tried again at the next tick. Start it
// with the River client; when the client has stopped, call Stopped.
func (h *Healer) Run(ctx context.Context) error {
	beat := time.NewTicker(h.cfg.BeatEvery)
	defer beat.Stop()
	sweep := time.NewTicker(h.cfg.SweepEvery)
	defer sweep.Stop()
	if err := h.Beat(ctx); err != nil && ctx.Err() == nil {
		h.log.WarnContext(ctx, "heartbeat not recorded", "err", err)
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-beat.C:
			if err := h.Beat(ctx); err != nil && ctx.Err() == nil {
				h.log.WarnContext(ctx, "heartbeat not recorded", "err", err)
			}
		case <-sweep.C:
			if _, err := h.Sweep(ctx); err != nil && ctx.Err() == nil {
				h.log.ErrorContext(ctx, "resuming the waves of dead instances failed", "err", err)
			}
		}
	}
}

// Beat records the client alive now.
func (h *Healer) Beat(ctx context.Context) error {
	if err := queries.HeartbeatRecord(ctx, h.pool, db.HeartbeatRecordParams{ClientID: h.jobs.ID(), SeenAt: h.cfg.Now().UTC()}); err != nil {
		return fmt.Errorf("record heartbeat: %w", err)
	}
	return nil
}

// Stopped records that the client has stopped, so that a wave it left running (its
// shutdown ran out of time) is resumed by the next sweep of another instance. Call it
// once the River client has stopped and Run has returned.
func (h *Healer) Stopped(ctx context.Context) error {
	at := h.cfg.Now().Add(-h.cfg.DeadAfter - time.Second).UTC()
	if err := queries.HeartbeatRecord(ctx, h.pool, db.HeartbeatRecordParams{ClientID: h.jobs.ID(), SeenAt: at}); err != nil {
		return fmt.Errorf("record client stopped: %w", err)
	}
	return nil
}

// maxRunningWaves bounds one sweep's look at the running wave jobs (each instance runs
// a few at a time); more are seen by the next sweeps as those finish.
const maxRunningWaves = 1000

// Sweep resumes the wave jobs running under clients whose heartbeat stopped, and
// returns how many it resumed.
func (h *Healer) Sweep(ctx context.Context) (int, error) {
	res, err := h.jobs.JobList(ctx, river.NewJobListParams().
		Kinds(jobs.Wave{}.Kind()).States(rivertype.JobStateRunning).First(maxRunningWaves))
	if err != nil {
		return 0, fmt.Errorf("list running waves: %w", err)
	}
	me := h.jobs.ID()
	var clients []string
	for _, j := range res.Jobs {
		if c := runner(j); c != "" && c != me && !slices.Contains(clients, c) {
			clients = append(clients, c)
		}
	}
	now := h.cfg.Now()
	resumed := 0
	if len(clients) > 0 {
		dead, err := queries.HeartbeatListDead(ctx, h.pool, db.HeartbeatListDeadParams{ClientIds: clients, StaleBefore: now.Add(-h.cfg.DeadAfter).UTC()})
		if err != nil {
			return 0, fmt.Errorf("find dead clients: %w", err)
		}
		for _, j := range res.Jobs {
			if !slices.Contains(dead, runner(j)) {
				continue
			}
			ok, err := h.resume(ctx, j, now)
			if err != nil {
				return resumed, err
			}
			if ok {
				resumed++
			}
		}
	}
	if _, err := queries.HeartbeatPurge(ctx, h.pool, now.Add(-h.cfg.Forget).UTC()); err != nil {
		return resumed, fmt.Errorf("forget old heartbeats: %w", err)
	}
	return resumed, nil
}

// runner is the client working j's current attempt.
func runner(j *rivertype.JobRow) string {
	if len(j.AttemptedBy) == 0 || j.AttemptedAt == nil {
		return ""
	}
	return j.AttemptedBy[len(j.AttemptedBy)-1]
}

// resume settles the offers j's dead run left claimed and makes j available again, in
// one transaction; false when j had moved on meanwhile (finished, or resumed by another
// instance's sweep).
func (h *Healer) resume(ctx context.Context, j *rivertype.JobRow, now time.Time) (bool, error) {
	var w jobs.Wave
	if err := json.Unmarshal(j.EncodedArgs, &w); err != nil {
		return false, fmt.Errorf("read wave job %d: %w", j.ID, err)
	}
	var moved bool
	err := pgx.BeginFunc(ctx, h.pool, func(tx pgx.Tx) error {
		exec := h.jobs.Driver().UnwrapExecutor(tx)
		// Only the attempt seen, and only while it is still running: the update's own
		// condition (running, attempted before the horizon) makes two sweeps, or a sweep
		// and a finishing run, safe.
		state, finalized := rivertype.JobStateAvailable, (*time.Time)(nil)
		if j.Attempt >= j.MaxAttempts {
			state, finalized = rivertype.JobStateDiscarded, &now
		}
		why := fmt.Sprintf("client %s stopped beating; wave resumed by %s", runner(j), h.jobs.ID())
		reason, err := json.Marshal(rivertype.AttemptError{At: now.UTC(), Attempt: j.Attempt, Error: why})
		if err != nil {
			return err
		}
		if _, err := exec.JobRescueMany(ctx, &riverdriver.JobRescueManyParams{
			ID: []int64{j.ID}, Error: [][]byte{reason}, FinalizedAt: []*time.Time{finalized},
			ScheduledAt: []time.Time{now.UTC()}, State: []string{string(state)},
			StuckHorizon: j.AttemptedAt.Add(time.Microsecond),
		}); err != nil {
			return fmt.Errorf("resume wave job %d: %w", j.ID, err)
		}
		after, err := exec.JobGetByID(ctx, &riverdriver.JobGetByIDParams{ID: j.ID})
		if err != nil {
			return fmt.Errorf("read wave job %d: %w", j.ID, err)
		}
		if after.State != state || after.Attempt != j.Attempt || len(after.Errors) == 0 || after.Errors[len(after.Errors)-1].Error != why {
			moved = true // not ours to resume: it finished, or another sweep resumed it
			return nil
		}
		// Every offer of the wave still sending was claimed by the dead run (River runs
		// one attempt of a job at a time).
		return settleOrphans(ctx, tx, h.log, w, now)
	})
	if err != nil {
		return false, err
	}
	if moved {
		return false, nil
	}
	h.log.WarnContext(ctx, "wave of a dead instance resumed", "job_id", j.ID, "opening_id", w.OpeningID,
		"generation", w.Generation, "wave", w.Wave, "dead_client", runner(j))
	return true, nil
}
