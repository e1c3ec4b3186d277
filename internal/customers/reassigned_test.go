package customers_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/testkit/customertest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
)

// TestPossiblyReassigned: a "wrong number" marks the shop's customer with that number,
// keeps the first time when said again, reaches neither another shop's customer with
// the same number nor a stranger, shows in the API's shape, and goes when the owner
// clears it (another shop's owner cannot).
func TestPossiblyReassigned(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	cs := customertest.NewWith(t, pool, customers.Config{PhoneKeys: [][]byte{[]byte("an erasure key of at least thirty-two characters")}})
	svc := shops.New(pool, shops.Config{})
	shop, _, err := svc.Create(ctx, shops.NewShop{Name: "A", Timezone: "UTC", SMSNumber: "+15555550110", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	other, _, err := svc.Create(ctx, shops.NewShop{Name: "B", Timezone: "UTC", SMSNumber: "+15555550111", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	const number = "+15557320001"
	kim, err := cs.Add(ctx, shop.ID, customers.NewCustomer{Phone: number, Name: "Kim", SMSOptIn: true})
	require.NoError(t, err)
	twin, err := cs.Add(ctx, other.ID, customers.NewCustomer{Phone: number, Name: "Kim B", SMSOptIn: true})
	require.NoError(t, err)
	require.Nil(t, kim.API().PossiblyReassignedAt, "unmarked: null in the API")

	mark := func(shopID uuid.UUID, number string, at time.Time) {
		t.Helper()
		require.NoError(t, pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			return cs.MarkPossiblyReassigned(ctx, tx, shopID, number, at)
		}))
	}
	first := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	mark(shop.ID, number, first)
	mark(shop.ID, number, first.Add(time.Hour))
	mark(shop.ID, "+15557320009", first) // a stranger: nothing to mark

	got, err := cs.Get(ctx, shop.ID, kim.ID)
	require.NoError(t, err)
	require.NotNil(t, got.PossiblyReassignedAt)
	require.True(t, got.PossiblyReassignedAt.Equal(first), "the first answer's time, got %v", got.PossiblyReassignedAt)
	require.Equal(t, first, *got.API().PossiblyReassignedAt)
	theirs, err := cs.Get(ctx, other.ID, twin.ID)
	require.NoError(t, err)
	require.Nil(t, theirs.PossiblyReassignedAt, "another shop's customer with the same number is not marked")

	_, err = cs.ClearPossiblyReassigned(ctx, other.ID, kim.ID)
	require.ErrorIs(t, err, customers.ErrNotFound, "another shop cannot clear it")
	cleared, err := cs.ClearPossiblyReassigned(ctx, shop.ID, kim.ID)
	require.NoError(t, err)
	require.Nil(t, cleared.PossiblyReassignedAt)
	again, err := cs.Get(ctx, shop.ID, kim.ID)
	require.NoError(t, err)
	require.Nil(t, again.PossiblyReassignedAt, "cleared for good")
}
