package main

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/slotrecovery/slotrecovery/internal/ratelimit"
)

// stripeCallsPerShop limits the owner actions that call Stripe, per shop, on every
// instance together and across the API and the dashboard: a Connect onboarding link
// (POST /api/shop/stripe/onboarding, the dashboard's button) and the account read back
// on the dashboard's return page. An owner needs a few; a script, or another site
// sending a signed-in owner's browser to the return page, could otherwise spend the
// platform's Stripe rate limit (shared by every shop's checkouts) one shop at a time.
var stripeCallsPerShop = ratelimit.Limit{Burst: 10, Every: time.Minute}

// stripeCalls is the one rule both edges draw on (shopapi.StripeCalls,
// dashboard.StripeCalls): one event from the shop's bucket, in Redis.
func stripeCalls(l *ratelimit.Limiter) func(ctx context.Context, shopID uuid.UUID) (ratelimit.Result, error) {
	return func(ctx context.Context, shopID uuid.UUID) (ratelimit.Result, error) {
		return l.Allow(ctx, "stripe_calls:shop:"+shopID.String(), stripeCallsPerShop)
	}
}
