package slots

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
)

// The openings' changes that a booking's payment outcome makes. slots is the one package
// that changes slot_openings (internal/archtest enforces it); the payment transitions
// call these inside their own transaction (q, tx), after taking the opening's row lock
// with LockBookedOpening, so the opening changes with the booking or not at all.

// LockBookedOpening reads the opening of booking bookingID and locks its row until q's
// transaction ends, in one statement (the booking is found in it). A payment transition
// takes it before the booking's row lock: the order the claim (Book) takes them in, so
// that the two never wait on each other crosswise. found is false when there is no such
// booking.
func LockBookedOpening(ctx context.Context, q db.DBTX, bookingID uuid.UUID) (op db.SlotOpening, found bool, err error) {
	op, err = queries.OpeningLockForBooking(ctx, q, bookingID)
	if errors.Is(err, pgx.ErrNoRows) {
		return db.SlotOpening{}, false, nil
	}
	if err != nil {
		return db.SlotOpening{}, false, fmt.Errorf("lock opening of booking %s: %w", bookingID, err)
	}
	return op, true, nil
}

// Reopen opens a filled opening again, in a new offer generation, and enqueues that
// generation's first wave in tx: the wave exists if and only if the reopening commits.
// The customer whose booking failed is not offered it again (CustomerListEligible passes
// over anyone who has had a booking for the opening).
func Reopen(ctx context.Context, tx pgx.Tx, queue jobs.Inserter, id uuid.UUID, now time.Time) error {
	reopened, err := queries.OpeningReopen(ctx, tx, db.OpeningReopenParams{ID: id, Now: now.UTC()})
	if err != nil {
		return fmt.Errorf("reopen opening: %w", err)
	}
	if _, err := queue.InsertTx(ctx, tx, jobs.Wave{OpeningID: id, Generation: int(reopened.Generation), Wave: 1}, nil); err != nil {
		return fmt.Errorf("enqueue wave: %w", err)
	}
	return nil
}

// ReopenInChain reopens a filled opening as Reopen does (a new generation, its first
// wave enqueued in tx), as the next link of chain: the payment ledger's move-up of a
// YES booking frees its opening so (the time is offered like any other, and the
// chain's rules apply to it: chain_max, nobody moved twice). The opening's chain, if it
// had one, is replaced.
func ReopenInChain(ctx context.Context, tx pgx.Tx, queue jobs.Inserter, id uuid.UUID, chain Chain, now time.Time) error {
	reopened, err := queries.OpeningReopenInChain(ctx, tx, db.OpeningReopenInChainParams{
		ID: id, Now: now.UTC(), ChainID: uuid.NullUUID{UUID: chain.ID, Valid: true},
		ChainPosition:  pgtype.Int4{Int32: int32(chain.Position), Valid: true},
		ChainMovedFrom: uuid.NullUUID{UUID: chain.MovedFrom, Valid: true},
	})
	if err != nil {
		return fmt.Errorf("reopen opening in chain: %w", err)
	}
	if _, err := queue.InsertTx(ctx, tx, jobs.Wave{OpeningID: id, Generation: int(reopened.Generation), Wave: 1}, nil); err != nil {
		return fmt.Errorf("enqueue wave: %w", err)
	}
	return nil
}

// ExpireFilled expires a filled opening whose booking failed inside the lead-time
// cutoff: too late to offer it again, and nobody holds it any more.
func ExpireFilled(ctx context.Context, q db.DBTX, id uuid.UUID, now time.Time) error {
	if _, err := queries.OpeningExpireFilled(ctx, q, db.OpeningExpireFilledParams{ID: id, Now: now.UTC()}); err != nil {
		return fmt.Errorf("expire opening: %w", err)
	}
	return nil
}

// FillLate gives an opening that nobody holds (open again, or expired) back to the
// customer whose payment came late. It reports false when the opening is held or
// otherwise not free.
func FillLate(ctx context.Context, q db.DBTX, id, customerID uuid.UUID, now time.Time) (bool, error) {
	_, err := queries.OpeningMarkFilledLate(ctx, q, db.OpeningMarkFilledLateParams{
		ID: id, CustomerID: uuid.NullUUID{UUID: customerID, Valid: true}, Now: now.UTC(),
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("mark opening filled: %w", err)
	}
	return true, nil
}

// CancelOpen cancels every open opening of shopID inside tx, each as Cancel does one
// (its offers not texted yet closed, opening.cancelled recorded), and returns their ids.
// The payment ledger calls it when the shop can no longer take payments (its payment
// account was disconnected): every YES to those openings would be told "yours!" and
// then that the hold lapsed. Openings already held are left to their holds.
func CancelOpen(ctx context.Context, tx pgx.Tx, shopID uuid.UUID, now time.Time) ([]uuid.UUID, error) {
	ids, err := queries.OpeningListOpenForShop(ctx, tx, shopID)
	if err != nil {
		return nil, fmt.Errorf("list open openings of shop %s: %w", shopID, err)
	}
	var out []uuid.UUID
	for _, id := range ids {
		err := cancel(ctx, tx, shopID, id, now)
		if errors.Is(err, pgx.ErrNoRows) {
			continue // filled (or closed) since it was listed
		}
		if err != nil {
			return nil, fmt.Errorf("cancel opening %s: %w", id, err)
		}
		out = append(out, id)
	}
	return out, nil
}
