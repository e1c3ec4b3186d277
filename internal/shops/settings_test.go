package shops_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
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

// TestSendRate: a shop sends at a long code's 1 text a second unless it says otherwise;
// the rate can be changed, within 1 to 1000, and an explicit 0 is refused.
func TestSendRate(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	svc := shops.New(pool, shops.Config{})
	s, _, err := svc.Create(ctx, shops.NewShop{Name: "A", Timezone: "UTC", SMSNumber: "+15555550200", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	require.Equal(t, 1, s.Policy.SendRate, "a long code's rate by default")
	require.Equal(t, 10*time.Second, s.Policy.WaveDuration(), "the default wave of 10 at 1 a second")

	tollFree := 3
	s, err = svc.Update(ctx, s.ID, shops.ShopChange{Policy: shops.PolicyFields{SendRate: &tollFree}})
	require.NoError(t, err)
	require.Equal(t, 3, s.Policy.SendRate)
	got, err := svc.Get(ctx, s.ID)
	require.NoError(t, err)
	require.Equal(t, 3, got.Policy.SendRate, "stored")

	for _, bad := range []int{0, -1, 1001} {
		_, err = svc.Update(ctx, s.ID, shops.ShopChange{Policy: shops.PolicyFields{SendRate: &bad}})
		var pe *problem.Error
		require.ErrorAs(t, err, &pe, "send rate %d", bad)
		require.Equal(t, "offer_policy.send_rate_per_second", pe.Field)
	}
	shortCodeTimesTen := 5000
	_, _, err = svc.Create(ctx, shops.NewShop{Name: "B", Timezone: "UTC", SMSNumber: "+15555550201", Currency: "usd",
		PaymentMode: shops.PaymentNone, Policy: shops.PolicyFields{SendRate: &shortCodeTimesTen}})
	require.Error(t, err)
}
