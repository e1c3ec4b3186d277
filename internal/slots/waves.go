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

// What the waves of offers (internal/offers) ask of the openings: they read openings
// themselves, and *Service implements offers.Openings, so that the one change a wave
// makes to an opening (closing it past its cutoff) is made by its owner.

var _ offers.Openings = (*Service)(nil)

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
