package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Two erasure keys (at least 32 characters each, as ERASURE_KEY requires).
const (
	erasureKeyA = "erasure-key-a-0123456789abcdef0123456789"
	erasureKeyB = "erasure-key-b-0123456789abcdef0123456789"
)

// startStop starts a server instance on e's database with extra and stops it once it
// serves: nil when it served, the error that stopped it otherwise.
func (e *env) startStop(extra map[string]string) error {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- serve(ctx, e.vars(extra), io.Discard, serveOptions{ready: ready}) }()
	select {
	case <-ready:
		cancel()
		select {
		case err := <-done:
			require.NoError(e.t, err, "the instance stopped with an error")
		case <-time.After(30 * time.Second):
			e.t.Fatal("the instance did not stop in time")
		}
		return nil
	case err := <-done:
		require.Error(e.t, err, "serve returned without serving and without an error")
		return err
	case <-time.After(60 * time.Second):
		e.t.Fatal("the instance neither served nor failed in time")
		return nil
	}
}

// TestErasureKeyCheckedAtStart: the hashes of numbers that said STOP are made under
// ERASURE_KEY's newest key, and the database keeps a check value of every key that has
// been the newest. A start whose ERASURE_KEY leaves one of them out is refused, with a
// message naming ERASURE_KEY and what to do, instead of silently forgetting the STOPs
// recorded under it; `server erasure-key retire` gives those records up knowingly.
func TestErasureKeyCheckedAtStart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := func(v string) map[string]string { return map[string]string{"ERASURE_KEY": v} }

	require.NoError(t, e.startStop(key(erasureKeyA)), "the first start stores A's check")
	err := e.startStop(key(erasureKeyB))
	require.Error(t, err, "restarted with B only: the STOPs recorded under A would be forgotten")
	require.Contains(t, err.Error(), "ERASURE_KEY")
	require.Contains(t, err.Error(), "erasure-key retire", "the error says what to do")
	t.Logf("refused: %v", err)
	require.NotContains(t, err.Error(), erasureKeyA, "never the keys themselves")
	require.NotContains(t, err.Error(), erasureKeyB, "never the keys themselves")
	require.NoError(t, e.startStop(key(erasureKeyA)), "A again: nothing changed")
	require.NoError(t, e.startStop(key(erasureKeyB+","+erasureKeyA)), "the rotation B,A starts, and records B's check")
	require.NoError(t, e.startStop(key(erasureKeyB+","+erasureKeyA)))

	// After B,A ran, records may be under B as well as A: neither may go silently.
	err = e.startStop(key(erasureKeyA))
	require.Error(t, err, "A alone after B,A: the STOPs recorded under B would be forgotten")
	require.Contains(t, err.Error(), "ERASURE_KEY")
	require.Error(t, e.startStop(key(erasureKeyB)), "B alone: A's records are still kept")

	// Giving A's records up is a deliberate act: the command, with the new setting.
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"erasure-key", "retire"}, e.vars(key(erasureKeyB)), &out, io.Discard))
	require.True(t, strings.Contains(out.String(), "1"), "it says how many keys it gave up: %q", out.String())
	require.NoError(t, e.startStop(key(erasureKeyB)), "B alone, once A was retired")
	require.Error(t, e.startStop(key(erasureKeyA)), "and A alone is refused now: B's records would go")

	// Without ERASURE_KEY the start is refused: ADMIN_TOKEN is no key.
	err = e.startStop(key(""))
	require.Error(t, err)
	require.Contains(t, err.Error(), "ERASURE_KEY is required unless DEV_MODE=1")
}
