package book_test

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
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/testkit/customertest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
)

// mover is a customer who asked to move up, with a booked appointment of the book.
type mover struct {
	id          uuid.UUID
	appointment book.Appointment
}

// mover adds a customer (move_up on) with phone and a booked 45-minute Cut at at.
func (f fixture) mover(t *testing.T, phone string, at time.Time) mover {
	t.Helper()
	ctx := context.Background()
	c, err := customertest.New(t, f.pool).Add(ctx, f.shop.ID, customers.NewCustomer{Phone: phone, Name: "C" + phone[len(phone)-3:],
		SMSOptIn: true, MoveUp: true})
	require.NoError(t, err)
	in := appt("ext-"+phone, 1, connectors.StatusBooked)
	in.Source, in.Phone, in.StartsAt = connectors.SourceAPI, phone, at
	res, err := f.book.Upsert(ctx, f.shop, in)
	require.NoError(t, err)
	require.NotNil(t, res.Appointment.Customer, "matched by phone")
	return mover{id: c.ID, appointment: res.Appointment}
}

// moveUpOffer records a texted move-up offer of opening to m (as a first wave records
// and texts it) and returns it as the customer's YES reads it (slots.Claimable).
func (f fixture) moveUpOffer(t *testing.T, opening uuid.UUID, m mover) slots.LiveOffer {
	t.Helper()
	ctx := context.Background()
	var id uuid.UUID
	require.NoError(t, f.pool.QueryRow(ctx, `
		INSERT INTO slot_offers (opening_id, customer_id, shop_id, generation, wave, status, created_at, sent_at, move_from)
		SELECT id, $2, shop_id, generation, 1, 'sent', clock_timestamp(), clock_timestamp(), $3 FROM slot_openings WHERE id = $1
		RETURNING id`, opening, m.id, m.appointment.ID).Scan(&id))
	c, err := f.openings.Claimable(ctx, &f.shop, m.id)
	require.NoError(t, err)
	for _, o := range c.Live {
		if o.OfferID == id {
			require.True(t, o.MoveFrom.Valid, "the claim reads the move with the offer")
			require.Equal(t, m.appointment.ID, o.MoveFrom.UUID)
			return o
		}
	}
	t.Fatalf("offer %s not claimable", id)
	return slots.LiveOffer{}
}

func (f fixture) status(t *testing.T, appointment uuid.UUID) connectors.Status {
	t.Helper()
	a, err := f.book.Get(context.Background(), f.shop.ID, appointment)
	require.NoError(t, err)
	return a.Status
}

// TestMoveUpMovesAndChains: a YES to a move-up offer books the earlier opening, makes
// the appointment moved (moved_to the opening, appointment.moved recorded) and declares
// the time it held as an opening of a chain (id: the first opening, position 1, moved
// from the appointment); a move from that opening is position 2 of the same chain. A
// plain YES (slots.Book) never claims a move-up offer.
func TestMoveUpMovesAndChains(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	day := time.Now().Add(24 * time.Hour).Truncate(time.Hour).UTC()
	kim := f.mover(t, "+15555550201", day.Add(48*time.Hour))
	lou := f.mover(t, "+15555550202", day.Add(72*time.Hour))
	first, err := f.openings.Declare(ctx, f.shop, slots.NewOpening{StartsAt: day, DurationMinutes: 45, Service: "Cut", PriceCents: 2500})
	require.NoError(t, err)

	offer := f.moveUpOffer(t, first.ID, kim)
	plain, err := f.openings.Book(ctx, &f.shop, kim.id)
	require.NoError(t, err)
	require.Equal(t, slots.NoOffer, plain.Outcome, "a plain YES leaves a move-up to the book")
	require.Equal(t, connectors.StatusBooked, f.status(t, kim.appointment.ID))

	m, err := f.book.MoveUp(ctx, f.shop, kim.id, offer)
	require.NoError(t, err)
	require.Equal(t, slots.Booked, m.Claim.Outcome)
	require.True(t, m.Claim.Confirmed, "a payment-free shop")
	require.True(t, m.From.Equal(kim.appointment.StartsAt))
	require.True(t, m.Claim.StartsAt.Equal(day))
	moved, err := f.book.Get(ctx, f.shop.ID, kim.appointment.ID)
	require.NoError(t, err)
	require.Equal(t, connectors.StatusMoved, moved.Status)
	require.Equal(t, first.ID, moved.MovedTo)
	require.Equal(t, 1, f.count(t, "SELECT count(*) FROM bookings WHERE opening_id = $1 AND customer_id = $2", first.ID, kim.id))
	require.NotNil(t, m.Declaration)
	require.Equal(t, book.DeclarationDeclared, m.Declaration.State)
	freed := m.Declaration.OpeningID
	var chainID, movedFrom uuid.UUID
	var position int
	require.NoError(t, f.pool.QueryRow(ctx, `SELECT chain_id, chain_position, chain_moved_from FROM slot_openings WHERE id = $1`, freed).
		Scan(&chainID, &position, &movedFrom))
	require.Equal(t, first.ID, chainID)
	require.Equal(t, 1, position)
	require.Equal(t, kim.appointment.ID, movedFrom)
	op, err := f.openings.Get(ctx, f.shop.ID, freed)
	require.NoError(t, err)
	require.Equal(t, &slots.Chain{ID: first.ID, Position: 1, MovedFrom: kim.appointment.ID}, op.Chain, "the opening shows its chain")
	require.True(t, op.StartsAt.Equal(kim.appointment.StartsAt))
	require.Equal(t, slots.StatusOpen, op.Status)

	// Lou moves into Kim's former time: the chain's second move.
	m, err = f.book.MoveUp(ctx, f.shop, lou.id, f.moveUpOffer(t, freed, lou))
	require.NoError(t, err)
	require.Equal(t, slots.Booked, m.Claim.Outcome)
	require.NoError(t, f.pool.QueryRow(ctx, `SELECT chain_id, chain_position, chain_moved_from FROM slot_openings WHERE id = $1`,
		m.Declaration.OpeningID).Scan(&chainID, &position, &movedFrom))
	require.Equal(t, first.ID, chainID)
	require.Equal(t, 2, position)
	require.Equal(t, lou.appointment.ID, movedFrom)

	// A YES again to a move made changes nothing more: it is told the move it made.
	again, err := f.book.MoveUp(ctx, f.shop, kim.id, offer)
	require.NoError(t, err)
	require.Equal(t, slots.Booked, again.Claim.Outcome)
	require.True(t, again.Claim.Repeat, "nothing new booked")
	require.True(t, again.From.Equal(kim.appointment.StartsAt), "from the time Kim left")
	require.Equal(t, 2, f.count(t, "SELECT count(*) FROM bookings WHERE shop_id = $1", f.shop.ID))
	require.Equal(t, 2, f.count(t, "SELECT count(*) FROM appointments WHERE shop_id = $1 AND status = 'moved'", f.shop.ID))
}

// TestMoveUpStorms: concurrent YES of many movers to one opening make exactly one
// booking and move exactly one appointment, and every loser keeps theirs and learns
// its time; a customer with two live move-up offers (two earlier openings) moves once;
// a move and the owner's cancellation of the same appointment at once leave one
// consistent book (moved with the booking, or cancelled with the opening still open).
func TestMoveUpStorms(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	day := time.Now().Add(24 * time.Hour).Truncate(time.Hour).UTC()

	t.Run("one opening", func(t *testing.T) {
		op, err := f.openings.Declare(ctx, f.shop, slots.NewOpening{StartsAt: day, DurationMinutes: 45, Service: "Cut", PriceCents: 2500})
		require.NoError(t, err)
		const n = 12
		movers := make([]mover, n)
		offers := make([]slots.LiveOffer, n)
		for i := range n {
			movers[i] = f.mover(t, fmt.Sprintf("+155555503%02d", i), day.Add(time.Duration(48+i)*time.Hour))
			offers[i] = f.moveUpOffer(t, op.ID, movers[i])
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
				require.Equal(t, connectors.StatusMoved, f.status(t, movers[i].appointment.ID))
				continue
			}
			require.Equal(t, slots.Taken, moves[i].Claim.Outcome)
			require.True(t, moves[i].From.Equal(movers[i].appointment.StartsAt), "the loser is told the time they keep")
			require.Equal(t, connectors.StatusBooked, f.status(t, movers[i].appointment.ID), "the loser keeps their appointment")
		}
		require.Equal(t, 1, won)
		require.Equal(t, 1, f.count(t, "SELECT count(*) FROM bookings WHERE opening_id = $1", op.ID))
	})

	t.Run("two offers of one customer", func(t *testing.T) {
		a, err := f.openings.Declare(ctx, f.shop, slots.NewOpening{StartsAt: day.Add(2 * time.Hour), DurationMinutes: 45, Service: "Cut", PriceCents: 2500})
		require.NoError(t, err)
		b, err := f.openings.Declare(ctx, f.shop, slots.NewOpening{StartsAt: day.Add(4 * time.Hour), DurationMinutes: 45, Service: "Cut", PriceCents: 2500})
		require.NoError(t, err)
		m := f.mover(t, "+15555550401", day.Add(96*time.Hour))
		offers := []slots.LiveOffer{f.moveUpOffer(t, a.ID, m), f.moveUpOffer(t, b.ID, m)}
		for range 3 { // each YES as often as a storm of redeliveries would
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
		var taken uuid.UUID
		for i := range offers {
			require.NoError(t, errs[i])
			if moves[i].Claim.Outcome == slots.Booked && !moves[i].Claim.Repeat {
				won++
				taken = offers[i].OfferID
			}
		}
		require.Equal(t, 1, won)
		for i := range offers {
			if offers[i].OfferID != taken {
				require.NotEqual(t, slots.Booked, moves[i].Claim.Outcome, "the other offer is not taken")
				continue
			}
			// The same YES again, read live before the first committed: told the move it
			// made (Repeat), never "taken", which would send them back to the time they left.
			require.Equal(t, slots.Booked, moves[i].Claim.Outcome, "YES %d to the offer taken", i)
			require.True(t, moves[i].From.Equal(m.appointment.StartsAt), "YES %d: from %s", i, moves[i].From)
		}
		require.Equal(t, 1, f.count(t, "SELECT count(*) FROM bookings WHERE opening_id IN ($1, $2) AND customer_id = $3", a.ID, b.ID, m.id))
		require.Equal(t, 1, f.count(t, "SELECT count(*) FROM slot_offers WHERE move_from = $1 AND status = 'accepted'", m.appointment.ID))
		require.Equal(t, 1, f.count(t, "SELECT count(*) FROM slot_offers WHERE move_from = $1 AND status = 'lost'", m.appointment.ID),
			"the other move-up of the appointment moved is withdrawn")
		require.Equal(t, connectors.StatusMoved, f.status(t, m.appointment.ID))
	})

	t.Run("crossed offers", func(t *testing.T) {
		// X and Y each hold a move-up offer of two openings; X takes the first while Y
		// takes the second. Each claim marks the other's offer of its opening lost while
		// each move withdraws the mover's own other offer: neither may wait on the other
		// (a deadlock aborts one, and its customer's YES would be lost).
		for i := range 12 {
			first, err := f.openings.Declare(ctx, f.shop, slots.NewOpening{StartsAt: day.Add(time.Duration(200+2*i) * time.Hour),
				DurationMinutes: 45, Service: "Cut", PriceCents: 2500})
			require.NoError(t, err)
			second, err := f.openings.Declare(ctx, f.shop, slots.NewOpening{StartsAt: day.Add(time.Duration(201+2*i) * time.Hour),
				DurationMinutes: 45, Service: "Cut", PriceCents: 2500})
			require.NoError(t, err)
			x := f.mover(t, fmt.Sprintf("+155555506%02d", i), day.Add(time.Duration(300+i)*time.Hour))
			y := f.mover(t, fmt.Sprintf("+155555507%02d", i), day.Add(time.Duration(330+i)*time.Hour))
			xFirst := f.moveUpOffer(t, first.ID, x)
			f.moveUpOffer(t, first.ID, y)
			f.moveUpOffer(t, second.ID, x)
			ySecond := f.moveUpOffer(t, second.ID, y)
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
			require.Equal(t, connectors.StatusMoved, f.status(t, x.appointment.ID))
			require.Equal(t, connectors.StatusMoved, f.status(t, y.appointment.ID))
			require.Equal(t, 0, f.count(t, "SELECT count(*) FROM slot_offers WHERE opening_id IN ($1, $2) AND status = 'sent'", first.ID, second.ID),
				"every other offer of both openings is lost")
		}
	})

	t.Run("move and cancel", func(t *testing.T) {
		for i := range 8 {
			op, err := f.openings.Declare(ctx, f.shop, slots.NewOpening{StartsAt: day.Add(time.Duration(6+i) * time.Hour),
				DurationMinutes: 45, Service: "Cut", PriceCents: 2500})
			require.NoError(t, err)
			m := f.mover(t, fmt.Sprintf("+155555505%02d", i), day.Add(time.Duration(120+i)*time.Hour))
			offer := f.moveUpOffer(t, op.ID, m)
			var move book.Move
			var moveErr, cancelErr error
			var wg sync.WaitGroup
			start := make(chan struct{})
			wg.Go(func() { <-start; move, moveErr = f.book.MoveUp(ctx, f.shop, m.id, offer) })
			wg.Go(func() { <-start; _, cancelErr = f.book.Cancel(ctx, f.shop, m.appointment.ID) })
			close(start)
			wg.Wait()
			require.NoError(t, moveErr)
			bookings := f.count(t, "SELECT count(*) FROM bookings WHERE opening_id = $1", op.ID)
			switch f.status(t, m.appointment.ID) {
			case connectors.StatusMoved:
				require.ErrorIs(t, cancelErr, book.ErrNotBooked, "a moved appointment is not cancelled")
				require.Equal(t, slots.Booked, move.Claim.Outcome)
				require.Equal(t, 1, bookings)
			case connectors.StatusCancelled:
				require.NoError(t, cancelErr)
				require.NotEqual(t, slots.Booked, move.Claim.Outcome)
				require.Equal(t, 0, bookings, "the move rolled back whole")
				got, err := f.openings.Get(ctx, f.shop.ID, op.ID)
				require.NoError(t, err)
				require.Equal(t, slots.StatusOpen, got.Status)
			default:
				t.Fatalf("appointment %s: %s", m.appointment.ID, f.status(t, m.appointment.ID))
			}
		}
	})
}

// TestMoveAndCancelInEitherOrder: the interleavings chosen, not left to timing. The
// owner's cancel held while it declares the cancelled time (holding the appointment):
// the move waits for the appointment, then finds it cancelled and changes nothing (the
// earlier opening still open, nobody booked). The move held while it declares the time it
// freed: the cancel waits, then finds the appointment moved and is refused.
func TestMoveAndCancelInEitherOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	day := time.Now().Add(24 * time.Hour).Truncate(time.Hour).UTC()

	t.Run("cancel first", func(t *testing.T) {
		f := setup(t)
		m := f.mover(t, "+15555550601", day.Add(48*time.Hour))
		op, err := f.openings.Declare(ctx, f.shop, slots.NewOpening{StartsAt: day, DurationMinutes: 45, Service: "Cut", PriceCents: 2500})
		require.NoError(t, err)
		offer := f.moveUpOffer(t, op.ID, m)
		release := pgtest.PausePoint(t, f.pool, "AFTER INSERT", "slot_openings")
		cancel := pgtest.Async(func() (book.Result, error) { return f.book.Cancel(ctx, f.shop, m.appointment.ID) })
		pgtest.WaitUntilWaiting(t, f.pool, pgtest.AtPause, "the cancellation", cancel)
		move := pgtest.Async(func() (book.Move, error) { return f.book.MoveUp(ctx, f.shop, m.id, offer) })
		pgtest.WaitUntilWaiting(t, f.pool, pgtest.OnARowLock, "the move", move)
		release()
		c, mv := <-cancel, <-move
		require.NoError(t, c.Err)
		require.NoError(t, mv.Err)
		require.Equal(t, slots.Taken, mv.V.Claim.Outcome)
		require.True(t, mv.V.From.IsZero(), "the appointment no longer stands")
		require.Equal(t, 1, f.count(t, "SELECT count(*) FROM slot_offers WHERE id = $1 AND status = 'lost'", offer.OfferID),
			"the cancellation withdrew the move-up offer")
		require.Equal(t, connectors.StatusCancelled, f.status(t, m.appointment.ID))
		require.Zero(t, f.count(t, "SELECT count(*) FROM bookings WHERE opening_id = $1", op.ID))
		got, err := f.openings.Get(ctx, f.shop.ID, op.ID)
		require.NoError(t, err)
		require.Equal(t, slots.StatusOpen, got.Status)
	})

	t.Run("move first", func(t *testing.T) {
		f := setup(t)
		m := f.mover(t, "+15555550602", day.Add(48*time.Hour))
		op, err := f.openings.Declare(ctx, f.shop, slots.NewOpening{StartsAt: day, DurationMinutes: 45, Service: "Cut", PriceCents: 2500})
		require.NoError(t, err)
		offer := f.moveUpOffer(t, op.ID, m)
		release := pgtest.PausePoint(t, f.pool, "AFTER INSERT", "slot_openings")
		move := pgtest.Async(func() (book.Move, error) { return f.book.MoveUp(ctx, f.shop, m.id, offer) })
		pgtest.WaitUntilWaiting(t, f.pool, pgtest.AtPause, "the move", move)
		cancel := pgtest.Async(func() (book.Result, error) { return f.book.Cancel(ctx, f.shop, m.appointment.ID) })
		pgtest.WaitUntilWaiting(t, f.pool, pgtest.OnARowLock, "the cancellation", cancel)
		release()
		mv, c := <-move, <-cancel
		require.NoError(t, mv.Err)
		require.Equal(t, slots.Booked, mv.V.Claim.Outcome)
		require.ErrorIs(t, c.Err, book.ErrNotBooked)
		require.Equal(t, connectors.StatusMoved, f.status(t, m.appointment.ID))
		require.Equal(t, 1, f.count(t, "SELECT count(*) FROM bookings WHERE opening_id = $1", op.ID))
		require.Equal(t, 1, f.count(t, "SELECT count(*) FROM slot_openings WHERE chain_moved_from = $1 AND status = 'open'", m.appointment.ID))
	})
}
