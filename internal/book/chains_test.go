package book_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/testkit/customertest"
)

// TestChainsAsTheOwnerFollowsThem: a chain of three (Kim moves up into the first
// opening, Lou into Kim's old time, Ana from the waitlist into Lou's) reads whole, in
// order, from any day one of its links is on, with who holds each link and the time
// they left; its moves and what it recovered are counted. A day with no link has none.
func TestChainsAsTheOwnerFollowsThem(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	day := time.Now().Add(24 * time.Hour).Truncate(time.Hour).UTC()
	kim := f.mover(t, "+15555550301", day.Add(48*time.Hour))
	lou := f.mover(t, "+15555550302", day.Add(72*time.Hour))
	ana, err := customertest.New(t, f.pool).Add(ctx, f.shop.ID, customers.NewCustomer{Phone: "+15555550303", Name: "Ana", SMSOptIn: true})
	require.NoError(t, err)
	first, err := f.openings.Declare(ctx, f.shop, slots.NewOpening{StartsAt: day, DurationMinutes: 45, Service: "Cut", PriceCents: 2500})
	require.NoError(t, err)
	m, err := f.book.MoveUp(ctx, f.shop, kim.id, f.moveUpOffer(t, first.ID, kim))
	require.NoError(t, err)
	second := m.Declaration.OpeningID
	m, err = f.book.MoveUp(ctx, f.shop, lou.id, f.moveUpOffer(t, second, lou))
	require.NoError(t, err)
	third := m.Declaration.OpeningID
	_, err = f.pool.Exec(ctx, `
		INSERT INTO slot_offers (opening_id, customer_id, shop_id, generation, wave, status, created_at, sent_at)
		SELECT id, $2, shop_id, generation, 1, 'sent', clock_timestamp(), clock_timestamp() FROM slot_openings WHERE id = $1`, third, ana.ID)
	require.NoError(t, err)
	booked, err := f.openings.Book(ctx, &f.shop, ana.ID)
	require.NoError(t, err)
	require.Equal(t, slots.Booked, booked.Outcome)

	for _, on := range []time.Time{day, day.Add(48 * time.Hour), day.Add(72 * time.Hour)} {
		chains, err := f.book.Chains(ctx, f.shop.ID, on.Add(-time.Hour), on.Add(time.Hour))
		require.NoError(t, err)
		require.Len(t, chains, 1, "the chain from the day of %s", on)
		c := chains[0]
		require.Equal(t, first.ID, c.ID)
		require.Len(t, c.Links, 3)
		require.Equal(t, []any{first.ID, second, third}, []any{c.Links[0].OpeningID, c.Links[1].OpeningID, c.Links[2].OpeningID})
		require.Equal(t, []string{kim.appointment.Customer.Name, lou.appointment.Customer.Name, "Ana"},
			[]string{c.Links[0].Holder, c.Links[1].Holder, c.Links[2].Holder})
		require.NotNil(t, c.Links[0].LeftAt)
		require.True(t, c.Links[0].LeftAt.Equal(kim.appointment.StartsAt), "Kim left Thu")
		require.True(t, c.Links[1].LeftAt.Equal(lou.appointment.StartsAt), "Lou left Fri")
		require.Nil(t, c.Links[2].LeftAt, "Ana came from the waitlist")
		require.Equal(t, 2, c.Moves)
		require.EqualValues(t, 3*2500, c.RecoveredCents, "three filled times at the opening's price")
	}
	none, err := f.book.Chains(ctx, f.shop.ID, day.Add(5*24*time.Hour), day.Add(6*24*time.Hour))
	require.NoError(t, err)
	require.Empty(t, none)
}
