package offers_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/catalog"
	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// setRanking sets the shop's ranking settings through the owner's settings.
func (w *world) setRanking(t *testing.T, shop shops.Shop, r shops.Ranking, skipAfterNoShows *int) {
	t.Helper()
	_, err := w.shops.Update(context.Background(), shop.ID, shops.ShopChange{Ranking: &r,
		SkipAfterNoShows: skipAfterNoShows, SkipAfterNoShowsSet: true})
	require.NoError(t, err)
}

// pastOpening inserts an opening of the shop that ended before now, for a scene's
// history.
func (w *world) pastOpening(t *testing.T, shop shops.Shop, at time.Time) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	require.NoError(t, w.pool.QueryRow(context.Background(), `INSERT INTO slot_openings
		(shop_id, starts_at, duration_minutes, service, price_cents, status, created_at, updated_at)
		VALUES ($1, $2, 45, 'Colour', 6000, 'expired', $2, $2) RETURNING id`, shop.ID, at).Scan(&id))
	return id
}

// pastOffer records an offer texted to the customer at at.
func (w *world) pastOffer(t *testing.T, shop shops.Shop, customerID uuid.UUID, at time.Time) {
	t.Helper()
	_, err := w.pool.Exec(context.Background(), `INSERT INTO slot_offers
		(opening_id, customer_id, shop_id, generation, wave, status, created_at, sent_at)
		VALUES ($1, $2, $3, 1, 1, 'lost', $4, $4)`, w.pastOpening(t, shop, at), customerID, shop.ID, at)
	require.NoError(t, err)
}

// pastBooking records a booking the customer made at at, in status (payment_failed: a
// hold that lapsed), marked a no-show at at when noShow.
func (w *world) pastBooking(t *testing.T, shop shops.Shop, customerID uuid.UUID, at time.Time, status string, noShow bool) {
	t.Helper()
	var noShowAt *time.Time
	if noShow {
		noShowAt = &at
	}
	_, err := w.pool.Exec(context.Background(), `INSERT INTO bookings
		(opening_id, customer_id, shop_id, status, amount_cents, currency, created_at, updated_at, no_show_at)
		VALUES ($1, $2, $3, $4, 6000, 'gbp', $5, $5, $6)`, w.pastOpening(t, shop, at), customerID, shop.ID, status, at, noShowAt)
	require.NoError(t, err)
}

// waveOrder is who the opening's wave texted, by name, in rank order.
func (w *world) waveOrder(t *testing.T, openingID uuid.UUID, wave int) []string {
	t.Helper()
	rows, err := w.pool.Query(context.Background(), `SELECT c.name FROM slot_offers o JOIN customers c ON c.id = o.customer_id
		WHERE o.opening_id = $1 AND o.wave = $2 ORDER BY o.rank`, openingID, wave)
	require.NoError(t, err)
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return names
}

const day = 24 * time.Hour

// TestRankingsOrderAWave: a fixed list and history give a known order under each
// ranking, waitlist priority a hard tier above it; each texted customer's rank and the
// words of their reason are on the record.
//
//	        priority  last offered  last booked             no-shows, lapsed holds
//	Ada     1         1 hour ago    never (hold lapsed)     0, 1
//	Bea     0         2 days ago    30 days ago
//	Cy      0         10 days ago   never
//	Dee     0         never         5 days ago (no-show)    1, 0
//	Eve     0         never         never (hold lapsed)     0, 1
//	Fay     0         10 days ago   60 days ago
//
// Ada's lapsed hold keeps her first under reliable: the tier is above the ranking.
// With services, Cy and Eve want a colour (£90), the others a cut (£30).
func TestRankingsOrderAWave(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ranking shops.Ranking
		want    []string
		reasons map[string]string
	}{
		{shops.RankingPriority, []string{"Ada", "Bea", "Cy", "Dee", "Eve", "Fay"},
			map[string]string{"Ada": "priority 1, in list order", "Bea": "priority 0, in list order"}},
		{shops.RankingFair, []string{"Ada", "Eve", "Dee", "Cy", "Fay", "Bea"},
			map[string]string{
				"Ada": "priority 1, last offered less than an hour ago, never booked",
				"Eve": "priority 0, never offered before, never booked",
				"Dee": "priority 0, never offered before, last booked 5 days ago",
				"Fay": "priority 0, last offered 10 days ago, last booked 60 days ago",
			}},
		{shops.RankingReliable, []string{"Ada", "Cy", "Fay", "Bea", "Eve", "Dee"},
			map[string]string{
				"Cy":  "priority 0, no no-shows or lapsed holds in 180 days, last offered 10 days ago, never booked",
				"Dee": "priority 0, 1 no-show and 0 lapsed holds in 180 days, never offered before, last booked 5 days ago",
				"Eve": "priority 0, 0 no-shows and 1 lapsed hold in 180 days, never offered before, never booked",
			}},
		{shops.RankingValue, []string{"Ada", "Eve", "Cy", "Dee", "Fay", "Bea"},
			map[string]string{
				"Eve": "priority 0, service price £90.00, never offered before, never booked",
				"Bea": "priority 0, service price £30.00, last offered 2 days ago, last booked 30 days ago",
			}},
	} {
		t.Run(string(tc.ranking), func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			ctx := context.Background()
			p := policy
			p.WaveSize = 10
			shop := w.shop(t, p)
			w.setRanking(t, shop, tc.ranking, nil)
			cat := catalog.New(w.pool, w.clock.Now)
			_, err := cat.AddService(ctx, shop.ID, catalog.NewService{Name: "Cut", DurationMinutes: 30, PriceCents: 3000})
			require.NoError(t, err)
			_, err = cat.AddService(ctx, shop.ID, catalog.NewService{Name: "Colour", DurationMinutes: 45, PriceCents: 9000})
			require.NoError(t, err)
			now := w.clock.Now()
			ids := map[string]uuid.UUID{}
			for i, name := range []string{"Bea", "Cy", "Dee", "Eve", "Fay", "Ada"} {
				prio := 0
				if name == "Ada" {
					prio = 1
				}
				c, err := w.cust.Add(ctx, shop.ID, customers.NewCustomer{
					Phone: fmt.Sprintf("+4477009%05d", 40000+i), Name: name, SMSOptIn: true, Priority: prio,
				})
				require.NoError(t, err)
				want := "Cut"
				if name == "Cy" || name == "Eve" {
					want = "Colour"
				}
				_, err = w.cust.Update(ctx, shop.ID, c.ID, customers.Change{Preferences: &customers.Preferences{Services: []string{want}}})
				require.NoError(t, err)
				ids[name] = c.ID
				w.clock.Set(w.clock.Now().Add(time.Second)) // the list's order is the order they were added
			}
			w.pastOffer(t, shop, ids["Ada"], now.Add(-time.Hour+time.Minute))
			w.pastBooking(t, shop, ids["Ada"], now.Add(-40*day), "payment_failed", false)
			w.pastOffer(t, shop, ids["Bea"], now.Add(-2*day))
			w.pastBooking(t, shop, ids["Bea"], now.Add(-30*day), "confirmed", false)
			w.pastOffer(t, shop, ids["Cy"], now.Add(-10*day))
			w.pastBooking(t, shop, ids["Dee"], now.Add(-5*day), "confirmed", true)
			w.pastBooking(t, shop, ids["Eve"], now.Add(-20*day), "payment_failed", false)
			w.pastOffer(t, shop, ids["Fay"], now.Add(-10*day))
			w.pastBooking(t, shop, ids["Fay"], now.Add(-60*day), "confirmed", false)

			op := w.declare(t, shop, 5*time.Hour)
			res, err := w.offers.RunWave(ctx, jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 1})
			require.NoError(t, err)
			require.Equal(t, 6, res.Texted)
			require.Equal(t, tc.want, w.waveOrder(t, op.ID, 1), "the wave's order under %s", tc.ranking)

			rec, err := w.offers.Record(ctx, shop.ID, op.ID)
			require.NoError(t, err)
			require.Len(t, rec.Waves, 1)
			require.Equal(t, string(tc.ranking), rec.Waves[0].Ranking)
			got := map[string]string{}
			for i, tx := range rec.Waves[0].Texted {
				require.Equal(t, i+1, tx.Rank, "the record lists %s at rank %d", tx.Customer.Name, tx.Rank)
				require.Equal(t, tc.want[i], tx.Customer.Name)
				got[tx.Customer.Name] = tx.Reason
			}
			for name, reason := range tc.reasons {
				require.Equal(t, reason, got[name], "%s's reason", name)
			}
		})
	}
}
