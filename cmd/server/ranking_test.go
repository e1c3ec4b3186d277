package main

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRankingsOverHTTP: through the running server, a fixed list and history give a
// known wave order under each ranking the shop sets with PATCH /api/shop (waitlist
// priority a hard tier above it), and the record over HTTP gives each texted customer's
// rank and the words of their reason (issue 47). The history (past offers, bookings, a
// no-show, a lapsed hold) is written as SQL: it is what months of waves would leave.
//
//	        priority  last offered  last booked             no-shows, lapsed holds  service
//	Ada     1         1 hour ago    never                                           Cut $30
//	Bea     0         2 days ago    30 days ago                                     Cut
//	Cy      0         10 days ago   never                                           Colour $90
//	Dee     0         never         5 days ago (no-show)    1 no-show               Cut
//	Eve     0         never         never (hold lapsed)     1 lapsed hold           Colour
//	Fay     0         10 days ago   60 days ago                                     Cut
func TestRankingsOverHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(nil, fastTune)
	ctx := context.Background()
	const day = 24 * time.Hour
	for _, tc := range []struct {
		ranking string
		want    []string
		reasons map[string]string
	}{
		{"priority", []string{"Ada", "Bea", "Cy", "Dee", "Eve", "Fay"},
			map[string]string{"Ada": "priority 1, in list order", "Bea": "priority 0, in list order"}},
		{"fair", []string{"Ada", "Eve", "Dee", "Cy", "Fay", "Bea"},
			map[string]string{"Eve": "priority 0, never offered before, never booked",
				"Fay": "priority 0, last offered 10 days ago, last booked 60 days ago"}},
		{"reliable", []string{"Ada", "Cy", "Fay", "Bea", "Eve", "Dee"},
			map[string]string{"Dee": "priority 0, 1 no-show and 0 lapsed holds in 180 days, never offered before, last booked 5 days ago"}},
		{"value", []string{"Ada", "Eve", "Cy", "Dee", "Fay", "Bea"},
			map[string]string{"Eve": "priority 0, service price $90.00, never offered before, never booked"}},
	} {
		shop := e.newShop(base, "none", map[string]any{"wave_size": 10})
		require.Equal(t, http.StatusOK, e.api(base, http.MethodPatch, "/api/shop", shop.APIKey, map[string]any{"ranking": tc.ranking}, nil))
		for _, s := range []map[string]any{{"name": "Cut", "duration_minutes": 30, "price_cents": 3000},
			{"name": "Colour", "duration_minutes": 45, "price_cents": 9000}} {
			require.Equal(t, http.StatusCreated, e.api(base, http.MethodPost, "/api/services", shop.APIKey, s, nil))
		}
		ids := map[string]string{}
		for i, name := range []string{"Bea", "Cy", "Dee", "Eve", "Fay", "Ada"} {
			service, prio := "Cut", 0
			if name == "Cy" || name == "Eve" {
				service = "Colour"
			}
			if name == "Ada" {
				prio = 1
			}
			var c customerInfo
			require.Equal(t, http.StatusCreated, e.api(base, http.MethodPost, "/api/customers", shop.APIKey, map[string]any{
				"phone": fmt.Sprintf("+1555555%04d", 300+i), "name": name, "sms_opt_in": true, "priority": prio,
				"preferences": map[string]any{"services": []string{service}}}, &c))
			ids[name] = c.ID
			time.Sleep(2 * time.Millisecond) // the list's order is the order they were added
		}
		now := time.Now()
		past := func(at time.Time) string {
			var id string
			require.NoError(t, e.pool.QueryRow(ctx, `INSERT INTO slot_openings
				(shop_id, starts_at, duration_minutes, service, price_cents, status, created_at, updated_at)
				VALUES ($1, $2, 45, 'Colour', 6000, 'expired', $2, $2) RETURNING id`, shop.ID, at).Scan(&id))
			return id
		}
		offer := func(name string, ago time.Duration) {
			at := now.Add(-ago)
			_, err := e.pool.Exec(ctx, `INSERT INTO slot_offers (opening_id, customer_id, shop_id, generation, wave, status, created_at, sent_at)
				VALUES ($1, $2, $3, 1, 1, 'lost', $4, $4)`, past(at), ids[name], shop.ID, at)
			require.NoError(t, err)
		}
		booking := func(name string, ago time.Duration, status string, noShow bool) {
			at := now.Add(-ago)
			var noShowAt *time.Time
			if noShow {
				noShowAt = &at
			}
			_, err := e.pool.Exec(ctx, `INSERT INTO bookings (opening_id, customer_id, shop_id, status, amount_cents, currency, created_at, updated_at, no_show_at)
				VALUES ($1, $2, $3, $4, 6000, 'usd', $5, $5, $6)`, past(at), ids[name], shop.ID, status, at, noShowAt)
			require.NoError(t, err)
		}
		offer("Ada", time.Hour-time.Minute)
		offer("Bea", 2*day)
		booking("Bea", 30*day, "confirmed", false)
		offer("Cy", 10*day)
		booking("Dee", 5*day, "confirmed", true)
		booking("Eve", 20*day, "payment_failed", false)
		offer("Fay", 10*day)
		booking("Fay", 60*day, "confirmed", false)

		var op openingInfo
		require.Equal(t, http.StatusCreated, e.api(base, http.MethodPost, "/api/openings", shop.APIKey, map[string]any{
			"starts_at": time.Now().Add(5 * time.Hour).UTC().Truncate(time.Second).Format(time.RFC3339), "duration_minutes": 45,
			"service": "Colour", "price_cents": 6000}, &op))
		e.eventually(tc.ranking+": six offers", func() bool { return e.opening(base, shop, op.ID).OffersSent == 6 })
		var rec struct {
			Waves []struct {
				Ranking string `json:"ranking"`
				Texted  []struct {
					Customer struct {
						Name string `json:"name"`
					} `json:"customer"`
					Rank   int    `json:"rank"`
					Reason string `json:"reason"`
				} `json:"texted"`
			} `json:"waves"`
		}
		require.Equal(t, http.StatusOK, e.api(base, http.MethodGet, "/api/openings/"+op.ID+"/offers", shop.APIKey, nil, &rec))
		require.Len(t, rec.Waves, 1, tc.ranking)
		require.Equal(t, tc.ranking, rec.Waves[0].Ranking)
		var order []string
		got := map[string]string{}
		for i, tx := range rec.Waves[0].Texted {
			require.Equal(t, i+1, tx.Rank, "%s: %s's rank", tc.ranking, tx.Customer.Name)
			order = append(order, tx.Customer.Name)
			got[tx.Customer.Name] = tx.Reason
		}
		require.Equal(t, tc.want, order, "the wave's order under %s", tc.ranking)
		for name, reason := range tc.reasons {
			require.Equal(t, reason, got[name], "%s: %s's reason", tc.ranking, name)
		}
	}
}
