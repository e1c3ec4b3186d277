package main

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStripeCallsLimitedPerShop: the owner's requests that call Stripe (here the Connect
// onboarding link) are limited per shop, across instances: a shop's eleventh link in a
// minute, asked of another instance than the first ten, gets 429 with Retry-After, and
// calls nothing; another shop is not held up by it.
func TestStripeCallsLimitedPerShop(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	bases := []string{e.start(connectVars, nil), e.start(connectVars, nil)}
	a := e.newShop(bases[0], "checkout", nil)
	b := e.newShop(bases[0], "checkout", nil)
	for i := range 10 {
		require.Equal(t, http.StatusOK, e.api(bases[i%2], http.MethodPost, "/api/shop/stripe/onboarding", a.APIKey, nil, nil), "link %d", i+1)
	}
	var refused struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	require.Equal(t, http.StatusTooManyRequests, e.api(bases[1], http.MethodPost, "/api/shop/stripe/onboarding", a.APIKey, nil, &refused),
		"the eleventh link in a minute, on another instance")
	require.Equal(t, "too_many_requests", refused.Error.Code)
	require.Contains(t, refused.Error.Message, "Stripe")
	require.Equal(t, http.StatusOK, e.api(bases[1], http.MethodPost, "/api/shop/stripe/onboarding", b.APIKey, nil, nil),
		"another shop has its own limit")
}
