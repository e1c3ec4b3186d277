package offers_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/sms"
)

// TestCarrierOptOutAtSendIsAnOptOut: an offer text refused because the number opted out
// at the carrier (Twilio's 21610) opts the customer out and keeps the number's
// suppression, as a STOP and a delivery report saying the same do: the opt-out outlives
// the customer's erasure, and a later add of the number keeps it opted out.
func TestCarrierOptOutAtSendIsAnOptOut(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	shop := w.shop(t, shops.Policy{WaveSize: 10, WaveInterval: time.Minute, MinLead: time.Hour, Cooldown: time.Hour})
	cs := w.customers(t, shop, 2)
	w.twilio.FailNumber(cs[1].Phone, 21610, 400)
	op := w.declare(t, shop, 5*time.Hour)
	res, err := w.offers.RunWave(ctx, jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 1})
	require.NoError(t, err)
	require.Equal(t, 1, res.Failed)

	c, err := w.cust.Get(ctx, shop.ID, cs[1].ID)
	require.NoError(t, err)
	require.Equal(t, customers.StatusOptedOut, c.Status(), "the carrier says they opted out")

	// Erased, then added again by the owner: still opted out, until their own START.
	require.NoError(t, w.erasure.Erase(ctx, shop.ID, c.ID))
	again, err := w.cust.Add(ctx, shop.ID, customers.NewCustomer{Phone: cs[1].Phone, SMSOptIn: true})
	require.NoError(t, err)
	require.Equal(t, customers.StatusOptedOut, again.Status())
	var stops int
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT count(*) FROM sms_suppressions WHERE shop_id = $1`, shop.ID).Scan(&stops))
	require.Equal(t, 1, stops, "one record for the number: its STOP, then its erasure")
}

// TestEveryFailedTextSaysTheSame: what a failed text says of its recipient does not
// depend on which text failed or how the failure was heard: an offer refused at send,
// a transactional text refused at send (the outbox), and a delivery report of either
// leave the customer in the same state, for a carrier's opt-out (21610: opted out, and
// unreachable with the code that says why; their own START lifts both) and for an
// unreachable number (30005 or 21614: unreachable only): the rule is customers.SMSFailed,
// and every path takes it.
func TestEveryFailedTextSaysTheSame(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	shop := w.shop(t, shops.Policy{WaveSize: 10, WaveInterval: time.Minute, MinLead: time.Hour, Cooldown: time.Hour})
	cs := w.customers(t, shop, 6)
	type flags struct{ optedOut, unreachable bool }
	state := func(i int) flags {
		t.Helper()
		o, u := w.customerFlags(t, cs[i].ID)
		return flags{o, u}
	}
	// Refused at send: an offer (customers 0 and 1), a transactional text (2 and 3).
	w.twilio.FailNumber(cs[0].Phone, 21610, 400)
	w.twilio.FailNumber(cs[1].Phone, 21614, 400)
	w.twilio.FailNumber(cs[2].Phone, 21610, 400)
	w.twilio.FailNumber(cs[3].Phone, 21614, 400)
	op := w.declare(t, shop, 5*time.Hour)
	// Only customers 0 and 1 are offered: the others are texted by the outbox and by
	// reports.
	for _, i := range []int{2, 3, 4, 5} {
		_, err := w.pool.Exec(ctx, `UPDATE customers SET sms_opt_in = false WHERE id = $1`, cs[i].ID)
		require.NoError(t, err)
	}
	_, err := w.offers.RunWave(ctx, jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 1})
	require.NoError(t, err)
	for _, i := range []int{2, 3} {
		_ = w.outbox.SendText(ctx, jobs.Text{Key: fmt.Sprint("confirm:", i), ShopID: shop.ID, From: shop.SMSNumber, To: cs[i].Phone, Body: "Booked"})
	}
	// Heard by a delivery report (customers 4 and 5).
	for i, r := range map[int]struct {
		reason sms.Reason
		code   int
	}{4: {sms.ReasonOptedOut, 21610}, 5: {sms.ReasonUnreachable, 30005}} {
		require.NoError(t, w.reports.RecordDelivery(ctx, sms.DeliveryReport{MessageID: fmt.Sprint("SMreport", i), Status: sms.DeliveryUndelivered,
			Reason: r.reason, ErrorCode: r.code, From: shop.SMSNumber, To: cs[i].Phone}))
	}
	optedOut, unreachable := flags{optedOut: true, unreachable: true}, flags{unreachable: true}
	require.Equal(t, []flags{optedOut, unreachable, optedOut, unreachable, optedOut, unreachable},
		[]flags{state(0), state(1), state(2), state(3), state(4), state(5)},
		"offer refused, transactional text refused, reported: a carrier's opt-out then an unreachable number each")
}
