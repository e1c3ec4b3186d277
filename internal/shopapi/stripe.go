package shopapi

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/slotrecovery/slotrecovery/api"
	"github.com/slotrecovery/slotrecovery/internal/httperr"
	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/ratelimit"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// Stripe Connect: the shop's connected account as the owner sees it, its onboarding
// link, and the admin's platform fee for a shop.

// StripeOnboardingPath is where a shop's owner asks for a link to Stripe's onboarding of
// the shop's connected account (STRIPE_CONNECT=on).
const StripeOnboardingPath = "/api/shop/stripe/onboarding"

func newStripeJSON(s shops.Shop) api.StripeAccount {
	a := s.Stripe
	out := api.StripeAccount{
		Connect: a.Required, ChargesEnabled: a.ChargesEnabled, PayoutsEnabled: a.PayoutsEnabled,
		DetailsSubmitted: a.DetailsSubmitted, RequirementsDue: append([]string{}, a.RequirementsDue...),
		Ready: s.CheckoutReady() == nil,
	}
	if a.ID != "" {
		id := a.ID
		out.AccountID = &id
	}
	if a.DisconnectedAt != nil {
		t := a.DisconnectedAt.UTC()
		out.DisconnectedAt = &t
	}
	out.PlatformFeeBPS = s.PlatformFee()
	return out
}

// StripeCalls takes one of a shop's calls to Stripe from a limit shared by every
// instance and by the dashboard (Allowed false: past it, RetryAfter says for how long);
// an error means the limit could not be asked, and the call is not made.
type StripeCalls func(ctx context.Context, shopID uuid.UUID) (ratelimit.Result, error)

// stripeOnboarding answers a fresh link to Stripe's onboarding of the shop's connected
// account, creating the account the first time (the ledger makes it once, however many
// requests race). The link is a credential for the owner's Stripe set-up: never cached.
// Each request calls Stripe, so it draws on the shop's StripeCalls: past it, 429 with
// Retry-After; while the limit cannot be asked, 503.
func (h *Handlers) stripeOnboarding(c echo.Context) error {
	if h.Ledger == nil {
		return ledger.ErrConnectOff
	}
	ctx := c.Request().Context()
	if h.StripeCalls != nil {
		res, err := h.StripeCalls(ctx, shopOf(c).ID)
		if err != nil {
			c.Response().Header().Set("Retry-After", "5")
			return &httperr.Error{Status: http.StatusServiceUnavailable, Code: "unavailable",
				Message: "Stripe cannot be asked right now; retry shortly"}
		}
		if !res.Allowed {
			secs := max(1, int64((res.RetryAfter+time.Second-1)/time.Second))
			c.Response().Header().Set("Retry-After", strconv.FormatInt(secs, 10))
			return &httperr.Error{Status: http.StatusTooManyRequests, Code: "too_many_requests",
				Message: fmt.Sprintf("too many requests to Stripe for this shop; retry in %d seconds", secs)}
		}
	}
	link, err := h.Ledger.Onboard(ctx, shopOf(c).ID)
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	return c.JSON(http.StatusOK, api.StripeOnboarding{URL: link.URL, ExpiresAt: link.ExpiresAt.UTC()})
}

// adminShopPatch is what the admin may change of any shop.
type adminShopPatch struct {
	// PlatformFeeBPS sets the shop's platform fee; null returns it to the default.
	PlatformFeeBPS optional[int64] `json:"platform_fee_bps"`
}

// adminPatchShop is PATCH /api/shops/{id}, with the admin token: the platform's fee for
// one shop. A shop's own key is not the admin token (401), whatever shop it names.
func (h *Handlers) adminPatchShop(c echo.Context) error {
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return shops.ErrShopNotFound
	}
	var req adminShopPatch
	if err := decode(c, &req); err != nil {
		return err
	}
	ctx := c.Request().Context()
	var shop shops.Shop
	if f := req.PlatformFeeBPS; f.Set {
		var bps *int
		if !f.Null {
			v := int(clamp(f.Value, shops.MaxPlatformFeeBPS+1))
			bps = &v
		}
		shop, err = h.Shops.SetPlatformFee(ctx, id, bps)
	} else {
		shop, err = h.Shops.Get(ctx, id)
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.newShopJSON(shop))
}
