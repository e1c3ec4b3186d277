package slots_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/testkit/customertest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
)

// TestCompletePast: a filled opening with a confirmed booking becomes completed once its
// appointment has ended; one still awaiting payment, or not yet over, stays filled.
func TestCompletePast(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	queue, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	require.NoError(t, err)
	var now atomic.Pointer[time.Time]
	start := time.Now()
	now.Store(&start)
	clock := func() time.Time { return *now.Load() }
	svc := slots.New(pool, queue, noLock{}, noCooldown{}, slots.Config{Now: clock})
	shopsSvc := shops.New(pool, shops.Config{Now: clock})
	ctx := context.Background()
	shop, _, err := shopsSvc.Create(ctx, shops.NewShop{Name: "Done", Timezone: "UTC", SMSNumber: "+15550002000", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	c, err := customertest.New(t, pool).Add(ctx, shop.ID, customers.NewCustomer{Phone: "+15550002001", SMSOptIn: true})
	require.NoError(t, err)

	declare := func(in time.Duration) slots.Opening {
		op, err := svc.Declare(ctx, shop, slots.NewOpening{StartsAt: clock().Add(in), DurationMinutes: 30, Service: "Cut", PriceCents: 1000})
		require.NoError(t, err)
		_, err = pool.Exec(ctx, `INSERT INTO slot_offers (opening_id, customer_id, shop_id, generation, wave, status, created_at, sent_at)
			VALUES ($1, $2, $3, 1, 1, 'sent', now(), now())`, op.ID, c.ID, shop.ID)
		require.NoError(t, err)
		return op
	}
	early := declare(2 * time.Hour)
	claim, err := svc.Book(ctx, &shop, c.ID)
	require.NoError(t, err)
	require.Equal(t, slots.Booked, claim.Outcome)
	late := declare(5 * time.Hour)
	claim, err = svc.Book(ctx, &shop, c.ID)
	require.NoError(t, err)
	require.Equal(t, late.ID, claim.OpeningID)
	pending := declare(2*time.Hour + time.Minute)
	_, err = svc.Book(ctx, &shop, c.ID)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `UPDATE bookings SET status = 'pending_payment', confirmed_at = NULL WHERE opening_id = $1`, pending.ID)
	require.NoError(t, err)

	n, err := svc.CompletePast(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "nothing has ended yet")

	later := start.Add(3 * time.Hour)
	now.Store(&later)
	n, err = svc.CompletePast(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	for id, want := range map[string]string{early.ID.String(): slots.StatusCompleted, late.ID.String(): slots.StatusFilled, pending.ID.String(): slots.StatusFilled} {
		var got string
		require.NoError(t, pool.QueryRow(ctx, `SELECT status FROM slot_openings WHERE id = $1`, id).Scan(&got))
		require.Equal(t, want, got, id)
	}
}
