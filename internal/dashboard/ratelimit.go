package dashboard

import (
	"net"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limit is a token bucket: Burst events at once, then one more every Every.
type Limit struct {
	Burst int
	Every time.Duration
}

// maxBuckets bounds a limiter's memory whatever the number of clients.
const maxBuckets = 10000

// limiter holds one token bucket per key (a client address, a shop id) in this
// process's memory: with N instances behind a load balancer a client gets up to N times
// the limit, which is enough to stop floods and guessing, the point here.
type limiter struct {
	limit Limit
	now   func() time.Time

	mu      sync.Mutex
	buckets map[string]*rate.Limiter
}

func newLimiter(l Limit, now func() time.Time) *limiter {
	return &limiter{limit: l, now: now, buckets: map[string]*rate.Limiter{}}
}

// allow takes one token from key's bucket. When there is none it returns false and how
// long until there is.
func (l *limiter) allow(key string) (bool, time.Duration) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok {
		if len(l.buckets) >= maxBuckets {
			l.evict(now)
		}
		b = rate.NewLimiter(rate.Every(l.limit.Every), l.limit.Burst)
		l.buckets[key] = b
	}
	r := b.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now) // a refused attempt does not push the next one further out
		return false, d
	}
	return true, 0
}

// evict drops the buckets that have refilled (they hold no state worth keeping); if
// none has, one chosen at random, so a flood of new keys cannot grow the map.
func (l *limiter) evict(now time.Time) {
	for k, b := range l.buckets {
		if b.TokensAt(now) >= float64(l.limit.Burst) {
			delete(l.buckets, k)
		}
	}
	if len(l.buckets) < maxBuckets {
		return
	}
	for k := range l.buckets {
		delete(l.buckets, k)
		return
	}
}

// clientKey is the limiter key of a client address: the address itself for IPv4, its
// /64 for IPv6 (one host commonly holds a whole /64).
func clientKey(ip string) string {
	p := net.ParseIP(ip)
	if p == nil {
		return ip
	}
	if p.To4() != nil {
		return p.String()
	}
	return p.Mask(net.CIDRMask(64, 128)).String() + "/64"
}
