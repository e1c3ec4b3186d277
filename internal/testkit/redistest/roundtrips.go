package redistest

import (
	"context"
	"net"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
)

// RoundTrips counts what a Redis client sends, to prove that code talks to Redis as
// few times as it claims: one round trip per command outside a pipeline, one per
// pipeline, and the commands inside pipelines apart. A new connection is counted
// too: it would be another round trip. Make one with CountRoundTrips.
type RoundTrips struct {
	calls, dials, pipelined atomic.Int64
}

// CountRoundTrips hooks a RoundTrips into client and returns it at zero, after a
// warm-up: go-redis runs pipelines on a pool of their own, whose first use dials and
// sends HELLO through the hooks, so a first pipeline is sent and forgotten before
// counting starts. Call it right before the code under test.
func CountRoundTrips(t testing.TB, client redis.UniversalClient) *RoundTrips {
	t.Helper()
	r := &RoundTrips{}
	client.AddHook(r)
	ctx := context.Background()
	if _, err := client.Pipelined(ctx, func(p redis.Pipeliner) error { return p.Ping(ctx).Err() }); err != nil {
		t.Fatalf("redistest: warm up the pipeline pool: %v", err)
	}
	r.Reset()
	return r
}

// Calls returns the round trips since the last Reset: commands sent alone, plus
// pipelines.
func (r *RoundTrips) Calls() int64 { return r.calls.Load() }

// Pipelined returns how many commands went inside pipelines since the last Reset.
func (r *RoundTrips) Pipelined() int64 { return r.pipelined.Load() }

// Dials returns how many connections were opened since the last Reset.
func (r *RoundTrips) Dials() int64 { return r.dials.Load() }

// Reset sets every count back to zero.
func (r *RoundTrips) Reset() {
	r.calls.Store(0)
	r.dials.Store(0)
	r.pipelined.Store(0)
}

// DialHook implements redis.Hook.
func (r *RoundTrips) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		r.dials.Add(1)
		return next(ctx, network, addr)
	}
}

// ProcessHook implements redis.Hook.
func (r *RoundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		r.calls.Add(1)
		return next(ctx, cmd)
	}
}

// ProcessPipelineHook implements redis.Hook.
func (r *RoundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		r.calls.Add(1)
		r.pipelined.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}
