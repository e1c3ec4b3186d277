package hooks_test

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/testkit/hookstest"
)

// childDBEnv names, in a child process of TestKilledInstanceLosesNothing, the database
// whose delivery jobs it works until it is killed.
const childDBEnv = "HOOKS_TEST_CHILD_DB"

// childTimeout is the attempt timeout of the child and of the instance that takes over:
// the delivery job's River timeout, after which the rescuer may retry it, follows from it.
const childTimeout = 500 * time.Millisecond

// killedChild runs the child's part when this binary was started as the child, and
// never returns then (the parent kills it).
func killedChild() bool {
	url := os.Getenv(childDBEnv)
	if url == "" {
		return false
	}
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		os.Exit(3)
	}
	queue, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	if err != nil {
		os.Exit(4)
	}
	svc := hooks.New(pool, queue, hooks.Config{AllowPrivate: true, DevMode: true, Timeout: childTimeout, Secrets: testSecrets})
	workers := river.NewWorkers()
	river.AddWorker(workers, &hooks.DeliveryWorker{Service: svc})
	rc, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Queues:            map[string]river.QueueConfig{jobs.QueueWebhooks: {MaxWorkers: 2}},
		Workers:           workers,
		FetchCooldown:     10 * time.Millisecond,
		FetchPollInterval: 20 * time.Millisecond,
	})
	if err != nil {
		os.Exit(5)
	}
	if err := rc.Start(ctx); err != nil {
		os.Exit(6)
	}
	select {} // until killed
}

// TestKilledInstanceLosesNothing: an instance killed (SIGKILL) in the middle of an
// attempt leaves its job "running"; River's rescuer on another instance retries it once
// its timeout has passed, and the event arrives. At least once: the killed attempt may
// have reached the receiver (here it did, and got no answer).
func TestKilledInstanceLosesNothing(t *testing.T) {
	t.Parallel()
	s := newScene(t, hooks.Config{AllowPrivate: true, DevMode: true, Timeout: childTimeout, Secrets: testSecrets})
	ctx := context.Background()
	r := hookstest.NewReceiver(t)
	r.Hold() // the first attempt hangs: the instance dies with it in flight
	s.endpoint(r)
	s.record(hooks.CustomerOptedOut, 1)
	n, err := s.svc.Dispatch(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)

	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), childDBEnv+"="+s.url)
	require.NoError(t, child.Start())
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	select {
	case <-r.Started():
	case <-time.After(30 * time.Second):
		t.Fatal("the child instance never attempted the delivery")
	}
	require.NoError(t, child.Process.Kill())
	_ = child.Wait()
	require.Equal(t, 1, s.count(`SELECT count(*) FROM river_job WHERE kind = 'webhook_delivery' AND state = 'running'`),
		"the killed instance left its job running")
	require.Zero(t, s.count(`SELECT count(*) FROM webhook_attempts`), "the killed attempt was never recorded")
	r.Release()

	// The job's River timeout (2 × childTimeout + 5 s) must pass before the rescuer
	// touches it; start the surviving instance after that, so its rescuer's first run
	// (at its start) finds the job stuck.
	rescueAfter := 6 * time.Second
	for s.count(`SELECT count(*) FROM river_job WHERE kind = 'webhook_delivery' AND attempted_at < now() - $1::interval`,
		(rescueAfter+time.Second).String()) == 0 {
		time.Sleep(100 * time.Millisecond)
	}
	hookstest.Deliver(t, s.pool, s.svc, hookstest.RiverConfig{RescueStuckJobsAfter: rescueAfter, JobTimeout: rescueAfter})
	got := r.WaitFor(t, 1, 60*time.Second)
	require.Equal(t, hooks.CustomerOptedOut, got[0].Type)
	s.waitDeliveries(1, hooks.DeliverySucceeded, 20*time.Second)
	require.Empty(t, r.Unverified())
}
