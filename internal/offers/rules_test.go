package offers_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/catalog"
	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/slots"
)

// TestPreferencesAndDailyCapDecideWhoIsTexted: a wave texts only customers whose
// preferences contain the opening (day, a window holding the whole appointment,
// service) or who have none, and no one past the shop's daily cap, counted in the shop's
// local day.
func TestPreferencesAndDailyCapDecideWhoIsTexted(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	london, err := time.LoadLocation("Europe/London")
	require.NoError(t, err)
	// Monday 7 June 2027, 08:00 in London (BST, UTC+1).
	w.clock.Set(time.Date(2027, 6, 7, 8, 0, 0, 0, london))
	p := policy
	p.WaveSize, p.MaxOffersPerDay = 20, 1
	shop := w.shop(t, p)

	named := map[string]customers.Preferences{
		"any":       {},
		"mondays":   {Days: []int{1}},
		"tuesdays":  {Days: []int{2}},
		"afternoon": {Windows: []customers.Window{{Start: 13 * 60, End: 16 * 60}}},
		"morning":   {Windows: []customers.Window{{Start: 9 * 60, End: 12 * 60}}},
		"tight":     {Windows: []customers.Window{{Start: 14 * 60, End: 14*60 + 30}}}, // 14:00–14:45 does not fit
		"colour":    {Services: []string{"colour"}},                                   // any case
		"cuts":      {Services: []string{"Haircut"}, Days: []int{1, 2, 3, 4, 5}},
	}
	order := []string{"any", "mondays", "tuesdays", "afternoon", "morning", "tight", "colour", "cuts"}
	phones := map[string]string{}
	for i, name := range order {
		c, err := w.cust.Add(ctx, shop.ID, customers.NewCustomer{
			Phone: fmt.Sprintf("+4477009%05d", 20000+i), Name: name, SMSOptIn: true,
		})
		require.NoError(t, err)
		prefs := named[name]
		_, err = w.cust.Update(ctx, shop.ID, c.ID, customers.Change{Preferences: &prefs})
		require.NoError(t, err)
		phones[name] = c.Phone
	}

	texted := func(opening slots.Opening) []string {
		t.Helper()
		before := map[string]int{}
		for n, ph := range phones {
			before[n] = len(w.twilio.MessagesTo(ph))
		}
		_, err := w.offers.RunWave(ctx, jobs.Wave{OpeningID: opening.ID, Generation: 1, Wave: 1})
		require.NoError(t, err)
		var got []string
		for _, n := range order {
			if len(w.twilio.MessagesTo(phones[n])) > before[n] {
				got = append(got, n)
			}
		}
		return got
	}
	declare := func(at time.Time, minutes int, service string) slots.Opening {
		t.Helper()
		o, err := w.slots.Declare(ctx, shop, slots.NewOpening{StartsAt: at, DurationMinutes: minutes, Service: service, PriceCents: 4000})
		require.NoError(t, err)
		return o
	}

	// Monday 14:00–14:45, Colour.
	a := declare(time.Date(2027, 6, 7, 14, 0, 0, 0, london), 45, "Colour")
	require.Equal(t, []string{"any", "mondays", "afternoon", "colour"}, texted(a))

	// Monday 18:00, Haircut: "any" and "mondays" would like it but had their one offer
	// today; "cuts" wants a haircut on a weekday and has had none.
	b := declare(time.Date(2027, 6, 7, 18, 0, 0, 0, london), 30, "Haircut")
	require.Equal(t, []string{"cuts"}, texted(b))

	// 00:30 on Tuesday in London is still Monday in UTC: the cap counts the shop's day,
	// so it has started afresh.
	w.clock.Set(time.Date(2027, 6, 8, 0, 30, 0, 0, london))
	require.Equal(t, 7, w.clock.Now().UTC().Day(), "still Monday in UTC")
	c := declare(time.Date(2027, 6, 8, 14, 0, 0, 0, london), 45, "Colour")
	require.Equal(t, []string{"any", "tuesdays", "afternoon", "colour"}, texted(c))
}

// TestFirstWaveWaitsForTheGracePeriod: with first_wave_delay_seconds, the first wave
// texts no one until the grace period after the declaration is over; an opening
// cancelled within it is never offered.
func TestFirstWaveWaitsForTheGracePeriod(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	p := policy
	p.FirstWaveDelay = 2 * time.Minute
	shop := w.shop(t, p)
	w.customers(t, shop, 2)

	op := w.declare(t, shop, 5*time.Hour)
	res, err := w.offers.RunWave(ctx, jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 1})
	require.NoError(t, err)
	require.Zero(t, res.Texted)
	require.WithinDuration(t, op.CreatedAt.Add(2*time.Minute), res.SnoozeTo, time.Millisecond)
	require.Zero(t, w.twilio.Count())

	w.clock.Set(w.clock.Now().Add(2 * time.Minute))
	res, err = w.offers.RunWave(ctx, jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 1})
	require.NoError(t, err)
	require.Equal(t, 2, res.Texted)

	// Declared by mistake and cancelled within the grace period: nobody is texted.
	mistake := w.declare(t, shop, 6*time.Hour)
	_, err = w.slots.Cancel(ctx, shop.ID, mistake.ID)
	require.NoError(t, err)
	w.clock.Set(w.clock.Now().Add(2 * time.Minute))
	res, err = w.offers.RunWave(ctx, jobs.Wave{OpeningID: mistake.ID, Generation: 1, Wave: 1})
	require.NoError(t, err)
	require.Equal(t, "not_open", res.Stopped)
	require.Equal(t, 2, w.twilio.Count())
}

// TestErasedCustomerIsNeverTextedAgain: neither a wave nor a text queued before the
// erasure (addressed to the old number) reaches an erased customer.
func TestErasedCustomerIsNeverTextedAgain(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	shop := w.shop(t, policy)
	cs := w.customers(t, shop, 2)
	require.NoError(t, w.erasure.Erase(ctx, shop.ID, cs[0].ID))

	op := w.declare(t, shop, 5*time.Hour)
	res, err := w.offers.RunWave(ctx, jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 1})
	require.NoError(t, err)
	require.Equal(t, 1, res.Texted)
	require.Empty(t, w.twilio.MessagesTo(cs[0].Phone))

	queued := jobs.Text{Key: "k", ShopID: shop.ID, From: shop.SMSNumber, To: cs[0].Phone, Body: "You're booked"}
	require.NoError(t, w.outbox.SendText(ctx, queued))
	queued.To = ""
	require.NoError(t, w.outbox.SendText(ctx, queued))
	require.Empty(t, w.twilio.MessagesTo(cs[0].Phone))
	// A stranger (not a customer, never erased) still gets a reply.
	queued.To = "+447700900999"
	require.NoError(t, w.outbox.SendText(ctx, queued))
	require.Len(t, w.twilio.MessagesTo("+447700900999"), 1)
}

// TestWindowsHoldTheOfferedServiceNotTheWholeGap: in a shop with services, a customer's
// time window must hold the service they would be offered, from the opening's start, not
// the whole freed gap: a 90-minute gap with Ana reaches someone whose 14:00–14:30 window
// fits the 30-minute cut they are offered, and someone who wants a colour first but whose
// window holds only a cut is offered the cut. A window that starts after the opening, or
// too short for any of their services, still keeps them out.
func TestWindowsHoldTheOfferedServiceNotTheWholeGap(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	london, err := time.LoadLocation("Europe/London")
	require.NoError(t, err)
	w.clock.Set(time.Date(2027, 6, 7, 8, 0, 0, 0, london))
	p := policy
	p.WaveSize = 20
	shop := w.shop(t, p)
	cat := catalog.New(w.pool, w.clock.Now)
	ana, err := cat.AddStaff(ctx, shop.ID, "Ana")
	require.NoError(t, err)
	_, err = cat.AddService(ctx, shop.ID, catalog.NewService{Name: "Cut", DurationMinutes: 30, PriceCents: 3000})
	require.NoError(t, err)
	_, err = cat.AddService(ctx, shop.ID, catalog.NewService{Name: "Colour", DurationMinutes: 90, PriceCents: 9000, StaffIDs: []uuid.UUID{ana.ID}})
	require.NoError(t, err)

	win := func(from, to int) []customers.Window { return []customers.Window{{Start: from, End: to}} }
	named := map[string]customers.Preferences{
		"cut-early":     {Services: []string{"Cut"}, Windows: win(14*60, 14*60+30)},
		"colour-or-cut": {Services: []string{"Colour", "Cut"}, Windows: win(14*60, 14*60+45)},
		"colour-wide":   {Services: []string{"Colour"}, Windows: win(13*60, 16*60)},
		"cut-later":     {Services: []string{"Cut"}, Windows: win(14*60+30, 16*60)},
		"colour-tight":  {Services: []string{"Colour"}, Windows: win(14*60, 15*60)},
	}
	order := []string{"cut-early", "colour-or-cut", "colour-wide", "cut-later", "colour-tight"}
	phones := map[string]string{}
	for i, name := range order {
		c, err := w.cust.Add(ctx, shop.ID, customers.NewCustomer{
			Phone: fmt.Sprintf("+4477009%05d", 30000+i), Name: name, SMSOptIn: true, Priority: len(order) - i,
		})
		require.NoError(t, err)
		prefs := named[name]
		_, err = w.cust.Update(ctx, shop.ID, c.ID, customers.Change{Preferences: &prefs})
		require.NoError(t, err)
		phones[name] = c.Phone
	}

	// Monday 14:00, 90 minutes of Ana's time.
	gap, err := w.slots.Declare(ctx, shop, slots.NewOpening{
		StartsAt: time.Date(2027, 6, 7, 14, 0, 0, 0, london), DurationMinutes: 90, StaffID: ana.ID,
	})
	require.NoError(t, err)
	_, err = w.offers.RunWave(ctx, jobs.Wave{OpeningID: gap.ID, Generation: 1, Wave: 1})
	require.NoError(t, err)

	offered := map[string]string{} // customer → the service their offer names
	rows, err := w.pool.Query(ctx, `SELECT c.name, o.service FROM slot_offers o JOIN customers c ON c.id = o.customer_id
		WHERE o.opening_id = $1`, gap.ID)
	require.NoError(t, err)
	for rows.Next() {
		var name, service string
		require.NoError(t, rows.Scan(&name, &service))
		offered[name] = service
	}
	require.NoError(t, rows.Err())
	require.Equal(t, map[string]string{"cut-early": "Cut", "colour-or-cut": "Cut", "colour-wide": "Colour"}, offered)
	for _, name := range []string{"cut-early", "colour-or-cut", "colour-wide"} {
		msgs := w.twilio.MessagesTo(phones[name])
		require.Len(t, msgs, 1, name)
		require.Contains(t, msgs[0].Body, offered[name], name)
	}
	for _, name := range []string{"cut-later", "colour-tight"} {
		require.Empty(t, w.twilio.MessagesTo(phones[name]), name)
	}
}
