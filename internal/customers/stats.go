package customers

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/slotrecovery/slotrecovery/api"
	"github.com/slotrecovery/slotrecovery/internal/db"
)

// StatsWindow is how far back Stats' offers_90d and bookings_90d count.
const StatsWindow = 90 * 24 * time.Hour

// Stats are a customer's figures, computed from the records (api.CustomerStats).
type Stats = api.CustomerStats

// Stats returns the shop's customer's stats; ErrNotFound when the shop has no such live
// customer.
func (s *Service) Stats(ctx context.Context, shopID, customerID uuid.UUID) (Stats, error) {
	all, err := s.StatsOf(ctx, shopID, []uuid.UUID{customerID})
	if err != nil {
		return Stats{}, err
	}
	st, ok := all[customerID]
	if !ok {
		return Stats{}, ErrNotFound
	}
	return st, nil
}

// StatsOf returns the stats of the shop's live customers among ids (a page of the
// list), in one statement; ids that are not such customers are left out.
func (s *Service) StatsOf(ctx context.Context, shopID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]Stats, error) {
	rows, err := queries.CustomerStats(ctx, s.pool, db.CustomerStatsParams{
		ShopID: shopID, Ids: ids, Since: s.cfg.Now().Add(-StatsWindow).UTC(),
	})
	if err != nil {
		return nil, fmt.Errorf("customer stats: %w", err)
	}
	out := make(map[uuid.UUID]Stats, len(rows))
	for _, r := range rows {
		out[r.ID] = Stats{
			Offers90d: int(r.Offers), Bookings90d: int(r.Bookings), Attended: int(r.Attended),
			NoShows: int(r.NoShows), LapsedHolds: int(r.LapsedHolds),
			LastOfferedAt: timeOrNil(r.LastOfferedAt), LastBookedAt: timeOrNil(r.LastBookedAt),
		}
	}
	return out, nil
}

// ClearNoShows clears the shop's customer's no-shows as of now: those recorded before
// no longer keep them from being offered (the shop's skip_after_no_shows) nor count
// against them in the reliable ranking; Stats still shows them. ErrNotFound when the
// shop has no such live customer.
func (s *Service) ClearNoShows(ctx context.Context, shopID, customerID uuid.UUID) error {
	n, err := queries.CustomerClearNoShows(ctx, s.pool, db.CustomerClearNoShowsParams{
		Now: s.cfg.Now().UTC(), ID: customerID, ShopID: shopID,
	})
	if err != nil {
		return fmt.Errorf("clear no-shows of customer %s: %w", customerID, err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// timeOrNil reads a nullable timestamptz that sqlc could not type (an aggregate).
func timeOrNil(v any) *time.Time {
	if t, ok := v.(time.Time); ok {
		t = t.UTC()
		return &t
	}
	return nil
}
