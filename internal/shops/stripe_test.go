package shops_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
)

// TestEveryServiceShopCarriesTheConnectMode: slots.Declare decides from the shop it is
// given whether a connected account is needed, so every way the Service hands out a
// shop (the API's key check, the dashboard's session, a settings change, ...) must carry
// the server's mode. A path that forgot would let a shop without a connected account
// declare checkout openings.
func TestEveryServiceShopCarriesTheConnectMode(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	svc := shops.New(pool, shops.Config{PaymentsEnabled: true, StripeConnect: true})
	created, key, err := svc.Create(ctx, shops.NewShop{Name: "A", Timezone: "UTC", SMSNumber: "+15555550180", Currency: "usd", PaymentMode: shops.PaymentCheckout})
	require.NoError(t, err)
	notReady := func(how string, s shops.Shop, err error) {
		t.Helper()
		require.NoError(t, err, how)
		require.True(t, s.Stripe.Required, "%s: the shop carries the Connect mode", how)
		p, ok := problem.As(s.CheckoutReady())
		require.True(t, ok, "%s: a shop without an account is not ready", how)
		require.Equal(t, shops.ErrStripeAccountNotReady, p.Code, how)
	}
	notReady("Create", created, nil)
	s, err := svc.Authenticate(ctx, key)
	notReady("Authenticate", s, err)
	s, err = svc.Get(ctx, created.ID)
	notReady("Get", s, err)
	s, _, err = svc.SessionShop(ctx, created.ID, "no-such-session")
	notReady("SessionShop", s, err)
	name := "A2"
	s, err = svc.Update(ctx, created.ID, shops.ShopChange{Name: &name})
	notReady("Update", s, err)
	s, _, err = svc.RotateKey(ctx, created.ID)
	notReady("RotateKey", s, err)
	s, err = svc.RotateCalendarToken(ctx, created.ID)
	notReady("RotateCalendarToken", s, err)
	s, err = svc.ByCalendarToken(ctx, s.CalendarToken)
	notReady("ByCalendarToken", s, err)
	fee := 10
	s, err = svc.SetPlatformFee(ctx, created.ID, &fee)
	notReady("SetPlatformFee", s, err)
	require.Equal(t, 10, s.FeeBPS(250))

	// Off, nothing is required; a shop that takes no payments never needs an account.
	off := shops.New(pool, shops.Config{PaymentsEnabled: true})
	s, err = off.Get(ctx, created.ID)
	require.NoError(t, err)
	require.False(t, s.Stripe.Required)
	require.NoError(t, s.CheckoutReady())
	none, _, err := svc.Create(ctx, shops.NewShop{Name: "B", Timezone: "UTC", SMSNumber: "+15555550181", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	require.NoError(t, none.CheckoutReady())
}
