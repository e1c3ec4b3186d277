//go:build soak

package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/slotrecovery/slotrecovery/internal/testkit/loadkit"
)

// fleet is the server instances. Each keeps its address across restarts, so the round
// robin never changes; a killed one is restarted in its place.
type fleet struct {
	bin    string
	env    loadkit.Env
	logDir string

	// starting serialises starts: each River client's id carries the moment it was made,
	// and with one start at a time that moment names one process (see incarnationOf).
	starting sync.Mutex

	mu    sync.Mutex
	slots []*slot
	lives []*life // every process ever started, in order
}

type slot struct {
	addr string
	cur  *life
}

// life is one process of one instance, from its start to its exit.
type life struct {
	instance       int
	proc           *loadkit.Process
	started, ready time.Time
	// ended is when a process that never got ready was stopped.
	ended  time.Time
	killed bool
}

func newFleet(bin string, env loadkit.Env, n int, logDir string) (*fleet, error) {
	f := &fleet{bin: bin, env: env, logDir: logDir}
	for range n {
		addr, err := loadkit.FreePort()
		if err != nil {
			return nil, err
		}
		f.slots = append(f.slots, &slot{addr: addr})
	}
	return f, nil
}

// bases are the instances' base URLs, in round-robin order.
func (f *fleet) bases() []string {
	out := make([]string, len(f.slots))
	for i, s := range f.slots {
		out[i] = "http://" + s.addr
	}
	return out
}

// start starts instance i and waits until it is ready; a process that exits before
// (Postgres or Redis down during a restart) is started again until ctx ends.
func (f *fleet) start(ctx context.Context, i int) error {
	f.starting.Lock()
	defer f.starting.Unlock()
	env := f.env
	env.Addr = f.slots[i].addr
	for attempt := 1; ; attempt++ {
		proc, err := loadkit.StartServer(f.bin, env, filepath.Join(f.logDir, fmt.Sprintf("instance-%d.log", i+1)))
		if err != nil {
			return err
		}
		l := &life{instance: i, proc: proc, started: proc.Started}
		f.mu.Lock()
		f.slots[i].cur = l
		f.lives = append(f.lives, l)
		f.mu.Unlock()
		err = proc.WaitReady(ctx, proc.Base+"/readyz", 90*time.Second)
		if err == nil {
			f.mu.Lock()
			l.ready = time.Now()
			f.mu.Unlock()
			return nil
		}
		proc.Kill()
		f.mu.Lock()
		l.ended = time.Now()
		f.mu.Unlock()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if attempt >= 20 {
			return fmt.Errorf("instance %d: %w (its log: %s)", i+1, err, filepath.Join(f.logDir, fmt.Sprintf("instance-%d.log", i+1)))
		}
		time.Sleep(time.Second)
	}
}

// kill SIGKILLs instance i's process and returns false if it was not running.
func (f *fleet) kill(i int) bool {
	f.mu.Lock()
	l := f.slots[i].cur
	if l == nil || !l.proc.Alive() || l.ready.IsZero() {
		f.mu.Unlock()
		return false
	}
	l.killed = true
	f.mu.Unlock()
	l.proc.Kill()
	return true
}

// up returns the instances whose process is ready and alive.
func (f *fleet) up() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []int
	for i, s := range f.slots {
		if s.cur != nil && !s.cur.ready.IsZero() && s.cur.proc.Alive() {
			out = append(out, i)
		}
	}
	return out
}

func (f *fleet) stop() {
	f.mu.Lock()
	var procs []*loadkit.Process
	for _, s := range f.slots {
		if s.cur != nil {
			procs = append(procs, s.cur.proc)
		}
	}
	f.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Go(func() { p.Stop(15 * time.Second) })
	}
	wg.Wait()
}

// incarnationOf finds the process a River client id belongs to. River names a client
// <host>_<UTC start, 2006_01_02T15_04_05_000000>, made while the process starts; starts
// are one at a time, so the process whose start window holds that moment is the one.
// It returns nil when none does.
func (f *fleet) incarnationOf(clientID string) *life {
	// Go reads fractional seconds only after a dot: put back the one River replaced.
	const layout = "2006_01_02T15_04_05.000000"
	if len(clientID) < len(layout) {
		return nil
	}
	stamp := []byte(clientID[len(clientID)-len(layout):])
	stamp[len("2006_01_02T15_04_05")] = '.'
	at, err := time.Parse(layout, string(stamp))
	if err != nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, l := range f.lives {
		end := l.ready
		if end.IsZero() {
			end = l.ended
		}
		if end.IsZero() {
			end = time.Now()
		}
		if !at.Before(l.started.Add(-50*time.Millisecond)) && !at.After(end) {
			return l
		}
	}
	return nil
}

// dead reports whether the River client id belongs to a process that no longer runs.
func (f *fleet) dead(clientID string) bool {
	l := f.incarnationOf(strings.TrimSpace(clientID))
	return l != nil && !l.proc.Alive()
}
