package dashboard

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// The shop's own Stripe account on the settings page (STRIPE_CONNECT=on): its status in
// plain words, and the way to Stripe's onboarding and back.

// Where Stripe's onboarding starts and ends. StripeOnboardingPath makes a fresh one-time
// link and redirects to it: the settings page's button, and where Stripe sends an owner
// whose link expired or was used (the link's refresh_url). StripeReturnPath is where
// Stripe sends the owner back (return_url): the account is read back, then the settings
// page shows it. Both are GETs: Stripe redirects there, and the form-action policy of
// the dashboard's pages would stop a form's redirect to Stripe.
const (
	StripeOnboardingPath = "/dashboard/stripe/onboarding"
	StripeReturnPath     = "/dashboard/stripe/return"
)

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
	checkout := s.PaymentMode == shops.PaymentCheckout
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
// account once and makes the links).
func (d *Dashboard) RegisterStripe(e *echo.Echo, l *ledger.Service) {
	e.GET(StripeOnboardingPath, d.page(d.signedIn(func(c echo.Context) error { return d.stripeOnboarding(c, l) })))
	e.GET(StripeReturnPath, d.page(d.signedIn(func(c echo.Context) error { return d.stripeReturn(c, l) })))
}

// stripeOnboarding sends the owner to a fresh link to Stripe's onboarding of the shop's
// account, creating the account the first time. A GET that creates at most the shop's
// own account, once: another site linking here can do no more, and cannot read the link.
func (d *Dashboard) stripeOnboarding(c echo.Context, l *ledger.Service) error {
	s := current(c)
	link, err := l.Onboard(c.Request().Context(), s.Shop.ID)
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
// settings page shows where it stands now rather than when its last event arrived.
func (d *Dashboard) stripeReturn(c echo.Context, l *ledger.Service) error {
	s := current(c)
	notice := "stripe"
	if err := l.RefreshAccount(c.Request().Context(), s.Shop.ID); err != nil {
		// The account's own event brings the state soon anyway.
		d.logger(c).Warn("dashboard stripe return", "shop_id", s.Shop.ID, "err", err)
		notice = "stripe_lagging"
	}
	return c.Redirect(http.StatusSeeOther, "/dashboard/settings?notice="+notice+"#stripe")
}
