package ledger_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/payments"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
)

// pausePoint holds every later `timing` of a row of table in the world's database
// until release (pgtest.PausePoint).
func (w *world) pausePoint(timing, table string) (release func()) {
	return pgtest.PausePoint(w.t, w.pool, timing, table)
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

	disconnected := pgtest.Async(func() (ledger.EventResult, error) { return w.pay.HandleEvent(ctx, gone) })
	pgtest.WaitUntilWaiting(t, w.pool, pgtest.AtPause, "the disconnection", disconnected)
	declared := pgtest.Async(w.declare) // the shop as read before: ready
	pgtest.WaitUntilWaiting(t, w.pool, pgtest.OnARowLock, "the declaration", declared)
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

	declared := pgtest.Async(w.declare)
	pgtest.WaitUntilWaiting(t, w.pool, pgtest.AtPause, "the declaration", declared)
	disconnected := pgtest.Async(func() (ledger.EventResult, error) { return w.pay.HandleEvent(ctx, gone) })
	pgtest.WaitUntilWaiting(t, w.pool, pgtest.OnARowLock, "the disconnection", disconnected)
	release()

	o := <-declared
	require.NoError(t, o.Err, "declared before the disconnection")
	d := <-disconnected
	require.NoError(t, d.Err)
	require.Equal(t, ledger.ResultAccountDisconnected, d.V.Result)
	require.Equal(t, slots.StatusCancelled, w.openingStatus(o.V.ID), "cancelled with the shop's open openings")
}
