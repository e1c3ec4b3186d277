package book

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/connectors"
	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
)

// A move-up of a booking made by a YES (source slotrecovery), in MoveUp's transaction:
// the booking is locked through the ledger (lockBooking: its opening, then the booking;
// still confirmed, the customer's, later than the offer), the earlier opening is booked
// as for an appointment (MoveUp's slots.Service.ClaimTx decides between concurrent
// YES), and the ledger moves the booking's payment to the new booking, which is
// confirmed (no checkout, no second charge), makes the old one moved and frees its
// opening as the next link of the offer's chain (moveBooking, ledger.MoveTx);
// appointment.moved is recorded with the time the booking held.

// heldBooking is a YES booking locked for its move, as the book showed it before.
type heldBooking struct {
	m   ledger.Movable
	was Appointment
}

// lockBooking locks the YES booking offer would move (offer.MoveFrom) for its move:
// errMoveOff when there is nothing to move (cancelled, moved, gone, not the customer's)
// or the offer is not earlier; out.From is the time the customer keeps.
func (s *Service) lockBooking(ctx context.Context, tx pgx.Tx, shop shops.Shop, customerID uuid.UUID, offer slots.LiveOffer, out *Move) (*heldBooking, error) {
	// The shop as the server's configuration has it: whether its Stripe account must be
	// able to take payments decides if the time the move frees is offered again.
	m, err := ledger.LockForMove(ctx, tx, s.shops.Configured(shop), customerID, offer.MoveFrom.UUID)
	if errors.Is(err, ledger.ErrNotMovable) {
		return nil, errMoveOff
	}
	if err != nil {
		return nil, err
	}
	if s.cfg.Queue == nil {
		// The freed opening's wave could not be enqueued with the move: no move.
		out.Claim.Outcome = slots.NoOffer
		return nil, errMoveOff
	}
	out.From = m.Opening.StartsAt.UTC()
	if !m.Opening.StartsAt.After(offer.StartsAt) {
		return nil, errMoveOff // never to a later time
	}
	was, err := s.getBook(ctx, tx, shop.ID, m.Booking.ID)
	if err != nil {
		return nil, err
	}
	return &heldBooking{m: m, was: was}, nil
}

// moveBooking completes the move of h to the booking MoveUp's claim made (out.Claim).
func (s *Service) moveBooking(ctx context.Context, tx pgx.Tx, shop shops.Shop, offer slots.LiveOffer, h heldBooking, now time.Time, out *Move) error {
	m := h.m
	ch, err := queries.AppointmentChainOf(ctx, tx, offer.OpeningID)
	if err != nil {
		return fmt.Errorf("read chain: %w", err)
	}
	chain := slots.Chain{ID: ch.ChainID, Position: int(ch.Position) + 1, MovedFrom: m.Booking.ID}
	res, err := ledger.MoveTx(ctx, tx, s.cfg.Queue, m, out.Claim.BookingID, offer.OfferID, chain, now)
	if errors.Is(err, ledger.ErrNotMovable) {
		return errMoveOff
	}
	if err != nil {
		return err
	}
	// The new booking holds the payment: confirmed, nothing to pay.
	out.Claim.Booking, out.Claim.Confirmed = res.Booking, true
	out.Claim.PriceCents = res.Booking.AmountCents
	d := &Declaration{State: DeclarationDeclared, StartsAt: m.Opening.StartsAt.UTC(),
		DurationMinutes: h.was.DurationMinutes, StaffID: m.Opening.StaffID.UUID, OpeningID: m.Opening.ID, CreatedAt: now, UpdatedAt: now}
	if res.Result == ledger.ResultExpired {
		d.State, d.Reason, d.OpeningID = DeclarationSkipped, SkipPastCutoff, uuid.Nil
	}
	out.Declaration = d
	after, err := s.getBook(ctx, tx, shop.ID, m.Booking.ID)
	if err != nil {
		return err
	}
	b := before{known: true, row: db.Appointment{Status: string(connectors.StatusBooked), StartsAt: h.was.StartsAt,
		DurationMinutes: int32(h.was.DurationMinutes)}}
	if h.was.Staff != nil {
		b.row.StaffID, b.staffName = uuid.NullUUID{UUID: h.was.Staff.ID, Valid: true}, h.was.Staff.Name
	}
	return recordChange(ctx, tx, b, Result{Changed: true, Appointment: after, Declaration: d}, now)
}
