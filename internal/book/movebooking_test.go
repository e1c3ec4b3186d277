package book_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/book"
	"github.com/slotrecovery/slotrecovery/internal/connectors"
	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/testkit/customertest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
)

// yesMover is a customer who asked to move up, holding a booking made by a YES
// (source slotrecovery) of the opening held.
type yesMover struct {
	id      uuid.UUID
	booking uuid.UUID
	held    slots.Opening
	pi      string
}

// yesMover adds a customer (move_up on) with phone who said YES to an opening of a
// 45-minute Cut at at, and whose booking was paid (its Stripe ids and terms written as
// a completed checkout leaves them): a confirmed YES booking holding a payment.
func (f fixture) yesMover(t *testing.T, phone string, at time.Time) yesMover {
	t.Helper()
	ctx := context.Background()
	c, err := customertest.New(t, f.pool).Add(ctx, f.shop.ID, customers.NewCustomer{Phone: phone, Name: "Y" + phone[len(phone)-3:],
		SMSOptIn: true, MoveUp: true})
	require.NoError(t, err)
	op, err := f.openings.Declare(ctx, f.shop, slots.NewOpening{StartsAt: at, DurationMinutes: 45, Service: "Cut", PriceCents: 3000})
	require.NoError(t, err)
	_, err = f.pool.Exec(ctx, `
		INSERT INTO slot_offers (opening_id, customer_id, shop_id, generation, wave, status, created_at, sent_at)
		SELECT id, $2, shop_id, generation, 1, 'sent', clock_timestamp(), clock_timestamp() FROM slot_openings WHERE id = $1`, op.ID, c.ID)
	require.NoError(t, err)
	claim, err := f.openings.Book(ctx, &f.shop, c.ID)
	require.NoError(t, err)
	require.Equal(t, slots.Booked, claim.Outcome)
	pi := "pi_" + phone[1:]
	_, err = f.pool.Exec(ctx, `
		UPDATE bookings SET stripe_checkout_session_id = 'cs_' || $2, stripe_payment_intent_id = $3,
			payment_url = 'https://pay.example/' || $2, stripe_account = 'acct_shop', application_fee_cents = 75
		WHERE id = $1`, claim.BookingID, phone[1:], pi)
	require.NoError(t, err)
	_, err = f.pool.Exec(ctx, `
		INSERT INTO booking_terms (booking_id, shop_id, mode, price_cents, charged_cents, keep_card, policy_version,
			policy_text, policy_sha256, late_cancel_hours, no_show_fee_cents, late_cancel_fee_cents, checkout_session,
			accepted_at, created_at)
		VALUES ($1, $2, 'checkout', 3000, 3000, false, 1, 'Cancel a day ahead.', 'x', 24, 0, 0, 'cs_' || $3, now(), now())`,
		claim.BookingID, f.shop.ID, phone[1:])
	require.NoError(t, err)
	return yesMover{id: c.ID, booking: claim.BookingID, held: op, pi: pi}
}

// bookingMoveUpOffer records a texted move-up offer of opening to m's YES booking and
// returns it as the customer's YES reads it.
func (f fixture) bookingMoveUpOffer(t *testing.T, opening uuid.UUID, m yesMover) slots.LiveOffer {
	t.Helper()
	ctx := context.Background()
	var id uuid.UUID
	require.NoError(t, f.pool.QueryRow(ctx, `
		INSERT INTO slot_offers (opening_id, customer_id, shop_id, generation, wave, status, created_at, sent_at, move_from_booking)
		SELECT id, $2, shop_id, generation, 1, 'sent', clock_timestamp(), clock_timestamp(), $3 FROM slot_openings WHERE id = $1
		RETURNING id`, opening, m.id, m.booking).Scan(&id))
	c, err := f.openings.Claimable(ctx, &f.shop, m.id)
	require.NoError(t, err)
	for _, o := range c.Live {
		if o.OfferID == id {
			require.True(t, o.MoveFrom.Valid, "the claim reads the move with the offer")
			require.Equal(t, m.booking, o.MoveFrom.UUID)
			return o
		}
	}
	t.Fatalf("offer %s not claimable", id)
	return slots.LiveOffer{}
}

func (f fixture) bookingStatus(t *testing.T, id uuid.UUID) string {
	t.Helper()
	var s string
	require.NoError(t, f.pool.QueryRow(context.Background(), "SELECT status FROM bookings WHERE id = $1", id).Scan(&s))
	return s
}

// refunds counts the refund jobs enqueued for a payment intent.
func (f fixture) refunds(t *testing.T, pi string) int {
	t.Helper()
	return f.count(t, "SELECT count(*) FROM river_job WHERE kind = 'booking_refund' AND args->>'payment_intent_id' = $1", pi)
}

// TestMoveUpOfAYesBooking: a paid, confirmed YES booking on Thursday 16:00 of a
// customer with move_up is a move-up candidate of an opening on Tuesday 11:00 (a
// booking pending payment is not); their YES moves it in one transaction: the new
// booking is confirmed with the old one's payment (the same payment intent, session,
// account, fee and price; its terms follow it; no checkout), the old booking is moved
// (moved_to the new one, no payment left on it), and its opening is offered again as
// the chain's position 1 (a new generation: one opening for the time). The book shows
// the old booking moved (moved_to the Tuesday opening) and the new one booked. A
// cancellation of the new booking refunds the moved payment once; the moved booking
// cannot be cancelled. appointment.moved is recorded with the time the booking held.
func TestMoveUpOfAYesBooking(t *testing.T) {
	t.Parallel()
	f := setupWithQueue(t)
	subscribe(t, f)
	ctx := context.Background()
	tue := time.Now().Add(48 * time.Hour).Truncate(time.Hour).UTC()
	thu := tue.Add(53 * time.Hour)
	kim := f.yesMover(t, "+15555550701", thu)
	pending := f.yesMover(t, "+15555550702", thu.Add(time.Hour))
	_, err := f.pool.Exec(ctx, "UPDATE bookings SET status = 'pending_payment', confirmed_at = NULL WHERE id = $1", pending.booking)
	require.NoError(t, err)
	first, err := f.openings.Declare(ctx, f.shop, slots.NewOpening{StartsAt: tue, DurationMinutes: 45, Service: "cut", PriceCents: 2500})
	require.NoError(t, err)

	cands, err := db.New().OfferMoveUpCandidates(ctx, f.pool, db.OfferMoveUpCandidatesParams{OpeningID: first.ID, MaxRows: 10})
	require.NoError(t, err)
	require.Len(t, cands, 1, "the confirmed booking only: a booking pending payment is not offered a move")
	require.Equal(t, kim.id, cands[0].CustomerID)
	require.Equal(t, kim.booking, cands[0].HeldID)
	require.True(t, cands[0].FromBooking)
	require.True(t, cands[0].StartsAt.Equal(thu))

	offer := f.bookingMoveUpOffer(t, first.ID, kim)
	plain, err := f.openings.Book(ctx, &f.shop, kim.id)
	require.NoError(t, err)
	require.Equal(t, slots.NoOffer, plain.Outcome, "a plain YES leaves a move-up to the book")

	m, err := f.book.MoveUp(ctx, f.shop, kim.id, offer)
	require.NoError(t, err)
	require.Equal(t, slots.Booked, m.Claim.Outcome)
	require.True(t, m.Claim.Confirmed, "the payment moved: nothing to pay")
	require.True(t, m.From.Equal(thu), "the answer names the time left")
	require.True(t, m.Claim.StartsAt.Equal(tue))
	newID := m.Claim.BookingID

	var status, pi, session, account, url string
	var amount, fee int64
	require.NoError(t, f.pool.QueryRow(ctx, `SELECT status, stripe_payment_intent_id, stripe_checkout_session_id, stripe_account,
		payment_url, amount_cents, application_fee_cents FROM bookings WHERE id = $1`, newID).
		Scan(&status, &pi, &session, &account, &url, &amount, &fee))
	require.Equal(t, ledger.BookingConfirmed, status)
	require.Equal(t, kim.pi, pi, "the old payment, moved")
	require.Equal(t, "cs_15555550701", session)
	require.Equal(t, "acct_shop", account)
	require.Equal(t, int64(3000), amount, "the old booking's price")
	require.Equal(t, int64(75), fee)
	require.Equal(t, 1, f.count(t, "SELECT count(*) FROM booking_terms WHERE booking_id = $1", newID), "the terms follow the payment")
	require.Zero(t, f.count(t, "SELECT count(*) FROM booking_terms WHERE booking_id = $1", kim.booking))

	var movedTo uuid.UUID
	require.NoError(t, f.pool.QueryRow(ctx, `SELECT moved_to FROM bookings WHERE id = $1 AND status = 'moved'
		AND stripe_payment_intent_id IS NULL AND stripe_checkout_session_id IS NULL AND payment_url IS NULL`, kim.booking).Scan(&movedTo))
	require.Equal(t, newID, movedTo)
	require.Equal(t, 1, f.count(t, "SELECT count(*) FROM bookings WHERE stripe_payment_intent_id = $1", kim.pi),
		"one payment, one booking")

	// The Thursday opening is offered again, as the chain's first move.
	op, err := f.openings.Get(ctx, f.shop.ID, kim.held.ID)
	require.NoError(t, err)
	require.Equal(t, slots.StatusOpen, op.Status)
	require.Equal(t, &slots.Chain{ID: first.ID, Position: 1, MovedFrom: kim.booking}, op.Chain)
	require.Equal(t, 1, f.count(t, "SELECT count(*) FROM slot_openings WHERE shop_id = $1 AND starts_at = $2", f.shop.ID, thu),
		"one opening for the time")
	require.Equal(t, 2, f.count(t, "SELECT generation FROM slot_openings WHERE id = $1", kim.held.ID))
	require.Equal(t, 1, f.count(t, "SELECT count(*) FROM river_job WHERE kind = 'offer_wave' AND (args->>'opening_id')::uuid = $1 AND (args->>'generation')::int = 2",
		kim.held.ID), "its first wave is enqueued with the move")
	require.NotNil(t, m.Declaration)
	require.Equal(t, book.DeclarationDeclared, m.Declaration.State)
	require.Equal(t, kim.held.ID, m.Declaration.OpeningID)

	// The book: the old booking moved to the Tuesday opening, the new one booked.
	old, err := f.book.Get(ctx, f.shop.ID, kim.booking)
	require.NoError(t, err)
	require.Equal(t, connectors.StatusMoved, old.Status)
	require.Equal(t, first.ID, old.MovedTo)
	nb, err := f.book.Get(ctx, f.shop.ID, newID)
	require.NoError(t, err)
	require.Equal(t, connectors.StatusBooked, nb.Status)
	require.True(t, nb.StartsAt.Equal(tue))

	// appointment.moved, with the time the booking held.
	var movedEvents []recorded
	for _, e := range f.events(t) {
		if e.typ == "appointment.moved" {
			movedEvents = append(movedEvents, e)
		}
	}
	require.Len(t, movedEvents, 1)
	require.Equal(t, kim.booking, movedEvents[0].data.ID)
	require.Equal(t, "moved", movedEvents[0].data.Status)
	require.NotNil(t, movedEvents[0].data.Previous)
	require.True(t, movedEvents[0].data.Previous.StartsAt.Equal(thu))

	// The chains' line: Kim on Tuesday, from Thursday; Thursday open again.
	chains, err := f.book.Chains(ctx, f.shop.ID, tue.Add(-time.Hour), thu.Add(time.Hour))
	require.NoError(t, err)
	require.Len(t, chains, 1)
	require.Equal(t, first.ID, chains[0].ID)
	require.Equal(t, 1, chains[0].Moves)
	require.Len(t, chains[0].Links, 2)
	require.NotNil(t, chains[0].Links[0].LeftAt)
	require.True(t, chains[0].Links[0].LeftAt.Equal(thu), "Kim left Thursday for it")
	require.Equal(t, kim.held.ID, chains[0].Links[1].OpeningID)

	// Kim is not a candidate of the time she left (now later than hers).
	cands, err = db.New().OfferMoveUpCandidates(ctx, f.pool, db.OfferMoveUpCandidatesParams{OpeningID: kim.held.ID, MaxRows: 10})
	require.NoError(t, err)
	for _, c := range cands {
		require.NotEqual(t, kim.id, c.CustomerID)
	}

	// Never twice in one chain: Kim books Friday by another YES; the Thursday time her
	// move freed (the chain's first link) is earlier, yet she is not asked to move again
	// (the other Thursday booking, pending payment, is not asked either).
	fri, err := f.openings.Declare(ctx, f.shop, slots.NewOpening{StartsAt: thu.Add(24 * time.Hour), DurationMinutes: 45, Service: "Cut", PriceCents: 3000})
	require.NoError(t, err)
	_, err = f.pool.Exec(ctx, `
		INSERT INTO slot_offers (opening_id, customer_id, shop_id, generation, wave, status, created_at, sent_at)
		SELECT id, $2, shop_id, generation, 1, 'sent', clock_timestamp(), clock_timestamp() FROM slot_openings WHERE id = $1`, fri.ID, kim.id)
	require.NoError(t, err)
	friClaim, err := f.openings.Book(ctx, &f.shop, kim.id)
	require.NoError(t, err)
	require.Equal(t, slots.Booked, friClaim.Outcome)
	cands, err = db.New().OfferMoveUpCandidates(ctx, f.pool, db.OfferMoveUpCandidatesParams{OpeningID: kim.held.ID, MaxRows: 10})
	require.NoError(t, err)
	for _, c := range cands {
		require.NotEqual(t, kim.id, c.CustomerID, "moved once in this chain already")
	}
	// An opening of no chain at the same hour is offered to her, from Friday.
	other, err := f.openings.Declare(ctx, f.shop, slots.NewOpening{StartsAt: thu.Add(2 * time.Hour), DurationMinutes: 45, Service: "Cut", PriceCents: 3000})
	require.NoError(t, err)
	cands, err = db.New().OfferMoveUpCandidates(ctx, f.pool, db.OfferMoveUpCandidatesParams{OpeningID: other.ID, MaxRows: 10})
	require.NoError(t, err)
	require.Len(t, cands, 1)
	require.Equal(t, kim.id, cands[0].CustomerID)
	require.Equal(t, friClaim.BookingID, cands[0].HeldID)

	// The same YES again changes nothing: it is told the move it made.
	again, err := f.book.MoveUp(ctx, f.shop, kim.id, offer)
	require.NoError(t, err)
	require.Equal(t, slots.Booked, again.Claim.Outcome)
	require.True(t, again.Claim.Repeat, "nothing new booked")
	require.Equal(t, offer.OpeningID, again.Claim.OpeningID, "the booking it moved to")

	// Cancelling: the moved booking is not live; the new one refunds the payment once.
	led := ledger.New(f.pool, f.queue(t), nil, ledger.Config{})
	cancel := func(id uuid.UUID) (ledger.Cancellation, error) {
		var c ledger.Cancellation
		err := pgx.BeginFunc(ctx, f.pool, func(tx pgx.Tx) error {
			var err error
			c, err = led.CancelByCustomer(ctx, tx, id, time.Now())
			return err
		})
		return c, err
	}
	_, err = cancel(kim.booking)
	require.ErrorIs(t, err, ledger.ErrNotCancellable, "a moved booking is not live")
	c, err := cancel(newID)
	require.NoError(t, err)
	require.True(t, c.Refunded)
	require.Equal(t, 1, f.refunds(t, kim.pi), "the moved payment is refunded once")
	require.Equal(t, 1, f.count(t, "SELECT count(*) FROM river_job WHERE kind = 'booking_refund' AND (args->>'booking_id')::uuid = $1", newID))
	require.Equal(t, ledger.BookingMoved, f.bookingStatus(t, kim.booking))
}

// setupWithQueue is setup with a book that enqueues (book.Config.Queue): a YES
// booking's move enqueues its freed opening's wave.
func setupWithQueue(t *testing.T) fixture {
	t.Helper()
	f := setup(t)
	f.book = book.New(f.pool, f.shops, f.openings, book.Config{StaleAfter: time.Minute, Queue: f.queue(t)})
	return f
}

// queue is an insert-only River client on the fixture's pool.
func (f fixture) queue(t *testing.T) *river.Client[pgx.Tx] {
	t.Helper()
	q, err := river.NewClient(riverpgxv5.New(f.pool), &river.Config{})
	require.NoError(t, err)
	return q
}

// TestMoveUpOfAYesBookingStorms: the storms of TestMoveUpStorms with YES bookings. Many
// movers' YES to one opening: one booking, one move, every loser keeps their confirmed
// booking and its payment. One customer's two live move-ups of one booking, each YES
// four times at once: one move. A move and the customer's cancellation of the same
// booking at once, eight times: either moved (the cancel refused, nothing refunded, the
// payment on the new booking) or cancelled (refunded once, the move off, the earlier
// opening still open); never both, and the payment always reachable from one booking.
func TestMoveUpOfAYesBookingStorms(t *testing.T) {
	t.Parallel()
	f := setupWithQueue(t)
	ctx := context.Background()
	day := time.Now().Add(48 * time.Hour).Truncate(time.Hour).UTC()

	t.Run("one opening", func(t *testing.T) {
		op, err := f.openings.Declare(ctx, f.shop, slots.NewOpening{StartsAt: day, DurationMinutes: 45, Service: "Cut", PriceCents: 2500})
		require.NoError(t, err)
		const n = 10
		movers := make([]yesMover, n)
		offers := make([]slots.LiveOffer, n)
		for i := range n {
			movers[i] = f.yesMover(t, fmt.Sprintf("+155555508%02d", i), day.Add(time.Duration(48+i)*time.Hour))
			offers[i] = f.bookingMoveUpOffer(t, op.ID, movers[i])
		}
		moves := make([]book.Move, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				moves[i], errs[i] = f.book.MoveUp(ctx, f.shop, movers[i].id, offers[i])
			})
		}
		close(start)
		wg.Wait()
		won := 0
		for i := range n {
			require.NoError(t, errs[i])
			if moves[i].Claim.Outcome == slots.Booked {
				won++
				require.Equal(t, ledger.BookingMoved, f.bookingStatus(t, movers[i].booking))
				continue
			}
			require.Equal(t, slots.Taken, moves[i].Claim.Outcome)
			require.True(t, moves[i].From.Equal(movers[i].held.StartsAt), "the loser is told the time they keep")
			require.Equal(t, ledger.BookingConfirmed, f.bookingStatus(t, movers[i].booking), "the loser keeps their booking")
			require.Equal(t, 1, f.count(t, "SELECT count(*) FROM bookings WHERE id = $1 AND stripe_payment_intent_id = $2",
				movers[i].booking, movers[i].pi), "and its payment")
		}
		require.Equal(t, 1, won)
		require.Equal(t, 1, f.count(t, "SELECT count(*) FROM bookings WHERE opening_id = $1", op.ID))
		require.Equal(t, 1, f.count(t, "SELECT count(*) FROM bookings WHERE shop_id = $1 AND status = 'moved'", f.shop.ID))
	})

	t.Run("two offers of one customer", func(t *testing.T) {
		a, err := f.openings.Declare(ctx, f.shop, slots.NewOpening{StartsAt: day.Add(2 * time.Hour), DurationMinutes: 45, Service: "Cut", PriceCents: 2500})
		require.NoError(t, err)
		b, err := f.openings.Declare(ctx, f.shop, slots.NewOpening{StartsAt: day.Add(4 * time.Hour), DurationMinutes: 45, Service: "Cut", PriceCents: 2500})
		require.NoError(t, err)
		m := f.yesMover(t, "+15555550901", day.Add(96*time.Hour))
		offers := []slots.LiveOffer{f.bookingMoveUpOffer(t, a.ID, m), f.bookingMoveUpOffer(t, b.ID, m)}
		for range 3 {
			offers = append(offers, offers[0], offers[1])
		}
		moves := make([]book.Move, len(offers))
		errs := make([]error, len(offers))
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range offers {
			wg.Go(func() {
				<-start
				moves[i], errs[i] = f.book.MoveUp(ctx, f.shop, m.id, offers[i])
			})
		}
		close(start)
		wg.Wait()
		won := 0
		for i := range offers {
			require.NoError(t, errs[i])
			if moves[i].Claim.Outcome == slots.Booked && !moves[i].Claim.Repeat {
				won++
			}
		}
		require.Equal(t, 1, won)
		require.Equal(t, 1, f.count(t, "SELECT count(*) FROM bookings WHERE opening_id IN ($1, $2) AND customer_id = $3", a.ID, b.ID, m.id))
		require.Equal(t, 1, f.count(t, "SELECT count(*) FROM slot_offers WHERE move_from_booking = $1 AND status = 'accepted'", m.booking))
		require.Equal(t, 1, f.count(t, "SELECT count(*) FROM slot_offers WHERE move_from_booking = $1 AND status = 'lost'", m.booking),
			"the other move-up of the booking moved is withdrawn")
		require.Equal(t, ledger.BookingMoved, f.bookingStatus(t, m.booking))
		require.Equal(t, 1, f.count(t, "SELECT count(*) FROM bookings WHERE stripe_payment_intent_id = $1 AND status = 'confirmed'", m.pi))
	})

	t.Run("crossed offers", func(t *testing.T) {
		// X and Y each hold a move-up offer of two openings; X takes the first while Y
		// takes the second: each claim marks the other's offer of its opening lost while
		// each move withdraws the mover's own other offer, and neither may wait on the
		// other (a deadlock would abort one, and its customer's YES would be lost).
		for i := range 12 {
			first, err := f.openings.Declare(ctx, f.shop, slots.NewOpening{StartsAt: day.Add(time.Duration(200+2*i) * time.Hour),
				DurationMinutes: 45, Service: "Cut", PriceCents: 2500})
			require.NoError(t, err)
			second, err := f.openings.Declare(ctx, f.shop, slots.NewOpening{StartsAt: day.Add(time.Duration(201+2*i) * time.Hour),
				DurationMinutes: 45, Service: "Cut", PriceCents: 2500})
			require.NoError(t, err)
			x := f.yesMover(t, fmt.Sprintf("+155555512%02d", i), day.Add(time.Duration(300+i)*time.Hour))
			y := f.yesMover(t, fmt.Sprintf("+155555513%02d", i), day.Add(time.Duration(330+i)*time.Hour))
			xFirst := f.bookingMoveUpOffer(t, first.ID, x)
			f.bookingMoveUpOffer(t, first.ID, y)
			f.bookingMoveUpOffer(t, second.ID, x)
			ySecond := f.bookingMoveUpOffer(t, second.ID, y)
			var xMove, yMove book.Move
			var xErr, yErr error
			var wg sync.WaitGroup
			start := make(chan struct{})
			wg.Go(func() { <-start; xMove, xErr = f.book.MoveUp(ctx, f.shop, x.id, xFirst) })
			wg.Go(func() { <-start; yMove, yErr = f.book.MoveUp(ctx, f.shop, y.id, ySecond) })
			close(start)
			wg.Wait()
			require.NoError(t, xErr, "round %d: X's YES", i)
			require.NoError(t, yErr, "round %d: Y's YES", i)
			require.Equal(t, slots.Booked, xMove.Claim.Outcome, "round %d", i)
			require.Equal(t, slots.Booked, yMove.Claim.Outcome, "round %d", i)
			require.Equal(t, ledger.BookingMoved, f.bookingStatus(t, x.booking))
			require.Equal(t, ledger.BookingMoved, f.bookingStatus(t, y.booking))
			require.Equal(t, 0, f.count(t, "SELECT count(*) FROM slot_offers WHERE opening_id IN ($1, $2) AND status = 'sent'", first.ID, second.ID),
				"every other offer of both openings is lost")
		}
	})

	t.Run("move and cancel", func(t *testing.T) {
		led := ledger.New(f.pool, f.queue(t), nil, ledger.Config{})
		for i := range 8 {
			op, err := f.openings.Declare(ctx, f.shop, slots.NewOpening{StartsAt: day.Add(time.Duration(6+i) * time.Hour),
				DurationMinutes: 45, Service: "Cut", PriceCents: 2500})
			require.NoError(t, err)
			m := f.yesMover(t, fmt.Sprintf("+155555510%02d", i), day.Add(time.Duration(120+i)*time.Hour))
			offer := f.bookingMoveUpOffer(t, op.ID, m)
			var move book.Move
			var moveErr, cancelErr error
			var wg sync.WaitGroup
			start := make(chan struct{})
			wg.Go(func() { <-start; move, moveErr = f.book.MoveUp(ctx, f.shop, m.id, offer) })
			wg.Go(func() {
				<-start
				cancelErr = pgx.BeginFunc(ctx, f.pool, func(tx pgx.Tx) error {
					_, err := led.CancelByCustomer(ctx, tx, m.booking, time.Now())
					return err
				})
			})
			close(start)
			wg.Wait()
			require.NoError(t, moveErr)
			bookings := f.count(t, "SELECT count(*) FROM bookings WHERE opening_id = $1", op.ID)
			holders := f.count(t, "SELECT count(*) FROM bookings WHERE stripe_payment_intent_id = $1 AND status IN ('confirmed', 'cancelled')", m.pi)
			require.Equal(t, 1, holders, "the payment is reachable from exactly one booking")
			switch f.bookingStatus(t, m.booking) {
			case ledger.BookingMoved:
				require.ErrorIs(t, cancelErr, ledger.ErrNotCancellable, "a moved booking is not cancelled")
				require.Equal(t, slots.Booked, move.Claim.Outcome)
				require.Equal(t, 1, bookings)
				require.Zero(t, f.refunds(t, m.pi), "nothing refunded: the payment moved")
			case ledger.BookingCancelled:
				require.NoError(t, cancelErr)
				require.NotEqual(t, slots.Booked, move.Claim.Outcome)
				require.Equal(t, 0, bookings, "the move rolled back whole")
				require.Equal(t, 1, f.refunds(t, m.pi), "refunded once")
				got, err := f.openings.Get(ctx, f.shop.ID, op.ID)
				require.NoError(t, err)
				require.Equal(t, slots.StatusOpen, got.Status)
			default:
				t.Fatalf("booking %s: %s", m.booking, f.bookingStatus(t, m.booking))
			}
		}
	})
}

// TestYesBookingMoveAndCancelInEitherOrder: the interleavings of a YES booking's move
// and its customer's cancellation chosen, not left to timing. The cancellation held at
// its update of the booking (holding the booking's opening and the booking): the move
// waits for the opening, then finds the booking cancelled and changes nothing (refunded
// once, the earlier opening still open). The move held at its new booking's insert: the
// cancellation waits, then finds the booking moved and is refused (nothing refunded,
// the payment on the new booking).
func TestYesBookingMoveAndCancelInEitherOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	day := time.Now().Add(48 * time.Hour).Truncate(time.Hour).UTC()
	cancelOf := func(f fixture, id uuid.UUID) func() (ledger.Cancellation, error) {
		led := ledger.New(f.pool, f.queue(t), nil, ledger.Config{})
		return func() (ledger.Cancellation, error) {
			var c ledger.Cancellation
			err := pgx.BeginFunc(ctx, f.pool, func(tx pgx.Tx) error {
				var err error
				c, err = led.CancelByCustomer(ctx, tx, id, time.Now())
				return err
			})
			return c, err
		}
	}

	t.Run("cancel first", func(t *testing.T) {
		f := setupWithQueue(t)
		m := f.yesMover(t, "+15555551101", day.Add(48*time.Hour))
		op, err := f.openings.Declare(ctx, f.shop, slots.NewOpening{StartsAt: day, DurationMinutes: 45, Service: "Cut", PriceCents: 2500})
		require.NoError(t, err)
		offer := f.bookingMoveUpOffer(t, op.ID, m)
		release := pgtest.PausePoint(t, f.pool, "AFTER UPDATE", "bookings")
		cancel := pgtest.Async(cancelOf(f, m.booking))
		pgtest.WaitUntilWaiting(t, f.pool, pgtest.AtPause, "the cancellation", cancel)
		move := pgtest.Async(func() (book.Move, error) { return f.book.MoveUp(ctx, f.shop, m.id, offer) })
		pgtest.WaitUntilWaiting(t, f.pool, pgtest.OnARowLock, "the move", move)
		release()
		c, mv := <-cancel, <-move
		require.NoError(t, c.Err)
		require.True(t, c.V.Refunded)
		require.NoError(t, mv.Err)
		require.NotEqual(t, slots.Booked, mv.V.Claim.Outcome)
		require.True(t, mv.V.From.IsZero(), "the booking no longer stands")
		require.Equal(t, ledger.BookingCancelled, f.bookingStatus(t, m.booking))
		require.Zero(t, f.count(t, "SELECT count(*) FROM bookings WHERE opening_id = $1", op.ID))
		require.Equal(t, 1, f.refunds(t, m.pi))
		require.Equal(t, 1, f.count(t, "SELECT count(*) FROM slot_offers WHERE id = $1 AND status = 'lost'", offer.OfferID),
			"the cancellation withdrew the move-up offer")
		got, err := f.openings.Get(ctx, f.shop.ID, op.ID)
		require.NoError(t, err)
		require.Equal(t, slots.StatusOpen, got.Status)
	})

	t.Run("move first", func(t *testing.T) {
		f := setupWithQueue(t)
		m := f.yesMover(t, "+15555551102", day.Add(48*time.Hour))
		op, err := f.openings.Declare(ctx, f.shop, slots.NewOpening{StartsAt: day, DurationMinutes: 45, Service: "Cut", PriceCents: 2500})
		require.NoError(t, err)
		offer := f.bookingMoveUpOffer(t, op.ID, m)
		release := pgtest.PausePoint(t, f.pool, "AFTER INSERT", "bookings")
		move := pgtest.Async(func() (book.Move, error) { return f.book.MoveUp(ctx, f.shop, m.id, offer) })
		pgtest.WaitUntilWaiting(t, f.pool, pgtest.AtPause, "the move", move)
		cancel := pgtest.Async(cancelOf(f, m.booking))
		pgtest.WaitUntilWaiting(t, f.pool, pgtest.OnARowLock, "the cancellation", cancel)
		release()
		mv, c := <-move, <-cancel
		require.NoError(t, mv.Err)
		require.Equal(t, slots.Booked, mv.V.Claim.Outcome)
		require.ErrorIs(t, c.Err, ledger.ErrNotCancellable)
		require.Equal(t, ledger.BookingMoved, f.bookingStatus(t, m.booking))
		require.Zero(t, f.refunds(t, m.pi))
		require.Equal(t, 1, f.count(t, "SELECT count(*) FROM bookings WHERE opening_id = $1 AND status = 'confirmed' AND stripe_payment_intent_id = $2",
			op.ID, m.pi))
	})
}

// TestMoveUpInAShopWhoseStripeAccountLeft (the review of issue 44's work): with Stripe
// Connect, a checkout shop whose account was disconnected takes no payment, so the time
// a YES booking's move frees is not offered again (a YES to it would be a hold no one
// can pay): it expires. The shop reaches the move as the inbound texts' statement
// reads it, without the server's configuration; the move reads that itself.
func TestMoveUpInAShopWhoseStripeAccountLeft(t *testing.T) {
	t.Parallel()
	f := setupWithQueue(t)
	ctx := context.Background()
	f.shops = shops.New(f.pool, shops.Config{StripeConnect: true})
	f.book = book.New(f.pool, f.shops, f.openings, book.Config{StaleAfter: time.Minute, Queue: f.queue(t)})
	_, err := f.pool.Exec(ctx, `UPDATE shops SET payment_mode = 'checkout', stripe_account_id = 'acct_left',
		stripe_charges_enabled = true WHERE id = $1`, f.shop.ID)
	require.NoError(t, err)
	f.shop, err = f.shops.Get(ctx, f.shop.ID)
	require.NoError(t, err)
	require.NoError(t, f.shop.CheckoutReady())
	day := time.Now().Add(48 * time.Hour).Truncate(time.Hour).UTC()
	m := f.yesMover(t, "+15555551201", day.Add(48*time.Hour))
	op, err := f.openings.Declare(ctx, f.shop, slots.NewOpening{StartsAt: day, DurationMinutes: 45, Service: "Cut", PriceCents: 3000})
	require.NoError(t, err)
	_, err = f.pool.Exec(ctx, `UPDATE bookings SET status = 'confirmed', confirmed_at = now() WHERE id = $1`, m.booking)
	require.NoError(t, err, "paid")
	offer := f.bookingMoveUpOffer(t, op.ID, m)
	_, err = f.pool.Exec(ctx, `UPDATE shops SET stripe_disconnected_at = now() WHERE id = $1`, f.shop.ID)
	require.NoError(t, err)

	asRead := f.shop
	asRead.Stripe.Required = false // as shops.FromRow reads it
	mv, err := f.book.MoveUp(ctx, asRead, m.id, offer)
	require.NoError(t, err)
	require.Equal(t, slots.Booked, mv.Claim.Outcome, "her payment moves with her: nothing to pay")
	got, err := f.openings.Get(ctx, f.shop.ID, m.held.ID)
	require.NoError(t, err)
	require.Equal(t, slots.StatusExpired, got.Status, "the time she left is not offered in a shop that cannot take payments")
}
