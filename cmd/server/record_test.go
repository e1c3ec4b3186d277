package main

import (
	"context"
	"encoding/csv"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestOffersOnTheRecordOverHTTP: through the running server, an opening's record shows
// the wave, who it texted with rank and reason and how many it left out and why; the
// explanation of a customer left out names the reason and whether it still holds; a
// customer's history and stats follow the YES; a booking is marked attended or a
// no-show once its time has come, idempotently, and a no-show counts in the stats and,
// with skip_after_no_shows, keeps the customer out until cleared (issue 47).
func TestOffersOnTheRecordOverHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(nil, fastTune)
	ctx := context.Background()
	shop := e.newShop(base, "none", map[string]any{"wave_size": 2})
	type customer struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	add := func(phone, name string, optIn bool, priority int) customer {
		var c customer
		require.Equal(t, http.StatusCreated, e.api(base, http.MethodPost, "/api/customers", shop.APIKey,
			map[string]any{"phone": phone, "name": name, "sms_opt_in": optIn, "priority": priority}, &c))
		return c
	}
	ana := add("+15555550181", "Ana", true, 1)
	ben := add("+15555550182", "Ben", true, 0)
	cy := add("+15555550183", "Cy", false, 0) // no consent
	op := e.newOpening(base, shop, 3*time.Hour)
	e.eventually("two offers texted", func() bool { return e.opening(base, shop, op.ID).OffersSent == 2 })

	var rec struct {
		Waves []struct {
			N       int    `json:"n"`
			Ranking string `json:"ranking"`
			Texted  []struct {
				Customer customer `json:"customer"`
				Rank     int      `json:"rank"`
				Reason   string   `json:"reason"`
			} `json:"texted"`
			Skipped map[string]int `json:"skipped"`
		} `json:"waves"`
		Replies []struct {
			Customer customer `json:"customer"`
			Outcome  string   `json:"outcome"`
		} `json:"replies"`
	}
	require.Equal(t, http.StatusOK, e.api(base, http.MethodGet, "/api/openings/"+op.ID+"/offers", shop.APIKey, nil, &rec))
	require.Len(t, rec.Waves, 1)
	w := rec.Waves[0]
	require.Equal(t, 1, w.N)
	require.Equal(t, "priority", w.Ranking)
	require.Len(t, w.Texted, 2)
	require.Equal(t, "Ana", w.Texted[0].Customer.Name, "priority 1 first")
	require.Equal(t, 1, w.Texted[0].Rank)
	require.Contains(t, w.Texted[0].Reason, "priority 1")
	require.Equal(t, "Ben", w.Texted[1].Customer.Name)
	require.Equal(t, 1, w.Skipped["no_consent"], "Cy never agreed to texts")

	var ex struct {
		Texted     bool   `json:"texted"`
		Skip       string `json:"skip"`
		StillHolds bool   `json:"still_holds"`
		Words      string `json:"words"`
	}
	require.Equal(t, http.StatusOK, e.api(base, http.MethodGet, "/api/openings/"+op.ID+"/explain?customer_id="+cy.ID, shop.APIKey, nil, &ex))
	require.False(t, ex.Texted)
	require.Equal(t, "no_consent", ex.Skip)
	require.True(t, ex.StillHolds)
	require.True(t, strings.HasPrefix(ex.Words, "Cy was not texted"), ex.Words)
	require.Equal(t, http.StatusOK, e.api(base, http.MethodGet, "/api/openings/"+op.ID+"/explain?customer_id="+ana.ID, shop.APIKey, nil, &ex))
	require.True(t, ex.Texted, ex.Words)
	require.Equal(t, http.StatusNotFound, e.api(base, http.MethodGet, "/api/openings/"+op.ID+"/explain?customer_id=00000000-0000-0000-0000-000000000001", shop.APIKey, nil, nil))
	require.Equal(t, http.StatusUnprocessableEntity, e.api(base, http.MethodGet, "/api/openings/"+op.ID+"/explain", shop.APIKey, nil, nil))

	// Ben says YES; Ana says no.
	require.Equal(t, "booked", e.text(base, "+15555550182", shop.SMSNumber, "YES").Outcome)
	require.Equal(t, "declined", e.text(base, "+15555550181", shop.SMSNumber, "no thanks").Outcome)
	require.Equal(t, http.StatusOK, e.api(base, http.MethodGet, "/api/openings/"+op.ID+"/offers", shop.APIKey, nil, &rec))
	outcomes := map[string]string{}
	for _, r := range rec.Replies {
		outcomes[r.Customer.Name] = r.Outcome
	}
	require.Equal(t, map[string]string{"Ben": "booked", "Ana": "declined"}, outcomes)

	var hist struct {
		Offers []struct {
			Opening struct {
				ID string `json:"id"`
			} `json:"opening"`
			Wave    int    `json:"wave"`
			Outcome string `json:"outcome"`
		} `json:"offers"`
		NextBefore *time.Time `json:"next_before"`
	}
	require.Equal(t, http.StatusOK, e.api(base, http.MethodGet, "/api/customers/"+ben.ID+"/offers", shop.APIKey, nil, &hist))
	require.Len(t, hist.Offers, 1)
	require.Equal(t, op.ID, hist.Offers[0].Opening.ID)
	require.Equal(t, "booked", hist.Offers[0].Outcome)
	require.Nil(t, hist.NextBefore)
	require.Equal(t, http.StatusUnprocessableEntity, e.api(base, http.MethodGet, "/api/customers/"+ben.ID+"/offers?limit=0", shop.APIKey, nil, nil))

	// Attendance: not before the time; then once, whatever the clicks.
	booking := e.opening(base, shop, op.ID).Booking
	require.NotNil(t, booking)
	var errBody struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	require.Equal(t, http.StatusConflict, e.api(base, http.MethodPost, "/api/bookings/"+booking.ID+"/no_show", shop.APIKey, nil, &errBody))
	require.Equal(t, "too_early", errBody.Error.Code)
	_, err := e.pool.Exec(ctx, `UPDATE slot_openings SET starts_at = now() - interval '2 hours' WHERE id = $1`, op.ID)
	require.NoError(t, err)
	var mark struct {
		Attendance *string `json:"attendance"`
	}
	for range 3 {
		require.Equal(t, http.StatusOK, e.api(base, http.MethodPost, "/api/bookings/"+booking.ID+"/no_show", shop.APIKey, nil, &mark))
		require.Equal(t, "no_show", *mark.Attendance)
	}
	require.Equal(t, http.StatusNotFound, e.api(base, http.MethodPost, "/api/bookings/"+booking.ID+"/attended", e.newShop(base, "none", nil).APIKey, nil, nil),
		"another shop's booking")
	var stats struct {
		Offers90d   int `json:"offers_90d"`
		Bookings90d int `json:"bookings_90d"`
		NoShows     int `json:"no_shows"`
		Attended    int `json:"attended"`
	}
	require.Equal(t, http.StatusOK, e.api(base, http.MethodGet, "/api/customers/"+ben.ID+"/stats", shop.APIKey, nil, &stats))
	require.Equal(t, 1, stats.Offers90d)
	require.Equal(t, 1, stats.Bookings90d)
	require.Equal(t, 1, stats.NoShows)
	// Changed within the day: attended after all; then taken back.
	require.Equal(t, http.StatusOK, e.api(base, http.MethodPost, "/api/bookings/"+booking.ID+"/attended", shop.APIKey, nil, &mark))
	require.Equal(t, http.StatusOK, e.api(base, http.MethodGet, "/api/customers/"+ben.ID+"/stats", shop.APIKey, nil, &stats))
	require.Equal(t, []int{1, 0}, []int{stats.Attended, stats.NoShows})
	require.Equal(t, http.StatusOK, e.api(base, http.MethodDelete, "/api/bookings/"+booking.ID+"/attendance", shop.APIKey, nil, &mark))
	require.Nil(t, mark.Attendance)
	require.Equal(t, http.StatusOK, e.api(base, http.MethodPost, "/api/bookings/"+booking.ID+"/no_show", shop.APIKey, nil, &mark))

	// One no-show keeps Ben out of the next opening under skip_after_no_shows 1, until
	// the owner clears it.
	require.Equal(t, http.StatusOK, e.api(base, http.MethodPatch, "/api/shop", shop.APIKey, map[string]any{"skip_after_no_shows": 1}, nil))
	next := e.newOpening(base, shop, 4*time.Hour)
	e.eventually("the next opening's first wave", func() bool { return e.opening(base, shop, next.ID).OffersSent >= 1 })
	require.Equal(t, http.StatusOK, e.api(base, http.MethodGet, "/api/openings/"+next.ID+"/explain?customer_id="+ben.ID, shop.APIKey, nil, &ex))
	require.Equal(t, "no_shows", ex.Skip, ex.Words)
	require.Equal(t, http.StatusOK, e.api(base, http.MethodPost, "/api/customers/"+ben.ID+"/clear_no_shows", shop.APIKey, nil, &stats))
	require.Equal(t, http.StatusOK, e.api(base, http.MethodGet, "/api/openings/"+next.ID+"/explain?customer_id="+ben.ID, shop.APIKey, nil, &ex))
	require.False(t, ex.StillHolds, "cleared: the reason no longer holds: %s", ex.Words)

	// The customer's own answer carries the same stats.
	var withStats struct {
		Stats struct {
			NoShows int `json:"no_shows"`
		} `json:"stats"`
	}
	require.Equal(t, http.StatusOK, e.api(base, http.MethodGet, "/api/customers/"+ben.ID, shop.APIKey, nil, &withStats))
	require.Equal(t, 1, withStats.Stats.NoShows, "a clear keeps the no-show in the figures")

	// What the waitlist earned, from the same records: two openings, one filled at its
	// price, its booking a no-show; every offer sent counted once, by its outcome.
	from, to := time.Now().AddDate(0, 0, -3).Format(time.DateOnly), time.Now().AddDate(0, 0, 3).Format(time.DateOnly)
	var figures struct {
		From    string `json:"from"`
		GroupBy string `json:"group_by"`
		Totals  struct {
			Openings     int   `json:"openings"`
			Filled       int   `json:"filled"`
			OffersSent   int   `json:"offers_sent"`
			Bookings     int   `json:"bookings"`
			RevenueCents int64 `json:"revenue_cents"`
			NoShows      int   `json:"no_shows"`
			Replies      struct {
				Booked   int `json:"booked"`
				Declined int `json:"declined"`
				Missed   int `json:"missed"`
			} `json:"replies"`
		} `json:"totals"`
		Groups []struct {
			Key string `json:"key"`
		} `json:"groups"`
	}
	require.Equal(t, http.StatusOK, e.api(base, http.MethodGet, "/api/stats?from="+from+"&to="+to+"&group_by=service", shop.APIKey, nil, &figures))
	require.Equal(t, from, figures.From)
	require.Equal(t, "service", figures.GroupBy)
	tot := figures.Totals
	require.Equal(t, []int{2, 1, 1, 1}, []int{tot.Openings, tot.Filled, tot.Bookings, tot.NoShows}, "%+v", tot)
	require.Equal(t, int64(4500), tot.RevenueCents)
	// Ana's NO came after Ben's YES: her offer had already lost the race (missed).
	require.Equal(t, []int{1, 0, 1}, []int{tot.Replies.Booked, tot.Replies.Declined, tot.Replies.Missed})
	require.GreaterOrEqual(t, tot.OffersSent, 3, "two in the first opening's wave, the next one's first")
	require.Len(t, figures.Groups, 1)
	require.Equal(t, "Haircut", figures.Groups[0].Key)
	require.Equal(t, http.StatusUnprocessableEntity, e.api(base, http.MethodGet, "/api/stats?group_by=month", shop.APIKey, nil, &errBody))
	require.Equal(t, http.StatusUnprocessableEntity, e.api(base, http.MethodGet, "/api/stats?from="+to+"&to="+from, shop.APIKey, nil, nil))
	require.Equal(t, http.StatusUnauthorized, e.api(base, http.MethodGet, "/api/stats", "", nil, nil))

	// The same as a CSV file.
	req, err := http.NewRequest(http.MethodGet, base+"/api/stats?format=csv&group_by=service&from="+from+"&to="+to, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+shop.APIKey)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "text/csv; charset=utf-8", res.Header.Get("Content-Type"))
	rows, err := csv.NewReader(res.Body).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 3, "header, Haircut, totals: %v", rows)
	require.Equal(t, "Haircut", rows[1][slices.Index(rows[0], "key")], "%v", rows)
	require.Equal(t, "45.00", rows[2][slices.Index(rows[0], "revenue")], "%v", rows)
}
