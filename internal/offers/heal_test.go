package offers_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/offers"
	"github.com/slotrecovery/slotrecovery/internal/pacing"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/sms"
	"github.com/slotrecovery/slotrecovery/internal/testkit/redistest"
)

// dyingTexter passes the first n texts on and then dies on the next: it hands that one to
// the provider too (the provider accepts it) but never returns, like a process killed
// while the answer was on its way. Nothing of that run happens after.
type dyingTexter struct {
	next offers.Texter
	n    int

	mu    sync.Mutex
	seen  int
	died  chan struct{} // closed when the last text reached the provider
	after chan struct{} // closed at cleanup: the "dead" goroutine may end
}

func (d *dyingTexter) Text(ctx context.Context, m sms.Message) (string, error) {
	d.mu.Lock()
	d.seen++
	last := d.seen == d.n+1
	over := d.seen > d.n+1
	d.mu.Unlock()
	if over {
		<-d.after
		return "", errors.New("dead")
	}
	sid, err := d.next.Text(context.WithoutCancel(ctx), m)
	if !last {
		return sid, err
	}
	close(d.died)
	<-d.after // never answers while the test runs
	return "", errors.New("dead")
}

// riverOn starts a River client working the offers queue with svc's waves.
func riverOn(t *testing.T, w *world, svc *offers.Service) *river.Client[pgx.Tx] {
	t.Helper()
	workers := river.NewWorkers()
	river.AddWorker(workers, &offers.WaveWorker{Service: svc})
	c, err := river.NewClient(riverpgxv5.New(w.pool), &river.Config{
		Queues:            map[string]river.QueueConfig{jobs.QueueOffers: {MaxWorkers: 2}},
		Workers:           workers,
		FetchPollInterval: 100 * time.Millisecond,
		// River's own rescue stays out of the way: an hour, its default.
		RescueStuckJobsAfter: time.Hour,
		Logger:               slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	require.NoError(t, c.Start(context.Background()))
	return c
}

// TestKilledWaveResumesWithinAMinute: an instance dies in the middle of a wave (its
// River client stops beating and leaves the job running, one text accepted by the
// provider but never marked). Another instance's Healer resumes the wave at once (in
// production, within a minute of the last heartbeat; here the intervals are short) and
// every customer is texted exactly once: the dead run's last text is not sent again.
func TestKilledWaveResumesWithinAMinute(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rdb, prefix := redistest.New(t)
	pacer := pacing.New(rdb, prefix)
	const customers = 5
	shop := w.shop(t, shops.Policy{WaveSize: customers, WaveInterval: time.Hour, MinLead: time.Hour, Cooldown: time.Hour, SendRate: 1})
	cs := w.customers(t, shop, customers)

	// Instance A texts two customers, then dies on the third's text.
	dying := &dyingTexter{next: w.texter, n: 2, died: make(chan struct{}), after: make(chan struct{})}
	t.Cleanup(func() { close(dying.after) })
	cfg := offers.Config{Pacer: pacer, SendParallelism: 1}
	svcA := offers.New(w.pool, w.queue, dying, w.cool, w.shops, w.cust, w.slots, cfg)
	clientA := riverOn(t, w, svcA)
	heal := offers.HealConfig{BeatEvery: 100 * time.Millisecond, DeadAfter: time.Second, SweepEvery: 200 * time.Millisecond}
	healerA, err := offers.NewHealer(w.pool, clientA, heal)
	require.NoError(t, err)
	ctxA, killA := context.WithCancel(context.Background())
	doneA := make(chan struct{})
	go func() { defer close(doneA); _ = healerA.Run(ctxA) }()

	op, err := w.slots.Declare(context.Background(), shop, slots.NewOpening{
		StartsAt: time.Now().Add(5 * time.Hour), DurationMinutes: 45, Service: "Colour", PriceCents: 6000,
	})
	require.NoError(t, err)
	select {
	case <-dying.died:
	case <-time.After(60 * time.Second):
		t.Fatalf("instance A did not reach its third text within 60 s: %v", w.offerStatuses(t, op.ID))
	}
	// A dies: no more heartbeats, its River client gone without finishing the job.
	killA()
	<-doneA
	stopCtx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	_ = clientA.StopAndCancel(stopCtx) // its worker never returns: the job stays running
	cancel()
	require.Equal(t, 3, w.twilio.Count(), "three texts reached the provider before A died")
	killedAt := time.Now()

	// Instance B, alive, with its own Healer.
	svcB := offers.New(w.pool, w.queue, w.texter, w.cool, w.shops, w.cust, w.slots, offers.Config{Pacer: pacer})
	clientB := riverOn(t, w, svcB)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = clientB.Stop(ctx)
	})
	healerB, err := offers.NewHealer(w.pool, clientB, heal)
	require.NoError(t, err)
	ctxB, stopB := context.WithCancel(context.Background())
	doneB := make(chan struct{})
	go func() { defer close(doneB); _ = healerB.Run(ctxB) }()
	t.Cleanup(func() { stopB(); <-doneB })

	deadline := time.Now().Add(time.Minute)
	for w.twilio.Count() < customers || w.waveState(t, op.ID) != "completed" {
		require.True(t, time.Now().Before(deadline), "the wave was not resumed within a minute of A's death: %d texts, job %s, offers %v",
			w.twilio.Count(), w.waveState(t, op.ID), w.offerStatuses(t, op.ID))
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("resumed and finished %s after A died", time.Since(killedAt).Round(10*time.Millisecond))
	for _, c := range cs {
		require.Len(t, w.twilio.MessagesTo(c.Phone), 1, "exactly one text for %s", c.Name)
	}
	require.Equal(t, customers, w.twilio.Attempts(), "no send was tried twice")
	require.Equal(t, map[string]int{"sent": customers}, w.offerStatuses(t, op.ID))
	var resumedBy string
	require.NoError(t, w.pool.QueryRow(context.Background(), `SELECT errors[array_length(errors, 1)]->>'error' FROM river_job
		WHERE kind = 'offer_wave' AND args->>'opening_id' = $1 AND (args->>'wave')::int = 1`, op.ID.String()).Scan(&resumedBy))
	require.Equal(t, fmt.Sprintf("client %s stopped beating; wave resumed by %s", clientA.ID(), clientB.ID()), resumedBy)
}

// waveState is the state of an opening's first wave job.
func (w *world) waveState(t *testing.T, openingID any) string {
	t.Helper()
	var state string
	require.NoError(t, w.pool.QueryRow(context.Background(), `SELECT state FROM river_job
		WHERE kind = 'offer_wave' AND args->>'opening_id' = $1::text AND (args->>'wave')::int = 1`, fmt.Sprint(openingID)).Scan(&state))
	return state
}

// TestHealerLeavesLiveAndUnknownClientsAlone: a wave running under a client that beats
// is never resumed elsewhere, nor one under a client that never beat (an instance of an
// earlier version: River's rescue is its safety net); a client that stopped (its
// shutdown ran out of time) is resumed at the next sweep.
func TestHealerLeavesLiveAndUnknownClientsAlone(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	shop := w.shop(t, shops.Policy{WaveSize: 2, WaveInterval: time.Hour, MinLead: time.Hour, Cooldown: time.Hour})
	w.customers(t, shop, 2)
	gate := newGate(w.texter)
	t.Cleanup(gate.open)
	clientA := riverOn(t, w, offers.New(w.pool, w.queue, gate, w.cool, w.shops, w.cust, w.slots, offers.Config{}))
	t.Cleanup(func() {
		gate.open()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = clientA.Stop(ctx)
	})
	heal := offers.HealConfig{BeatEvery: time.Second, DeadAfter: 2 * time.Second}
	healerA, err := offers.NewHealer(w.pool, clientA, heal)
	require.NoError(t, err)
	require.NoError(t, healerA.Beat(context.Background()))

	op, err := w.slots.Declare(context.Background(), shop, slots.NewOpening{
		StartsAt: time.Now().Add(5 * time.Hour), DurationMinutes: 45, Service: "Colour", PriceCents: 6000,
	})
	require.NoError(t, err)
	deadline := time.Now().Add(30 * time.Second)
	for w.waveState(t, op.ID) != "running" || w.offerStatuses(t, op.ID)["sending"] != 2 {
		require.True(t, time.Now().Before(deadline), "A did not start the wave within 30 s")
		time.Sleep(20 * time.Millisecond)
	}

	// B's healer (its client need not run jobs to resume them).
	clientB, err := river.NewClient(riverpgxv5.New(w.pool), &river.Config{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	clk := &clock{t: time.Now()}
	heal.Now = clk.Now
	healerB, err := offers.NewHealer(w.pool, clientB, heal)
	require.NoError(t, err)
	ctx := context.Background()

	n, err := healerB.Sweep(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "A beat a moment ago")

	_, err = w.pool.Exec(ctx, `DELETE FROM client_heartbeats WHERE client_id = $1`, clientA.ID())
	require.NoError(t, err)
	clk.Set(clk.Now().Add(time.Hour))
	n, err = healerB.Sweep(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "a client that never beat is not known to be dead")
	require.Equal(t, "running", w.waveState(t, op.ID))

	require.NoError(t, healerA.Stopped(ctx))
	n, err = healerB.Sweep(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n, "a stopped client's wave is resumed")
	require.Equal(t, map[string]int{"sent": 2}, w.offerStatuses(t, op.ID), "its claimed offers settled")
	n, err = healerB.Sweep(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "resumed once")
}
