package slots

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/catalog"
	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// declareRest offers what a booking left of its opening (opening openingID, starting at
// startsAt): when the rest lasts at least as long as the shortest active service the
// opening's person does, the opening becomes the booked part and the rest an opening of
// its own (parent_id the first, the same person, starting where the booking ends), with
// its first wave and its opening.declared event, in one transaction. A rest too short
// for anything is left as it is. Only once: the opening is split only while it is filled
// and as long as it was declared.
func (s *Service) declareRest(ctx context.Context, shop *shops.Shop, openingID uuid.UUID, startsAt time.Time, r rest) error {
	now := s.cfg.Now()
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		shortest, err := catalog.Shortest(ctx, tx, shop.ID, r.staffID.UUID)
		if err != nil {
			return err
		}
		left := time.Duration(r.whole-r.booked) * time.Minute
		if shortest == 0 || left < shortest {
			return nil
		}
		n, err := queries.OpeningSplit(ctx, tx, db.OpeningSplitParams{ID: openingID, Booked: int32(r.booked), Whole: int32(r.whole), Now: now.UTC()})
		if err != nil {
			return fmt.Errorf("split opening %s: %w", openingID, err)
		}
		if n == 0 {
			return nil
		}
		row, err := queries.OpeningInsert(ctx, tx, db.OpeningInsertParams{
			ShopID: shop.ID, StartsAt: startsAt.Add(time.Duration(r.booked) * time.Minute).UTC(),
			DurationMinutes: int32(r.whole - r.booked), CreatedAt: now.UTC(), StaffID: r.staffID,
			ParentID: uuid.NullUUID{UUID: openingID, Valid: true},
		})
		if err != nil {
			return fmt.Errorf("insert the rest of opening %s: %w", openingID, err)
		}
		if _, err := s.queue.InsertTx(ctx, tx, jobs.Wave{OpeningID: row.ID, Generation: 1, Wave: 1}, nil); err != nil {
			return fmt.Errorf("enqueue first wave: %w", err)
		}
		return hooks.RecordOpening(ctx, tx, shop.ID, hooks.OpeningDeclared, now, row.ID, uuid.Nil)
	})
}
