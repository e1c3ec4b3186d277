package redislock

import (
	"math/rand/v2"
	"time"
)

// RetryStrategy says how long Obtain waits before it tries a held key again.
// NextBackoff is called once per failed attempt; 0 or less means stop.
//
// The strategies made by this package can be shared freely, across calls and
// goroutines: Obtain takes a fresh copy of their state each time. A strategy
// of your own is used as it is, so give each call its own if it keeps state.
type RetryStrategy interface {
	NextBackoff() time.Duration
}

// freshener is implemented by the package's stateful strategies so that one
// Options value can be reused without sharing counters between calls.
type freshener interface {
	fresh() RetryStrategy
}

func fresh(s RetryStrategy) RetryStrategy {
	if f, ok := s.(freshener); ok {
		return f.fresh()
	}
	return s
}

type noRetry struct{}

func (noRetry) NextBackoff() time.Duration { return 0 }

// NoRetry returns a strategy that never retries: one attempt only.
func NoRetry() RetryStrategy { return noRetry{} }

type linearBackoff time.Duration

func (d linearBackoff) NextBackoff() time.Duration { return time.Duration(d) }

// LinearBackoff returns a strategy that waits d between attempts, with no end
// other than the context's. A d of 0 or less means no retry.
func LinearBackoff(d time.Duration) RetryStrategy { return linearBackoff(d) }

type exponentialBackoff struct {
	min, max time.Duration
	step     time.Duration // the current step; 0 before the first wait
}

// ExponentialBackoff returns a strategy whose waits double from min up to
// max, with jitter: each wait is drawn at random from the upper half of the
// current step (but never below min), so that many waiters on one key spread
// out instead of retrying in step. A min of 0 or less is taken as 1ms; a max
// below min is taken as min.
func ExponentialBackoff(min, max time.Duration) RetryStrategy {
	if min <= 0 {
		min = time.Millisecond
	}
	if max < min {
		max = min
	}
	return &exponentialBackoff{min: min, max: max}
}

func (e *exponentialBackoff) NextBackoff() time.Duration {
	switch {
	case e.step == 0:
		e.step = e.min
	case e.step > e.max/2: // also keeps the doubling from overflowing
		e.step = e.max
	default:
		e.step *= 2
	}
	half := e.step / 2
	return max(e.min, half+rand.N(e.step-half+1))
}

func (e *exponentialBackoff) fresh() RetryStrategy {
	return &exponentialBackoff{min: e.min, max: e.max}
}

type limitRetry struct {
	s       RetryStrategy
	max     int
	retries int
}

// LimitRetry returns a strategy that follows s for at most max retries, so at
// most max+1 attempts in all.
func LimitRetry(s RetryStrategy, max int) RetryStrategy {
	return &limitRetry{s: s, max: max}
}

func (l *limitRetry) NextBackoff() time.Duration {
	if l.retries >= l.max {
		return 0
	}
	l.retries++
	return l.s.NextBackoff()
}

func (l *limitRetry) fresh() RetryStrategy {
	return &limitRetry{s: fresh(l.s), max: l.max}
}
