package customers_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/testkit/customertest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
)

// TestStatsComeFromTheRecords: a customer's stats count their texted offers and their
// bookings of the last 90 days, their attended and no-show bookings and lapsed holds
// ever, and their last offer and booking, from the offers and bookings as they stand;
// a page's stats come in one call; another shop's customer has none; clearing the
// no-shows keeps them in the stats.
func TestStatsComeFromTheRecords(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	now := time.Date(2027, 3, 1, 12, 0, 0, 0, time.UTC)
	cs := customertest.NewWith(t, pool, customers.Config{Now: func() time.Time { return now }})
	shop, _, err := shops.New(pool, shops.Config{}).Create(ctx, shops.NewShop{Name: "A", Timezone: "UTC", SMSNumber: "+15555550100",
		Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	ann, err := cs.Add(ctx, shop.ID, customers.NewCustomer{Phone: "+15557320001", Name: "Ann", SMSOptIn: true})
	require.NoError(t, err)
	bob, err := cs.Add(ctx, shop.ID, customers.NewCustomer{Phone: "+15557320002", Name: "Bob", SMSOptIn: true})
	require.NoError(t, err)

	opening := func(at time.Time) uuid.UUID {
		t.Helper()
		var id uuid.UUID
		require.NoError(t, pool.QueryRow(ctx, `INSERT INTO slot_openings (shop_id, starts_at, duration_minutes, service, price_cents,
			status, created_at, updated_at) VALUES ($1, $2, 30, 'Cut', 3000, 'expired', $2, $2) RETURNING id`, shop.ID, at).Scan(&id))
		return id
	}
	offer := func(c uuid.UUID, at time.Time, sent bool) {
		t.Helper()
		var sentAt *time.Time
		if sent {
			sentAt = &at
		}
		_, err := pool.Exec(ctx, `INSERT INTO slot_offers (opening_id, customer_id, shop_id, generation, wave, status, created_at, sent_at)
			VALUES ($1, $2, $3, 1, 1, 'lost', $4, $5)`, opening(at), c, shop.ID, at, sentAt)
		require.NoError(t, err)
	}
	booking := func(c uuid.UUID, at time.Time, status, attendance string) {
		t.Helper()
		_, err := pool.Exec(ctx, `INSERT INTO bookings (opening_id, customer_id, shop_id, status, amount_cents, currency,
			created_at, updated_at, attended_at, no_show_at)
			VALUES ($1, $2, $3, $4, 3000, 'usd', $5, $5,
				CASE WHEN $6 = 'attended' THEN $5::timestamptz END, CASE WHEN $6 = 'no_show' THEN $5::timestamptz END)`,
			opening(at), c, shop.ID, status, at, attendance)
		require.NoError(t, err)
	}
	d := 24 * time.Hour
	offer(ann.ID, now.Add(-100*d), true) // texted, before the 90 days
	offer(ann.ID, now.Add(-10*d), true)
	offer(ann.ID, now.Add(-3*d), true)
	offer(ann.ID, now.Add(-time.Hour), false) // failed: never texted
	booking(ann.ID, now.Add(-120*d), "confirmed", "attended")
	booking(ann.ID, now.Add(-40*d), "confirmed", "no_show")
	booking(ann.ID, now.Add(-20*d), "payment_failed", "") // a hold that lapsed
	booking(ann.ID, now.Add(-10*d), "confirmed", "attended")

	st, err := cs.Stats(ctx, shop.ID, ann.ID)
	require.NoError(t, err)
	lastOffered, lastBooked := now.Add(-3*d), now.Add(-10*d)
	want := customers.Stats{Offers90d: 2, Bookings90d: 2, Attended: 2, NoShows: 1, LapsedHolds: 1,
		LastOfferedAt: &lastOffered, LastBookedAt: &lastBooked}
	require.Equal(t, want, st)

	page, err := cs.StatsOf(ctx, shop.ID, []uuid.UUID{ann.ID, bob.ID, uuid.New()})
	require.NoError(t, err)
	require.Equal(t, map[uuid.UUID]customers.Stats{ann.ID: want, bob.ID: {}}, page, "Bob has no record; an unknown id is left out")

	require.NoError(t, cs.ClearNoShows(ctx, shop.ID, ann.ID))
	st, err = cs.Stats(ctx, shop.ID, ann.ID)
	require.NoError(t, err)
	require.Equal(t, want, st, "clearing lets Ann be offered again; the record keeps the no-show")

	other, _, err := shops.New(pool, shops.Config{}).Create(ctx, shops.NewShop{Name: "B", Timezone: "UTC", SMSNumber: "+15555550101",
		Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	_, err = cs.Stats(ctx, other.ID, ann.ID)
	require.ErrorIs(t, err, customers.ErrNotFound)
	require.ErrorIs(t, cs.ClearNoShows(ctx, other.ID, ann.ID), customers.ErrNotFound)
}
