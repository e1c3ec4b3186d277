package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/ratelimit"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// The shop's own Stripe account on the settings page (STRIPE_CONNECT=on): its status in
// plain words, and the way to Stripe's onboarding and back.

// Where Stripe's onboarding starts and ends. A POST to StripeOnboardingPath (the
// settings page's button, a form with the session's CSRF token) makes a fresh one-time
// link and redirects to it: it creates the shop's account the first time and calls
// Stripe, so no other site can make a signed-in owner's browser do it. A GET there is
// where Stripe sends an owner whose link expired or was used (the link's refresh_url):
// it calls nothing and shows the settings page, whose button goes on. StripeReturnPath
// is where Stripe sends the owner back (return_url), a GET: the account is read back,
// then the settings page shows it. Every call to Stripe draws on the shop's StripeCalls
// limit, shared with the API and every instance.
const (
	StripeOnboardingPath = "/dashboard/stripe/onboarding"
	StripeReturnPath     = "/dashboard/stripe/return"
)

// stripeOrigin is where the onboarding's links go: the dashboard's form-action policy
// lets the onboarding form's redirect go there.
const stripeOrigin = "https://connect.stripe.com"

// StripeCalls takes one of a shop's calls to Stripe from a limit shared by every
// instance (Allowed false: the shop is past it, RetryAfter says for how long); an error
// means the limit could not be asked, and the call is not made.
type StripeCalls func(ctx context.Context, shopID uuid.UUID) (ratelimit.Result, error)

// stripeView is what the settings page says of the shop's Stripe account.
type stripeView struct {
	// Status and Detail say where the account stands, in the owner's words.
	Status, Detail string
	// Ready: payments can be taken; otherwise Status says what is missing.
	Ready bool
	// Action is the button's label ("Connect Stripe", "Finish Stripe setup", "Update
	// Stripe details").
	Action string
	// Fee says what the platform keeps of each payment.
	Fee string
	// Error is why the last attempt to reach Stripe failed, for the owner.
	Error string
}

// stripeViewOf is the shop's Stripe card; nil without Connect (the server takes every
// payment on its own account: there is nothing to connect).
func stripeViewOf(s shops.Shop) *stripeView {
	a := s.Stripe
	if !a.Required {
		return nil
	}
	v := &stripeView{Ready: s.CheckoutReady() == nil, Fee: feeWords(s.PlatformFee())}
	checkout := s.UsesCheckout()
	switch {
	case a.ID == "" || a.DisconnectedAt != nil:
		v.Action = "Connect Stripe"
		v.Status = "Not connected"
		if a.DisconnectedAt != nil {
			v.Status = "Disconnected on " + a.DisconnectedAt.In(s.Location).Format("Mon 2 Jan 2006")
		}
		v.Detail = "Your customers pay into your own Stripe account."
		if checkout {
			v.Detail += " Connect it before your next opening with card payment: until then the dashboard and the API refuse them."
		}
	case !a.ChargesEnabled:
		v.Action = "Finish Stripe setup"
		v.Status = "Set-up not finished: Stripe cannot take payments for you yet"
		v.Detail = stillNeeded(a.RequirementsDue)
		if checkout {
			v.Detail += " Openings with card payment wait until it is done."
		}
	case !a.PayoutsEnabled:
		v.Action = "Finish Stripe setup"
		v.Status = "Taking payments; Stripe is not paying out to your bank yet"
		v.Detail = stillNeeded(a.RequirementsDue)
	default:
		v.Action = "Update Stripe details"
		v.Status = "Connected: taking payments and paying out to your bank"
		if len(a.RequirementsDue) > 0 {
			v.Detail = stillNeeded(a.RequirementsDue)
		}
	}
	return v
}

// stillNeeded lists what Stripe asks for, in its own terms (they name fields of its
// form), or says it is reviewing what it has.
func stillNeeded(due []string) string {
	if len(due) == 0 {
		return "Stripe is checking the details you gave; this usually takes minutes."
	}
	words := make([]string, 0, len(due))
	for _, d := range due {
		words = append(words, strings.NewReplacer("_", " ", ".", ": ").Replace(d))
	}
	return "Stripe still needs: " + strings.Join(words, "; ") + "."
}

// feeWords says the platform's fee in percent.
func feeWords(bps int) string {
	if bps == 0 {
		return "The platform keeps no fee: each payment is yours, less Stripe's own processing fee."
	}
	pct := strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", float64(bps)/100), "0"), ".")
	return "The platform keeps " + pct + "% of each payment; the rest is yours, less Stripe's own processing fee."
}

// RegisterStripe adds the Stripe onboarding's routes (StripeOnboardingPath,
// StripeReturnPath), which need the payment ledger l (it creates the shop's connected
// account once and makes the links) and the shops' limit on calls to Stripe (nil: none).
func (d *Dashboard) RegisterStripe(e *echo.Echo, l *ledger.Service, calls StripeCalls) {
	if calls == nil {
		calls = func(context.Context, uuid.UUID) (ratelimit.Result, error) {
			return ratelimit.Result{Allowed: true}, nil
		}
	}
	e.POST(StripeOnboardingPath, d.page(d.signedIn(d.withCSRF(func(c echo.Context) error { return d.stripeOnboarding(c, l, calls) }))))
	e.GET(StripeOnboardingPath, d.page(d.signedIn(d.stripeRefresh)))
	e.GET(StripeReturnPath, d.page(d.signedIn(func(c echo.Context) error { return d.stripeReturn(c, l, calls) })))
}

// stripeRefresh is where Stripe sends an owner whose onboarding link expired or was
// used: the settings page, saying so, whose button makes a new link.
func (d *Dashboard) stripeRefresh(c echo.Context) error {
	return c.Redirect(http.StatusSeeOther, "/dashboard/settings?notice=stripe_expired#stripe")
}

// stripeOnboarding sends the owner to a fresh link to Stripe's onboarding of the shop's
// account, creating the account the first time.
func (d *Dashboard) stripeOnboarding(c echo.Context, l *ledger.Service, calls StripeCalls) error {
	s := current(c)
	ctx := c.Request().Context()
	res, err := calls(ctx, s.Shop.ID)
	if err != nil || !res.Allowed {
		v := settingsView{SMS: s.Shop.SMSNumber, Form: settingsFormOf(s.Shop), Stripe: stripeViewOf(s.Shop)}
		if v.Stripe == nil {
			v.Stripe = &stripeView{Status: "Not available"}
		}
		status := http.StatusServiceUnavailable
		v.Stripe.Error = "Stripe cannot be reached from here just now. Wait a moment and try again."
		if err != nil {
			d.logger(c).Warn("dashboard stripe limit unavailable", "shop_id", s.Shop.ID, "err", err)
			c.Response().Header().Set("Retry-After", "5")
		} else {
			secs := max(1, int64((res.RetryAfter+time.Second-1)/time.Second))
			c.Response().Header().Set("Retry-After", strconv.FormatInt(secs, 10))
			status = http.StatusTooManyRequests
			v.Stripe.Error = fmt.Sprintf("Too many requests to Stripe for this shop. Try again in %d seconds.", secs)
		}
		return d.render(c, status, "Settings · "+s.Shop.Name, v)
	}
	link, err := l.Onboard(ctx, s.Shop.ID)
	if err != nil {
		p, isProblem := problem.As(err)
		if !isProblem || (p.Kind != problem.Unavailable && p.Kind != problem.Conflict) {
			return d.internalError(c, "stripe onboarding", err)
		}
		d.logger(c).Warn("dashboard stripe onboarding", "shop_id", s.Shop.ID, "err", err)
		v := settingsView{SMS: s.Shop.SMSNumber, Form: settingsFormOf(s.Shop), Stripe: stripeViewOf(s.Shop)}
		status := http.StatusServiceUnavailable
		msg := "Stripe did not answer just now. Wait a moment and try again."
		if p.Kind == problem.Conflict {
			status, msg = http.StatusConflict, "This server takes every payment on its own Stripe account: there is nothing to connect."
		}
		if v.Stripe == nil {
			v.Stripe = &stripeView{Status: "Not available"}
		}
		v.Stripe.Error = msg
		return d.render(c, status, "Settings · "+s.Shop.Name, v)
	}
	d.logger(c).Info("dashboard stripe onboarding link", "shop_id", s.Shop.ID, "expires_at", link.ExpiresAt.UTC().Format(time.RFC3339))
	return c.Redirect(http.StatusSeeOther, link.URL)
}

// stripeReturn is where Stripe sends the owner back: the account is read back, so the
// settings page shows where it stands now rather than when its last event arrived. Past
// the shop's limit on calls to Stripe it is not read (the page says the status may lag):
// anyone can send a signed-in owner here, as often as they like.
func (d *Dashboard) stripeReturn(c echo.Context, l *ledger.Service, calls StripeCalls) error {
	s := current(c)
	ctx := c.Request().Context()
	notice := "stripe"
	res, err := calls(ctx, s.Shop.ID)
	switch {
	case err != nil || !res.Allowed:
		d.logger(c).Warn("dashboard stripe return not read back", "shop_id", s.Shop.ID, "limited", err == nil, "err", err)
		notice = "stripe_lagging"
	default:
		if err := l.RefreshAccount(ctx, s.Shop.ID); err != nil {
			// The account's own event brings the state soon anyway.
			d.logger(c).Warn("dashboard stripe return", "shop_id", s.Shop.ID, "err", err)
			notice = "stripe_lagging"
		}
	}
	return c.Redirect(http.StatusSeeOther, "/dashboard/settings?notice="+notice+"#stripe")
}
