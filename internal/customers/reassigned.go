package customers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/db"
)

// A number that answers "wrong number" opts out (package replies reads it as an
// opt-out) and may have changed hands: carriers give a cancelled number to someone else
// after a while, and the customer the shop knew is then out of reach by text. The
// customer with that number is marked possibly reassigned, for the owner to check with
// them (the customers' list and the API show it) and clear.

// MarkPossiblyReassigned records, in tx, that shopID's customer with number answered
// "wrong number" at now; an earlier mark's time is kept. A number that is no customer's
// (or an erased one's) changes nothing.
func (s *Service) MarkPossiblyReassigned(ctx context.Context, tx pgx.Tx, shopID uuid.UUID, number string, now time.Time) error {
	if _, err := queries.CustomerMarkPossiblyReassigned(ctx, tx, db.CustomerMarkPossiblyReassignedParams{
		ShopID: shopID, Phone: number, Now: now.UTC(),
	}); err != nil {
		return fmt.Errorf("mark a number of shop %s possibly reassigned: %w", shopID, err)
	}
	return nil
}

// ClearPossiblyReassigned takes the mark off shopID's customer id (the owner checked
// the number) and returns the customer; ErrNotFound when the shop has no such customer.
// Clearing an unmarked customer changes nothing.
func (s *Service) ClearPossiblyReassigned(ctx context.Context, shopID, id uuid.UUID) (Customer, error) {
	row, err := queries.CustomerClearPossiblyReassigned(ctx, s.pool, db.CustomerClearPossiblyReassignedParams{ID: id, ShopID: shopID})
	if errors.Is(err, pgx.ErrNoRows) {
		return Customer{}, ErrNotFound
	}
	if err != nil {
		return Customer{}, fmt.Errorf("clear customer %s's reassigned mark: %w", id, err)
	}
	return FromRow(row), nil
}
