package ledger_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/payments"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
)

// TestALapsedHoldWaitsForADisconnection: a hold's checkout expires while the shop's
// Stripe account is being disconnected. The disconnection has marked the shop and
// cancelled its open openings (the held one is filled, so not it) and is about to store
// its result; the lapse, which read the shop as ready, must wait for it and then see the
// shop as it is: the opening expires instead of reopening in a shop that cannot be paid
// (its next taker's hold would lapse too).
func TestALapsedHoldWaitsForADisconnection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, worldOpts{connect: true})
	acct, gone := w.readyToCharge()
	op, b := w.book()
	w.onAccount(b, acct, 0)
	release := w.pausePoint("BEFORE UPDATE", "stripe_events")
	defer release()

	disconnected := pgtest.Async(func() (ledger.EventResult, error) { return w.pay.HandleEvent(ctx, gone) })
	pgtest.WaitUntilWaiting(t, w.pool, pgtest.AtPause, "the disconnection", disconnected)
	lapsed := pgtest.Async(func() (ledger.EventResult, error) {
		return w.pay.HandleEvent(ctx, from(w.event("evt_lapse", payments.EventExpired, b, ""), acct))
	})
	pgtest.WaitUntilWaiting(t, w.pool, pgtest.OnARowLock, "the lapse", lapsed)
	release()

	d := <-disconnected
	require.NoError(t, d.Err)
	require.Equal(t, ledger.ResultAccountDisconnected, d.V.Result)
	l := <-lapsed
	require.NoError(t, l.Err)
	require.Equal(t, ledger.ResultExpired, l.V.Result, "the shop can no longer take payments")
	require.Equal(t, slots.StatusExpired, w.openingStatus(op.ID))
	require.Equal(t, "0", w.query(`SELECT count(*)::text FROM slot_openings WHERE status = 'open'`))
}

// TestAChangeOfChargesCountsHeldOpenings: a held opening (its booking awaits payment)
// reopens when the hold lapses, so a change of currency that would put it below the
// provider's minimum is refused as it is for open ones, naming it; once the payment
// settles, the change goes through.
func TestAChangeOfChargesCountsHeldOpenings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, worldOpts{})
	minimum := func(currency string) int64 {
		if currency == "huf" {
			return 17500
		}
		return 50
	}
	strict := shops.New(w.pool, shops.Config{PaymentsEnabled: true, Now: w.clk.Now, MinimumCharge: minimum})
	op, b := w.book() // 1000 (10.00 USD): below 175.00 HUF
	huf := "huf"

	_, err := strict.Update(ctx, w.shop.ID, shops.ShopChange{Currency: &huf})
	p, ok := problem.As(err)
	require.True(t, ok, "a change that a lapsed hold would put below the minimum is refused, not %v", err)
	require.Equal(t, shops.CodeBelowMinimumCharge, p.Code)
	require.Contains(t, p.Message, op.ID.String())
	require.Equal(t, "usd", w.query(`SELECT currency FROM shops WHERE id = $1`, w.shop.ID))

	// The hold lapses: its opening is open again, still in dollars.
	require.Equal(t, ledger.ResultReopened, w.handle(w.event("evt_lapse", payments.EventExpired, b, "")).Result)
	_, err = strict.Update(ctx, w.shop.ID, shops.ShopChange{Currency: &huf})
	p, ok = problem.As(err)
	require.True(t, ok, "the reopened opening is refused as an open one, not %v", err)
	require.Equal(t, shops.CodeBelowMinimumCharge, p.Code)

	// Paid by a second taker: nothing can reopen it, and the change goes through.
	claim, _ := w.claim(op.ID, 2)
	require.Equal(t, ledger.ResultConfirmed, w.handle(w.event("evt_paid", payments.EventPaid, claim.BookingID, "pi_paid")).Result)
	_, err = strict.Update(ctx, w.shop.ID, shops.ShopChange{Currency: &huf})
	require.NoError(t, err)
}
