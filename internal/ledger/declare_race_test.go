package ledger_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/payments"
	"github.com/slotrecovery/slotrecovery/internal/slots"
)

// pauseKey is the advisory lock a pause point waits on.
const pauseKey = 7_261_002

// pausePoint makes every later `timing` (BEFORE UPDATE, AFTER INSERT, ...) of a row of
// table in the world's database wait, inside the statement's transaction, until release
// is called: a transaction is held at a known point of its work, with the locks it has
// taken so far.
func (w *world) pausePoint(timing, table string) (release func()) {
	w.t.Helper()
	ctx := context.Background()
	for _, sql := range []string{
		fmt.Sprintf(`CREATE OR REPLACE FUNCTION test_pause() RETURNS trigger LANGUAGE plpgsql AS $$
		 BEGIN PERFORM pg_advisory_xact_lock_shared(%d); RETURN NEW; END $$`, pauseKey),
		fmt.Sprintf(`CREATE TRIGGER test_pause_%s %s ON %s FOR EACH ROW EXECUTE FUNCTION test_pause()`,
			table, timing, table),
	} {
		_, err := w.pool.Exec(ctx, sql)
		require.NoError(w.t, err)
	}
	holder := w.otherSession()
	_, err := holder.Exec(ctx, `SELECT pg_advisory_lock($1)`, pauseKey)
	require.NoError(w.t, err)
	var once sync.Once
	return func() {
		once.Do(func() {
			_, err := holder.Exec(ctx, `SELECT pg_advisory_unlock($1)`, pauseKey)
			require.NoError(w.t, err)
		})
	}
}

// Wait events of a statement that waits in pg_stat_activity.
const (
	atPause    = "advisory" // at a pause point
	onARowLock = "row lock" // for a row another transaction locked (transactionid or tuple)
)

// waitUntilWaiting waits until a statement of the world's database waits for what (a
// pause point, or a row lock). A call that answers first, without waiting, fails the
// test with its answer: what it should have waited for did not hold it.
func waitUntilWaiting[T any](w *world, what, who string, done <-chan T) {
	w.t.Helper()
	ctx := context.Background()
	events := []string{what}
	if what == onARowLock {
		events = []string{"transactionid", "tuple"}
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		var waiting int
		require.NoError(w.t, w.pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = ANY($1)`, events).Scan(&waiting))
		if waiting > 0 {
			return
		}
		select {
		case r := <-done:
			w.t.Fatalf("%s did not wait (%s): it answered %+v", who, what, r)
		default:
		}
		require.True(w.t, time.Now().Before(deadline), "%s did not wait (%s) within 20 s", who, what)
		time.Sleep(5 * time.Millisecond)
	}
}

// answer is what a call returned, sent from its goroutine.
type answer[T any] struct {
	V   T
	Err error
}

func async[T any](f func() (T, error)) <-chan answer[T] {
	ch := make(chan answer[T], 1)
	go func() {
		v, err := f()
		ch <- answer[T]{V: v, Err: err}
	}()
	return ch
}

// readyToCharge onboards the world's Connect shop and has Stripe enable its charges; it
// returns the account and the account's disconnection event.
func (w *world) readyToCharge() (string, payments.Event) {
	w.t.Helper()
	_, err := w.pay.Onboard(context.Background(), w.shop.ID)
	require.NoError(w.t, err)
	w.reload()
	acct := w.shop.Stripe.ID
	ready := payments.Account{ID: acct, ChargesEnabled: true, PayoutsEnabled: true, DetailsSubmitted: true}
	require.Equal(w.t, ledger.ResultAccountUpdated, w.handle(accountEvent("evt_ready", ready, w.start)).Result)
	w.reload()
	require.True(w.t, w.shop.Stripe.Ready())
	return acct, accountEvent("evt_deauth", payments.Account{ID: acct, Disconnected: true}, w.start.Add(time.Minute))
}

// TestDeclareWaitsForADisconnection: the shop's Stripe account is disconnected
// (account.application.deauthorized) while its owner declares an opening with the shop
// as read before. The disconnection has marked the shop and cancelled its open openings
// (none), and is about to store its result; the declaration, checked against a ready
// account, must wait for it and then be checked again: refused (409
// stripe_account_not_ready), and no open checkout opening left on a shop that cannot be
// paid.
func TestDeclareWaitsForADisconnection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, worldOpts{connect: true})
	_, gone := w.readyToCharge()
	release := w.pausePoint("BEFORE UPDATE", "stripe_events")
	defer release()

	disconnected := async(func() (ledger.EventResult, error) { return w.pay.HandleEvent(ctx, gone) })
	waitUntilWaiting(w, atPause, "the disconnection", disconnected)
	declared := async(w.declare) // the shop as read before: ready
	waitUntilWaiting(w, onARowLock, "the declaration", declared)
	release()

	d := <-disconnected
	require.NoError(t, d.Err)
	require.Equal(t, ledger.ResultAccountDisconnected, d.V.Result)
	o := <-declared
	requireNotReady(t, o.Err, "disconnected")
	require.Equal(t, "0", w.query(`SELECT count(*)::text FROM slot_openings`))
}

// TestDisconnectionWaitsForADeclare: the other order. The declaration has inserted its
// opening and not committed yet; the disconnection must wait for it, and then cancel it
// with the shop's other open openings.
func TestDisconnectionWaitsForADeclare(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, worldOpts{connect: true})
	_, gone := w.readyToCharge()
	release := w.pausePoint("AFTER INSERT", "slot_openings")
	defer release()

	declared := async(w.declare)
	waitUntilWaiting(w, atPause, "the declaration", declared)
	disconnected := async(func() (ledger.EventResult, error) { return w.pay.HandleEvent(ctx, gone) })
	waitUntilWaiting(w, onARowLock, "the disconnection", disconnected)
	release()

	o := <-declared
	require.NoError(t, o.Err, "declared before the disconnection")
	d := <-disconnected
	require.NoError(t, d.Err)
	require.Equal(t, ledger.ResultAccountDisconnected, d.V.Result)
	require.Equal(t, slots.StatusCancelled, w.openingStatus(o.V.ID), "cancelled with the shop's open openings")
}
