// Package pacing keeps a sender's texts within the rate its number may send at, across
// every server instance: a long code sends about 1 text a second, a toll-free number 3,
// a short code 100 (the shop's send_rate policy). Texts sent faster are queued by the
// provider, and an offer that waits in that queue may reach the customer after the slot
// is gone; pacing them here keeps each text's validity period honest.
//
// The limit is a GCRA in Redis, shared by all instances, keyed by the sender's number:
// github.com/go-redis/redis_rate's, through a script of ours on its key (take.lua) that
// grants several whole texts at once.
package pacing

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Pacer spaces out the texts of each sender.
type Pacer struct {
	rdb    redis.UniversalClient
	prefix string

	mu    sync.Mutex
	turns map[string]*turn // per sender with texts waiting: one waiter of this instance asks Redis at a time
}

// turn is a sender's token of this instance: its waiters take turns at asking Redis.
// Without it, every text of a wave in flight asked at once and again after each refusal,
// all woken at the same moment: at 1,000 texts a second a wave reached about 660.
//
// A waiter with the turn asks Redis for as many texts as this instance has waiting
// (at most the burst) and leaves the ones it does not use to the next holders: one
// round trip a text serialised the sender's texts on Redis's latency, and a busy
// machine's 1.4 ms held a 1,000/s sender at 724 texts a second.
type turn struct {
	token   chan struct{}
	waiters int // the Waits holding this turn, under Pacer.mu; it leaves the map with the last

	// Held with token: texts Redis allowed that no waiter has sent yet, good until
	// creditUntil (a waiter gone meanwhile leaves its text unsent, never later).
	credit      int
	creditUntil time.Time
}

// creditLife is how long a text Redis allowed waits for a waiter of this instance to
// take it: a hundredth of a second, the burst's own span.
const creditLife = 10 * time.Millisecond

// New returns a Pacer on rdb; prefix is prepended to its keys.
func New(rdb redis.UniversalClient, prefix string) *Pacer {
	return &Pacer{rdb: rdb, prefix: prefix, turns: make(map[string]*turn)}
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

//go:embed take.lua
var takeLua string

var takeScript = redis.NewScript(takeLua)

// rateKeyPrefix is what redis_rate puts in front of its keys: the pacing keys are
// still its, so instances of an older release pace on the same state.
const rateKeyPrefix = "rate:"

// take asks Redis for up to want of sender's texts at perSecond with burst; with none
// granted, retryAfter is how long until one is.
func (p *Pacer) take(ctx context.Context, sender string, perSecond, burst, want int) (granted int, retryAfter time.Duration, err error) {
	v, err := takeScript.Run(ctx, p.rdb, []string{rateKeyPrefix + p.prefix + "sms_pace:" + sender}, burst, perSecond, 1, want).Slice()
	if err != nil {
		return 0, 0, err
	}
	if len(v) != 2 {
		return 0, 0, fmt.Errorf("take.lua returned %d values", len(v))
	}
	n, ok := v[0].(int64)
	wait, ok2 := v[1].(string)
	if !ok || !ok2 {
		return 0, 0, fmt.Errorf("take.lua returned %T, %T", v[0], v[1])
	}
	if n > 0 {
		return int(n), 0, nil
	}
	secs, err := strconv.ParseFloat(wait, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("take.lua's wait %q: %w", wait, err)
	}
	return 0, max(time.Duration(secs*float64(time.Second)), 100*time.Microsecond), nil
}

// waiting is how many Waits of this instance hold t, the caller among them.
func (p *Pacer) waiting(t *turn) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return max(t.waiters, 1)
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
	rate := max(perSecond, 1)
	burst := max(1, perSecond/100)
	t := p.join(sender)
	defer p.leave(sender, t)
	select {
	case t.token <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-t.token }()
	for {
		if t.credit > 0 && time.Now().Before(t.creditUntil) {
			t.credit--
			return nil
		}
		granted, retryAfter, err := p.take(ctx, sender, rate, burst, min(p.waiting(t), burst))
		if err != nil {
			return fmt.Errorf("pacing: %w", err)
		}
		if granted > 0 {
			t.credit, t.creditUntil = granted-1, time.Now().Add(creditLife)
			return nil
		}
		wait := time.NewTimer(retryAfter)
		select {
		case <-ctx.Done():
			wait.Stop()
			return ctx.Err()
		case <-wait.C:
		}
	}
}
