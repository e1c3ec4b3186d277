package catalog_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/catalog"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestAShopsCatalogIsCapped: a shop has at most 500 people and 500 services. Adds that
// race for the last places at the cap count each other: of twelve at once with two
// places left, exactly two are added and ten are told the cap (409, too_many_…);
// another shop is not held to the first one's count.
func TestAShopsCatalogIsCapped(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	svc := shops.New(pool, shops.Config{})
	newShop := func(number string) shops.Shop {
		s, _, err := svc.Create(ctx, shops.NewShop{Name: "Cuts " + number, Timezone: "UTC", SMSNumber: number, Currency: "usd", PaymentMode: shops.PaymentNone})
		require.NoError(t, err)
		return s
	}
	full, other := newShop("+15555550141"), newShop("+15555550142")
	_, err := pool.Exec(ctx, `INSERT INTO staff (shop_id, name, created_at, updated_at)
		SELECT $1, 'Person ' || i, now(), now() FROM generate_series(1, $2::int) AS i`, full.ID, catalog.MaxStaff-2)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO services (shop_id, name, duration_minutes, price_cents, staff_ids, created_at, updated_at)
		SELECT $1, 'Service ' || i, 30, 1000, '{}', now(), now() FROM generate_series(1, $2::int) AS i`, full.ID, catalog.MaxServices-2)
	require.NoError(t, err)

	c := catalog.New(pool, nil)
	race := func(what string, add func(i int) error) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make([]error, 12)
		for i := range errs {
			wg.Go(func() { errs[i] = add(i) })
		}
		wg.Wait()
		added, capped := 0, 0
		for i, err := range errs {
			var p *problem.Error
			switch {
			case err == nil:
				added++
			case errors.As(err, &p) && p.Kind == problem.Conflict && p.Code == "too_many_"+what:
				capped++
			default:
				t.Errorf("add %d of %s: %v", i, what, err)
			}
		}
		require.Equal(t, 2, added, "%s added at the cap", what)
		require.Equal(t, 10, capped, "%s refused at the cap", what)
	}
	race("staff", func(i int) error {
		_, err := c.AddStaff(ctx, full.ID, fmt.Sprintf("New %d", i))
		return err
	})
	race("services", func(i int) error {
		_, err := c.AddService(ctx, full.ID, catalog.NewService{Name: fmt.Sprintf("New %d", i), DurationMinutes: 30, PriceCents: 1000})
		return err
	})
	staff, err := c.Staff(ctx, full.ID)
	require.NoError(t, err)
	require.Len(t, staff, catalog.MaxStaff)
	services, err := c.Services(ctx, full.ID)
	require.NoError(t, err)
	require.Len(t, services, catalog.MaxServices)

	_, err = c.AddStaff(ctx, other.ID, "Ana")
	require.NoError(t, err, "another shop is not at the cap")
	_, err = c.AddService(ctx, other.ID, catalog.NewService{Name: "Cut", DurationMinutes: 30, PriceCents: 1000})
	require.NoError(t, err)
}
