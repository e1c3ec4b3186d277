package offers_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/sms"
)

// TestTransactionalTextsReportsReachTheCustomer: the delivery report of a text that no
// offer names (a booking's confirmation, a payment link) still says what it says of the
// recipient. A carrier-level opt-out (21610) opts the shop's customer with that number
// out, and keeps a stranger's number suppressed, so a later add does not opt it in; an
// unreachable number marks the customer; a report from a number that is no shop's, or
// of a delivered text, changes nothing.
func TestTransactionalTextsReportsReachTheCustomer(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	shop := w.shop(t, shops.Policy{WaveSize: 2, WaveInterval: time.Minute, MinLead: time.Hour, Cooldown: time.Hour})
	cs := w.customers(t, shop, 3)
	report := func(sid, to string, status sms.DeliveryStatus, reason sms.Reason, code int) {
		t.Helper()
		require.NoError(t, w.reports.RecordDelivery(ctx, sms.DeliveryReport{MessageID: sid, Status: status,
			Reason: reason, ErrorCode: code, From: shop.SMSNumber, To: to}))
	}

	report("SMconfirm0", cs[0].Phone, sms.DeliveryUndelivered, sms.ReasonOptedOut, 21610)
	optedOut, _ := w.customerFlags(t, cs[0].ID)
	require.True(t, optedOut, "the carrier's opt-out of a confirmation's recipient")
	report("SMconfirm0", cs[0].Phone, sms.DeliveryUndelivered, sms.ReasonOptedOut, 21610) // a repeat changes nothing

	report("SMlink1", cs[1].Phone, sms.DeliveryFailed, sms.ReasonUnreachable, 30005)
	_, unreachable := w.customerFlags(t, cs[1].ID)
	require.True(t, unreachable, "an unreachable payment link's recipient")

	const stranger = "+447700955555"
	report("SMstranger", stranger, sms.DeliveryUndelivered, sms.ReasonOptedOut, 21610)
	added, err := w.cust.Add(ctx, shop.ID, customers.NewCustomer{Phone: stranger, Name: "Late", SMSOptIn: true})
	require.NoError(t, err)
	require.NotNil(t, added.OptedOutAt, "a number the carrier opted out stays out when added")

	// Not from a shop's number; and a delivered text: nothing changes.
	require.NoError(t, w.reports.RecordDelivery(ctx, sms.DeliveryReport{MessageID: "SMelsewhere", Status: sms.DeliveryUndelivered,
		Reason: sms.ReasonOptedOut, ErrorCode: 21610, From: "+15550009999", To: cs[2].Phone}))
	report("SMfine", cs[2].Phone, sms.DeliveryDelivered, sms.ReasonOther, 0)
	optedOut, unreachable = w.customerFlags(t, cs[2].ID)
	require.False(t, optedOut || unreachable)
}
