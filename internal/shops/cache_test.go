package shops_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/pgtest"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// TestCachedShopCarriesItsVersion: BySMSNumber keeps its copy of a shop, with the row's
// version; a change made elsewhere (another instance's service) moves the version on, so
// a caller that reads the version again can tell the copy is stale, and Refresh reads
// the shop as it is now.
func TestCachedShopCarriesItsVersion(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	here, elsewhere := shops.New(pool, shops.Config{}), shops.New(pool, shops.Config{})
	created, _, err := here.Create(ctx, shops.NewShop{Name: "A", Timezone: "UTC", SMSNumber: "+15555550100", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)

	first, err := here.BySMSNumber(ctx, created.SMSNumber)
	require.NoError(t, err)
	require.NotZero(t, first.Version, "a shop read by its number carries its row's version")
	again, err := here.BySMSNumber(ctx, created.SMSNumber)
	require.NoError(t, err)
	require.Equal(t, first.Version, again.Version)

	name := "B"
	_, err = elsewhere.Update(ctx, created.ID, shops.ShopChange{Name: &name})
	require.NoError(t, err)
	cached, err := here.BySMSNumber(ctx, created.SMSNumber)
	require.NoError(t, err)
	require.Equal(t, "A", cached.Name, "this instance's copy is kept: a caller checks its version")
	require.Equal(t, first.Version, cached.Version)

	fresh, err := here.Refresh(ctx, cached)
	require.NoError(t, err)
	require.Equal(t, "B", fresh.Name)
	require.NotEqual(t, first.Version, fresh.Version, "a change moves the version on")
	after, err := here.BySMSNumber(ctx, created.SMSNumber)
	require.NoError(t, err)
	require.Equal(t, fresh, after, "the fresh copy is the cached one now")
}
