package slots

import (
	"fmt"
	"testing"
	"time"
)

// TestTurnsKeepDecisionsBounded: a turn whose holder decided something outlives its
// last contender, for keptFor only, and the turns kept with nobody in them stay
// bounded however many slots a busy instance sees.
func TestTurnsKeepDecisionsBounded(t *testing.T) {
	var ts turns
	t1 := ts.join("a")
	ts.decide(t1, "op1:1")
	ts.leave("a")
	t2 := ts.join("a")
	if got := ts.notes(t2); len(got) != 1 || got[0] != "op1:1" {
		t.Fatalf("a late contender sees %q, want the decision op1:1", got)
	}
	ts.leave("a")

	// Old news is forgotten.
	ts.keys["a"].left = time.Now().Add(-keptFor)
	if got := ts.notes(ts.join("a")); len(got) != 0 {
		t.Fatalf("a turn kept past keptFor still tells %q", got)
	}
	ts.leave("a")
	if _, kept := ts.keys["a"]; kept {
		t.Fatal("an undecided turn was kept after its last contender left")
	}

	// A turn without a decision is forgotten at once; notes per turn are bounded.
	ts.join("b")
	ts.leave("b")
	if _, kept := ts.keys["b"]; kept {
		t.Fatal("an undecided turn was kept")
	}
	t3 := ts.join("c")
	for i := range 3 * keptNotes {
		ts.decide(t3, fmt.Sprint(i))
	}
	if got := ts.notes(t3); len(got) != keptNotes || got[len(got)-1] != fmt.Sprint(3*keptNotes-1) {
		t.Fatalf("a turn keeps %d notes ending %q; want the newest %d", len(got), got[len(got)-1], keptNotes)
	}
	ts.leave("c")

	for i := range 3 * keptTurns {
		k := fmt.Sprint("k", i)
		ts.decide(ts.join(k), "x")
		ts.leave(k)
	}
	if len(ts.keys) > keptTurns+1 || ts.idle > keptTurns {
		t.Fatalf("%d turns kept (%d idle); at most %d", len(ts.keys), ts.idle, keptTurns)
	}
	idle := 0
	for _, tn := range ts.keys {
		if tn.users == 0 {
			idle++
		}
	}
	if idle != ts.idle {
		t.Fatalf("idle counted %d, %d turns have nobody in them", ts.idle, idle)
	}
}
