package redislock

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

var (
	//go:embed release_notify.lua
	releaseNotifySrc    string
	releaseNotifyScript = redis.NewScript(releaseNotifySrc)
)

// noticeSep separates the key from the note in a release notice.
const noticeSep = "\x00"

// ReleaseAndNotify is Release, and when the key was still ours it also publishes a
// notice on channel, in the same step, that a Watcher of that channel delivers to the
// goroutines watching the key, with note (anything the holder wants waiters to know,
// such as what it decided). If the lock was no longer ours nothing is published and the
// error wraps ErrNotHeld.
func (l *Lock) ReleaseAndNotify(ctx context.Context, channel, note string) error {
	n, err := releaseNotifyScript.Run(ctx, l.client, []string{l.key}, l.token, channel, l.key+noticeSep+note).Int64()
	if err != nil {
		return fmt.Errorf("release lock %s: %w", l.key, err)
	}
	if n == 0 {
		return fmt.Errorf("release lock %s: %w", l.key, ErrNotHeld)
	}
	return nil
}

// Watcher listens on one channel for the notices of ReleaseAndNotify and wakes the
// goroutines watching the released key, so that they can wait for a lock without
// polling Redis. A notice can be missed (the subscription reconnecting, a holder that
// died and never released): waiters must always bound their wait.
type Watcher struct {
	sub     *redis.PubSub
	closing atomic.Bool
	stop    chan struct{}
	ready   chan struct{}
	done    chan struct{}
	mu      sync.Mutex
	waiters map[string]map[chan string]struct{}
	recent  map[string][]notice
}

// notice is a release notice seen, kept for Recent.
type notice struct {
	note string
	at   time.Time
}

// recentFor is how long Recent remembers a notice; recentMax bounds how many notices
// of one key it keeps, and recentKeys how many keys.
const (
	recentFor  = time.Minute
	recentMax  = 32
	recentKeys = 10_000
)

// NewWatcher subscribes to channel through client and starts delivering notices. Call
// Close when done. The subscription is confirmed in the background; Ready reports when.
func NewWatcher(client redis.UniversalClient, channel string) *Watcher {
	w := &Watcher{
		sub:     client.Subscribe(context.Background(), channel),
		ready:   make(chan struct{}),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
		waiters: map[string]map[chan string]struct{}{},
		recent:  map[string][]notice{},
	}
	go w.run()
	return w
}

func (w *Watcher) run() {
	defer close(w.done)
	once := sync.Once{}
	pause := 50 * time.Millisecond
	for {
		// Receive (not Channel) so the subscription confirmation is seen: until then a
		// notice could be published before Redis knows of us.
		msg, err := w.sub.Receive(context.Background())
		if err != nil {
			if w.closing.Load() {
				return
			}
			// go-redis reconnects and resubscribes on the next Receive; a growing pause
			// keeps a Redis outage from spinning this loop.
			select {
			case <-time.After(pause):
			case <-w.stop:
				return
			}
			pause = min(2*pause, 2*time.Second)
			continue
		}
		pause = 50 * time.Millisecond
		switch m := msg.(type) {
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				once.Do(func() { close(w.ready) })
			}
		case *redis.Message:
			key, note, ok := strings.Cut(m.Payload, noticeSep)
			if ok {
				w.deliver(key, note)
			}
		}
	}
}

func (w *Watcher) deliver(key, note string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.recent) >= recentKeys {
		w.recent = map[string][]notice{} // bounded: a full memory starts over
	}
	now := time.Now()
	kept := w.recent[key][:0]
	for _, n := range w.recent[key] {
		if now.Sub(n.at) < recentFor {
			kept = append(kept, n)
		}
	}
	if len(kept) == recentMax {
		kept = kept[1:]
	}
	w.recent[key] = append(kept, notice{note: note, at: now})
	for ch := range w.waiters[key] {
		select {
		case ch <- note:
		default: // it has a notice it has not read yet; it will look at the key again anyway
		}
	}
}

// Recent returns the notes of the release notices for key seen in the last minute,
// oldest first: what recent holders decided, for a caller that can answer from it
// without taking the lock. Notices can be missed, so an empty answer proves nothing.
func (w *Watcher) Recent(key string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	now := time.Now()
	for _, n := range w.recent[key] {
		if now.Sub(n.at) < recentFor {
			out = append(out, n.note)
		}
	}
	return out
}

// Ready is closed once Redis has confirmed the subscription.
func (w *Watcher) Ready() <-chan struct{} { return w.ready }

// Watch returns a channel that receives the note of every release notice for key from
// now on (at most one waits unread), and a stop function to call when done. Watch
// before trying the lock, so a release between the try and the wait is not missed.
func (w *Watcher) Watch(key string) (notes <-chan string, stop func()) {
	ch := make(chan string, 1)
	w.mu.Lock()
	if w.waiters[key] == nil {
		w.waiters[key] = map[chan string]struct{}{}
	}
	w.waiters[key][ch] = struct{}{}
	w.mu.Unlock()
	return ch, func() {
		w.mu.Lock()
		delete(w.waiters[key], ch)
		if len(w.waiters[key]) == 0 {
			delete(w.waiters, key)
		}
		w.mu.Unlock()
	}
}

// Close ends the subscription. Calling it again does nothing.
func (w *Watcher) Close() error {
	if !w.closing.CompareAndSwap(false, true) {
		return nil
	}
	close(w.stop)
	err := w.sub.Close()
	<-w.done
	return err
}
