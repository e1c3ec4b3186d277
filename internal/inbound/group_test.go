package inbound

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGroupSurvivesAPanickingBatch: a batch whose statement panics answers each of its
// callers with an error and passes the turn on; later calls run normally.
func TestGroupSurvivesAPanickingBatch(t *testing.T) {
	t.Parallel()
	boom := true
	g := &group[string, string]{max: 10, key: func(s string) string { return s }, run: func(_ context.Context, ins []string) ([]string, error) {
		if boom {
			panic("driver bug")
		}
		return ins, nil
	}}
	_, err := g.do(context.Background(), "a")
	require.ErrorContains(t, err, "panicked")
	boom = false
	out, err := g.do(context.Background(), "b")
	require.NoError(t, err, "the turn passed on after the panic")
	require.Equal(t, "b", out)
}

// TestGroupRetriesABadBatchOneByOne: when a batch fails, each input runs alone, so only
// the one the statement refuses fails.
func TestGroupRetriesABadBatchOneByOne(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var mu sync.Mutex
	var runs [][]string
	g := &group[string, string]{max: 100, key: func(s string) string { return s }, run: func(_ context.Context, ins []string) ([]string, error) {
		mu.Lock()
		runs = append(runs, ins)
		first := len(runs) == 1
		mu.Unlock()
		if first {
			<-release // hold the turn so that the others queue into one batch
			return ins, nil
		}
		for _, in := range ins {
			if in == "bad" {
				return nil, errors.New("refused")
			}
		}
		return ins, nil
	}}
	var wg sync.WaitGroup
	results := map[string]error{}
	var rmu sync.Mutex
	call := func(in string) {
		defer wg.Done()
		_, err := g.do(context.Background(), in)
		rmu.Lock()
		results[in] = err
		rmu.Unlock()
	}
	wg.Add(1)
	go call("first")
	// Wait until the first batch holds the turn.
	for {
		mu.Lock()
		n := len(runs)
		mu.Unlock()
		if n == 1 {
			break
		}
		runtime.Gosched()
	}
	inputs := []string{"bad"}
	for i := range 9 {
		inputs = append(inputs, fmt.Sprintf("good%d", i))
	}
	for _, in := range inputs {
		wg.Add(1)
		go call(in)
	}
	// Let the queue fill before the first batch ends.
	for {
		g.mu.Lock()
		n := len(g.queue)
		g.mu.Unlock()
		if n == len(inputs) {
			break
		}
		runtime.Gosched()
	}
	close(release)
	wg.Wait()
	for _, in := range inputs {
		if in == "bad" {
			require.Error(t, results[in])
		} else {
			require.NoError(t, results[in], "%s failed with the bad one", in)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, runs[1], len(inputs), "the queued inputs ran as one batch first")
}

// TestALingeringGroupRunsTheCallsOfItsPauseTogether: the caller with the turn lingers
// before it takes the batch, so calls that arrive meanwhile share its statement (the
// marks of a storm's answers) instead of queueing for the next.
func TestALingeringGroupRunsTheCallsOfItsPauseTogether(t *testing.T) {
	t.Parallel()
	const n = 20
	var mu sync.Mutex
	var runs []int
	var g *group[string, string]
	g = &group[string, string]{max: 100, key: func(s string) string { return s },
		run: func(_ context.Context, ins []string) ([]string, error) {
			mu.Lock()
			runs = append(runs, len(ins))
			mu.Unlock()
			return ins, nil
		},
		// Linger until every call has arrived (the first, lingering, is in the queue too).
		linger: func() {
			for {
				g.mu.Lock()
				queued := len(g.queue)
				g.mu.Unlock()
				if queued == n {
					return
				}
				runtime.Gosched()
			}
		},
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			var out string
			in := fmt.Sprintf("mark%02d", i)
			out, errs[i] = g.do(context.Background(), in)
			if errs[i] == nil && out != in {
				errs[i] = fmt.Errorf("call %s got %s", in, out)
			}
		})
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	require.Equal(t, []int{n}, runs, "one statement for the calls of one pause")
}
