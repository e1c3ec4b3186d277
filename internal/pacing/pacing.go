// Package pacing keeps a sender's texts within the rate its number may send at, across
// every server instance: a long code sends about 1 text a second, a toll-free number 3,
// a short code 100 (the shop's send_rate policy). Texts sent faster are queued by the
// provider, and an offer that waits in that queue may reach the customer after the slot
// is gone; pacing them here keeps each text's validity period honest.
//
// The limit is a GCRA in Redis (github.com/go-redis/redis_rate), shared by all
// instances, keyed by the sender's number.
package pacing

import (
	"context"
	"fmt"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// Pacer spaces out the texts of each sender.
type Pacer struct {
	limiter *redis_rate.Limiter
	prefix  string
}

// New returns a Pacer on rdb; prefix is prepended to its keys.
func New(rdb redis.UniversalClient, prefix string) *Pacer {
	return &Pacer{limiter: redis_rate.NewLimiter(rdb), prefix: prefix}
}

// Wait returns when sender may send one more text at perSecond texts a second (no
// burst above it), or with ctx's error. An error from Redis is returned: the caller
// does not send unpaced.
func (p *Pacer) Wait(ctx context.Context, sender string, perSecond int) error {
	limit := redis_rate.PerSecond(max(perSecond, 1))
	limit.Burst = 1
	for {
		res, err := p.limiter.Allow(ctx, p.prefix+"sms_pace:"+sender, limit)
		if err != nil {
			return fmt.Errorf("pacing: %w", err)
		}
		if res.Allowed > 0 {
			return nil
		}
		t := time.NewTimer(res.RetryAfter)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}
