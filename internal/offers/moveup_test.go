package offers_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/book"
	"github.com/slotrecovery/slotrecovery/internal/connectors"
	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/inbound"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/offers"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/testkit/twiliofake"
	"github.com/slotrecovery/slotrecovery/internal/texts"
)

// TestMoveUpFirstWave: with move-ups on, an opening's first wave texts first the
// customers who asked to move up and hold a later booking it can hold (same service,
// within move_up_days, later than the opening), with the move-up text, then the
// waitlist; nobody else with an appointment is asked. The first mover's YES moves them
// (the answer names both times) and declares their former time as the chain's next
// opening, whose first wave offers it to the next mover; a mover who lost the race
// keeps their booking and is told so.
func TestMoveUpFirstWave(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	bk := book.New(w.pool, w.shops, w.slots, book.Config{Now: w.clock.Now})
	w.offers = offers.New(w.pool, w.queue, w.texter, w.cool, w.shops, w.cust, w.slots, offers.Config{Now: w.clock.Now, MoveUps: true})
	w.inbound = inbound.New(w.pool, w.queue, w.shops, w.cust, w.slots, nil, inbound.Config{Now: w.clock.Now, Mover: bk})
	p := policy
	p.WaveSize = 3
	shop := w.shop(t, p)
	waitlist := w.customers(t, shop, 2)
	op := w.declare(t, shop, 5*time.Hour)

	// who adds a customer, with move_up as given, holding a booked appointment of svc at.
	who := func(phone string, moveUp bool, svc string, at time.Time) (customers.Customer, uuid.UUID) {
		c, err := w.cust.Add(ctx, shop.ID, customers.NewCustomer{Phone: phone, Name: phone[len(phone)-3:], SMSOptIn: true, MoveUp: moveUp})
		require.NoError(t, err)
		res, err := bk.Upsert(ctx, shop, connectors.Appointment{Source: connectors.SourceAPI, ExternalID: phone,
			Status: connectors.StatusBooked, StartsAt: at, DurationMinutes: 45, Service: svc, PriceCents: 6000, Phone: phone,
			Version: 1, UpdatedAt: w.clock.Now()})
		require.NoError(t, err)
		return c, res.Appointment.ID
	}
	kim, kimAppt := who("+447700900201", true, "Colour", op.StartsAt.Add(48*time.Hour))
	lia, liaAppt := who("+447700900202", true, "colour", op.StartsAt.Add(72*time.Hour))
	other, _ := who("+447700900203", true, "Cut", op.StartsAt.Add(50*time.Hour))         // another service
	notAsked, _ := who("+447700900204", false, "Colour", op.StartsAt.Add(51*time.Hour))  // did not ask to move up
	tooFar, _ := who("+447700900205", true, "Colour", op.StartsAt.Add(20*24*time.Hour))  // past move_up_days (14)
	earlier, _ := who("+447700900206", true, "Colour", op.StartsAt.Add(-30*time.Minute)) // not later
	kimAt, liaAt := op.StartsAt.Add(48*time.Hour), op.StartsAt.Add(72*time.Hour)

	res, err := w.offers.RunWave(ctx, jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 1})
	require.NoError(t, err)
	require.Equal(t, 3, res.Texted, "two movers ahead of the waitlist, in the wave's size")
	en := texts.In("en")
	require.Equal(t, []string{en.MoveUpOffer(&shop, "Colour", op.StartsAt, kimAt)}, bodies(w.twilio.MessagesTo(kim.Phone)))
	require.Equal(t, []string{en.MoveUpOffer(&shop, "Colour", op.StartsAt, liaAt)}, bodies(w.twilio.MessagesTo(lia.Phone)))
	require.Len(t, w.twilio.MessagesTo(waitlist[0].Phone), 1, "then the waitlist")
	require.Empty(t, w.twilio.MessagesTo(waitlist[1].Phone))
	for _, c := range []customers.Customer{other, notAsked, tooFar, earlier} {
		require.Empty(t, w.twilio.MessagesTo(c.Phone), c.Phone)
	}

	ans, err := w.inbound.Reply(ctx, inbound.Message{MessageSID: "SMkim", From: kim.Phone, To: shop.SMSNumber, Body: "YES"})
	require.NoError(t, err)
	require.Equal(t, inbound.OutcomeBooked, ans.Outcome)
	require.Equal(t, en.MovedUp(&shop, "Colour", op.StartsAt, kimAt), ans.Message)
	cooling, err := w.cool.Cooling(ctx, []string{kim.ID.String()})
	require.NoError(t, err)
	require.True(t, cooling[kim.ID.String()], "a move is a booking: Kim cools down, so no plain offer of the chain's next time follows her move")
	ans, err = w.inbound.Reply(ctx, inbound.Message{MessageSID: "SMlia", From: lia.Phone, To: shop.SMSNumber, Body: "YES"})
	require.NoError(t, err)
	require.Equal(t, inbound.OutcomeTaken, ans.Outcome)
	require.Equal(t, en.MoveUpTaken(&shop, liaAt), ans.Message)
	ans, err = w.inbound.Reply(ctx, inbound.Message{MessageSID: "SMw0", From: waitlist[0].Phone, To: shop.SMSNumber, Body: "YES"})
	require.NoError(t, err)
	require.Equal(t, inbound.OutcomeTaken, ans.Outcome)

	moved, err := bk.Get(ctx, shop.ID, kimAppt)
	require.NoError(t, err)
	require.Equal(t, connectors.StatusMoved, moved.Status)
	kept, err := bk.Get(ctx, shop.ID, liaAppt)
	require.NoError(t, err)
	require.Equal(t, connectors.StatusBooked, kept.Status, "the loser keeps their booking")

	// Kim's former time is the chain's next opening; its first wave offers it to Lia.
	decl, err := bk.Declarations(ctx, shop.ID, kimAppt)
	require.NoError(t, err)
	require.Len(t, decl, 1)
	require.Equal(t, book.DeclarationDeclared, decl[0].State, "%+v", decl[0])
	var next uuid.UUID
	var position int
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT id, chain_position FROM slot_openings WHERE chain_id = $1 AND chain_moved_from = $2`,
		op.ID, kimAppt).Scan(&next, &position))
	require.Equal(t, 1, position)
	res, err = w.offers.RunWave(ctx, jobs.Wave{OpeningID: next, Generation: 1, Wave: 1})
	require.NoError(t, err)
	liaTexts := bodies(w.twilio.MessagesTo(lia.Phone))
	require.Len(t, liaTexts, 2)
	require.Equal(t, en.MoveUpOffer(&shop, "Colour", kimAt, liaAt), liaTexts[1])
	require.Len(t, bodies(w.twilio.MessagesTo(kim.Phone)), 1, "Kim was moved in this chain already and holds no later booking")
	ans, err = w.inbound.Reply(ctx, inbound.Message{MessageSID: "SMlia2", From: lia.Phone, To: shop.SMSNumber, Body: "yes"})
	require.NoError(t, err)
	require.Equal(t, inbound.OutcomeBooked, ans.Outcome, ans.Message)
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT chain_position FROM slot_openings WHERE chain_id = $1 AND chain_moved_from = $2`,
		op.ID, liaAppt).Scan(&position))
	require.Equal(t, 2, position)
}

// TestChainStopsAtChainMax: an opening the chain reached with chain_max moves is offered
// to the waitlist only.
func TestChainStopsAtChainMax(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	bk := book.New(w.pool, w.shops, w.slots, book.Config{Now: w.clock.Now})
	w.offers = offers.New(w.pool, w.queue, w.texter, w.cool, w.shops, w.cust, w.slots, offers.Config{Now: w.clock.Now, MoveUps: true})
	shop := w.shop(t, policy)
	_, err := w.pool.Exec(ctx, `UPDATE shops SET chain_max = 1 WHERE id = $1`, shop.ID)
	require.NoError(t, err)
	op := w.declare(t, shop, 5*time.Hour)
	c, err := w.cust.Add(ctx, shop.ID, customers.NewCustomer{Phone: "+447700900301", SMSOptIn: true, MoveUp: true})
	require.NoError(t, err)
	_, err = bk.Upsert(ctx, shop, connectors.Appointment{Source: connectors.SourceAPI, ExternalID: "x", Status: connectors.StatusBooked,
		StartsAt: op.StartsAt.Add(24 * time.Hour), DurationMinutes: 45, Service: "Colour", PriceCents: 6000, Phone: c.Phone,
		Version: 1, UpdatedAt: w.clock.Now()})
	require.NoError(t, err)
	// The opening is the chain's first move already (as a move-up's freed time is).
	_, err = w.pool.Exec(ctx, `UPDATE slot_openings SET chain_id = gen_random_uuid(), chain_position = 1,
		chain_moved_from = (SELECT id FROM appointments LIMIT 1) WHERE id = $1`, op.ID)
	require.NoError(t, err)
	_, err = w.offers.RunWave(ctx, jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 1})
	require.NoError(t, err)
	var moveUps int
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT count(*) FROM slot_offers WHERE move_from IS NOT NULL`).Scan(&moveUps))
	require.Zero(t, moveUps, "chain_max reached: no more moves")
	require.Equal(t, []string{en(shop, op)}, bodies(w.twilio.MessagesTo(c.Phone)), "a plain offer, as to the waitlist")
	_, err = w.pool.Exec(ctx, `UPDATE shops SET chain_max = 2 WHERE id = $1`, shop.ID)
	require.NoError(t, err)
	op2 := w.declare(t, shop, 6*time.Hour)
	_, err = w.pool.Exec(ctx, `UPDATE slot_openings SET chain_id = gen_random_uuid(), chain_position = 1,
		chain_moved_from = (SELECT id FROM appointments LIMIT 1) WHERE id = $1`, op2.ID)
	require.NoError(t, err)
	_, err = w.offers.RunWave(ctx, jobs.Wave{OpeningID: op2.ID, Generation: 1, Wave: 1})
	require.NoError(t, err)
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT count(*) FROM slot_offers WHERE move_from IS NOT NULL AND opening_id = $1`, op2.ID).Scan(&moveUps))
	require.Equal(t, 1, moveUps, "below chain_max: a move-up")
	require.Equal(t, texts.In("en").MoveUpOffer(&shop, "Colour", op2.StartsAt, op.StartsAt.Add(24*time.Hour)), bodies(w.twilio.MessagesTo(c.Phone))[1])
}

// en is the plain English offer of op.
func en(shop shops.Shop, op slots.Opening) string {
	return texts.In("en").Offer(&shop, op.Service, op.StartsAt, op.PriceCents)
}

// bodies are the texts of messages, in order.
func bodies(ms []twiliofake.Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Body)
	}
	return out
}

// TestMoveUpYesStorm: every mover of a first wave says YES at once through the reply
// path (each text delivered twice, as Twilio may): exactly one booking, one appointment
// moved, the same answer to each redelivery, and every other mover told that their own
// booking stays.
func TestMoveUpYesStorm(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	bk := book.New(w.pool, w.shops, w.slots, book.Config{Now: w.clock.Now})
	w.offers = offers.New(w.pool, w.queue, w.texter, w.cool, w.shops, w.cust, w.slots, offers.Config{Now: w.clock.Now, MoveUps: true})
	w.inbound = inbound.New(w.pool, w.queue, w.shops, w.cust, w.slots, nil, inbound.Config{Now: w.clock.Now, Mover: bk})
	p := policy
	const n = 10
	p.WaveSize = n
	shop := w.shop(t, p)
	op := w.declare(t, shop, 5*time.Hour)
	phones := make([]string, n)
	keeps := map[string]time.Time{}
	for i := range n {
		phones[i] = fmt.Sprintf("+4477009004%02d", i)
		_, err := w.cust.Add(ctx, shop.ID, customers.NewCustomer{Phone: phones[i], SMSOptIn: true, MoveUp: true})
		require.NoError(t, err)
		at := op.StartsAt.Add(time.Duration(24+i) * time.Hour)
		keeps[phones[i]] = at
		_, err = bk.Upsert(ctx, shop, connectors.Appointment{Source: connectors.SourceAPI, ExternalID: phones[i],
			Status: connectors.StatusBooked, StartsAt: at, DurationMinutes: 45, Service: "Colour", PriceCents: 6000,
			Phone: phones[i], Version: 1, UpdatedAt: w.clock.Now()})
		require.NoError(t, err)
	}
	res, err := w.offers.RunWave(ctx, jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 1})
	require.NoError(t, err)
	require.Equal(t, n, res.Texted)

	answers := make([]inbound.Answer, 2*n)
	errs := make([]error, 2*n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 2 * n {
		wg.Go(func() {
			<-start
			answers[i], errs[i] = w.inbound.Reply(ctx, inbound.Message{MessageSID: fmt.Sprintf("SMstorm%02d", i%n),
				From: phones[i%n], To: shop.SMSNumber, Body: "YES"})
		})
	}
	close(start)
	wg.Wait()
	en := texts.In("en")
	booked := 0
	for i := range n {
		require.NoError(t, errs[i])
		require.NoError(t, errs[i+n])
		require.Equal(t, answers[i].Outcome, answers[i+n].Outcome, "a redelivery gets the same answer")
		a := answers[i] // the first delivery's answer, not the replay's
		if a.Replayed {
			a = answers[i+n]
		}
		require.False(t, a.Replayed)
		switch a.Outcome {
		case inbound.OutcomeBooked:
			booked++
			require.Equal(t, en.MovedUp(&shop, "Colour", op.StartsAt, keeps[phones[i]]), a.Message)
		case inbound.OutcomeTaken:
			require.Equal(t, en.MoveUpTaken(&shop, keeps[phones[i]]), a.Message, "the loser keeps their booking and learns so")
		default:
			t.Fatalf("%s: %+v", phones[i], a)
		}
	}
	require.Equal(t, 1, booked)
	var bookings, moved, stillBooked int
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT count(*) FROM bookings WHERE opening_id = $1`, op.ID).Scan(&bookings))
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status = 'moved'), count(*) FILTER (WHERE status = 'booked')
		FROM appointments WHERE shop_id = $1`, shop.ID).Scan(&moved, &stillBooked))
	require.Equal(t, 1, bookings)
	require.Equal(t, 1, moved)
	require.Equal(t, n-1, stillBooked)
}

// TestMoveUpInAShopThatTakesPayments: the appointment moved carried no payment of ours,
// so the move's booking goes through the shop's normal payment flow: held for payment
// (pending_payment, a checkout hold), answered as any booking whose link follows.
func TestMoveUpInAShopThatTakesPayments(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	bk := book.New(w.pool, w.shops, w.slots, book.Config{Now: w.clock.Now})
	w.offers = offers.New(w.pool, w.queue, w.texter, w.cool, w.shops, w.cust, w.slots, offers.Config{Now: w.clock.Now, MoveUps: true})
	w.inbound = inbound.New(w.pool, w.queue, w.shops, w.cust, w.slots, nil, inbound.Config{Now: w.clock.Now, Mover: bk})
	p := policy
	p.SendRate = shops.DefaultPolicy.SendRate
	shop, _, err := shops.New(w.pool, shops.Config{Now: w.clock.Now, PaymentsEnabled: true}).Create(ctx, shops.NewShop{
		Name: "Ana's Salon", Timezone: "Europe/London", SMSNumber: "+447700900001", Currency: "gbp",
		PaymentMode: shops.PaymentCheckout, Policy: p.Fields(),
	})
	require.NoError(t, err)
	op := w.declare(t, shop, 5*time.Hour)
	kim, err := w.cust.Add(ctx, shop.ID, customers.NewCustomer{Phone: "+447700900501", SMSOptIn: true, MoveUp: true})
	require.NoError(t, err)
	res, err := bk.Upsert(ctx, shop, connectors.Appointment{Source: connectors.SourceAPI, ExternalID: "k", Status: connectors.StatusBooked,
		StartsAt: op.StartsAt.Add(24 * time.Hour), DurationMinutes: 45, Service: "Colour", PriceCents: 6000, Phone: kim.Phone,
		Version: 1, UpdatedAt: w.clock.Now()})
	require.NoError(t, err)
	_, err = w.offers.RunWave(ctx, jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 1})
	require.NoError(t, err)
	ans, err := w.inbound.Reply(ctx, inbound.Message{MessageSID: "SMpay", From: kim.Phone, To: shop.SMSNumber, Body: "YES"})
	require.NoError(t, err)
	require.Equal(t, inbound.OutcomeBooked, ans.Outcome)
	require.Equal(t, ledger.BookedText(texts.In("en"), shop, "Colour", "", op.StartsAt, false, "", w.clock.Now()), ans.Message,
		"the booking's answer, its link to follow (no payments here)")
	var status string
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT status FROM bookings WHERE opening_id = $1`, op.ID).Scan(&status))
	require.Equal(t, "pending_payment", status)
	moved, err := bk.Get(ctx, shop.ID, res.Appointment.ID)
	require.NoError(t, err)
	require.Equal(t, connectors.StatusMoved, moved.Status)
}

// TestMoveUpOfYesBookingFirstWave: a booking made by a YES moves too. Kim holds a
// confirmed, paid YES booking 48 hours after an opening; the opening's first wave texts
// her the move-up (the offer names her booking, slot_offers.move_from_booking); her YES
// moves her (the answer names both times and carries no payment link: the payment
// moved with her), her booking is moved, and its opening is offered again as the
// chain's first link, whose first wave texts Lia (a later YES booking) the move-up,
// and never Kim again.
func TestMoveUpOfYesBookingFirstWave(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	bk := book.New(w.pool, w.shops, w.slots, book.Config{Now: w.clock.Now, Queue: w.queue})
	w.offers = offers.New(w.pool, w.queue, w.texter, w.cool, w.shops, w.cust, w.slots, offers.Config{Now: w.clock.Now, MoveUps: true})
	w.inbound = inbound.New(w.pool, w.queue, w.shops, w.cust, w.slots, nil, inbound.Config{Now: w.clock.Now, Mover: bk})
	p := policy
	p.WaveSize = 3
	shop := w.shop(t, p)
	op := w.declare(t, shop, 5*time.Hour)

	// yes adds a move_up customer holding a paid YES booking of an opening at at.
	yes := func(phone string, at time.Time) (customers.Customer, uuid.UUID, uuid.UUID) {
		c, err := w.cust.Add(ctx, shop.ID, customers.NewCustomer{Phone: phone, Name: phone[len(phone)-3:], SMSOptIn: true, MoveUp: true})
		require.NoError(t, err)
		held, err := w.slots.Declare(ctx, shop, slots.NewOpening{StartsAt: at, DurationMinutes: 45, Service: "Colour", PriceCents: 6000})
		require.NoError(t, err)
		var id uuid.UUID
		require.NoError(t, w.pool.QueryRow(ctx, `
			WITH f AS (UPDATE slot_openings SET status = 'filled', filled_by = $2, filled_at = now() WHERE id = $1 RETURNING *)
			INSERT INTO bookings (opening_id, customer_id, shop_id, status, amount_cents, currency, created_at, updated_at,
				confirmed_at, stripe_checkout_session_id, stripe_payment_intent_id, service, duration_minutes, starts_at, ends_at)
			SELECT f.id, $2, f.shop_id, 'confirmed', 6000, 'gbp', now(), now(), now(), 'cs_' || $3, 'pi_' || $3,
				f.service, f.duration_minutes, f.starts_at, f.starts_at + interval '45 minutes'
			FROM f RETURNING id`, held.ID, c.ID, phone[1:]).Scan(&id))
		return c, id, held.ID
	}
	kimAt, liaAt := op.StartsAt.Add(48*time.Hour), op.StartsAt.Add(72*time.Hour)
	kim, kimBooking, kimHeld := yes("+447700900301", kimAt)
	lia, liaBooking, _ := yes("+447700900302", liaAt)

	res, err := w.offers.RunWave(ctx, jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 1})
	require.NoError(t, err)
	require.Equal(t, 2, res.Texted, "both movers")
	en := texts.In("en")
	require.Equal(t, []string{en.MoveUpOffer(&shop, "Colour", op.StartsAt, kimAt)}, bodies(w.twilio.MessagesTo(kim.Phone)))
	var named uuid.UUID
	require.NoError(t, w.pool.QueryRow(ctx, "SELECT move_from_booking FROM slot_offers WHERE opening_id = $1 AND customer_id = $2 AND move_from IS NULL",
		op.ID, kim.ID).Scan(&named))
	require.Equal(t, kimBooking, named)

	ans, err := w.inbound.Reply(ctx, inbound.Message{MessageSID: "SMkimY", From: kim.Phone, To: shop.SMSNumber, Body: "YES"})
	require.NoError(t, err)
	require.Equal(t, inbound.OutcomeBooked, ans.Outcome)
	require.Equal(t, en.MovedUp(&shop, "Colour", op.StartsAt, kimAt), ans.Message, "both times, no payment link")
	ans, err = w.inbound.Reply(ctx, inbound.Message{MessageSID: "SMliaY", From: lia.Phone, To: shop.SMSNumber, Body: "YES"})
	require.NoError(t, err)
	require.Equal(t, inbound.OutcomeTaken, ans.Outcome)
	require.Equal(t, en.MoveUpTaken(&shop, liaAt), ans.Message, "the loser keeps their booking and is told so")

	var status string
	var pi string
	require.NoError(t, w.pool.QueryRow(ctx, "SELECT status FROM bookings WHERE id = $1", kimBooking).Scan(&status))
	require.Equal(t, ledger.BookingMoved, status)
	require.NoError(t, w.pool.QueryRow(ctx, "SELECT status, stripe_payment_intent_id FROM bookings WHERE opening_id = $1", op.ID).Scan(&status, &pi))
	require.Equal(t, ledger.BookingConfirmed, status)
	require.Equal(t, "pi_447700900301", pi, "the payment moved with Kim")
	require.NoError(t, w.pool.QueryRow(ctx, "SELECT status FROM bookings WHERE id = $1", liaBooking).Scan(&status))
	require.Equal(t, ledger.BookingConfirmed, status)

	// Kim's former time: the same opening, open again as the chain's first link.
	var gen, position int
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT generation, chain_position FROM slot_openings
		WHERE id = $1 AND status = 'open' AND chain_id = $2 AND chain_moved_from = $3`, kimHeld, op.ID, kimBooking).Scan(&gen, &position))
	require.Equal(t, 1, position)
	_, err = w.offers.RunWave(ctx, jobs.Wave{OpeningID: kimHeld, Generation: gen, Wave: 1})
	require.NoError(t, err)
	liaTexts := bodies(w.twilio.MessagesTo(lia.Phone))
	require.Len(t, liaTexts, 2)
	require.Equal(t, en.MoveUpOffer(&shop, "Colour", kimAt, liaAt), liaTexts[1])
	require.Len(t, bodies(w.twilio.MessagesTo(kim.Phone)), 1, "Kim holds no later booking and was moved in this chain")
	ans, err = w.inbound.Reply(ctx, inbound.Message{MessageSID: "SMliaY2", From: lia.Phone, To: shop.SMSNumber, Body: "yes"})
	require.NoError(t, err)
	require.Equal(t, inbound.OutcomeBooked, ans.Outcome, ans.Message)
	require.Equal(t, en.MovedUp(&shop, "Colour", kimAt, liaAt), ans.Message)
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT chain_position FROM slot_openings WHERE chain_id = $1 AND chain_moved_from = $2`,
		op.ID, liaBooking).Scan(&position))
	require.Equal(t, 2, position)
}
