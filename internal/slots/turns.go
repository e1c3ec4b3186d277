package slots

import (
	"sync"
	"time"
)

// turns lets the contenders of one instance for a slot key ask the lock service one at
// a time. In a storm every reply of an instance asked Redis for the lock before the
// first release notice came back (a tenth of the instances' CPU in the race profile,
// and a queue on Redis); with turns, one of them asks and the rest learn its decision
// from what it leaves here, or from the release notice, without a round trip of their
// own. Turns order this instance's contenders only: the Redis lock still orders the
// instances, and Postgres stays the fence.
//
// A key's turn outlives its last contender by keptFor when a holder decided something:
// a reply that comes after the storm (the winner already gone, the release notice not
// yet back from Redis) learns the decision here instead of asking Redis again.
type turns struct {
	mu   sync.Mutex
	keys map[string]*turn
	// idle counts the kept turns with nobody in them.
	idle int
}

// turn is one key's turn. free holds a token while nobody of this instance has the
// turn; take it to have the turn, put it back to give it up.
type turn struct {
	free  chan struct{}
	users int
	// decided are the notes of this instance's holders of the key, newest last (at
	// most keptNotes): the next in turn reads them before asking Redis (the release
	// notice comes later).
	decided []string
	// left is when the last contender left, for a turn kept with nobody in it.
	left time.Time
}

// keptFor is how long a decided turn is kept after its last contender left (as long as
// the watcher remembers release notices); keptNotes bounds the notes of one turn, and
// keptTurns how many turns with nobody in them are kept.
const (
	keptFor   = time.Minute
	keptNotes = 32
	keptTurns = 10_000
)

// join returns key's turn, made if nobody of this instance contends for key yet. Call
// leave when done with it.
func (ts *turns) join(key string) *turn {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.keys == nil {
		ts.keys = map[string]*turn{}
	}
	t := ts.keys[key]
	if t != nil && t.users == 0 {
		ts.idle--
		if time.Since(t.left) >= keptFor {
			t = nil // kept too long: what it knew is old news
		}
	}
	if t == nil {
		t = &turn{free: make(chan struct{}, 1)}
		t.free <- struct{}{}
		ts.keys[key] = t
	}
	t.users++
	return t
}

// leave ends a join. The last to leave forgets the key, unless a holder decided
// something: then the turn is kept (keptFor) for the replies that come late.
func (ts *turns) leave(key string) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t := ts.keys[key]
	if t.users--; t.users > 0 {
		return
	}
	if len(t.decided) == 0 {
		delete(ts.keys, key)
		return
	}
	t.left = time.Now()
	ts.idle++
	if ts.idle > keptTurns {
		ts.forgetIdle()
	}
}

// forgetIdle drops the turns with nobody in them that were kept keptFor, or all of
// them when that frees nothing (a bound on memory, not a correctness matter: a
// forgotten decision is asked of Redis and Postgres again).
func (ts *turns) forgetIdle() {
	old := time.Now().Add(-keptFor)
	for _, all := range []bool{false, true} {
		for k, t := range ts.keys {
			if t.users == 0 && (all || t.left.Before(old)) {
				delete(ts.keys, k)
				ts.idle--
			}
		}
		if ts.idle <= keptTurns/2 {
			return
		}
	}
}

// decide records what a holder of the turn decided, for the next in turn.
func (ts *turns) decide(t *turn, note string) {
	if note == "" {
		return
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if len(t.decided) == keptNotes {
		t.decided = t.decided[1:]
	}
	t.decided = append(t.decided, note)
}

// notes returns what this instance's holders of t decided so far.
func (ts *turns) notes(t *turn) []string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return t.decided
}

// waiting reports how many of this instance's claims contend for key.
func (ts *turns) waiting(key string) int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if t := ts.keys[key]; t != nil {
		return t.users
	}
	return 0
}
