package offers_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/inbound"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/offers"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// TestEveryReasonCountedAndExplained: a customer left out for each reason the wave
// judges is counted under it in the wave's record and explained ("why not Maria?"),
// with whether the reason still holds; the texted customer is explained by their wave,
// rank and reason; their NO is on the record as a reply, and in their history; an
// owner clearing a customer's no-shows makes the reason no longer hold, and the next
// wave counts those offered before as already offered.
func TestEveryReasonCountedAndExplained(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	p := policy
	p.WaveSize, p.MaxOffersPerDay = 1, 1
	shop := w.shop(t, p)
	one := 1
	w.setRanking(t, shop, shops.RankingPriority, &one)
	op := w.declare(t, shop, 5*time.Hour)
	now := w.clock.Now()

	ids := map[string]uuid.UUID{}
	phones := map[string]string{}
	order := []string{"Tex", "Maria", "NoConsent", "OptedOut", "OtherStaff", "OtherDay", "Cuts", "Capped", "NoShow", "Cooling", "Erased", "Paused", "PauseOver"}
	for i, name := range order {
		prio := 0
		if name == "Tex" {
			prio = 10
		}
		c, err := w.cust.Add(ctx, shop.ID, customers.NewCustomer{
			Phone: fmt.Sprintf("+4477009%05d", 50000+i), Name: name, SMSOptIn: name != "NoConsent", Priority: prio,
		})
		require.NoError(t, err)
		ids[name], phones[name] = c.ID, c.Phone
	}
	exec := func(sql string, args ...any) {
		t.Helper()
		_, err := w.pool.Exec(ctx, sql, args...)
		require.NoError(t, err)
	}
	exec(`UPDATE customers SET opted_out_at = $2 WHERE id = $1`, ids["OptedOut"], now)
	exec(`UPDATE customers SET pref_staff_ids = ARRAY[gen_random_uuid()] WHERE id = $1`, ids["OtherStaff"])
	otherDay := customers.ISODay(op.StartsAt.In(shop.Location).Weekday())%7 + 1
	_, err := w.cust.Update(ctx, shop.ID, ids["OtherDay"], customers.Change{Preferences: &customers.Preferences{Days: []int{otherDay}}})
	require.NoError(t, err)
	_, err = w.cust.Update(ctx, shop.ID, ids["Cuts"], customers.Change{Preferences: &customers.Preferences{Services: []string{"Haircut"}}})
	require.NoError(t, err)
	w.pastOffer(t, shop, ids["Capped"], now) // today's one offer, for another opening
	w.pastBooking(t, shop, ids["NoShow"], now.Add(-10*day), "confirmed", true)
	require.NoError(t, w.cool.Start(ctx, ids["Cooling"].String(), time.Hour))
	exec(`UPDATE customers SET erased_at = $2, phone = '' WHERE id = $1`, ids["Erased"], now)
	until, err := w.cust.Pause(ctx, ids["Paused"]) // texted PAUSE: 14 days without offers
	require.NoError(t, err)
	require.WithinDuration(t, now.Add(customers.PauseFor), until, time.Millisecond)
	exec(`UPDATE customers SET paused_until = $2 WHERE id = $1`, ids["PauseOver"], now.Add(-time.Minute)) // a pause that ended

	res, err := w.offers.RunWave(ctx, jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 1})
	require.NoError(t, err)
	require.Equal(t, 1, res.Texted)
	require.Len(t, w.twilio.MessagesTo(phones["Tex"]), 1)

	rec, err := w.offers.Record(ctx, shop.ID, op.ID)
	require.NoError(t, err)
	require.Len(t, rec.Waves, 1)
	require.Equal(t, offers.Skipped{OptedOut: 1, Cooldown: 1, DailyCap: 1, NoFitService: 1, NoFitStaff: 1, NoFitWindow: 1,
		NoConsent: 1, NoShows: 1, Paused: 1}, rec.Waves[0].Skipped, "one left out for each reason; the erased customer is not judged, and a pause that ended keeps nobody out")
	require.Equal(t, []offers.Texted{{Customer: offers.CustomerRef{ID: ids["Tex"], Name: "Tex"}, Rank: 1,
		Reason: "priority 10, in list order"}}, rec.Waves[0].Texted)
	require.Equal(t, 1, rec.Waves[0].N)

	for name, want := range map[string]offers.Skip{
		"NoConsent": offers.SkipNoConsent, "OptedOut": offers.SkipOptedOut, "OtherStaff": offers.SkipNoFitStaff,
		"OtherDay": offers.SkipNoFitWindow, "Cuts": offers.SkipNoFitService, "Capped": offers.SkipDailyCap,
		"NoShow": offers.SkipNoShows, "Cooling": offers.SkipCooldown, "Paused": offers.SkipPaused,
	} {
		ex, err := w.offers.Explain(ctx, shop.ID, op.ID, ids[name])
		require.NoError(t, err, name)
		require.False(t, ex.Texted, name)
		require.Equal(t, want, ex.Skip, "why not %s?", name)
		require.Equal(t, 1, ex.Wave, name)
		require.True(t, ex.StillHolds, "%s's reason still holds: %s", name, ex.Words)
		require.Equal(t, fmt.Sprintf("%s was not texted in wave 1: %s %s. This still holds.", name, name, want.Words()), ex.Words)
	}
	ex, err := w.offers.Explain(ctx, shop.ID, op.ID, ids["Maria"])
	require.NoError(t, err)
	require.Equal(t, offers.Explanation{Customer: offers.CustomerRef{ID: ids["Maria"], Name: "Maria"},
		Words: "Maria has not been texted yet: the waves so far were filled by customers ranked ahead. Nothing keeps Maria out now."}, ex)
	ex, err = w.offers.Explain(ctx, shop.ID, op.ID, ids["Tex"])
	require.NoError(t, err)
	require.True(t, ex.Texted)
	require.Equal(t, 1, ex.Wave)
	require.Equal(t, 1, ex.Rank)
	require.Equal(t, "Tex was texted in wave 1, ranked 1: priority 10, in list order.", ex.Words)
	_, err = w.offers.Explain(ctx, uuid.New(), op.ID, ids["Tex"])
	require.ErrorIs(t, err, offers.ErrOpeningNotFound, "another shop's opening")
	_, err = w.offers.Explain(ctx, shop.ID, op.ID, ids["Erased"])
	require.ErrorIs(t, err, customers.ErrNotFound)

	// Paused texts RESUME: the reason no longer holds.
	_, err = w.cust.Resume(ctx, ids["Paused"])
	require.NoError(t, err)
	ex, err = w.offers.Explain(ctx, shop.ID, op.ID, ids["Paused"])
	require.NoError(t, err)
	require.Equal(t, offers.SkipPaused, ex.Skip)
	require.False(t, ex.StillHolds)
	require.Equal(t, "Paused was not texted in wave 1: Paused paused offers by text for a while. That no longer holds: Paused may be texted in a later wave.", ex.Words)

	// Tex says NO: a reply on the record, and in Tex's history.
	w.clock.Set(now.Add(time.Minute))
	ans, err := w.inbound.Reply(ctx, inbound.Message{MessageSID: "SMrec1", From: phones["Tex"], To: shop.SMSNumber, Body: "NO"})
	require.NoError(t, err)
	require.Equal(t, inbound.OutcomeDeclined, ans.Outcome)
	hist, err := w.offers.History(ctx, shop.ID, ids["Tex"], time.Time{}, 0)
	require.NoError(t, err)
	require.Len(t, hist, 1)
	require.Equal(t, op.ID, hist[0].Opening.ID)
	require.Equal(t, 1, hist[0].Wave)
	require.Equal(t, offers.OutcomeDeclined, hist[0].Outcome)

	// The owner clears NoShow's no-shows: the reason no longer holds.
	require.NoError(t, w.cust.ClearNoShows(ctx, shop.ID, ids["NoShow"]))
	ex, err = w.offers.Explain(ctx, shop.ID, op.ID, ids["NoShow"])
	require.NoError(t, err)
	require.Equal(t, offers.SkipNoShows, ex.Skip)
	require.False(t, ex.StillHolds)
	require.Empty(t, ex.Now)
	require.Equal(t, "NoShow was not texted in wave 1: NoShow has too many no-shows in 180 days. That no longer holds: NoShow may be texted in a later wave.", ex.Words)

	w.clock.Set(now.Add(p.WaveInterval))
	_, err = w.offers.RunWave(ctx, jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 2})
	require.NoError(t, err)
	rec, err = w.offers.Record(ctx, shop.ID, op.ID)
	require.NoError(t, err)
	require.Len(t, rec.Waves, 2)
	require.Equal(t, 1, rec.Waves[1].Skipped.AlreadyOffered, "Tex, offered in wave 1 (and who said NO)")
	require.Zero(t, rec.Waves[1].Skipped.NoShows)
	require.Len(t, rec.Waves[1].Texted, 1)
	require.Equal(t, []offers.Reply{{Customer: offers.CustomerRef{ID: ids["Tex"], Name: "Tex"}, At: rec.Replies[0].At,
		Outcome: string(inbound.OutcomeDeclined)}}, rec.Replies)
	ex, err = w.offers.Explain(ctx, shop.ID, op.ID, ids["Tex"])
	require.NoError(t, err)
	require.True(t, ex.Texted, "a customer who said NO was still texted")
}

// TestExplainBeforeAnyWave: before any wave has run, an explanation says so, and names
// what would keep the customer out now: the shop's quiet hours, while they last.
func TestExplainBeforeAnyWave(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	london, err := time.LoadLocation("Europe/London")
	require.NoError(t, err)
	w.clock.Set(time.Date(2027, 6, 7, 22, 0, 0, 0, london)) // inside 21:00–08:00
	p := policy
	p.Quiet = &shops.QuietHours{Start: 21 * 60, End: 8 * 60}
	shop := w.shop(t, p)
	cs := w.customers(t, shop, 1)
	op := w.declare(t, shop, 14*time.Hour)

	ex, err := w.offers.Explain(ctx, shop.ID, op.ID, cs[0].ID)
	require.NoError(t, err)
	require.Equal(t, offers.SkipQuietHours, ex.Now)
	require.False(t, ex.StillHolds)
	require.Equal(t, "C0 has not been texted: no wave has run for this opening yet. Now C0 is not texted during the shop's quiet hours.", ex.Words)

	w.clock.Set(time.Date(2027, 6, 8, 9, 0, 0, 0, london))
	ex, err = w.offers.Explain(ctx, shop.ID, op.ID, cs[0].ID)
	require.NoError(t, err)
	require.Empty(t, ex.Now)
	require.Equal(t, "C0 has not been texted: no wave has run for this opening yet. Nothing keeps C0 out now.", ex.Words)
}
