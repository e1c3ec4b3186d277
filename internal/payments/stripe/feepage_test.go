package stripe_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/payments"
	"github.com/slotrecovery/slotrecovery/internal/payments/stripe"
)

// TestFeePage: the page where a customer pays a fee their bank wanted them to confirm is
// a Checkout of the fee on the shop's account, whose session and payment carry metadata
// fee and whose idempotency key is the fee's (not the booking's checkout's); the
// session's own events are then not the booking's payment (EventOther), while its
// payment's success is the fee's (EventFeeCharged).
func TestFeePage(t *testing.T) {
	t.Parallel()
	c, rec := newClient(t, stripe.Config{})
	r := checkoutRequest("bk_fee_page")
	r.Account, r.FeeBPS, r.Fee, r.AmountCents = shopAccount, 250, payments.FeeNoShow, 2000
	_, err := c.CreateCheckout(context.Background(), r)
	require.NoError(t, err)
	q := rec.Requests()[len(rec.Requests())-1]
	require.Equal(t, http.MethodPost, q.Method)
	require.Equal(t, "no_show", q.Form.Get("metadata[fee]"))
	require.Equal(t, "no_show", q.Form.Get("payment_intent_data[metadata][fee]"))
	require.Equal(t, "bk_fee_page", q.Form.Get("metadata[booking_id]"))
	require.Contains(t, q.IdempotencyKey, "checkout:fee:no_show:bk_fee_page:")
	require.Equal(t, shopAccount, q.Account)

	now := time.Now()
	for typ, want := range map[string]payments.EventKind{
		stripe.EventCheckoutCompleted: payments.EventOther,
		stripe.EventCheckoutExpired:   payments.EventOther,
	} {
		payload := []byte(`{"id":"evt_fee_page","object":"event","api_version":"2023-10-16","created":` + strconv.FormatInt(now.Unix(), 10) +
			`,"account":"acct_1","data":{"object":{"id":"cs_fee","object":"checkout.session","payment_status":"paid","payment_intent":"pi_fee",` +
			`"metadata":{"booking_id":"bk_fee","fee":"no_show"}}},"livemode":false,"type":"` + typ + `"}`)
		ev, err := stripe.ParseEvent(payload, sign(payload, whsecOld, now), []string{whsecOld}, 0)
		require.NoError(t, err)
		require.Equal(t, want, ev.Kind, "%s of a fee's page is not the booking's payment", typ)
		require.Equal(t, payments.FeeNoShow, ev.Fee, typ)
	}
}
