// Package ratelimit counts events per key across every server instance, so that N
// instances behind a load balancer allow together what one allows, not N times as much.
// It is a token bucket (GCRA) kept in Redis by github.com/go-redis/redis_rate: Burst
// events at once, then one more every Every. Each call runs one script on one key, so it
// works on a single Redis, Sentinel or Cluster alike, and the time is Redis's own, so
// instances whose clocks differ agree.
//
// Three calls cover the uses: Allow takes an event (every sign-in attempt counts),
// Check asks without taking (is this client still allowed to fail?), and Return gives
// back an event taken by Allow that turned out not to count (a request reserved an
// attempt, and it succeeded). Return is a script of ours (return.lua) on redis_rate's
// key, since redis_rate has no exact way to give an event back.
//
// When Redis cannot be asked, every call returns an error wrapping ErrUnavailable and
// the caller decides: fail closed where a guess could succeed (sign-in, the admin
// token), fail open where the limit only sheds load.
package ratelimit

import (
	"cmp"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// ErrUnavailable means Redis could not be asked (unreachable, too slow, or it answered
// with an error): the limiter cannot say whether the event is allowed.
var ErrUnavailable = errors.New("ratelimit: redis unavailable")

// ErrInvalidLimit means a Limit without a burst or a period: a programming error.
var ErrInvalidLimit = errors.New("ratelimit: a limit needs Burst >= 1 and Every > 0")

// Limit is a token bucket: Burst events at once, then one more every Every.
type Limit struct {
	Burst int
	Every time.Duration
}

func (l Limit) valid() bool { return l.Burst >= 1 && l.Every > 0 }

func (l Limit) gcra() redis_rate.Limit {
	return redis_rate.Limit{Rate: 1, Burst: l.Burst, Period: l.Every}
}

// Result is a limiter's answer.
type Result struct {
	// Allowed reports whether the event may happen (Allow: and was counted).
	Allowed bool
	// RetryAfter is how long until one more event would be allowed; 0 when Allowed.
	RetryAfter time.Duration
}

// Config configures a Limiter. The zero value is the default.
type Config struct {
	// Prefix is prepended to every key (REDIS_KEY_PREFIX). redis_rate puts its own
	// "rate:" in front of the result, so the Redis keys are "rate:<Prefix>ratelimit:<key>".
	Prefix string
	// Timeout bounds each call, so a Redis that hangs costs a request at most this much
	// before the caller fails open or closed; 0 means 500 ms.
	Timeout time.Duration
}

// Limiter counts events per key in Redis. It is safe for concurrent use.
type Limiter struct {
	rdb     redis.UniversalClient
	rl      *redis_rate.Limiter
	prefix  string
	timeout time.Duration
}

// rateKeyPrefix is what redis_rate puts in front of every key it is given.
const rateKeyPrefix = "rate:"

//go:embed return.lua
var returnLua string

var returnScript = redis.NewScript(returnLua)

// New returns a Limiter on rdb.
func New(rdb redis.UniversalClient, cfg Config) *Limiter {
	return &Limiter{rdb: rdb, rl: redis_rate.NewLimiter(rdb), prefix: cfg.Prefix + "ratelimit:", timeout: cmp.Or(cfg.Timeout, 500*time.Millisecond)}
}

// Allow takes one event from key's bucket if there is one left.
func (l *Limiter) Allow(ctx context.Context, key string, limit Limit) (Result, error) {
	res, err := l.run(ctx, key, limit, 1)
	if err != nil {
		return Result{}, err
	}
	if res.Allowed > 0 {
		return Result{Allowed: true}, nil
	}
	return Result{RetryAfter: max(res.RetryAfter, time.Millisecond)}, nil
}

// Check reports whether key's bucket has an event left, without taking it.
func (l *Limiter) Check(ctx context.Context, key string, limit Limit) (Result, error) {
	// A cost of 0 changes nothing; Remaining is the whole events left (redis_rate's
	// script returns it as an integer, rounded down).
	res, err := l.run(ctx, key, limit, 0)
	if err != nil {
		return Result{}, err
	}
	if res.Remaining >= 1 {
		return Result{Allowed: true}, nil
	}
	// ResetAfter is when the bucket is full again; one event is free Burst-1 periods
	// before that.
	return Result{RetryAfter: max(res.ResetAfter-time.Duration(limit.Burst-1)*limit.Every, time.Millisecond)}, nil
}

// Return gives back one event that Allow took from key's bucket and that turned out not
// to count. It never fills a bucket beyond its burst.
func (l *Limiter) Return(ctx context.Context, key string, limit Limit) error {
	if !limit.valid() {
		return ErrInvalidLimit
	}
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	err := returnScript.Run(ctx, l.rdb, []string{rateKeyPrefix + l.prefix + key}, limit.Every.Seconds()).Err()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return nil
}

func (l *Limiter) run(ctx context.Context, key string, limit Limit, cost int) (*redis_rate.Result, error) {
	if !limit.valid() {
		return nil, ErrInvalidLimit
	}
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	res, err := l.rl.AllowN(ctx, l.prefix+key, limit.gcra(), cost)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return res, nil
}

// ClientKey is the key of a client address: the address itself for IPv4, its /64 for
// IPv6 (one host commonly holds a whole /64, so counting single addresses would let it
// pick a fresh one for every try). Anything that is not an address is its own key.
func ClientKey(ip string) string {
	p := net.ParseIP(ip)
	if p == nil {
		return ip
	}
	if p.To4() != nil {
		return p.String()
	}
	return p.Mask(net.CIDRMask(64, 128)).String() + "/64"
}
