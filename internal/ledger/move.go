package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/api"
	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/offers"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
)

// A move-up of a booking made by a YES (issue 44): internal/book's MoveUp, in one
// transaction, locks the booking (LockForMove), books the earlier opening with the
// customer's YES (slots.Service.ClaimTx) and moves the booking there (MoveTx). The
// bookings' changes are this package's; the transaction is book's.

// BookingMoved is the status of a YES booking moved up to an earlier opening: its
// payment went with it to the booking it became (moved_to). It is not live: it holds no
// time, is never refunded, swept, expired or reconciled, and is not counted.
const BookingMoved = api.BookingMoved

// ErrNotMovable means the booking a move-up offer would move cannot be moved: it is no
// longer confirmed (cancelled, moved already, or its payment in flight), is not the
// customer's, or its opening is not the shop's or no longer held by it.
var ErrNotMovable = errors.New("ledger: booking cannot be moved")

// Movable is a confirmed YES booking that LockForMove locked, with the time it holds
// and its shop as the lock read it.
type Movable struct {
	Booking db.Booking
	Opening db.SlotOpening
	shop    shops.Shop
}

// LockForMove locks, in tx, a confirmed booking of customerID at shop that a move-up
// would move: its opening first, then the booking, then the shop's row for share (the
// order every payment transition and a customer's cancellation take them in, so a move
// and a cancellation of the same booking wait for each other instead of deadlocking,
// and a disconnection of the shop's Stripe account is either seen by MoveTx or waits
// for the move). ErrNotMovable when it is not (or no longer) movable; a booking pending
// payment is not: its payment is in flight. shop is as the caller's shops.Service
// returned it (its Stripe.Required is the server's).
func LockForMove(ctx context.Context, tx pgx.Tx, shop shops.Shop, customerID, bookingID uuid.UUID) (Movable, error) {
	op, found, err := slots.LockBookedOpening(ctx, tx, bookingID)
	if err != nil {
		return Movable{}, err
	}
	if !found || op.ShopID != shop.ID {
		return Movable{}, ErrNotMovable
	}
	b, err := queries.BookingLock(ctx, tx, bookingID)
	if err != nil {
		return Movable{}, fmt.Errorf("lock booking: %w", err)
	}
	if b.Status != BookingConfirmed || b.CustomerID != customerID ||
		op.Status != slots.StatusFilled || !op.FilledBy.Valid || op.FilledBy.UUID != customerID {
		return Movable{}, ErrNotMovable
	}
	cur, err := shops.ReadForShare(ctx, tx, shop)
	if err != nil {
		return Movable{}, err
	}
	return Movable{Booking: b, Opening: op, shop: cur}, nil
}

// MoveResult is what MoveTx did.
type MoveResult struct {
	// Booking is the new booking, confirmed with the moved payment.
	Booking db.Booking
	// Result is what became of the old booking's opening: ResultReopened (offered
	// again as the chain's next link, a new generation, its first wave enqueued) or
	// ResultExpired (inside the shop's cutoff, or the shop cannot take payments now).
	Result Result
}

// MoveTx moves the locked booking m to toID, the booking its customer's YES to move-up
// offer takenID has just made on the earlier opening in tx (slots.Service.ClaimTx): the
// new booking takes the old one's service, price and payment (the Stripe ids,
// account and fee: moved, not copied, so a later refund or fee acts once) and is
// confirmed without a checkout; the accepted terms follow it; the old booking becomes
// moved (moved_to the new one); its other move-up offers are withdrawn; and its
// opening is released as the next link of chain (slots.ReopenInChain: one opening per
// time, offered again, move-ups first), or expired inside the cutoff or when the shop
// can no longer take payments. The opening's events (opening.reopened or
// opening.expired, and booking.confirmed when the claim left the new booking pending)
// are recorded with the change.
func MoveTx(ctx context.Context, tx pgx.Tx, queue jobs.Inserter, m Movable, toID, takenID uuid.UUID, chain slots.Chain, now time.Time) (MoveResult, error) {
	var out MoveResult
	cur, err := queries.BookingGet(ctx, tx, toID)
	if err != nil {
		return out, fmt.Errorf("read new booking: %w", err)
	}
	wasPending := cur.Status == BookingPendingPayment
	nb, err := queries.BookingMovePayment(ctx, tx, db.BookingMovePaymentParams{FromID: m.Booking.ID, ToID: toID, Now: now.UTC()})
	if errors.Is(err, pgx.ErrNoRows) {
		return out, ErrNotMovable
	}
	if err != nil {
		return out, fmt.Errorf("move booking's payment: %w", err)
	}
	out.Booking = nb
	if err := queries.BookingTermsMove(ctx, tx, db.BookingTermsMoveParams{FromID: m.Booking.ID, ToID: toID}); err != nil {
		return out, fmt.Errorf("move booking's terms: %w", err)
	}
	if wasPending {
		if err := hooks.RecordOpening(ctx, tx, nb.ShopID, hooks.BookingConfirmed, now, nb.OpeningID, nb.ID); err != nil {
			return out, err
		}
	}
	if err := offers.WithdrawBookingMoves(ctx, tx, m.Booking.ID, takenID); err != nil {
		return out, err
	}
	op, shop := m.Opening, m.shop
	out.Result = ResultReopened
	// As a released hold: offered again unless inside the cutoff or the shop can no
	// longer take payments (its next taker's hold would lapse).
	if now.Before(shop.Cutoff(op.StartsAt)) && shop.CheckoutReady() == nil {
		if err := slots.ReopenInChain(ctx, tx, queue, op.ID, chain, now); err != nil {
			return out, err
		}
	} else {
		if err := slots.ExpireFilled(ctx, tx, op.ID, now); err != nil {
			return out, err
		}
		out.Result = ResultExpired
	}
	typ := hooks.OpeningReopened
	if out.Result == ResultExpired {
		typ = hooks.OpeningExpired
	}
	if err := hooks.RecordOpening(ctx, tx, m.Booking.ShopID, typ, now, op.ID, m.Booking.ID); err != nil {
		return out, err
	}
	return out, nil
}

// paidMoved applies a payment event that names a moved booking b: the payment that moved
// with it (the booking it moved to holds the same session or payment intent) is
// applied already; any other is refunded.
func (s *Service) paidMoved(ctx context.Context, tx pgx.Tx, b db.Booking, sessionID, paymentIntentID string) (Result, error) {
	holder, err := queries.BookingMovedPayment(ctx, tx, b.ID)
	if err != nil {
		return "", fmt.Errorf("follow moved booking %s: %w", b.ID, err)
	}
	same := sessionID == "" || holder.StripeCheckoutSessionID.String == sessionID
	if paymentIntentID != "" && holder.StripePaymentIntentID.Valid {
		same = holder.StripePaymentIntentID.String == paymentIntentID
	}
	if same || paymentIntentID == "" {
		// The moved payment (or no payment named: nothing to refund).
		return ResultAlreadyConfirmed, nil
	}
	if err := s.requestRefund(ctx, tx, b.ID, paymentIntentID); err != nil {
		return "", err
	}
	return ResultRefundedDuplicate, nil
}
