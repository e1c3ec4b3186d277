package ledger_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/payments"
	"github.com/slotrecovery/slotrecovery/internal/payments/stripe"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/testkit/stripetest"
)

func (f *fakeCheckouts) requests() []payments.CheckoutRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]payments.CheckoutRequest(nil), f.calls...)
}

// reload reads the world's shop again, as the API would for its next request.
func (w *world) reload() {
	w.t.Helper()
	var err error
	w.shop, err = w.shops.Get(context.Background(), w.shop.ID)
	require.NoError(w.t, err)
}

// declare declares an opening for the world's shop as it is now.
func (w *world) declare() (slots.Opening, error) {
	return w.svc.Declare(context.Background(), w.shop, slots.NewOpening{
		StartsAt: w.start.Add(3 * time.Hour), DurationMinutes: 30, Service: "Cut", PriceCents: 1000})
}

func requireNotReady(t *testing.T, err error, words string) {
	t.Helper()
	p, ok := problem.As(err)
	require.True(t, ok, "a problem, not %v", err)
	require.Equal(t, problem.Conflict, p.Kind)
	require.Equal(t, shops.ErrStripeAccountNotReady, p.Code)
	require.Contains(t, p.Message, words)
	require.Contains(t, p.Message, "POST /api/shop/stripe/onboarding", "the message says what to do")
}

// accountEvent is a connected account's event, as it arrives at the Connect endpoint.
func accountEvent(id string, st payments.Account, created time.Time) payments.Event {
	return payments.Event{ID: id, Kind: payments.EventAccountChanged, Type: "test.account", Created: created,
		Account: st.ID, Connect: true, AccountState: &st, Payload: []byte(`{"id":"` + id + `"}`)}
}

// TestConnectLifecycle follows one checkout shop on a Connect server: it cannot declare
// a checkout opening before it connects; onboarding creates its account; the account's
// events keep its state (an older one arriving late changes nothing); once charges are
// enabled its bookings are charged on its account with the platform's fee (the admin's
// for the shop when set); a disconnection stops new checkout openings while a hold made
// before runs its course on the old account; onboarding again makes a new account.
func TestConnectLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, worldOpts{connect: true, payments: ledger.Config{PlatformFeeBPS: 250,
		OnboardingReturnURL: "https://slots.example/dashboard/settings", OnboardingRefreshURL: "https://slots.example/dashboard/stripe/refresh"}})
	require.True(t, w.shop.Stripe.Required)

	_, err := w.declare()
	requireNotReady(t, err, "none is connected yet")

	link, err := w.pay.Onboard(ctx, w.shop.ID)
	require.NoError(t, err)
	require.NotEmpty(t, link.URL)
	w.reload()
	acct := w.shop.Stripe.ID
	require.NotEmpty(t, acct)
	require.False(t, w.shop.Stripe.ChargesEnabled)
	require.Equal(t, []string{"external_account"}, w.shop.Stripe.RequirementsDue)
	_, err = w.declare()
	requireNotReady(t, err, "Stripe still needs: external_account")

	// Onboarding again reuses the account.
	_, err = w.pay.Onboard(ctx, w.shop.ID)
	require.NoError(t, err)
	require.Len(t, w.stripe.accountRequests(), 1)
	require.Equal(t, payments.AccountRequest{ShopID: w.shop.ID.String(), Type: "standard"}, w.stripe.accountRequests()[0])

	t0 := w.start.Add(time.Minute)
	ready := payments.Account{ID: acct, ChargesEnabled: true, PayoutsEnabled: true, DetailsSubmitted: true}
	require.Equal(t, ledger.ResultAccountUpdated, w.handle(accountEvent("evt_ready", ready, t0)).Result)
	stale := payments.Account{ID: acct, RequirementsDue: []string{"external_account"}}
	require.Equal(t, ledger.ResultAccountIgnored, w.handle(accountEvent("evt_stale", stale, t0.Add(-time.Second))).Result,
		"an older state arriving late changes nothing")
	require.True(t, w.handle(accountEvent("evt_ready", ready, t0)).Replayed)
	w.reload()
	require.True(t, w.shop.Stripe.Ready())
	require.Empty(t, w.shop.Stripe.RequirementsDue)

	// Charged on the shop's account, with the server's fee; then the admin's for the shop.
	op, err := w.declare()
	require.NoError(t, err)
	first, _ := w.claim(op.ID, 1)
	fee := 50
	_, err = w.shops.SetPlatformFee(ctx, w.shop.ID, &fee)
	require.NoError(t, err)
	w.reload()
	op2, err := w.declare()
	require.NoError(t, err)
	second, _ := w.claim(op2.ID, 1)
	reqs := w.co.requests()
	require.Len(t, reqs, 2)
	require.Equal(t, acct, reqs[0].Account)
	require.Equal(t, 250, reqs[0].FeeBPS)
	require.Equal(t, acct, reqs[1].Account)
	require.Equal(t, 50, reqs[1].FeeBPS)
	require.Equal(t, acct, w.query(`SELECT stripe_account FROM bookings WHERE id = $1`, first.BookingID))
	require.Equal(t, "25", w.query(`SELECT application_fee_cents::text FROM bookings WHERE id = $1`, first.BookingID), "2.5% of 1000")
	require.Equal(t, "5", w.query(`SELECT application_fee_cents::text FROM bookings WHERE id = $1`, second.BookingID), "0.5% of 1000")

	// Turning charges off stops new checkout openings at once.
	require.Equal(t, ledger.ResultAccountUpdated, w.handle(accountEvent("evt_off", payments.Account{ID: acct, DetailsSubmitted: true,
		RequirementsDue: []string{"individual.verification.document"}}, t0.Add(time.Minute))).Result)
	w.reload()
	_, err = w.declare()
	requireNotReady(t, err, "individual.verification.document")
	require.Equal(t, ledger.ResultAccountUpdated, w.handle(accountEvent("evt_on", ready, t0.Add(2*time.Minute))).Result)

	// Disconnected: no new checkout openings; the hold made before runs its course on
	// the old account, whose payment confirms it.
	gone := accountEvent("evt_deauth", payments.Account{ID: acct, Disconnected: true}, t0.Add(3*time.Minute))
	require.Equal(t, ledger.ResultAccountDisconnected, w.handle(gone).Result)
	require.Equal(t, ledger.ResultAccountIgnored, w.handle(accountEvent("evt_after", ready, t0.Add(4*time.Minute))).Result,
		"a disconnected account's state is not taken back")
	w.reload()
	require.NotNil(t, w.shop.Stripe.DisconnectedAt)
	require.False(t, w.shop.Stripe.Ready())
	_, err = w.declare()
	requireNotReady(t, err, "disconnected")
	paid := from(w.event("evt_first_paid", payments.EventPaid, first.BookingID, "pi_first"), acct)
	require.Equal(t, ledger.ResultConfirmed, w.handle(paid).Result)

	// Connecting again makes a new account, under a key of its own.
	_, err = w.pay.Onboard(ctx, w.shop.ID)
	require.NoError(t, err)
	w.reload()
	require.NotEqual(t, acct, w.shop.Stripe.ID)
	require.Nil(t, w.shop.Stripe.DisconnectedAt)
	require.Equal(t, acct, w.stripe.accountRequests()[1].Replaces)

	// The admin returns the shop to the default.
	shop, err := w.shops.SetPlatformFee(ctx, w.shop.ID, nil)
	require.NoError(t, err)
	require.Nil(t, shop.PlatformFeeBPS)
	require.Equal(t, 250, shop.FeeBPS(250))
	for _, bad := range []int{-1, 5001} {
		_, err = w.shops.SetPlatformFee(ctx, w.shop.ID, &bad)
		p, ok := problem.As(err)
		require.True(t, ok)
		require.Equal(t, problem.Invalid, p.Kind, "%d bps", bad)
	}
}

// TestConnectOffIsToday: without Connect a shop needs no account, its checkouts are the
// platform's with no fee, and onboarding says there is nothing to connect.
func TestConnectOffIsToday(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{payments: ledger.Config{PlatformFeeBPS: 250}})
	require.False(t, w.shop.Stripe.Required)
	op, err := w.declare()
	require.NoError(t, err)
	claim, _ := w.claim(op.ID, 1)
	reqs := w.co.requests()
	require.Len(t, reqs, 1)
	require.Empty(t, reqs[0].Account)
	require.Zero(t, reqs[0].FeeBPS)
	require.Equal(t, "", w.query(`SELECT COALESCE(stripe_account, '') FROM bookings WHERE id = $1`, claim.BookingID))
	_, err = w.pay.Onboard(context.Background(), w.shop.ID)
	require.ErrorIs(t, err, ledger.ErrConnectOff)
}

// TestConcurrentOnboardingCreatesOneAccount: many requests onboarding one shop at once,
// through stripe-mock (which keys nothing by idempotency): one account is created, every
// answer is a link for it, and the shop holds it.
func TestConcurrentOnboardingCreatesOneAccount(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{connect: true})
	rec := stripetest.NewRecorder(t, stripetest.Mock(t))
	client, err := stripe.New(stripe.Config{SecretKey: "sk_test_onboarding", APIURL: rec.URL})
	require.NoError(t, err)
	svc := ledger.New(w.pool, w.queue, client, ledger.Config{Connect: true, ConnectAccountType: "express",
		OnboardingReturnURL: "https://slots.example/dashboard/settings", OnboardingRefreshURL: "https://slots.example/dashboard/stripe/refresh"})

	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := svc.Onboard(context.Background(), w.shop.ID)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, 1, rec.Count(http.MethodPost, "/v1/accounts"), "one account for the shop")
	require.Equal(t, n, rec.Count(http.MethodPost, "/v1/account_links"), "a fresh link for every call")
	w.reload()
	acct := w.shop.Stripe.ID
	require.NotEmpty(t, acct)
	for _, r := range rec.Requests() {
		switch r.Path {
		case "/v1/accounts":
			require.Equal(t, "express", r.Form.Get("type"))
			require.Equal(t, "connect_account:"+w.shop.ID.String(), r.IdempotencyKey)
		case "/v1/account_links":
			require.Equal(t, acct, r.Form.Get("account"), "every link is for the one account")
			require.Equal(t, "account_onboarding", r.Form.Get("type"))
			require.Equal(t, "https://slots.example/dashboard/stripe/refresh", r.Form.Get("refresh_url"))
		}
		require.Equal(t, http.StatusOK, r.Status)
	}

	// The owner back from the onboarding: the account is read back and its state stored.
	rec.Respond(http.MethodGet, "/v1/accounts/"+acct, http.StatusOK, `{"id":"`+acct+`","object":"account",`+
		`"charges_enabled":true,"payouts_enabled":true,"details_submitted":true,"requirements":{"currently_due":[]}}`)
	require.NoError(t, svc.RefreshAccount(context.Background(), w.shop.ID))
	w.reload()
	require.True(t, w.shop.Stripe.Ready())

	// Stripe down: the owner is told to try again, without Stripe's own words.
	other, _, err := w.shops.Create(context.Background(), shops.NewShop{Name: "Other", Timezone: "UTC",
		SMSNumber: "+15550002001", Currency: "usd", PaymentMode: shops.PaymentCheckout})
	require.NoError(t, err)
	rec.FailNext(1, http.StatusInternalServerError)
	_, err = svc.Onboard(context.Background(), other.ID)
	p, ok := problem.As(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, problem.Unavailable, p.Kind)
	require.NotContains(t, p.Message, "stripetest")
	stored, err := w.shops.Get(context.Background(), other.ID)
	require.NoError(t, err)
	require.Empty(t, stored.Stripe.ID, "nothing stored")
}
