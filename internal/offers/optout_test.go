package offers_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// TestCarrierOptOutAtSendIsAnOptOut: an offer text refused because the number opted out
// at the carrier (Twilio's 21610) opts the customer out and keeps the number's
// suppression, as a STOP and a delivery report saying the same do (issue 29.2: the send
// path only marked them unreachable, so the opt-out was forgotten with the customer's
// erasure, and a later add of the number opted it in).
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

	c, err := w.shops.Customer(ctx, shop.ID, cs[1].ID)
	require.NoError(t, err)
	require.Equal(t, shops.StatusOptedOut, c.Status(), "the carrier says they opted out")

	// Erased, then added again by the owner: still opted out, until their own START.
	require.NoError(t, w.shops.EraseCustomer(ctx, shop.ID, c.ID))
	again, err := w.shops.AddCustomer(ctx, shop.ID, shops.NewCustomer{Phone: cs[1].Phone, SMSOptIn: true})
	require.NoError(t, err)
	require.Equal(t, shops.StatusOptedOut, again.Status())
	var stops int
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT count(*) FROM sms_suppressions WHERE shop_id = $1`, shop.ID).Scan(&stops))
	require.Equal(t, 1, stops, "one record for the number: its STOP, then its erasure")
}
