package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/config"
	"github.com/slotrecovery/slotrecovery/internal/payments"
	"github.com/slotrecovery/slotrecovery/internal/payments/stripe"
	"github.com/slotrecovery/slotrecovery/internal/shopapi"
	"github.com/slotrecovery/slotrecovery/internal/testkit/stripetest"
	"github.com/slotrecovery/slotrecovery/internal/webhooks"
)

// connectSecret signs the Connect endpoint's events in these tests.
const connectSecret = "whsec_test_connect_secret"

// connectVars runs a server with STRIPE_CONNECT=on and a 2.5% default fee.
var connectVars = map[string]string{
	"STRIPE_CONNECT": "on", "STRIPE_CONNECT_WEBHOOK_SECRET": connectSecret, "PLATFORM_FEE_BPS": "250",
}

// postEvent posts a signed event body to path (the platform's or the Connect endpoint),
// off the test's goroutine too.
func (e *env) postEvent(base, path string, payload []byte, secret string) (stripeReply, error) {
	req, err := http.NewRequest(http.MethodPost, base+path, strings.NewReader(string(payload)))
	if err != nil {
		return stripeReply{}, err
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("Stripe-Signature", stripe.SignedTestPayload(payload, secret, time.Now()))
	res, err := e.client.Do(req)
	if err != nil {
		return stripeReply{}, err
	}
	defer res.Body.Close()
	var a webhooks.StripeAnswer
	r := stripeReply{Status: res.StatusCode}
	if res.StatusCode == http.StatusOK {
		if err := json.NewDecoder(res.Body).Decode(&a); err != nil {
			return r, err
		}
		r.Result, r.Replayed = a.Result, a.Replayed
	}
	return r, nil
}

// connectEvent sends ev as account's event to the Connect endpoint, signed with the
// Connect secret, as Stripe would.
func (e *env) connectEvent(base string, ev event, account string) stripeReply {
	e.t.Helper()
	r, err := e.postEvent(base, webhooks.StripeConnectPath, stripe.OnAccount(ev.payload(), account), connectSecret)
	require.NoError(e.t, err)
	require.Equal(e.t, http.StatusOK, r.Status, "%+v", r)
	return r
}

// accountUpdated sends account.updated for st to the Connect endpoint.
func (e *env) accountUpdated(base string, st payments.Account) stripeReply {
	e.t.Helper()
	r, err := e.postEvent(base, webhooks.StripeConnectPath,
		stripe.TestAccountEventPayload(evtID(), stripe.EventAccountUpdated, st, time.Now()), connectSecret)
	require.NoError(e.t, err)
	require.Equal(e.t, http.StatusOK, r.Status, "%+v", r)
	return r
}

// connectShop is a checkout shop of a Connect test, with its account.
type connectShop struct {
	shopInfo
	account  string
	currency string
	fee      int64 // the application fee on one of its openings' price
	openings []string
}

// newConnectShop creates a checkout shop in currency, onboards it through the API and
// has Stripe enable its charges (account.updated on the Connect endpoint).
func (e *env) newConnectShop(base, currency string) connectShop {
	e.t.Helper()
	number := fmt.Sprintf("+1555%07d", 1000000+shopNumbers.Add(1)+time.Now().UnixNano()%1000000)
	var s shopInfo
	require.Equal(e.t, http.StatusCreated, e.api(base, http.MethodPost, "/api/shops", adminToken, map[string]any{
		"name": "Connected " + strings.ToUpper(currency), "timezone": "America/New_York", "sms_number": number, "currency": currency,
		"payment_mode": "checkout", "offer_policy": map[string]any{"wave_size": 1000, "wave_interval_seconds": 3600,
			"min_lead_minutes": 30, "cooldown_seconds": 86400, "send_rate_per_second": 1000},
	}, &s))

	// Not connected yet: no checkout opening.
	var refused struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	require.Equal(e.t, http.StatusConflict, e.api(base, http.MethodPost, "/api/openings", s.APIKey, map[string]any{
		"starts_at": time.Now().Add(3 * time.Hour).UTC().Format(time.RFC3339), "duration_minutes": 30, "service": "Cut", "price_cents": 4500,
	}, &refused))
	require.Equal(e.t, "stripe_account_not_ready", refused.Error.Code)
	require.Contains(e.t, refused.Error.Message, "POST /api/shop/stripe/onboarding")

	var link struct {
		URL       string    `json:"url"`
		ExpiresAt time.Time `json:"expires_at"`
	}
	require.Equal(e.t, http.StatusOK, e.api(base, http.MethodPost, shopapi.StripeOnboardingPath, s.APIKey, nil, &link))
	require.NotEmpty(e.t, link.URL)
	var shop struct {
		Stripe struct {
			AccountID string `json:"account_id"`
			Ready     bool   `json:"ready"`
		} `json:"stripe"`
	}
	require.Equal(e.t, http.StatusOK, e.api(base, http.MethodGet, "/api/shop", s.APIKey, nil, &shop))
	require.True(e.t, strings.HasPrefix(shop.Stripe.AccountID, "acct_"), "%+v", shop)
	require.False(e.t, shop.Stripe.Ready)
	require.Equal(e.t, "account_updated", e.accountUpdated(base, payments.Account{ID: shop.Stripe.AccountID,
		ChargesEnabled: true, PayoutsEnabled: true, DetailsSubmitted: true}).Result)
	return connectShop{shopInfo: s, account: shop.Stripe.AccountID, currency: currency}
}

func (e *env) declare(base string, s *connectShop, startsIn time.Duration) {
	e.t.Helper()
	var o openingInfo
	require.Equal(e.t, http.StatusCreated, e.api(base, http.MethodPost, "/api/openings", s.APIKey, map[string]any{
		"starts_at":        time.Now().Add(startsIn).UTC().Truncate(time.Second).Format(time.RFC3339),
		"duration_minutes": 30, "service": "Haircut", "price_cents": 4500,
	}, &o))
	s.openings = append(s.openings, o.ID)
}

// TestConnectTwoShopsStorm: two shops on two connected accounts, one charging in dollars
// with the admin's 1% fee, one in yen (zero-decimal) with the default 2.5%. Interleaved
// YES storms on two instances book their openings; every Checkout create, expiry,
// read-back and refund for a shop carries that shop's account, and every create the
// shop's fee (the recorder sees what stripe-mock ignores). A Connect event signed with
// the Connect secret confirms the right booking; the same event naming the other shop's
// account changes nothing. account.updated turning charges off makes the shop's next
// checkout opening a 409.
func TestConnectTwoShopsStorm(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	bases := []string{e.start(connectVars, fastTune), e.start(connectVars, fastTune)}
	base := bases[0]

	usd, jpy := e.newConnectShop(base, "usd"), e.newConnectShop(bases[1], "jpy")
	require.NotEqual(t, usd.account, jpy.account)
	var patched map[string]any
	require.Equal(t, http.StatusOK, e.api(base, http.MethodPatch, "/api/shops/"+usd.ID, adminToken, map[string]any{"platform_fee_bps": 100}, &patched))
	usd.fee = 45  // 1% of $45.00
	jpy.fee = 113 // 2.5% of ¥4,500 = 112.5, half up
	shops := []*connectShop{&usd, &jpy}

	const perShop = 30
	phones := map[string][]string{}
	for i, s := range shops {
		phones[s.ID] = e.bulkCustomers(s.shopInfo, perShop, 5000+1000*i)
		e.declare(bases[i], s, 3*time.Hour)
		e.declare(bases[1-i], s, 4*time.Hour)
	}
	for _, s := range shops {
		for _, op := range s.openings {
			e.waveDone(op, 1, 1)
		}
	}

	// The storm: every customer of both shops says YES at once, alternating shops and
	// instances.
	type yes struct{ shop, phone, to string }
	var storm []yes
	for i := range perShop {
		for _, s := range shops {
			storm = append(storm, yes{s.ID, phones[s.ID][i], s.SMSNumber})
		}
	}
	var mu sync.Mutex
	booked := map[string]int{}
	var wg sync.WaitGroup
	for i, y := range storm {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := e.text(bases[i%2], y.phone, y.to, "YES")
			mu.Lock()
			defer mu.Unlock()
			if a.Outcome == "booked" {
				booked[y.shop]++
			}
		}()
	}
	wg.Wait()
	for _, s := range shops {
		require.Equal(t, 2, booked[s.ID], "shop %s: one booking per opening", s.currency)
	}

	// Each shop's bookings, by opening; their links are stored.
	bookingsOf := map[string][]openingInfo{}
	shopOfBooking := map[string]*connectShop{}
	for _, s := range shops {
		for _, id := range s.openings {
			var o openingInfo
			e.eventually("link stored", func() bool {
				o = e.opening(base, s.shopInfo, id)
				return o.Booking != nil && o.Booking.SessionID != ""
			})
			bookingsOf[s.ID] = append(bookingsOf[s.ID], o)
			shopOfBooking[o.Booking.ID] = s
			require.Equal(t, s.account, e.str(`SELECT stripe_account FROM bookings WHERE id = $1`, o.Booking.ID))
			require.Equal(t, fmt.Sprint(s.fee), e.str(`SELECT application_fee_cents::text FROM bookings WHERE id = $1`, o.Booking.ID))
		}
	}

	// The Connect endpoint refuses the platform's secret, and the platform's endpoint a
	// connected account's event.
	first := bookingsOf[usd.ID][0].Booking
	paid := event{id: evtID(), typ: stripe.EventCheckoutCompleted, booking: first.ID, session: first.SessionID, intent: "pi_usd_1"}
	r, err := e.postEvent(base, webhooks.StripeConnectPath, stripe.OnAccount(paid.payload(), usd.account), webhookSecret)
	require.NoError(t, err)
	require.Equal(t, http.StatusBadRequest, r.Status)
	r, err = e.postEvent(base, webhooks.StripePath, stripe.OnAccount(paid.payload(), usd.account), webhookSecret)
	require.NoError(t, err)
	require.Equal(t, "ignored_wrong_account", r.Result, "a connected account's event on the platform's endpoint acts on nothing")

	for _, s := range shops {
		other := shops[0]
		if s == other {
			other = shops[1]
		}
		b1, b2 := bookingsOf[s.ID][0], bookingsOf[s.ID][1]

		// A payment naming this shop's booking, from the other shop's account (its own
		// checkout, with this booking's id in the metadata): nothing changes.
		forged := event{id: evtID(), typ: stripe.EventCheckoutCompleted, booking: b1.Booking.ID, session: b1.Booking.SessionID, intent: "pi_forged_" + s.currency}
		require.Equal(t, "ignored_wrong_account", e.connectEvent(bases[1], forged, other.account).Result)
		require.Equal(t, "pending_payment", bookingStatus(e, b1.Booking.ID))
		// The same payment from the shop's own account confirms it.
		forged.id = evtID()
		require.Equal(t, "confirmed", e.connectEvent(base, forged, s.account).Result)
		require.Equal(t, "confirmed", bookingStatus(e, b1.Booking.ID))

		// A declined card on the second booking: its checkout is ended on the shop's
		// account (Stripe says it is not open: it is read back there, expired).
		sess := "/v1/checkout/sessions/" + b2.Booking.SessionID
		e.stripe.Respond(http.MethodPost, sess+"/expire", http.StatusBadRequest,
			stripetest.ErrorBody("invalid_request_error", "", "Only Checkout Sessions with a status in [\"open\"] can be expired."))
		e.stripe.Respond(http.MethodGet, sess, http.StatusOK, sessionJSON(b2.Booking.SessionID, "expired", "unpaid", b2.Booking.ID, ""))
		declined := event{id: evtID(), typ: stripe.EventPaymentFailed, booking: b2.Booking.ID, intent: "pi_declined_" + s.currency}
		require.Equal(t, "reopened", e.connectEvent(bases[1], declined, s.account).Result)

		// The slot is cancelled; the late payment comes anyway and is refunded, with the
		// platform's fee, on the shop's account.
		require.Equal(t, http.StatusOK, e.api(base, http.MethodPost, "/api/openings/"+b2.ID+"/cancel", s.APIKey, nil, nil))
		late := event{id: evtID(), typ: stripe.EventCheckoutCompleted, booking: b2.Booking.ID, session: b2.Booking.SessionID, intent: "pi_late_" + s.currency}
		require.Equal(t, "refunded", e.connectEvent(base, late, s.account).Result)
	}
	e.settle("booking_refund")

	// Every request about a shop's checkouts went to that shop's account, every create
	// with its fee.
	summary := map[string]map[string]int{}
	for _, q := range e.stripe.Requests() {
		var s *connectShop
		switch {
		case q.Path == "/v1/checkout/sessions" || q.Path == "/v1/refunds":
			s = shopOfBooking[q.Form.Get("metadata[booking_id]")]
		case strings.HasPrefix(q.Path, "/v1/checkout/sessions/"):
			id := strings.TrimSuffix(strings.TrimPrefix(q.Path, "/v1/checkout/sessions/"), "/expire")
			for b, bs := range shopOfBooking {
				if e.str(`SELECT stripe_checkout_session_id FROM bookings WHERE id = $1`, b) == id {
					s = bs
				}
			}
		default:
			continue // accounts and account links: the platform's own
		}
		require.NotNil(t, s, "%s %s names no booking of the test", q.Method, q.Path)
		require.Equal(t, s.account, q.Account, "%s %s for the %s shop", q.Method, q.Path, s.currency)
		var kind string
		switch {
		case q.Method == http.MethodPost && q.Path == "/v1/checkout/sessions":
			fee, ok := q.ApplicationFee()
			require.True(t, ok)
			require.Equal(t, s.fee, fee, "the %s shop's fee", s.currency)
			require.True(t, strings.HasSuffix(q.IdempotencyKey, ":"+s.account), q.IdempotencyKey)
			kind = fmt.Sprintf("POST /v1/checkout/sessions fee=%d", fee)
		case q.Path == "/v1/refunds":
			require.True(t, q.RefundsApplicationFee(), "a refund gives the fee back")
			require.True(t, strings.HasSuffix(q.IdempotencyKey, ":"+s.account), q.IdempotencyKey)
			kind = "POST /v1/refunds refund_application_fee=true"
		case strings.HasSuffix(q.Path, "/expire"):
			kind = "POST /v1/checkout/sessions/{id}/expire"
		default:
			kind = q.Method + " /v1/checkout/sessions/{id}"
		}
		if summary[s.currency+" "+q.Account] == nil {
			summary[s.currency+" "+q.Account] = map[string]int{}
		}
		summary[s.currency+" "+q.Account][kind]++
	}
	var lines []string
	for who, kinds := range summary {
		for k, n := range kinds {
			lines = append(lines, fmt.Sprintf("%s: %s ×%d", who, k, n))
		}
	}
	sort.Strings(lines)
	t.Logf("Stripe requests of the storm, by shop and account:\n  %s", strings.Join(lines, "\n  "))
	for _, s := range shops {
		kinds := summary[s.currency+" "+s.account]
		require.GreaterOrEqual(t, kinds[fmt.Sprintf("POST /v1/checkout/sessions fee=%d", s.fee)], 2, "%v", kinds)
		require.Equal(t, 1, kinds["POST /v1/checkout/sessions/{id}/expire"], "%v", kinds)
		require.Equal(t, 1, kinds["GET /v1/checkout/sessions/{id}"], "%v", kinds)
		require.Equal(t, 1, kinds["POST /v1/refunds refund_application_fee=true"], "%v", kinds)
	}

	// Stripe turns the dollar shop's charges off: its next checkout opening is refused;
	// the yen shop's is not.
	require.Equal(t, "account_updated", e.accountUpdated(base, payments.Account{ID: usd.account, DetailsSubmitted: true,
		RequirementsDue: []string{"individual.verification.document"}}).Result)
	var refused struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	require.Equal(t, http.StatusConflict, e.api(bases[1], http.MethodPost, "/api/openings", usd.APIKey, map[string]any{
		"starts_at": time.Now().Add(5 * time.Hour).UTC().Format(time.RFC3339), "duration_minutes": 30, "service": "Cut", "price_cents": 4500,
	}, &refused))
	require.Equal(t, "stripe_account_not_ready", refused.Error.Code)
	require.Contains(t, refused.Error.Message, "individual.verification.document")
	e.declare(bases[1], &jpy, 5*time.Hour)
}

// str runs a query returning one text.
func (e *env) str(query string, args ...any) string {
	e.t.Helper()
	var s string
	require.NoError(e.t, e.pool.QueryRow(context.Background(), query, args...).Scan(&s))
	return s
}

// TestConnectRouteOnlyWhenOn: the Connect endpoint exists only with STRIPE_CONNECT=on
// (off, the server is exactly what it was), and takes Stripe's large events as the
// platform's endpoint does.
func TestConnectRouteOnlyWhenOn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, on := range []bool{false, true} {
		vars := map[string]string(nil)
		if on {
			vars = connectVars
		}
		cfg, err := config.Load(e.vars(vars))
		require.NoError(t, err)
		a, err := build(t.Context(), cfg, slog.New(slog.DiscardHandler), serveOptions{tune: fastTune})
		require.NoError(t, err)
		found := false
		for _, r := range a.routes().(*echo.Echo).Routes() {
			if r.Method == http.MethodPost && r.Path == webhooks.StripeConnectPath {
				found = true
			}
		}
		a.close()
		require.Equal(t, on, found, "STRIPE_CONNECT on=%t", on)
	}
	require.Equal(t, bodyLimitFor(http.MethodPost, webhooks.StripePath), bodyLimitFor(http.MethodPost, webhooks.StripeConnectPath))
}

// TestSwitchingConnectOn: a booking made before the server switched Connect on keeps its
// payment on the platform's account: its late events still act through the platform's
// endpoint, a connected account's event naming it changes nothing, and its refund goes
// to the platform's account without any application fee.
func TestSwitchingConnectOn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	before := e.start(nil, fastTune)
	shop, _, op := e.booked(before, "+15558880001", "+15558880002")
	b := op.Booking
	require.Equal(t, "", e.str(`SELECT COALESCE(stripe_account, '') FROM bookings WHERE id = $1`, b.ID))

	after := e.start(connectVars, fastTune) // the same database, now with Connect on
	// Connect on: the shop must connect before its next checkout opening.
	var refused struct {
		Error struct{ Code string } `json:"error"`
	}
	require.Equal(t, http.StatusConflict, e.api(after, http.MethodPost, "/api/openings", shop.APIKey, map[string]any{
		"starts_at": time.Now().Add(5 * time.Hour).UTC().Format(time.RFC3339), "duration_minutes": 30, "service": "Cut", "price_cents": 4500,
	}, &refused))
	require.Equal(t, "stripe_account_not_ready", refused.Error.Code)

	expired := event{id: evtID(), typ: stripe.EventCheckoutExpired, booking: b.ID, session: b.SessionID}
	require.Equal(t, "ignored_wrong_account", e.connectEvent(after, expired, "acct_1SomeoneElse").Result)
	require.Equal(t, "pending_payment", bookingStatus(e, b.ID))
	expired.id = evtID()
	// The platform's endpoint still serves the platform's bookings. The shop cannot take
	// payments now (Connect on, no account of its own yet): the lapsed hold expires the
	// opening rather than offer it to customers whose holds could not be paid.
	require.Equal(t, "expired", e.send(after, expired).Result, "the platform's endpoint still serves the platform's bookings")
	// The payment, late, was taken on the platform's account: the payer has the slot back.
	late := event{id: evtID(), typ: stripe.EventCheckoutCompleted, booking: b.ID, session: b.SessionID, intent: "pi_before_switch"}
	require.Equal(t, "confirmed_late", e.send(after, late).Result)
	// Paid twice: the second payment is refunded on the platform's account.
	twice := event{id: evtID(), typ: stripe.EventCheckoutCompleted, booking: b.ID, session: b.SessionID, intent: "pi_twice"}
	require.Equal(t, "refunded_duplicate", e.send(after, twice).Result)
	e.settle("booking_refund")
	var refunds []stripetest.Request
	for _, q := range e.stripe.Requests() {
		if q.Path == "/v1/refunds" {
			refunds = append(refunds, q)
		}
	}
	require.Len(t, refunds, 1)
	require.Empty(t, refunds[0].Account, "refunded on the platform's account, which took the money")
	require.False(t, refunds[0].RefundsApplicationFee())
	require.Equal(t, "refund:"+b.ID+":pi_twice", refunds[0].IdempotencyKey, "the platform's key, as before the switch")
}

// TestSimulateStripeConnectAccount: `server simulate stripe --account acct_…` sends the
// event as that connected account's, to the Connect endpoint, signed with the Connect
// secret: the booking's own account confirms it; another account changes nothing.
func TestSimulateStripeConnectAccount(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(connectVars, fastTune)
	s := e.newConnectShop(base, "usd")
	c := e.newCustomer(base, s.shopInfo, "+15558880101", true)
	e.declare(base, &s, 3*time.Hour)
	e.waveDone(s.openings[0], 1, 1)
	require.Equal(t, "booked", e.text(base, c.Phone, s.SMSNumber, "YES").Outcome)
	var o openingInfo
	e.eventually("link stored", func() bool {
		o = e.opening(base, s.shopInfo, s.openings[0])
		return o.Booking != nil && o.Booking.SessionID != ""
	})
	getenv := func(k string) string {
		return map[string]string{"STRIPE_WEBHOOK_SECRET": webhookSecret, "STRIPE_CONNECT_WEBHOOK_SECRET": connectSecret}[k]
	}
	simulate := func(account string) string {
		t.Helper()
		var out bytes.Buffer
		err := run(context.Background(), []string{"simulate", "stripe", "--url", base, "--type", stripe.EventCheckoutCompleted,
			"--booking", o.Booking.ID, "--session", o.Booking.SessionID, "--account", account}, getenv, &out, io.Discard)
		require.NoError(t, err, out.String())
		require.Contains(t, out.String(), "POST "+base+webhooks.StripeConnectPath)
		return out.String()
	}
	require.Contains(t, simulate("acct_1NotThisShop"), `"result":"ignored_wrong_account"`)
	require.Equal(t, "pending_payment", e.opening(base, s.shopInfo, o.ID).Booking.Status)
	require.Contains(t, simulate(s.account), `"result":"confirmed"`)
	require.Equal(t, "confirmed", e.opening(base, s.shopInfo, o.ID).Booking.Status)

	var out bytes.Buffer
	err := run(context.Background(), []string{"simulate", "stripe", "--url", base, "--booking", o.Booking.ID, "--account", "cus_123"}, getenv, &out, io.Discard)
	require.ErrorContains(t, err, "--account must be")
}
