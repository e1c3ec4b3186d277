package stripe_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/payments"
	"github.com/slotrecovery/slotrecovery/internal/payments/stripe"
	"github.com/slotrecovery/slotrecovery/internal/testkit/stripetest"
)

const shopAccount = "acct_1ShopFees"

func feeRequest(bookingID, card string) payments.FeeRequest {
	return payments.FeeRequest{BookingID: bookingID, Kind: payments.FeeNoShow, Account: shopAccount,
		Card:        payments.KeptCard{Customer: "cus_kept", PaymentMethod: card},
		AmountCents: 2000, Currency: "usd", FeeBPS: 250, Description: "No-show fee: Cut at Joe's, Sat 22 Nov 15:00"}
}

// TestCheckoutKeepsACard: a deposit's checkout keeps the card on the shop's account
// (setup_future_usage off_session, a customer made for it) and shows the policy by the
// button; a card-only checkout is Stripe's setup mode, charging nothing; both refuse a
// card kept on the platform, and a policy longer than Stripe shows.
func TestCheckoutKeepsACard(t *testing.T) {
	t.Parallel()
	c, rec := newClient(t, stripe.Config{})
	ctx := context.Background()
	policy := "Free to cancel until 24 h before; after that, or if you do not come, a $20 fee is charged to this card."

	r := checkoutRequest("bk_deposit")
	r.Account, r.FeeBPS, r.KeepCard, r.Policy = shopAccount, 250, true, policy
	_, err := c.CreateCheckout(ctx, r)
	require.NoError(t, err)
	q := rec.Requests()[len(rec.Requests())-1]
	require.Equal(t, "payment", q.Form.Get("mode"))
	require.Equal(t, "off_session", q.Form.Get("payment_intent_data[setup_future_usage]"))
	require.Equal(t, "always", q.Form.Get("customer_creation"))
	require.Equal(t, policy, q.Form.Get("custom_text[submit][message]"))
	require.Equal(t, shopAccount, q.Account)

	r = checkoutRequest("bk_card")
	r.Account, r.Mode, r.AmountCents, r.Policy = shopAccount, payments.CheckoutCardOnly, 0, policy
	co, err := c.CreateCheckout(ctx, r)
	require.NoError(t, err, "stripe-mock accepts the setup-mode session's shape")
	require.NotEmpty(t, co.URL)
	require.Zero(t, co.ApplicationFeeCents)
	q = rec.Requests()[len(rec.Requests())-1]
	require.Equal(t, "setup", q.Form.Get("mode"))
	require.Equal(t, "usd", q.Form.Get("currency"))
	require.Empty(t, q.Form.Get("line_items[0][price_data][unit_amount]"), "nothing is charged")
	require.Equal(t, "bk_card", q.Form.Get("setup_intent_data[metadata][booking_id]"))
	require.Contains(t, q.IdempotencyKey, "card_only")
	require.Equal(t, shopAccount, q.Account)

	before := len(rec.Requests())
	for name, bad := range map[string]func(*payments.CheckoutRequest){
		"a card kept on the platform": func(r *payments.CheckoutRequest) { r.Account, r.FeeBPS, r.KeepCard = "", 0, true },
		"card-only on the platform": func(r *payments.CheckoutRequest) {
			r.Account, r.FeeBPS, r.Mode, r.AmountCents = "", 0, payments.CheckoutCardOnly, 0
		},
		"card-only with an amount":      func(r *payments.CheckoutRequest) { r.Mode = payments.CheckoutCardOnly },
		"a policy longer than stripe's": func(r *payments.CheckoutRequest) { r.Policy = strings.Repeat("é", payments.MaxPolicyLen+1) },
		"a mode we do not make":         func(r *payments.CheckoutRequest) { r.Mode = "subscription" },
	} {
		r := checkoutRequest("bk_bad")
		r.Account, r.FeeBPS = shopAccount, 250
		bad(&r)
		_, err := c.CreateCheckout(ctx, r)
		require.ErrorIs(t, err, payments.ErrInvalid, name)
	}
	require.Len(t, rec.Requests(), before, "refused requests never reach Stripe")
}

// TestChargeFee: a fee is a PaymentIntent confirmed off-session on the shop's account
// with the platform's fee, keyed by booking and kind; each of Stripe's test cards
// answers as Stripe's test mode does: authentication required, insufficient funds, a
// generic decline; and a bad request never reaches Stripe.
func TestChargeFee(t *testing.T) {
	t.Parallel()
	c, rec := newClient(t, stripe.Config{})
	ctx := context.Background()

	got, err := c.ChargeFee(ctx, feeRequest("bk_1", "pm_card_visa"))
	require.NoError(t, err)
	require.NotEmpty(t, got.PaymentIntentID)
	q := rec.Requests()[len(rec.Requests())-1]
	require.Equal(t, "/v1/payment_intents", q.Path)
	for k, want := range map[string]string{"off_session": "true", "confirm": "true", "customer": "cus_kept", "payment_method": "pm_card_visa",
		"amount": "2000", "currency": "usd", "application_fee_amount": "50", "metadata[booking_id]": "bk_1", "metadata[fee]": "no_show"} {
		require.Equal(t, want, q.Form.Get(k), k)
	}
	require.Equal(t, shopAccount, q.Account)
	require.Equal(t, "fee:no_show:bk_1:"+shopAccount, q.IdempotencyKey)
	// stripe-mock answers its fixture's status, which is not succeeded: the outcome
	// follows the status the answer gives, never the request.
	require.NotEmpty(t, got.Outcome)

	for card, want := range map[string]payments.FeeCharge{
		stripetest.CardAuthenticationRequired: {Outcome: payments.FeeRequiresAction, DeclineCode: "authentication_required"},
		stripetest.CardInsufficientFunds:      {Outcome: payments.FeeDeclined, DeclineCode: "insufficient_funds"},
		stripetest.CardDeclined:               {Outcome: payments.FeeDeclined, DeclineCode: "generic_decline"},
	} {
		got, err := c.ChargeFee(ctx, feeRequest("bk_"+card, card))
		require.NoError(t, err, "a decline is an answer, not an error (%s)", card)
		require.Equal(t, want.Outcome, got.Outcome, card)
		require.Equal(t, want.DeclineCode, got.DeclineCode, card)
		require.NotEmpty(t, got.Message, card)
		require.True(t, strings.HasPrefix(got.PaymentIntentID, "pi_"), "the declined payment's id, for the customer to complete: %q", got.PaymentIntentID)
		require.Zero(t, got.ApplicationFeeCents)
	}

	before := len(rec.Requests())
	for name, bad := range map[string]func(*payments.FeeRequest){
		"no account":     func(r *payments.FeeRequest) { r.Account = "" },
		"no card":        func(r *payments.FeeRequest) { r.Card = payments.KeptCard{} },
		"an unknown fee": func(r *payments.FeeRequest) { r.Kind = "cleaning" },
		"no amount":      func(r *payments.FeeRequest) { r.AmountCents = 0 },
		"a bad currency": func(r *payments.FeeRequest) { r.Currency = "USD" },
	} {
		r := feeRequest("bk_bad", "pm_card_visa")
		bad(&r)
		_, err := c.ChargeFee(ctx, r)
		require.ErrorIs(t, err, payments.ErrInvalid, name)
	}
	require.Len(t, rec.Requests(), before, "refused requests never reach Stripe")

	rec.FailNext(1, http.StatusServiceUnavailable)
	_, err = c.ChargeFee(ctx, feeRequest("bk_down", "pm_card_visa"))
	require.Error(t, err)
	require.True(t, payments.Transient(err), "Stripe down: retry with the same key (%v)", err)
}

// TestChargeFeeOnce: twenty owners' clicks at once on one booking's no-show fee, with
// Stripe keeping its idempotency promise, reach one charge: every click is told the
// same payment, or to try again (Stripe's 409 while the first is made), and a
// late-cancel fee of the same booking is another charge.
func TestChargeFeeOnce(t *testing.T) {
	t.Parallel()
	c, rec := newClient(t, stripe.Config{})
	rec.EnforceIdempotency()
	ctx := context.Background()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		ids  = map[string]int{}
		busy int
	)
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := c.ChargeFee(ctx, feeRequest("bk_once", stripetest.CardInsufficientFunds))
			mu.Lock()
			defer mu.Unlock()
			var pe *payments.Error
			switch {
			case err == nil:
				ids[got.PaymentIntentID]++
			case errors.As(err, &pe) && pe.Status == http.StatusConflict && payments.Transient(err):
				busy++
			default:
				t.Errorf("click: %v", err)
			}
		}()
	}
	wg.Wait()
	require.Len(t, ids, 1, "one payment for every click that got an answer: %v (409s: %d)", ids, busy)
	reached := 0
	for _, q := range rec.Requests() {
		if q.Path == "/v1/payment_intents" && q.Status != http.StatusConflict {
			reached++
		}
	}
	require.Equal(t, 20, reached+busy)
	late := feeRequest("bk_once", stripetest.CardInsufficientFunds)
	late.Kind = payments.FeeLateCancel
	got, err := c.ChargeFee(ctx, late)
	require.NoError(t, err)
	_, again := ids[got.PaymentIntentID]
	require.False(t, again, "a late-cancel fee is its own charge")
}

// TestKeptCard: the card a completed checkout kept is read back on the shop's account
// (its customer and payment method, from the setup or the payment); a checkout that
// kept none is payments.ErrNotFound.
func TestKeptCard(t *testing.T) {
	t.Parallel()
	c, rec := newClient(t, stripe.Config{})
	ctx := context.Background()
	rec.Respond("GET", "/v1/checkout/sessions/cs_setup", http.StatusOK, `{"id":"cs_setup","object":"checkout.session","mode":"setup",
		"status":"complete","customer":"cus_1","setup_intent":{"id":"seti_1","object":"setup_intent","payment_method":"pm_1"}}`)
	rec.Respond("GET", "/v1/checkout/sessions/cs_paid", http.StatusOK, `{"id":"cs_paid","object":"checkout.session","mode":"payment",
		"status":"complete","customer":"cus_2","payment_intent":{"id":"pi_2","object":"payment_intent","payment_method":"pm_2","setup_future_usage":"off_session"}}`)
	rec.Respond("GET", "/v1/checkout/sessions/cs_plain", http.StatusOK, `{"id":"cs_plain","object":"checkout.session","mode":"payment",
		"status":"complete","customer":null,"payment_intent":{"id":"pi_3","object":"payment_intent","payment_method":"pm_3"}}`)

	got, err := c.KeptCard(ctx, shopAccount, "cs_setup")
	require.NoError(t, err)
	require.Equal(t, payments.KeptCard{Customer: "cus_1", PaymentMethod: "pm_1"}, got)
	q := rec.Requests()[len(rec.Requests())-1]
	require.Equal(t, shopAccount, q.Account)
	var expand []string
	for k, v := range q.Query {
		if strings.HasPrefix(k, "expand") {
			expand = append(expand, v...)
		}
	}
	require.ElementsMatch(t, []string{"setup_intent", "payment_intent"}, expand, "query: %v", q.Query)

	got, err = c.KeptCard(ctx, shopAccount, "cs_paid")
	require.NoError(t, err)
	require.Equal(t, payments.KeptCard{Customer: "cus_2", PaymentMethod: "pm_2"}, got)

	_, err = c.KeptCard(ctx, shopAccount, "cs_plain")
	require.ErrorIs(t, err, payments.ErrNotFound, "a payment that kept no card")
	_, err = c.KeptCard(ctx, "", "cs_setup")
	require.ErrorIs(t, err, payments.ErrInvalid, "a card is kept on the shop's account only")
}
