package ledger_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/payments"
)

// onAccount records that booking b's link was made on a connected account with a fee,
// as the ledger stores it with the link on a Connect server.
func (w *world) onAccount(b uuid.UUID, account string, fee int64) {
	w.t.Helper()
	_, err := w.pool.Exec(context.Background(), `UPDATE bookings SET stripe_account = $2, application_fee_cents = $3 WHERE id = $1`, b, account, fee)
	require.NoError(w.t, err)
}

// from is ev as it came from account: to the Connect endpoint, or ("") to the
// platform's.
func from(ev payments.Event, account string) payments.Event {
	ev.Account, ev.Connect = account, account != ""
	return ev
}

// TestEventFromAnotherAccountChangesNothing: a payment event acts only on a booking
// whose payment its account took. Another shop's connected account can make a checkout
// of its own that names this booking in its metadata and pay it, and Stripe will sign
// the event: it must not confirm, fail, expire or refund the booking. Nor may the
// platform's own events act on a connected account's booking, or a connected account's
// on the platform's.
func TestEventFromAnotherAccountChangesNothing(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{})
	_, shopA := w.book()
	w.onAccount(shopA, "acct_1ShopA", 25)
	_, platform := w.book()

	for _, tc := range []struct {
		name    string
		booking uuid.UUID
		account string
		kind    payments.EventKind
	}{
		{"another shop's payment", shopA, "acct_1ShopB", payments.EventPaid},
		{"another shop's declined card", shopA, "acct_1ShopB", payments.EventFailed},
		{"another shop's expiry", shopA, "acct_1ShopB", payments.EventExpired},
		{"another shop's pending payment", shopA, "acct_1ShopB", payments.EventPending},
		{"the platform's payment on a shop's booking", shopA, "", payments.EventPaid},
		{"the platform's expiry on a shop's booking", shopA, "", payments.EventExpired},
		{"a shop's payment on the platform's booking", platform, "acct_1ShopA", payments.EventPaid},
		{"a shop's expiry on the platform's booking", platform, "acct_1ShopA", payments.EventExpired},
	} {
		ev := from(w.event("evt_wrong_"+tc.name, tc.kind, tc.booking, "pi_forged"), tc.account)
		res := w.handle(ev)
		require.Equal(t, ledger.ResultWrongAccount, res.Result, tc.name)
		require.Equal(t, string(ledger.ResultWrongAccount), w.query(`SELECT result FROM stripe_events WHERE event_id = $1`, ev.ID), tc.name)
		require.Equal(t, ledger.BookingPendingPayment, w.bookingStatus(tc.booking), tc.name)
		require.True(t, w.handle(ev).Replayed, "%s: a redelivery repeats the answer", tc.name)
	}
	// Misrouted: the platform's endpoint delivering an event that names an account, or
	// the Connect endpoint one that names none, even the booking's own.
	misrouted := w.event("evt_misrouted_platform", payments.EventPaid, shopA, "pi_m")
	misrouted.Account = "acct_1ShopA"
	require.Equal(t, ledger.ResultWrongAccount, w.handle(misrouted).Result)
	misrouted = w.event("evt_misrouted_connect", payments.EventPaid, platform, "pi_m")
	misrouted.Connect = true
	require.Equal(t, ledger.ResultWrongAccount, w.handle(misrouted).Result)
	require.Equal(t, ledger.BookingPendingPayment, w.bookingStatus(shopA))
	require.Equal(t, ledger.BookingPendingPayment, w.bookingStatus(platform))

	require.Empty(t, w.stripe.callLog(), "no checkout was expired, read or refunded")
	require.Equal(t, "0", w.query(`SELECT count(*)::text FROM river_job WHERE kind IN ('booking_refund', 'offer_wave') AND args->>'generation' IS DISTINCT FROM '1'`))
	require.Equal(t, "acct_1ShopB", w.query(`SELECT account FROM stripe_events WHERE event_id = $1`, "evt_wrong_another shop's payment"),
		"the event's account is kept with it")

	// The accounts that took the payments confirm them.
	require.Equal(t, ledger.ResultConfirmed, w.handle(from(w.event("evt_a_paid", payments.EventPaid, shopA, "pi_a"), "acct_1ShopA")).Result)
	require.Equal(t, ledger.ResultConfirmed, w.handle(w.event("evt_p_paid", payments.EventPaid, platform, "pi_p")).Result)
	require.Equal(t, ledger.BookingConfirmed, w.bookingStatus(shopA))
	require.Equal(t, ledger.BookingConfirmed, w.bookingStatus(platform))
}

// TestConnectedBookingsCallTheirAccount: ending a declined card's checkout, reading a
// stale booking back and refunding a late payment all go to the account that took the
// booking's payment; the refund gives the platform's fee back. The platform's bookings
// (made before Connect, or without it) keep the platform's account.
func TestConnectedBookingsCallTheirAccount(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, worldOpts{})

	// A declined card: the checkout is ended on the shop's account.
	_, declined := w.book()
	w.onAccount(declined, "acct_1ShopA", 25)
	require.Equal(t, ledger.ResultReopened, w.handle(from(w.event("evt_declined", payments.EventFailed, declined, "pi_d"), "acct_1ShopA")).Result)

	// A late payment, refunded with the fee, on the shop's account.
	op, late := w.book()
	w.onAccount(late, "acct_1ShopA", 25)
	require.Equal(t, ledger.ResultReopened, w.handle(from(w.event("evt_late_expired", payments.EventExpired, late, ""), "acct_1ShopA")).Result)
	w.claim(op.ID, 2)
	require.Equal(t, ledger.ResultRefunded, w.handle(from(w.event("evt_late_paid", payments.EventPaid, late, "pi_late"), "acct_1ShopA")).Result)
	require.NoError(t, w.pay.RefundBooking(ctx, late, "pi_late"))

	// A platform booking's late payment: the platform's account, no fee to give back.
	op2, plat := w.book()
	require.Equal(t, ledger.ResultReopened, w.handle(w.event("evt_p_expired", payments.EventExpired, plat, "")).Result)
	w.claim(op2.ID, 2)
	require.Equal(t, ledger.ResultRefunded, w.handle(w.event("evt_p_paid", payments.EventPaid, plat, "pi_plat")).Result)
	require.NoError(t, w.pay.RefundBooking(ctx, plat, "pi_plat"))

	// A lost webhook: the reconciliation reads the checkout back on its account.
	_, stale := w.book()
	w.onAccount(stale, "acct_1ShopB", 0)
	w.stripe.set("cs_"+stale.String(), payments.SessionExpired)
	w.clk.Set(w.start.Add(40 * time.Minute))
	require.Positive(t, w.reconcile())

	calls := w.stripe.callLog()
	require.GreaterOrEqual(t, len(calls), 4, "%q", calls)
	require.Equal(t, []string{
		"expire acct_1ShopA cs_" + declined.String(),
		"refund acct_1ShopA pi_late true",
		"refund  pi_plat false",
	}, calls[:3])
	// The reconciliation also reads back the second generation's bookings, made on the
	// platform's account (their links were made without an account).
	require.Contains(t, calls[3:], "get acct_1ShopB cs_"+stale.String())
	for _, c := range calls[3:] {
		if c != "get acct_1ShopB cs_"+stale.String() {
			require.Regexp(t, `^get  cs_`, c, "a platform booking is read on the platform's account")
		}
	}
}

// TestConnectedRefundOnStripeMock: the refund of a connected account's late payment
// reaches Stripe on that account, with refund_application_fee, under a key naming it.
func TestConnectedRefundOnStripeMock(t *testing.T) {
	t.Parallel()
	s := newRefundScene(t)
	op, alice := s.book()
	s.onAccount(alice, "acct_1ShopA", 25)
	require.Equal(t, ledger.ResultReopened, s.handle(from(s.event("evt_exp", payments.EventExpired, alice, ""), "acct_1ShopA")).Result)
	s.claim(op.ID, 2)
	require.Equal(t, ledger.ResultRefunded, s.handle(from(s.event("evt_paid", payments.EventPaid, alice, "pi_connect_late"), "acct_1ShopA")).Result)
	require.NoError(t, s.work(alice, "pi_connect_late", 1, 10))

	reqs := s.rec.Requests()
	require.Len(t, reqs, 1)
	r := reqs[0]
	require.Equal(t, http.MethodPost, r.Method)
	require.Equal(t, "/v1/refunds", r.Path)
	require.Equal(t, "acct_1ShopA", r.Account)
	require.True(t, r.RefundsApplicationFee())
	require.Equal(t, "refund:"+alice.String()+":pi_connect_late:acct_1ShopA", r.IdempotencyKey)
	require.Equal(t, http.StatusOK, r.Status)
}
