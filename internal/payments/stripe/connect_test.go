package stripe_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/payments"
	"github.com/slotrecovery/slotrecovery/internal/payments/stripe"
)

// TestApplicationFee: amount × bps / 10,000, rounded half up in the smallest unit, to an
// amount Stripe accepts in the currency, never the whole payment.
func TestApplicationFee(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		amount   int64
		currency string
		bps      int
		want     int64
	}{
		{"no fee", 4500, "usd", 0, 0},
		{"2.5% of $45.00", 4500, "usd", 250, 113}, // 112.5 rounds half up
		{"just under a half rounds down", 4499, "usd", 250, 112},
		{"exact", 10000, "usd", 250, 250},
		{"1 bps of $1.00 rounds to nothing", 100, "usd", 1, 0},
		{"1 bps of $50.00 is half a cent, up", 5000, "usd", 1, 1},
		{"upper-case currency reads the same", 4500, "USD", 250, 113},
		{"the most: half", 4500, "usd", 5000, 2250},
		{"largest price, no overflow", 99_999_999, "usd", 5000, 50_000_000},

		// Zero-decimal currencies are counted in whole units: nothing special.
		{"yen", 4500, "jpy", 250, 113},
		{"yen, exact", 1000, "jpy", 300, 30},
		{"won rounds half up", 15000, "krw", 1, 2}, // 1.5
		{"won below a half", 14999, "krw", 1, 1},

		// Three-decimal currencies: Stripe requires amounts ending in 0.
		{"dinar 4.500 at 2.5%", 4500, "kwd", 250, 110},                       // 112.5 → 110
		{"dinar, nearest ten up", 4600, "kwd", 250, 120},                     // 115 → 120 (half up)
		{"dinar, rounded once not twice", 4584, "bhd", 250, 110},             // 114.6 → 110, not 115 → 120
		{"jordanian dinar under five fils", 1000, "jod", 40, 0},              // 4 → 0
		{"omani rial at five fils", 1250, "omr", 40, 10},                     // 5 → 10
		{"tunisian dinar", 12340, "tnd", 1000, 1230},                         // 1234 → 1230
		{"three decimals, tiny payment keeps something", 10, "kwd", 5000, 0}, // 5 → 10 = the whole: 0

		// ISK and UGX are counted in hundredths but charged in whole units.
		{"krona in whole units", 450000, "isk", 250, 11300}, // 11250 → 11300
		{"shilling in whole units", 500000, "ugx", 130, 6500},

		// Never the whole payment.
		{"one cent at half", 1, "usd", 5000, 0},
		{"two cents at half", 2, "usd", 5000, 1},
		{"three cents at half rounds up, below the whole", 3, "usd", 5000, 2},
		{"everything asked, one unit left", 100, "usd", 10000, 99},
		{"negative bps", 4500, "usd", -10, 0},
		{"no amount", 0, "usd", 250, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := stripe.ApplicationFee(tc.amount, tc.currency, tc.bps)
			require.Equal(t, tc.want, got, "%d %s at %d bps", tc.amount, tc.currency, tc.bps)
			require.Less(t, got, max(tc.amount, 1), "a fee is less than the payment")
			require.GreaterOrEqual(t, got, int64(0))
		})
	}
}

// TestApplicationFeeSteps: every fee is one Stripe accepts in its currency, for every
// amount Stripe accepts (three-decimal amounts end in 0, ISK and UGX whole units).
func TestApplicationFeeSteps(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		currency string
		step     int64
	}{{"usd", 1}, {"jpy", 1}, {"kwd", 10}, {"bhd", 10}, {"jod", 10}, {"omr", 10}, {"tnd", 10}, {"isk", 100}, {"ugx", 100}} {
		for amount := c.step; amount <= 2000*c.step; amount += c.step * 7 {
			for _, bps := range []int{1, 99, 250, 333, 1000, 5000} {
				fee := stripe.ApplicationFee(amount, c.currency, bps)
				require.Zero(t, fee%c.step, "%d %s at %d bps: fee %d is not a multiple of %d", amount, c.currency, bps, fee, c.step)
				require.Less(t, fee, amount, "%d %s at %d bps", amount, c.currency, bps)
				exact := float64(amount) * float64(bps) / 10000
				require.LessOrEqual(t, abs(float64(fee)-exact), float64(c.step)/2+1e-9,
					"%d %s at %d bps: fee %d is more than half a step from %.2f", amount, c.currency, bps, fee, exact)
			}
		}
	}
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

// TestCreateCheckoutOnAccount: a connected account's checkout is a direct charge on that
// account (Stripe-Account), with the platform's fee, under a key that names the account;
// the platform's own checkout is exactly as before.
func TestCreateCheckoutOnAccount(t *testing.T) {
	t.Parallel()
	c, rec := newClient(t, stripe.Config{})
	req := checkoutRequest("bk_connect_1")
	req.Account, req.FeeBPS = "acct_1ShopA", 250

	got, err := c.CreateCheckout(t.Context(), req)
	require.NoError(t, err)
	require.EqualValues(t, 113, got.ApplicationFeeCents, "2.5%% of 4500, half up")
	require.Equal(t, "acct_1ShopA", got.Account)

	platform := checkoutRequest("bk_connect_1")
	platform.ExpiresAt = req.ExpiresAt
	pgot, err := c.CreateCheckout(t.Context(), platform)
	require.NoError(t, err)
	require.Zero(t, pgot.ApplicationFeeCents)
	require.Empty(t, pgot.Account)

	noFee := req
	noFee.FeeBPS = 0
	_, err = c.CreateCheckout(t.Context(), noFee)
	require.NoError(t, err)

	reqs := rec.Requests()
	require.Len(t, reqs, 3)
	exp := strconv.FormatInt(req.ExpiresAt.Unix(), 10)

	require.Equal(t, "acct_1ShopA", reqs[0].Account)
	fee, ok := reqs[0].ApplicationFee()
	require.True(t, ok)
	require.EqualValues(t, 113, fee)
	require.Equal(t, "checkout:bk_connect_1:"+exp+":acct_1ShopA", reqs[0].IdempotencyKey)
	require.Equal(t, "bk_connect_1", reqs[0].Form.Get("payment_intent_data[metadata][booking_id]"))
	require.Equal(t, http.StatusOK, reqs[0].Status, "stripe-mock accepts the fee")

	require.Empty(t, reqs[1].Account, "the platform's checkout names no account")
	_, ok = reqs[1].ApplicationFee()
	require.False(t, ok, "and asks no fee")
	require.Equal(t, "checkout:bk_connect_1:"+exp, reqs[1].IdempotencyKey, "the platform's key is as it always was")

	require.Equal(t, "acct_1ShopA", reqs[2].Account)
	_, ok = reqs[2].ApplicationFee()
	require.False(t, ok, "a zero fee is no parameter")

	t.Run("refused before Stripe", func(t *testing.T) {
		before := rec.Count("", "/")
		for name, mutate := range map[string]func(*payments.CheckoutRequest){
			"fee without an account": func(r *payments.CheckoutRequest) { r.Account, r.FeeBPS = "", 250 },
			"negative fee":           func(r *payments.CheckoutRequest) { r.FeeBPS = -1 },
			"fee over everything":    func(r *payments.CheckoutRequest) { r.FeeBPS = 10001 },
			"not an account id":      func(r *payments.CheckoutRequest) { r.Account = "cus_123" },
			"header injection":       func(r *payments.CheckoutRequest) { r.Account = "acct_1\r\nStripe-Account: acct_2" },
		} {
			r := req
			mutate(&r)
			_, err := c.CreateCheckout(t.Context(), r)
			require.ErrorIs(t, err, payments.ErrInvalid, name)
		}
		require.Equal(t, before, rec.Count("", "/"), "nothing reached Stripe")
	})
}

// TestCheckoutCallsOnAccount: expiring, reading and refunding a connected account's
// payment name that account; a refund gives the platform's fee back when asked, and its
// key names the account.
func TestCheckoutCallsOnAccount(t *testing.T) {
	t.Parallel()
	c, rec := newClient(t, stripe.Config{})

	require.NoError(t, c.ExpireCheckout(t.Context(), "acct_1ShopA", "cs_connect"))
	s, err := c.GetCheckout(t.Context(), "acct_1ShopA", "cs_connect")
	require.NoError(t, err)
	require.Equal(t, "cs_connect", s.ID)
	id, err := c.Refund(t.Context(), payments.RefundRequest{
		BookingID: "bk_connect", PaymentIntentID: "pi_connect", Account: "acct_1ShopA", RefundApplicationFee: true,
	})
	require.NoError(t, err)
	require.NotEmpty(t, id)
	_, err = c.Refund(t.Context(), payments.RefundRequest{BookingID: "bk_connect", PaymentIntentID: "pi_connect", Account: "acct_1ShopB"})
	require.NoError(t, err)

	reqs := rec.Requests()
	require.Len(t, reqs, 4)
	for i, want := range []string{"acct_1ShopA", "acct_1ShopA", "acct_1ShopA", "acct_1ShopB"} {
		require.Equal(t, want, reqs[i].Account, "request %d %s %s", i, reqs[i].Method, reqs[i].Path)
		require.Equal(t, http.StatusOK, reqs[i].Status)
	}
	require.Equal(t, "/v1/checkout/sessions/cs_connect/expire", reqs[0].Path)
	require.Equal(t, "refund:bk_connect:pi_connect:acct_1ShopA", reqs[2].IdempotencyKey)
	require.True(t, reqs[2].RefundsApplicationFee())
	require.Equal(t, "refund:bk_connect:pi_connect:acct_1ShopB", reqs[3].IdempotencyKey, "another account, another key")
	require.False(t, reqs[3].RefundsApplicationFee())

	_, err = c.Refund(t.Context(), payments.RefundRequest{BookingID: "bk_x", PaymentIntentID: "pi_x", RefundApplicationFee: true})
	require.ErrorIs(t, err, payments.ErrInvalid, "the platform's own payment has no application fee")
	require.ErrorIs(t, c.ExpireCheckout(t.Context(), "acct_bad id", "cs_x"), payments.ErrInvalid)
	_, err = c.GetCheckout(t.Context(), "ca_123", "cs_x")
	require.ErrorIs(t, err, payments.ErrInvalid)
	require.Len(t, rec.Requests(), 4, "refused before Stripe")
}

func TestCreateAccount(t *testing.T) {
	t.Parallel()
	c, rec := newClient(t, stripe.Config{})

	a, err := c.CreateAccount(t.Context(), payments.AccountRequest{ShopID: "shop_1", Type: "standard"})
	require.NoError(t, err)
	require.NotEmpty(t, a.ID)
	// stripe-mock's new account: nothing enabled, requirements due.
	require.False(t, a.ChargesEnabled)
	require.False(t, a.PayoutsEnabled)
	require.False(t, a.DetailsSubmitted)
	require.NotEmpty(t, a.RequirementsDue)

	_, err = c.CreateAccount(t.Context(), payments.AccountRequest{ShopID: "shop_1", Type: "express"})
	require.NoError(t, err)
	_, err = c.CreateAccount(t.Context(), payments.AccountRequest{ShopID: "shop_1", Type: "standard", Replaces: "acct_1Gone"})
	require.NoError(t, err)

	reqs := rec.Requests()
	require.Len(t, reqs, 3)
	require.Equal(t, "/v1/accounts", reqs[0].Path)
	require.Equal(t, "standard", reqs[0].Form.Get("type"))
	require.Equal(t, "shop_1", reqs[0].Form.Get("metadata[shop_id]"))
	require.Empty(t, reqs[0].Form.Get("capabilities[card_payments][requested]"), "a standard account onboards its own capabilities")
	require.Empty(t, reqs[0].Account, "the platform creates accounts on its own")
	require.Equal(t, "connect_account:shop_1", reqs[0].IdempotencyKey, "one account per shop, however often asked")
	require.Equal(t, "express", reqs[1].Form.Get("type"))
	require.Equal(t, "true", reqs[1].Form.Get("capabilities[card_payments][requested]"))
	require.Equal(t, "true", reqs[1].Form.Get("capabilities[transfers][requested]"))
	require.Equal(t, "connect_account:shop_1:after:acct_1Gone", reqs[2].IdempotencyKey, "a disconnected shop's next account is a new one")
	for _, r := range reqs {
		require.Equal(t, http.StatusOK, r.Status, "stripe-mock accepts %v", r.Form)
	}

	for name, r := range map[string]payments.AccountRequest{
		"no shop":      {Type: "standard"},
		"no type":      {ShopID: "shop_1"},
		"unknown type": {ShopID: "shop_1", Type: "premium"},
		"bad replaces": {ShopID: "shop_1", Type: "standard", Replaces: "nope"},
	} {
		_, err := c.CreateAccount(t.Context(), r)
		require.ErrorIs(t, err, payments.ErrInvalid, name)
	}
	require.Len(t, rec.Requests(), 3)
}

func TestAccountLinkAndGetAccount(t *testing.T) {
	t.Parallel()
	c, rec := newClient(t, stripe.Config{})

	l, err := c.CreateAccountLink(t.Context(), payments.AccountLinkRequest{
		Account: "acct_1ShopA", RefreshURL: "https://slots.example.com/dashboard/stripe/refresh",
		ReturnURL: "https://slots.example.com/dashboard/stripe/return",
	})
	require.NoError(t, err)
	require.NotEmpty(t, l.URL)
	require.False(t, l.ExpiresAt.IsZero())
	r := rec.Requests()[0]
	require.Equal(t, "/v1/account_links", r.Path)
	require.Equal(t, "acct_1ShopA", r.Form.Get("account"))
	require.Equal(t, "account_onboarding", r.Form.Get("type"))
	require.Equal(t, "https://slots.example.com/dashboard/stripe/refresh", r.Form.Get("refresh_url"))
	require.Equal(t, "https://slots.example.com/dashboard/stripe/return", r.Form.Get("return_url"))
	require.Equal(t, http.StatusOK, r.Status)

	rec.Respond(http.MethodGet, "/v1/accounts/acct_1Ready", http.StatusOK, `{"id":"acct_1Ready","object":"account",`+
		`"charges_enabled":true,"payouts_enabled":false,"details_submitted":true,"requirements":{"currently_due":["external_account"]}}`)
	a, err := c.GetAccount(t.Context(), "acct_1Ready")
	require.NoError(t, err)
	require.Equal(t, payments.Account{ID: "acct_1Ready", ChargesEnabled: true, DetailsSubmitted: true,
		RequirementsDue: []string{"external_account"}}, a)

	for name, req := range map[string]payments.AccountLinkRequest{
		"no account":       {RefreshURL: "https://x.example/r", ReturnURL: "https://x.example/d"},
		"relative refresh": {Account: "acct_1", RefreshURL: "/r", ReturnURL: "https://x.example/d"},
		"no return":        {Account: "acct_1", RefreshURL: "https://x.example/r"},
	} {
		_, err := c.CreateAccountLink(t.Context(), req)
		require.ErrorIs(t, err, payments.ErrInvalid, name)
	}
	_, err = c.GetAccount(t.Context(), "")
	require.ErrorIs(t, err, payments.ErrInvalid)
	require.Len(t, rec.Requests(), 2)
}

// TestParseConnectEvent: a connected account's event names its account; account.updated
// carries the account's state and a deauthorization marks it disconnected.
func TestParseConnectEvent(t *testing.T) {
	t.Parallel()
	now := time.Now()
	secret := "whsec_test_connect"
	parse := func(payload []byte) (payments.Event, error) {
		return stripe.ParseEvent(payload, stripe.SignedTestPayload(payload, secret, now), []string{secret}, 0)
	}

	paid := stripe.OnAccount(stripe.TestEventPayload("evt_c_paid", stripe.EventCheckoutCompleted,
		"bk_1", "cs_1", "pi_1", stripe.PaymentPaid, now), "acct_1ShopA")
	ev, err := parse(paid)
	require.NoError(t, err)
	require.Equal(t, payments.EventPaid, ev.Kind)
	require.Equal(t, "acct_1ShopA", ev.Account)
	require.Equal(t, "bk_1", ev.BookingID)
	require.Nil(t, ev.AccountState)

	platform := stripe.TestEventPayload("evt_p_paid", stripe.EventCheckoutCompleted, "bk_1", "cs_1", "pi_1", stripe.PaymentPaid, now)
	ev, err = parse(platform)
	require.NoError(t, err)
	require.Empty(t, ev.Account, "the platform's own event names no account")

	st := payments.Account{ID: "acct_1ShopA", ChargesEnabled: true, PayoutsEnabled: true, DetailsSubmitted: true,
		RequirementsDue: []string{"individual.verification.document"}}
	ev, err = parse(stripe.TestAccountEventPayload("evt_c_upd", stripe.EventAccountUpdated, st, now))
	require.NoError(t, err)
	require.Equal(t, payments.EventAccountChanged, ev.Kind)
	require.Equal(t, "acct_1ShopA", ev.Account)
	require.Equal(t, &st, ev.AccountState)

	ev, err = parse(stripe.TestAccountEventPayload("evt_c_deauth", stripe.EventAccountDeauthorized, payments.Account{ID: "acct_1ShopB"}, now))
	require.NoError(t, err)
	require.Equal(t, payments.EventAccountChanged, ev.Kind)
	require.Equal(t, &payments.Account{ID: "acct_1ShopB", Disconnected: true}, ev.AccountState)

	// An account.updated about another account than the event's is not Stripe's.
	other := stripe.OnAccount(stripe.TestAccountEventPayload("evt_c_odd", stripe.EventAccountUpdated, st, now), "acct_1ShopB")
	_, err = parse(other)
	require.ErrorIs(t, err, payments.ErrBadPayload)
	// A deauthorization that names no account says nothing.
	_, err = parse(stripe.OnAccount(stripe.TestAccountEventPayload("evt_c_none", stripe.EventAccountDeauthorized, payments.Account{ID: "acct_1"}, now), ""))
	require.ErrorIs(t, err, payments.ErrBadPayload)
}
