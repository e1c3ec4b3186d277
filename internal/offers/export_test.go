package offers

import (
	"context"

	"github.com/google/uuid"

	"github.com/slotrecovery/slotrecovery/internal/catalog"
	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// ApplyDeliveries lets the tests apply a chunk's stored reports as the wave does once it
// has stored the chunk's message ids.
func (s *Service) ApplyDeliveries(ctx context.Context, sids []string) error {
	return s.applyDeliveries(ctx, sids)
}

// WaveParams is what a wave of the opening would judge its customers with under
// ranking, now (the benchmark runs the statement before ranking with them).
func (s *Service) WaveParams(ctx context.Context, openingID uuid.UUID, ranking shops.Ranking) (db.CustomerListEligibleParams, error) {
	op, err := queries.OpeningForWave(ctx, s.pool, openingID)
	if err != nil {
		return db.CustomerListEligibleParams{}, err
	}
	shop, err := s.shops.Get(ctx, op.ShopID)
	if err != nil {
		return db.CustomerListEligibleParams{}, err
	}
	params := eligibility(shop, op, s.cfg.Now(), ranking, nil)
	params.MaxRows = int32(s.cfg.MaxCandidates)
	if params.WithServices, err = catalog.HasServices(ctx, s.pool, shop.ID); err != nil {
		return db.CustomerListEligibleParams{}, err
	}
	return params, nil
}

// JudgeWave runs what a wave reads to pick its customers (the judging statement and
// the cooldowns of those it may text) with params, and returns how many it may text
// and how many it left out.
func (s *Service) JudgeWave(ctx context.Context, params db.CustomerListEligibleParams) (eligible, skipped int, err error) {
	cands, skips, err := judge(ctx, s.pool, params)
	if err != nil {
		return 0, 0, err
	}
	ids := make([]string, 0, len(cands))
	for _, c := range cands {
		ids = append(ids, c.ID.String())
	}
	if _, err := s.cooldowns.Cooling(ctx, ids); err != nil {
		return 0, 0, err
	}
	for _, v := range skips {
		skipped += len(v)
	}
	return len(cands), skipped, nil
}
