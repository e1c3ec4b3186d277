package dashboard_test

import (
	"context"
	"encoding/csv"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/dashboard"
	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/payments/stripe"
	"github.com/slotrecovery/slotrecovery/internal/ratelimit"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/testkit/stripetest"
)

// TestSettingsStripeCard: on a Connect server the settings page says where the shop's
// own Stripe account stands, in plain words, with the button to Stripe's onboarding;
// the button (a POST with the session's CSRF token) creates the account and sends the
// owner to Stripe, and coming back reads the account again. A GET of the onboarding
// (another site's link, or Stripe's refresh_url) and a POST without the token call
// nothing. Without Connect there is no such card.
func TestSettingsStripeCard(t *testing.T) {
	t.Parallel()
	off := newEnv(t, envOpts{})
	body, _ := off.page(t, off.login(t, off.keyA), "/dashboard/settings")
	require.NotContains(t, body, "Stripe payments", "no Stripe card without Connect")

	en := newEnv(t, envOpts{connect: true})
	rec := stripetest.NewRecorder(t, stripetest.Mock(t))
	client, err := stripe.New(stripe.Config{SecretKey: "sk_test_dashboard", APIURL: rec.URL})
	require.NoError(t, err)
	l := ledger.New(en.pool, en.river, client, ledger.Config{Connect: true, PlatformFeeBPS: 250,
		OnboardingReturnURL: "https://slots.example/dashboard/stripe/return", OnboardingRefreshURL: "https://slots.example" + dashboard.StripeOnboardingPath})
	en.dash.RegisterStripe(en.e, l, nil)
	ck := en.login(t, en.keyA)

	body, csrf := en.page(t, ck, "/dashboard/settings")
	require.Contains(t, body, "Stripe payments")
	require.Contains(t, body, "Not connected")
	require.Contains(t, body, "Connect it before your next opening with card payment")
	require.Contains(t, body, `action="`+dashboard.StripeOnboardingPath+`"`)
	require.Contains(t, body, ">Connect Stripe<")
	require.Contains(t, body, "The platform keeps 2.5% of each payment")
	button := url.Values{"csrf": {csrf}}
	noStripeCalls := func(msg string) {
		t.Helper()
		require.Zero(t, rec.Count(http.MethodPost, "/v1/accounts"), msg)
		require.Zero(t, rec.Count(http.MethodPost, "/v1/account_links"), msg)
	}

	// Signed out: the sign-in form, and no account is made.
	out := en.post(dashboard.StripeOnboardingPath, button)
	require.Equal(t, http.StatusSeeOther, out.Code)
	require.Equal(t, "/dashboard/login", out.Header().Get("Location"))
	noStripeCalls("signed out")
	// A GET (a link on another site, Stripe's refresh_url): the settings page, nothing made.
	r := en.get(dashboard.StripeOnboardingPath, ck)
	require.Equal(t, http.StatusSeeOther, r.Code, r.Body.String())
	require.Equal(t, "/dashboard/settings?notice=stripe_expired#stripe", r.Header().Get("Location"))
	noStripeCalls("a GET calls nothing")
	body, _ = en.page(t, ck, "/dashboard/settings?notice=stripe_expired")
	require.Contains(t, body, "Your link to Stripe expired or was used")
	// A POST without the session's token (another site's form): refused.
	r = en.post(dashboard.StripeOnboardingPath, url.Values{}, ck)
	require.Equal(t, http.StatusForbidden, r.Code)
	noStripeCalls("a POST without the CSRF token calls nothing")

	// The button: the account is made and the owner goes to Stripe.
	r = en.post(dashboard.StripeOnboardingPath, button, ck)
	require.Equal(t, http.StatusSeeOther, r.Code, r.Body.String())
	require.True(t, strings.HasPrefix(r.Header().Get("Location"), "https://"), r.Header().Get("Location"))
	require.Contains(t, r.Header().Get("Content-Security-Policy"), "form-action 'self' https://connect.stripe.com",
		"the form's redirect to Stripe is allowed")
	require.Equal(t, 1, rec.Count(http.MethodPost, "/v1/accounts"))
	r = en.post(dashboard.StripeOnboardingPath, button, ck) // pressed again: a new link, the same account
	require.Equal(t, http.StatusSeeOther, r.Code)
	require.Equal(t, 1, rec.Count(http.MethodPost, "/v1/accounts"))
	require.Equal(t, 2, rec.Count(http.MethodPost, "/v1/account_links"))

	shop, err := en.shops.Get(context.Background(), en.shopA.ID)
	require.NoError(t, err)
	body, _ = en.page(t, ck, "/dashboard/settings")
	require.Contains(t, body, "Set-up not finished: Stripe cannot take payments for you yet")
	require.Contains(t, body, "Stripe still needs: ")
	require.Contains(t, body, "external account")
	require.Contains(t, body, ">Finish Stripe setup<")

	// Back from Stripe, finished: the account is read back and shown.
	rec.Respond(http.MethodGet, "/v1/accounts/"+shop.Stripe.ID, http.StatusOK, `{"id":"`+shop.Stripe.ID+`","object":"account",`+
		`"charges_enabled":true,"payouts_enabled":true,"details_submitted":true,"requirements":{"currently_due":[]}}`)
	r = en.get(dashboard.StripeReturnPath, ck)
	require.Equal(t, http.StatusSeeOther, r.Code)
	require.Equal(t, "/dashboard/settings?notice=stripe#stripe", r.Header().Get("Location"))
	body, _ = en.page(t, ck, "/dashboard/settings?notice=stripe")
	require.Contains(t, body, "Back from Stripe")
	require.Contains(t, body, "Connected: taking payments and paying out to your bank")
	require.Contains(t, body, ">Update Stripe details<")

	// Stripe down on the way back: the page still comes, saying the status may lag.
	rec.FailNext(1, http.StatusInternalServerError)
	r = en.get(dashboard.StripeReturnPath, ck)
	require.Equal(t, "/dashboard/settings?notice=stripe_lagging#stripe", r.Header().Get("Location"))
	// Stripe down on the way there: the settings page says so, 503.
	rec.FailNext(1, http.StatusInternalServerError)
	r = en.post(dashboard.StripeOnboardingPath, button, ck)
	require.Equal(t, http.StatusServiceUnavailable, r.Code)
	require.Contains(t, r.Body.String(), "Stripe did not answer just now")
}

// TestStripeActionsLimitedPerShop: the dashboard's actions that call Stripe (the
// onboarding button, the return page's read-back) draw on the shop's limit, counted in
// Redis (ratelimit): past it the button answers 429 with the wait and calls nothing, and
// the return page shows the settings without reading the account (it may lag); while
// the limit cannot be asked, nothing is called either.
func TestStripeActionsLimitedPerShop(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{connect: true})
	rec := stripetest.NewRecorder(t, stripetest.Mock(t))
	client, err := stripe.New(stripe.Config{SecretKey: "sk_test_dashboard", APIURL: rec.URL})
	require.NoError(t, err)
	l := ledger.New(en.pool, en.river, client, ledger.Config{Connect: true,
		OnboardingReturnURL: "https://slots.example/dashboard/stripe/return", OnboardingRefreshURL: "https://slots.example" + dashboard.StripeOnboardingPath})
	limits := ratelimit.New(en.redis, ratelimit.Config{Prefix: en.prefix})
	limit := ratelimit.Limit{Burst: 2, Every: time.Hour}
	var broken atomic.Bool
	en.dash.RegisterStripe(en.e, l, func(ctx context.Context, shopID uuid.UUID) (ratelimit.Result, error) {
		if broken.Load() {
			return ratelimit.Result{}, ratelimit.ErrUnavailable
		}
		return limits.Allow(ctx, "stripe_calls:shop:"+shopID.String(), limit)
	})
	ck := en.login(t, en.keyA)
	_, csrf := en.page(t, ck, "/dashboard/settings")
	button := url.Values{"csrf": {csrf}}

	require.Equal(t, http.StatusSeeOther, en.post(dashboard.StripeOnboardingPath, button, ck).Code)
	r := en.get(dashboard.StripeReturnPath, ck)
	require.Equal(t, "/dashboard/settings?notice=stripe#stripe", r.Header().Get("Location"))
	reads := rec.Count(http.MethodGet, "/v1/accounts/")
	links := rec.Count(http.MethodPost, "/v1/account_links")

	r = en.post(dashboard.StripeOnboardingPath, button, ck)
	require.Equal(t, http.StatusTooManyRequests, r.Code, "the shop's third call to Stripe within the hour")
	require.NotEmpty(t, r.Header().Get("Retry-After"))
	require.Contains(t, r.Body.String(), "Too many requests to Stripe for this shop")
	r = en.get(dashboard.StripeReturnPath, ck)
	require.Equal(t, "/dashboard/settings?notice=stripe_lagging#stripe", r.Header().Get("Location"))
	require.Equal(t, links, rec.Count(http.MethodPost, "/v1/account_links"), "no link past the limit")
	require.Equal(t, reads, rec.Count(http.MethodGet, "/v1/accounts/"), "no read-back past the limit")

	// Another shop has its own limit.
	ckB := en.login(t, en.keyB)
	require.Equal(t, http.StatusSeeOther, en.post(dashboard.StripeOnboardingPath, url.Values{"csrf": {csrfOf(t, en, ckB)}}, ckB).Code)

	// The limit cannot be asked: nothing is called, the page says to wait.
	broken.Store(true)
	r = en.post(dashboard.StripeOnboardingPath, url.Values{"csrf": {csrfOf(t, en, ckB)}}, ckB)
	require.Equal(t, http.StatusServiceUnavailable, r.Code)
	require.Equal(t, links+1, rec.Count(http.MethodPost, "/v1/account_links"))
}

func csrfOf(t *testing.T, en *env, ck *http.Cookie) string {
	t.Helper()
	_, csrf := en.page(t, ck, "/dashboard/settings")
	return csrf
}

// TestMoneyAfterPlatformFees: where the platform kept a fee (Stripe Connect), the
// dashboard shows each booking's gross, the fee and what the shop received; its totals
// and weekly chart count what the shop received; the CSV export has both.
func TestMoneyAfterPlatformFees(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday, connect: true})
	c := en.addCustomer(t, en.shopA, "+15555550123", "Ana")
	ny := en.shopA.Location
	op := insertOpening(t, en.pool, en.shopA.ID, time.Date(2026, 11, 20, 15, 0, 0, 0, ny), wednesday, "Cut", 4500, slots.StatusOpen)
	b := book(t, en.pool, op, c.ID, ledger.BookingConfirmed, 4500, wednesday)
	withFee(t, en, b, "acct_1ShopA", 113)
	op2 := insertOpening(t, en.pool, en.shopA.ID, time.Date(2026, 11, 21, 15, 0, 0, 0, ny), wednesday, "Colour", 2000, slots.StatusOpen)
	book(t, en.pool, op2, en.addCustomer(t, en.shopA, "+15555550124", "Ben").ID, ledger.BookingConfirmed, 2000, wednesday)
	ck := en.login(t, en.keyA)

	body, _ := en.page(t, ck, "/dashboard")
	require.Contains(t, body, "$45.00")
	require.Contains(t, body, "fee $1.13 · you get $43.87")
	require.Contains(t, body, "$63.87", "this week's money is what the shop received: 43.87 + 20.00")
	require.Contains(t, body, "received, after $1.13 in platform fees")

	r := en.get("/dashboard/export.csv?from=2026-11-01&to=2026-11-30", ck)
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	rows, err := csv.NewReader(strings.NewReader(r.Body.String())).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 3)
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	require.Equal(t, []string{"45.00", "1.13", "43.87"}, []string{rows[1][col["amount"]], rows[1][col["platform_fee"]], rows[1][col["net_amount"]]})
	require.Equal(t, []string{"20.00", "0.00", "20.00"}, []string{rows[2][col["amount"]], rows[2][col["platform_fee"]], rows[2][col["net_amount"]]})
}

// withFee records that booking b was paid on a connected account with a fee, as the
// ledger stores it with the payment link.
func withFee(t *testing.T, en *env, b uuid.UUID, account string, fee int64) {
	t.Helper()
	_, err := en.pool.Exec(context.Background(), `UPDATE bookings SET stripe_account = $2, application_fee_cents = $3 WHERE id = $1`, b, account, fee)
	require.NoError(t, err)
}

// TestDeclareWithoutAReadyStripeAccount: on a Connect server, a checkout shop whose own
// Stripe account cannot take payments sees a banner saying so, with the way to its
// settings; declaring an opening then answers 409 with the reason above the form (not
// an error page), and declares nothing. A shop without payments sees no banner.
func TestDeclareWithoutAReadyStripeAccount(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday, connect: true})
	ck := en.login(t, en.keyA)
	body, csrf := en.page(t, ck, "/dashboard")
	require.Contains(t, body, "Connect Stripe before your next opening with card payment")
	require.Contains(t, body, `href="/dashboard/settings#stripe"`)

	rec := en.post("/dashboard/openings", declareForm("2026-11-20", "15:00", "30", "Cut", "30.00", csrf), ck)
	require.Equal(t, http.StatusConflict, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), "none is connected yet")
	require.NotContains(t, rec.Body.String(), "Something went wrong")
	require.Zero(t, countOpenings(t, en.pool, en.shopA.ID))

	// Disconnected later: the banner says what became of the open slots.
	_, err := en.pool.Exec(context.Background(), `UPDATE shops SET stripe_account_id = 'acct_1Gone', stripe_disconnected_at = now() WHERE id = $1`, en.shopA.ID)
	require.NoError(t, err)
	body, _ = en.page(t, ck, "/dashboard")
	require.Contains(t, body, "Your Stripe account was disconnected from this service")

	body, _ = en.page(t, en.login(t, en.keyB), "/dashboard")
	require.NotContains(t, body, "Connect Stripe before", "a shop without payments needs no Stripe account")
	off := newEnv(t, envOpts{now: wednesday})
	body, _ = off.page(t, off.login(t, off.keyA), "/dashboard")
	require.NotContains(t, body, "Connect Stripe before", "without Connect the platform's account takes the payments")
}
