package inbound

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPendingWaitsForWorkStartedMeanwhile: wait returns at once with nothing started,
// waits for what is in flight (giving up with its context), and work may start again
// while someone waits (a sync.WaitGroup forbids that).
func TestPendingWaitsForWorkStartedMeanwhile(t *testing.T) {
	t.Parallel()
	var p pending
	require.NoError(t, p.wait(context.Background()), "nothing started")

	p.start()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, p.wait(ctx), context.Canceled, "one still in flight")

	waited := make(chan error, 1)
	go func() { waited <- p.wait(context.Background()) }()
	p.start() // a second while the first is waited on
	p.done()
	select {
	case err := <-waited:
		t.Fatalf("wait returned (%v) with one still in flight", err)
	default:
	}
	p.done()
	require.NoError(t, <-waited)

	p.start()
	p.done()
	require.NoError(t, p.wait(context.Background()), "idle again after a new start")
}
