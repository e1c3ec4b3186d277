package shops_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
)

// TestMoveUpSettings: a new shop has the defaults (14 days, 5 moves); a change sets
// each within its range, keeps the other, and stores them where offers reads them; a
// value outside the range is refused on its field and changes nothing.
func TestMoveUpSettings(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	svc := shops.New(pool, shops.Config{})
	s, _, err := svc.Create(ctx, shops.NewShop{Name: "Ana's", Timezone: "UTC", SMSNumber: "+15555550400", Currency: "usd",
		PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	require.Equal(t, 14, s.MoveUpDays)
	require.Equal(t, 5, s.ChainMax)

	days, chain, zero := 90, 20, 0
	s, err = svc.Update(ctx, s.ID, shops.ShopChange{MoveUpDays: &days})
	require.NoError(t, err)
	require.Equal(t, 90, s.MoveUpDays)
	require.Equal(t, 5, s.ChainMax, "kept")
	s, err = svc.Update(ctx, s.ID, shops.ShopChange{ChainMax: &chain})
	require.NoError(t, err)
	require.Equal(t, 90, s.MoveUpDays, "kept")
	require.Equal(t, 20, s.ChainMax)
	s, err = svc.Update(ctx, s.ID, shops.ShopChange{MoveUpDays: &zero, ChainMax: &zero})
	require.NoError(t, err)
	require.Equal(t, 0, s.MoveUpDays)
	require.Equal(t, 0, s.ChainMax)
	var stored [2]int
	require.NoError(t, pool.QueryRow(ctx, `SELECT move_up_days, chain_max FROM shops WHERE id = $1`, s.ID).Scan(&stored[0], &stored[1]))
	require.Equal(t, [2]int{0, 0}, stored)

	for _, tt := range []struct {
		field string
		ch    shops.ShopChange
	}{
		{"move_up_days", shops.ShopChange{MoveUpDays: ptr(91)}},
		{"move_up_days", shops.ShopChange{MoveUpDays: ptr(-1)}},
		{"chain_max", shops.ShopChange{ChainMax: ptr(21)}},
		{"chain_max", shops.ShopChange{ChainMax: ptr(-1), MoveUpDays: ptr(3)}},
	} {
		_, err := svc.Update(ctx, s.ID, tt.ch)
		p, ok := problem.As(err)
		require.True(t, ok, "%v", err)
		require.Equal(t, problem.Invalid, p.Kind)
		require.Equal(t, tt.field, p.Field)
	}
	got, err := svc.Get(ctx, s.ID)
	require.NoError(t, err)
	require.Equal(t, 0, got.MoveUpDays, "a refused change changes nothing")
	require.Equal(t, 0, got.ChainMax)
}

// TestCreateKeepsPrivacyURL: a new shop's privacy policy address is stored with it.
func TestCreateKeepsPrivacyURL(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	svc := shops.New(pool, shops.Config{})
	s, _, err := svc.Create(ctx, shops.NewShop{Name: "Ana's", Timezone: "UTC", SMSNumber: "+15555550401", Currency: "usd",
		PaymentMode: shops.PaymentNone, PrivacyURL: " https://anas.example/privacy "})
	require.NoError(t, err)
	require.Equal(t, "https://anas.example/privacy", s.PrivacyURL)
	got, err := svc.Get(ctx, s.ID)
	require.NoError(t, err)
	require.Equal(t, "https://anas.example/privacy", got.PrivacyURL)
}

func ptr(n int) *int { return &n }
