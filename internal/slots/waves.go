package slots

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/offers"
)

// What the waves of offers (internal/offers) ask of the openings: *Service implements
// offers.Openings, so offers reads openings and closes expired ones through their owner.

var _ offers.Openings = (*Service)(nil)

// ForWave reads an opening for a wave; offers.ErrNoOpening when it does not exist.
func (s *Service) ForWave(ctx context.Context, id uuid.UUID) (offers.Opening, error) {
	op, err := queries.OpeningGet(ctx, s.pool, id)
	return forWave(op, err)
}

// LockForWave reads an opening and locks its row until tx ends.
func (s *Service) LockForWave(ctx context.Context, tx pgx.Tx, id uuid.UUID) (offers.Opening, error) {
	op, err := queries.OpeningLock(ctx, tx, id)
	return forWave(op, err)
}

func forWave(op db.SlotOpening, err error) (offers.Opening, error) {
	if errors.Is(err, pgx.ErrNoRows) {
		return offers.Opening{}, offers.ErrNoOpening
	}
	if err != nil {
		return offers.Opening{}, err
	}
	return offers.Opening{
		ID: op.ID, ShopID: op.ShopID, Generation: op.Generation, Open: op.Status == StatusOpen,
		StartsAt: op.StartsAt, DurationMinutes: op.DurationMinutes, Service: op.Service,
		PriceCents: op.PriceCents, CreatedAt: op.CreatedAt,
	}, nil
}

// Expire closes an opening that is still open past its cutoff, and its offers that were
// never texted. One that is no longer open is left alone.
func (s *Service) Expire(ctx context.Context, id uuid.UUID, now time.Time) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := queries.OpeningExpire(ctx, tx, db.OpeningExpireParams{ID: id, Now: now.UTC()}); err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("expire opening: %w", err)
		}
		return offers.CloseQueued(ctx, tx, id)
	})
}
