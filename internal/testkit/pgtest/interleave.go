package pgtest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Interleavings: a test holds one transaction at a known point of its work (PausePoint),
// starts another, waits until Postgres shows it waiting for the first's lock
// (WaitUntilWaiting), and releases the first: the order of two racing transactions is
// then chosen, not left to timing luck.

// pauseKey is the advisory lock a pause point waits on (advisory locks belong to one
// database: tests in other databases never meet it).
const pauseKey = 7_261_001

// PausePoint makes every later `timing` (BEFORE UPDATE, AFTER INSERT, ...) of a row of
// table in pool's database wait, inside the statement's transaction, until release is
// called: a transaction is held at a known point of its work, with the locks it has taken
// so far. The trigger stays after release (it then costs one uncontended advisory lock).
func PausePoint(t testing.TB, pool *pgxpool.Pool, timing, table string) (release func()) {
	t.Helper()
	ctx := context.Background()
	for _, sql := range []string{
		fmt.Sprintf(`CREATE OR REPLACE FUNCTION test_pause() RETURNS trigger LANGUAGE plpgsql AS $$
		 BEGIN PERFORM pg_advisory_xact_lock_shared(%d); RETURN NEW; END $$`, pauseKey),
		fmt.Sprintf(`CREATE TRIGGER test_pause_%s %s ON %s FOR EACH ROW EXECUTE FUNCTION test_pause()`,
			table, timing, table),
	} {
		if _, err := pool.Exec(ctx, sql); err != nil {
			t.Fatalf("pgtest: pause point on %s: %v", table, err)
		}
	}
	holder, err := pgx.ConnectConfig(ctx, pool.Config().ConnConfig.Copy())
	if err != nil {
		t.Fatalf("pgtest: pause point's session: %v", err)
	}
	t.Cleanup(func() { _ = holder.Close(context.Background()) })
	if _, err := holder.Exec(ctx, `SELECT pg_advisory_lock($1)`, pauseKey); err != nil {
		t.Fatalf("pgtest: take the pause lock: %v", err)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			if _, err := holder.Exec(ctx, `SELECT pg_advisory_unlock($1)`, pauseKey); err != nil {
				t.Errorf("pgtest: release the pause lock: %v", err)
			}
		})
	}
}

// What a statement waits for, for WaitUntilWaiting.
const (
	AtPause    = "advisory" // at a pause point
	OnARowLock = "row lock" // for a row another transaction locked (transactionid or tuple)
)

// WaitUntilWaiting waits until a statement of pool's database waits for what (AtPause or
// OnARowLock), at most 20 s. who answering on done first, without waiting, fails the
// test with its answer: what it should have waited for did not hold it.
func WaitUntilWaiting[T any](t testing.TB, pool *pgxpool.Pool, what, who string, done <-chan T) {
	t.Helper()
	ctx := context.Background()
	events := []string{what}
	if what == OnARowLock {
		events = []string{"transactionid", "tuple"}
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		var waiting int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = ANY($1)`, events).Scan(&waiting); err != nil {
			t.Fatalf("pgtest: read pg_stat_activity: %v", err)
		}
		if waiting > 0 {
			return
		}
		select {
		case r := <-done:
			t.Fatalf("%s did not wait (%s): it answered %+v", who, what, r)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not wait (%s) within 20 s", who, what)
		}
		time.Sleep(5 * time.Millisecond) // polling Postgres's view: there is no event to wait on
	}
}

// Answer is what a call run by Async returned.
type Answer[T any] struct {
	V   T
	Err error
}

// Async runs f in a goroutine and sends its answer on the channel it returns.
func Async[T any](f func() (T, error)) <-chan Answer[T] {
	ch := make(chan Answer[T], 1)
	go func() {
		v, err := f()
		ch <- Answer[T]{V: v, Err: err}
	}()
	return ch
}
