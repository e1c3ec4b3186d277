//go:build soak

package main

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// chaos kills and restarts things while the storms run: each storm may SIGKILL an
// instance a random moment after it starts firing (the instance comes back a random
// while later, on the same address), and chosen storms restart Redis (SIGKILL: what its
// AOF had not written is lost) or Postgres (pg_ctl stop -m immediate, then start: crash
// recovery).
type chaos struct {
	fleet *fleet
	pg    *postgres
	redis *redisServer

	killChance float64
	pgAt       map[int]bool
	redisAt    map[int]bool

	mu  sync.Mutex
	rng *rand.Rand

	pending sync.WaitGroup
	// one service restart at a time: a Redis restart never overlaps a Postgres one.
	service sync.Mutex

	kills, restarts, redisRestarts, pgRestarts atomic.Int64
	errs                                       chan error
}

func newChaos(f *fleet, pg *postgres, rs *redisServer, o options, rng *rand.Rand) *chaos {
	c := &chaos{fleet: f, pg: pg, redis: rs, killChance: o.killChance, rng: rng, errs: make(chan error, 64)}
	c.pgAt = pick(rng, o.pgRestarts, int(0.3*float64(o.storms)), int(0.7*float64(o.storms)), nil)
	c.redisAt = pick(rng, o.redisRestarts, int(0.15*float64(o.storms)), int(0.85*float64(o.storms)), c.pgAt)
	return c
}

// pick chooses n distinct storm numbers in [lo, hi) that are not in avoid.
func pick(rng *rand.Rand, n, lo, hi int, avoid map[int]bool) map[int]bool {
	out := map[int]bool{}
	for range 1000 {
		if len(out) >= n || hi <= lo {
			break
		}
		i := lo + rng.IntN(hi-lo)
		if !avoid[i] {
			out[i] = true
		}
	}
	return out
}

func (c *chaos) between(lo, hi time.Duration) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return lo + time.Duration(c.rng.Int64N(int64(hi-lo)+1))
}

func (c *chaos) chance(p float64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rng.Float64() < p
}

func (c *chaos) intn(n int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rng.IntN(n)
}

// storm is told that storm i starts firing now. ctx bounds the restarts it causes: the
// whole run's, not the storm's, so a restart begun by the last storm is finished.
func (c *chaos) storm(ctx context.Context, i int) {
	if c.chance(c.killChance) {
		c.after(c.between(0, 150*time.Millisecond), func() { c.killOne(ctx) })
	}
	if c.redisAt[i] {
		c.after(c.between(0, 100*time.Millisecond), func() { c.restartRedis(ctx) })
	}
	if c.pgAt[i] {
		c.after(c.between(0, 100*time.Millisecond), func() { c.restartPostgres(ctx) })
	}
}

func (c *chaos) after(d time.Duration, f func()) {
	c.pending.Add(1)
	go func() {
		defer c.pending.Done()
		time.Sleep(d)
		f()
	}()
}

// killOne SIGKILLs a running instance (never the last one up) and starts it again a
// random while later.
func (c *chaos) killOne(ctx context.Context) {
	up := c.fleet.up()
	if len(up) < 2 {
		return
	}
	i := up[c.intn(len(up))]
	if !c.fleet.kill(i) {
		return
	}
	c.kills.Add(1)
	time.Sleep(c.between(500*time.Millisecond, 3*time.Second))
	if err := c.fleet.start(ctx, i); err != nil {
		c.fail(err)
		return
	}
	c.restarts.Add(1)
}

func (c *chaos) restartRedis(ctx context.Context) {
	c.service.Lock()
	defer c.service.Unlock()
	say("chaos: Redis killed")
	c.redis.kill()
	time.Sleep(c.between(500*time.Millisecond, 2*time.Second))
	if err := c.redis.start(ctx); err != nil {
		c.fail(err)
		return
	}
	c.redisRestarts.Add(1)
	say("chaos: Redis back")
}

func (c *chaos) restartPostgres(ctx context.Context) {
	c.service.Lock()
	defer c.service.Unlock()
	say("chaos: Postgres stopped (immediate)")
	if err := c.pg.stop(); err != nil {
		c.fail(err)
		return
	}
	time.Sleep(c.between(time.Second, 3*time.Second))
	if err := c.pg.start(ctx); err != nil {
		c.fail(err)
		return
	}
	c.pgRestarts.Add(1)
	say("chaos: Postgres back")
}

func (c *chaos) fail(err error) {
	select {
	case c.errs <- err:
	default:
	}
}

// wait waits for every pending kill and restart to finish.
func (c *chaos) wait() { c.pending.Wait() }
