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
	"sync"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// Pacer spaces out the texts of each sender.
type Pacer struct {
	limiter *redis_rate.Limiter
	prefix  string

	mu    sync.Mutex
	turns map[string]*turn // per sender with texts waiting: one waiter of this instance asks Redis at a time
}

// turn is a sender's token of this instance: its waiters take turns at asking Redis.
// Without it, every text of a wave in flight asked at once and again after each refusal,
// all woken at the same moment: at 1,000 texts a second a wave reached about 660.
type turn struct {
	token   chan struct{}
	waiters int // the Waits holding this turn; it leaves the map with the last
}

// New returns a Pacer on rdb; prefix is prepended to its keys.
func New(rdb redis.UniversalClient, prefix string) *Pacer {
	return &Pacer{limiter: redis_rate.NewLimiter(rdb), prefix: prefix, turns: make(map[string]*turn)}
}

// join returns sender's turn, made if no Wait of this instance holds it; leave must
// follow.
func (p *Pacer) join(sender string) *turn {
	p.mu.Lock()
	defer p.mu.Unlock()
	t, ok := p.turns[sender]
	if !ok {
		t = &turn{token: make(chan struct{}, 1)}
		p.turns[sender] = t
	}
	t.waiters++
	return t
}

// leave lets go of sender's turn; the last to leave removes it, so the map holds only
// the senders with texts waiting, not every number the instance ever paced.
func (p *Pacer) leave(sender string, t *turn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t.waiters--
	if t.waiters == 0 {
		delete(p.turns, sender)
	}
}

// senders is how many senders have texts waiting in this instance (tests).
func (p *Pacer) senders() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.turns)
}

// Wait returns when sender may send one more text at perSecond texts a second, or with
// ctx's error. Bursts are at most a hundredth of a second's texts (one text below 200 a
// second): with none at all, a fast sender lost a Redis round trip on every text and
// reached 800 of its 1,000 a second. An error from Redis is returned: the caller
// does not send unpaced.
func (p *Pacer) Wait(ctx context.Context, sender string, perSecond int) error {
	limit := redis_rate.PerSecond(max(perSecond, 1))
	limit.Burst = max(1, perSecond/100)
	t := p.join(sender)
	defer p.leave(sender, t)
	select {
	case t.token <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-t.token }()
	for {
		res, err := p.limiter.Allow(ctx, p.prefix+"sms_pace:"+sender, limit)
		if err != nil {
			return fmt.Errorf("pacing: %w", err)
		}
		if res.Allowed > 0 {
			return nil
		}
		wait := time.NewTimer(res.RetryAfter)
		select {
		case <-ctx.Done():
			wait.Stop()
			return ctx.Err()
		case <-wait.C:
		}
	}
}
