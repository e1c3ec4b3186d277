package book

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
)

// Move is what a customer's YES to a move-up offer did (MoveUp).
type Move struct {
	// Claim is the claim of the earlier opening: Booked when the move was made (the
	// booking is Claim.Booking; its payment link, when the shop takes payments, is the
	// caller's to make as for any booking), Taken or NoOffer when nothing changed.
	Claim slots.Claim
	// From is when the appointment the offer would move starts: the time the customer
	// left (Booked) or keeps (Taken); zero when the appointment no longer stands
	// (cancelled or moved since the offer).
	From time.Time
	// Declaration is what the time the move freed declared (nil: nothing, see
	// Result.Declaration).
	Declaration *Declaration
}

// errMoveOff rolls back a move that cannot be made; MoveUp answers what its claim was.
var errMoveOff = errors.New("book: move-up off")

// MoveUp takes the move-up offer for its customer, in one transaction holding the
// appointment's row lock: the appointment (offer.MoveFrom) must still be booked, be the
// customer's and start later than the offer; the earlier opening is booked as any YES
// books it (slots.Service.ClaimTx: the opening's row lock and the bookings' unique index
// decide between concurrent YES); the appointment becomes moved (moved_to the opening),
// its webhook event appointment.moved is recorded, and the time it held is released
// and declared as an opening of the chain the earlier opening belongs to
// (slots.NewOpening.Chain). Either all of that commits or nothing does: a customer who
// lost the race keeps their appointment (Outcome Taken, From its time). The row lock
// orders the move against a cancellation of the same appointment (Cancel, Upsert): the
// later finds the appointment moved (a cancel is then refused, ErrNotBooked) or
// cancelled (the move is off). Two live move-up offers of one appointment take turns on
// it too: only the first moves it, and its release withdraws the others
// (offers.WithdrawMoves, as any release of the appointment does). A move of a cal.com
// or Square appointment is written back to the vendor when the shop's connector holds
// its API key: the write-back and its job are part of the same transaction
// (writeback.go). A YES booking's move-up (moveBookingUp) takes its payment with it:
// the new booking is confirmed at once (Claim.Confirmed, no payment link). An error
// wraps slots.ErrUnavailable.
func (s *Service) MoveUp(ctx context.Context, shop shops.Shop, customerID uuid.UUID, offer slots.LiveOffer) (Move, error) {
	if !offer.MoveFrom.Valid {
		return Move{}, fmt.Errorf("book: offer %s is not a move-up", offer.OfferID)
	}
	now := s.cfg.Now().UTC()
	var out Move
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		out = Move{Claim: slots.Claim{Outcome: slots.Taken, OpeningID: offer.OpeningID}}
		row, err := queries.AppointmentLockForMoveUp(ctx, tx, db.AppointmentLockForMoveUpParams{
			ShopID: shop.ID, ID: offer.MoveFrom.UUID, CustomerID: uuid.NullUUID{UUID: customerID, Valid: true},
		})
		var yes *heldBooking
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			// A YES booking's move-up (slot_offers.move_from_booking: the claim reads
			// either as MoveFrom), or an appointment cancelled or moved since the
			// offer: nothing to move then.
			if yes, err = s.lockBooking(ctx, tx, shop, customerID, offer, &out); err != nil {
				return err
			}
		case err != nil:
			return fmt.Errorf("lock appointment: %w", err)
		default:
			out.From = row.StartsAt.UTC()
			if !row.StartsAt.After(offer.StartsAt) {
				return errMoveOff // never to a later time (the appointment changed since)
			}
		}
		c, err := s.openings.ClaimTx(ctx, tx, shop, customerID, offer)
		if err != nil {
			return err
		}
		out.Claim = c
		if c.Outcome != slots.Booked || c.Repeat {
			return errMoveOff
		}
		if yes != nil {
			return s.moveBooking(ctx, tx, shop, offer, *yes, now, &out)
		}
		moved, err := queries.AppointmentMarkMoved(ctx, tx, db.AppointmentMarkMovedParams{
			ShopID: shop.ID, ID: row.ID, OpeningID: offer.OpeningID, Now: now,
		})
		if err != nil {
			return fmt.Errorf("mark appointment moved: %w", err)
		}
		res := Result{Changed: true}
		if res.Declaration, err = s.claimAndSettle(ctx, tx, shop, moved, freedOf(row), now); err != nil {
			return err
		}
		if res.Appointment, err = s.get(ctx, tx, shop.ID, row.ID); err != nil {
			return err
		}
		out.Declaration = res.Declaration
		if _, err := s.writeBackTx(ctx, tx, shop, moved, offer.StartsAt, now); err != nil {
			return err
		}
		staffName := ""
		if res.Appointment.Staff != nil {
			staffName = res.Appointment.Staff.Name
		}
		return recordChange(ctx, tx, before{known: true, row: row, staffName: staffName}, res, now)
	})
	if errors.Is(err, errMoveOff) {
		out.Claim.Booking, out.Claim.BookingID = db.Booking{}, uuid.Nil // rolled back
		if out.Claim.Outcome == slots.Booked && !out.Claim.Repeat {
			out.Claim.Outcome = slots.Taken // a claim made, then rolled back with the move
		}
		again, ok, err := s.movedAlready(ctx, shop, offer)
		if err != nil {
			return Move{}, fmt.Errorf("move appointment %s up: %w: %w", offer.MoveFrom.UUID, slots.ErrUnavailable, err)
		}
		if ok {
			return again, nil
		}
		return out, nil
	}
	if err != nil {
		return Move{}, fmt.Errorf("move appointment %s up: %w: %w", offer.MoveFrom.UUID, slots.ErrUnavailable, err)
	}
	return out, nil
}

// movedAlready answers a YES to a move-up offer the customer's own YES took a moment
// before (two texts read the offer live at once; the second finds the booking moved):
// the move they made, Repeat, rather than "taken", which would send them to the time
// they left, offered to others by now. ok is false when the offer was not taken.
func (s *Service) movedAlready(ctx context.Context, shop shops.Shop, offer slots.LiveOffer) (Move, bool, error) {
	b, err := queries.OfferAcceptedBooking(ctx, s.pool, offer.OfferID)
	if errors.Is(err, pgx.ErrNoRows) {
		return Move{}, false, nil
	}
	if err != nil {
		return Move{}, false, fmt.Errorf("find booking of accepted offer: %w", err)
	}
	was, err := s.getBook(ctx, s.pool, shop.ID, offer.MoveFrom.UUID)
	if err != nil {
		return Move{}, false, err
	}
	return Move{Claim: slots.Claim{Outcome: slots.Booked, Repeat: true, OpeningID: b.OpeningID, BookingID: b.ID,
		StartsAt: b.StartsAt.UTC(), Service: b.Service, StaffName: b.StaffName, PaymentURL: b.PaymentUrl.String,
		LinkFollows: !b.Confirmed && !b.PaymentUrl.Valid, Confirmed: b.Confirmed}, From: was.StartsAt.UTC()}, true, nil
}
