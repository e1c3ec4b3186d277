package slots

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/offers"
)

// What the waves of offers (internal/offers) ask of the openings: they read openings
// themselves, and *Service implements offers.Openings, so that the one change a wave
// makes to an opening (closing it past its cutoff) is made by its owner.

var _ offers.Openings = (*Service)(nil)

// Expire closes an opening that is still open past its cutoff, and its offers that were
// never texted, and records opening.expired. One that is no longer open is left alone
// (and no event is recorded: a wave's retry, or the chain's last wave after the first
// expired it, changes nothing).
func (s *Service) Expire(ctx context.Context, id uuid.UUID, now time.Time) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		row, err := queries.OpeningExpire(ctx, tx, db.OpeningExpireParams{ID: id, Now: now.UTC()})
		expired := err == nil
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("expire opening: %w", err)
		}
		if err := offers.CloseQueued(ctx, tx, id); err != nil {
			return err
		}
		if !expired {
			return nil
		}
		return hooks.RecordOpening(ctx, tx, row.ShopID, hooks.OpeningExpired, now, id, uuid.Nil)
	})
}
