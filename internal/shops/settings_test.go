package shops_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/pgtest"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestRotateKey: the new key works and the old one does not, and the shop's key
// version moves on (what ends its dashboard sessions) while another shop's stays.
func TestRotateKey(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	svc := shops.New(pool, shops.Config{})
	a, oldKey, err := svc.Create(ctx, shops.NewShop{Name: "A", Timezone: "UTC", SMSNumber: "+15555550100", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	b, keyB, err := svc.Create(ctx, shops.NewShop{Name: "B", Timezone: "UTC", SMSNumber: "+15555550101", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	require.Equal(t, 1, a.KeyVersion, "a new shop's first key")

	for want := 2; want <= 3; want++ {
		rotated, newKey, err := svc.RotateKey(ctx, a.ID)
		require.NoError(t, err)
		require.Equal(t, want, rotated.KeyVersion)
		require.NotEqual(t, oldKey, newKey)
		_, err = svc.Authenticate(ctx, oldKey)
		require.ErrorIs(t, err, shops.ErrUnauthorized)
		got, err := svc.Authenticate(ctx, newKey)
		require.NoError(t, err)
		require.Equal(t, want, got.KeyVersion)
		got, err = svc.Get(ctx, a.ID)
		require.NoError(t, err)
		require.Equal(t, want, got.KeyVersion)
		oldKey = newKey
	}

	got, err := svc.Authenticate(ctx, keyB)
	require.NoError(t, err)
	require.Equal(t, b.ID, got.ID)
	require.Equal(t, 1, got.KeyVersion, "another shop's key is untouched")

	_, _, err = svc.RotateKey(ctx, uuid.New())
	require.ErrorIs(t, err, shops.ErrShopNotFound)
}
