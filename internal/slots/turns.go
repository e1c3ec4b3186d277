package slots

import "sync"

// turns lets the contenders of one instance for a slot key ask the lock service one at
// a time. In a storm every reply of an instance asked Redis for the lock before the
// first release notice came back (a tenth of the instances' CPU in the race profile,
// and a queue on Redis); with turns, one of them asks and the rest learn its decision
// from what it leaves here, or from the release notice, without a round trip of their
// own. Turns order this instance's contenders only: the Redis lock still orders the
// instances, and Postgres stays the fence.
type turns struct {
	mu   sync.Mutex
	keys map[string]*turn
}

// turn is one key's turn. free holds a token while nobody of this instance has the
// turn; take it to have the turn, put it back to give it up.
type turn struct {
	free  chan struct{}
	users int
	// decided are the notes of this instance's holders of the key, newest last: the
	// next in turn reads them before asking Redis (the release notice comes later).
	decided []string
}

// join returns key's turn, made if nobody of this instance contends for key yet. Call
// leave when done with it.
func (ts *turns) join(key string) *turn {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.keys == nil {
		ts.keys = map[string]*turn{}
	}
	t := ts.keys[key]
	if t == nil {
		t = &turn{free: make(chan struct{}, 1)}
		t.free <- struct{}{}
		ts.keys[key] = t
	}
	t.users++
	return t
}

// leave ends a join: the last to leave forgets the key.
func (ts *turns) leave(key string) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t := ts.keys[key]
	if t.users--; t.users == 0 {
		delete(ts.keys, key)
	}
}

// decide records what a holder of the turn decided, for the next in turn.
func (ts *turns) decide(t *turn, note string) {
	if note == "" {
		return
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
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
