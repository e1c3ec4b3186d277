package inbound

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// group runs the statements of concurrent callers together: a storm of replies to one
// opening arrives at once, and one statement per text queued them behind each other on
// Postgres (the race profile's largest cost once the lookups were merged). Each caller
// still returns only once its own part is done (nothing is answered before it is
// stored). There is no background goroutine: the caller at the head of the queue runs
// the next batch (itself included), then hands the turn to the new head, so no caller
// runs others' batches for longer than one run. Inputs with the same key never share a
// run.
type group[In, Out any] struct {
	max int
	key func(In) string
	run func(ctx context.Context, ins []In) ([]Out, error)
	// linger, when set, is called by the caller with the turn before it takes the batch:
	// it waits for more calls, for fewer and larger statements, in a group whose callers
	// no customer waits for (the marks of answers Twilio already took). Nil for the
	// others.
	linger func()

	mu      sync.Mutex
	running bool
	queue   []call[In, Out]
}

type call[In, Out any] struct {
	in   In
	done chan outcome[Out]
	turn chan struct{}
}

type outcome[Out any] struct {
	out Out
	err error
}

// do runs in with whatever else is pending and returns its own result. It does not
// return early when ctx ends: the caller may have the turn to run a batch. A batch is
// bounded by runTimeout, so a stalled Postgres cannot hold every request of the
// instance behind it for longer.
func (g *group[In, Out]) do(ctx context.Context, in In) (Out, error) {
	c := call[In, Out]{in: in, done: make(chan outcome[Out], 1), turn: make(chan struct{}, 1)}
	g.mu.Lock()
	g.queue = append(g.queue, c)
	if !g.running {
		g.running = true
		c.turn <- struct{}{}
	}
	g.mu.Unlock()
	for {
		select {
		case r := <-c.done:
			return r.out, r.err
		case <-c.turn:
			if g.linger != nil {
				g.linger()
			}
			g.mu.Lock()
			batch := g.take() // the head of the queue, this caller, is always in it
			g.mu.Unlock()
			g.runBatch(ctx, batch)
		}
	}
}

// runTimeout bounds one batch's statement (and, when it fails, the retries of its
// inputs one by one).
const runTimeout = 10 * time.Second

// runBatch runs a batch and tells each of its callers their result. Whatever happens
// (even a panic in run), every caller gets an answer and the turn passes on.
func (g *group[In, Out]) runBatch(ctx context.Context, batch []call[In, Out]) {
	results := make([]outcome[Out], len(batch))
	defer func() {
		if p := recover(); p != nil {
			for i := range results {
				results[i] = outcome[Out]{err: fmt.Errorf("batch panicked: %v", p)}
			}
		}
		for i, b := range batch {
			b.done <- results[i]
		}
		g.mu.Lock()
		if len(g.queue) > 0 {
			g.queue[0].turn <- struct{}{}
		} else {
			g.running = false
		}
		g.mu.Unlock()
	}()
	ins := make([]In, len(batch))
	for i, b := range batch {
		ins[i] = b.in
	}
	// The callers' requests may end meanwhile; their parts must still be done.
	runCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), runTimeout)
	defer cancel()
	outs, err := g.run(runCtx, ins)
	if err == nil {
		for i := range batch {
			results[i] = outcome[Out]{out: outs[i]}
		}
		return
	}
	if len(ins) == 1 || runCtx.Err() != nil {
		for i := range batch {
			results[i] = outcome[Out]{err: err}
		}
		return
	}
	// One input Postgres refuses must not fail the others: each alone.
	for i, in := range ins {
		out, err := g.run(runCtx, []In{in})
		if err == nil {
			results[i] = outcome[Out]{out: out[0]}
		} else {
			results[i] = outcome[Out]{err: err}
		}
	}
}

// take removes the next run's calls from the queue: up to max, one per key.
func (g *group[In, Out]) take() []call[In, Out] {
	var batch, rest []call[In, Out]
	seen := map[string]bool{}
	for _, c := range g.queue {
		k := g.key(c.in)
		if len(batch) == g.max || seen[k] {
			rest = append(rest, c)
			continue
		}
		seen[k] = true
		batch = append(batch, c)
	}
	g.queue = rest
	// In key order, so that two instances' batches lock the same rows in the same order.
	slices.SortFunc(batch, func(a, b call[In, Out]) int { return strings.Compare(g.key(a.in), g.key(b.in)) })
	return batch
}
