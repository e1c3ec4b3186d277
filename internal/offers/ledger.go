package offers

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/db"
)

// The offers table's changes that other packages' transactions need. offers is the one
// package that changes slot_offers (internal/archtest enforces it); a caller passes its
// transaction (or the pool) as q, so the change commits or rolls back with its own.
//
// The exception is the YES's claim (slots' BookingClaim), which accepts the winner's
// offer and loses the others in the same statement that books: that one statement is
// what makes a claim one round trip.

// CloseQueued closes the offers of an opening that were recorded but never texted:
// the opening was cancelled or has expired.
func CloseQueued(ctx context.Context, q db.DBTX, openingID uuid.UUID) error {
	if err := queries.OfferMarkQueuedLost(ctx, q, openingID); err != nil {
		return fmt.Errorf("close untexted offers: %w", err)
	}
	return nil
}

// LoseOthers closes every live offer of an opening but the accepted one: a late payer
// took the slot back, so the current round's YES now hears "taken".
func LoseOthers(ctx context.Context, q db.DBTX, openingID, acceptedID uuid.UUID) error {
	if err := queries.OfferMarkOthersLost(ctx, q, db.OfferMarkOthersLostParams{OpeningID: openingID, AcceptedID: acceptedID}); err != nil {
		return fmt.Errorf("mark other offers lost: %w", err)
	}
	return nil
}

// MarkPaymentFailed records that the booking behind an accepted offer was not paid.
func MarkPaymentFailed(ctx context.Context, q db.DBTX, offerID uuid.UUID) error {
	if err := queries.OfferMarkPaymentFailed(ctx, q, offerID); err != nil {
		return fmt.Errorf("mark offer payment failed: %w", err)
	}
	return nil
}

// DeclineNewest records a customer's NO: it declines their newest offer that can still
// be taken. A customer with none is left as they are (the NO is answered all the same),
// and so is an offer that stops being live meanwhile (taken, lost).
func DeclineNewest(ctx context.Context, q db.DBTX, customerID uuid.UUID) error {
	off, err := queries.OfferNewestClaimable(ctx, q, customerID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("find offer to decline: %w", err)
	}
	if _, err := queries.OfferDecline(ctx, q, off.OfferID); err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("decline offer: %w", err)
	}
	return nil
}

// WithdrawMoves closes the other move-up offers of an appointment whose move-up takenID
// was just taken (in the caller's transaction, internal/book's MoveUp): the booking they
// would move is moved already.
func WithdrawMoves(ctx context.Context, q db.DBTX, appointmentID, takenID uuid.UUID) error {
	if err := queries.OfferWithdrawMoves(ctx, q, db.OfferWithdrawMovesParams{AppointmentID: uuid.NullUUID{UUID: appointmentID, Valid: true}, TakenID: takenID}); err != nil {
		return fmt.Errorf("withdraw other move-up offers: %w", err)
	}
	return nil
}

// WithdrawBookingMoves is WithdrawMoves for a YES booking's move-up offers (in the
// caller's transaction, internal/ledger's): the booking moved (takenID, the offer that
// moved it) or ended (takenID uuid.Nil), so no wave texts them and no YES takes one.
func WithdrawBookingMoves(ctx context.Context, q db.DBTX, bookingID, takenID uuid.UUID) error {
	if err := queries.OfferWithdrawBookingMoves(ctx, q, db.OfferWithdrawBookingMovesParams{BookingID: uuid.NullUUID{UUID: bookingID, Valid: true}, TakenID: takenID}); err != nil {
		return fmt.Errorf("withdraw the booking's move-up offers: %w", err)
	}
	return nil
}
