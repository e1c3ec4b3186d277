package offers

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/riverqueue/river"

	"github.com/slotrecovery/slotrecovery/internal/catalog"
	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// idleWaveInterval is how often a wave that found nobody to text looks again.
const idleWaveInterval = time.Hour

// recordWave picks the wave's customers and records their offers, and schedules the next
// wave, in one transaction that holds the opening's row lock (so a YES or a cancel cannot
// interleave).
func (s *Service) recordWave(ctx context.Context, shop shops.Shop, op db.OpeningForWaveRow, w jobs.Wave, now time.Time) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		locked, err := queries.OpeningForWaveLocked(ctx, tx, op.ID)
		if err != nil {
			return fmt.Errorf("lock opening: %w", err)
		}
		// Still open in the same round: the rest of op (its start, length, service) is
		// never changed once declared.
		if !locked.Open || locked.Generation != op.Generation {
			return nil
		}
		ranking, skipAfter := shopRanking(shop)
		params := eligibility(shop, op, now, ranking, skipAfter)
		params.MaxRows = int32(s.cfg.MaxCandidates)
		if params.WithServices, err = catalog.HasServices(ctx, tx, shop.ID); err != nil {
			return err
		}
		if params.MaxPerDay > 0 {
			if err := queries.OfferLockShopWaves(ctx, tx, shop.ID); err != nil {
				return fmt.Errorf("lock shop waves: %w", err)
			}
		}
		cands, skipped, err := judge(ctx, tx, params)
		if err != nil {
			return err
		}
		// The first wave offers the opening first to customers who hold a later booking
		// it can take and asked to move up; they count in the wave's size.
		var movers []db.OfferMoveUpCandidatesRow
		if s.cfg.MoveUps && w.Wave == 1 {
			if movers, err = queries.OfferMoveUpCandidates(ctx, tx, db.OfferMoveUpCandidatesParams{OpeningID: op.ID, MaxRows: int32(shop.Policy.WaveSize)}); err != nil {
				return fmt.Errorf("list move-up candidates: %w", err)
			}
		}
		ids := make([]string, 0, len(cands)+len(movers))
		for _, m := range movers {
			ids = append(ids, m.CustomerID.String())
		}
		for _, c := range cands {
			ids = append(ids, c.ID.String())
		}
		cooling, err := s.cooldowns.Cooling(ctx, ids)
		if err != nil {
			return fmt.Errorf("check cooldowns: %w", err)
		}
		for _, c := range cands {
			if cooling[c.ID.String()] {
				skipped[SkipCooldown] = append(skipped[SkipCooldown], c.ID)
			}
		}
		priorities := make(map[uuid.UUID]int, len(cands))
		for _, c := range cands {
			priorities[c.ID] = int(c.Priority)
		}
		// Offers of earlier waves whose texts never reached their customer are made up
		// for here: this wave texts that many more.
		shortfall, err := queries.OfferShortfall(ctx, tx, db.OfferShortfallParams{OpeningID: op.ID, Generation: op.Generation, Wave: int32(w.Wave)})
		if err != nil {
			return fmt.Errorf("find undelivered offers: %w", err)
		}
		// Each picked customer with the service they are offered (the opening's own, the
		// nil uuid, without services).
		var picked, serviceIDs, moveFroms, moveBookings []uuid.UUID
		var services []string
		var durations []int32
		var prices []int64
		var reasons []Reason
		moving := map[uuid.UUID]bool{}
		for _, m := range movers {
			if !cooling[m.CustomerID.String()] {
				// The opening's own service: the appointment's is the same.
				picked, serviceIDs, services = append(picked, m.CustomerID), append(serviceIDs, uuid.Nil), append(services, "")
				durations, prices = append(durations, 0), append(prices, 0)
				if m.FromBooking {
					moveFroms, moveBookings = append(moveFroms, uuid.Nil), append(moveBookings, m.HeldID)
				} else {
					moveFroms, moveBookings = append(moveFroms, m.HeldID), append(moveBookings, uuid.Nil)
				}
				reasons = append(reasons, Reason{Ranking: ranking, Priority: priorities[m.CustomerID], MoveUp: true})
				moving[m.CustomerID] = true
			}
		}
		for _, c := range cands {
			if len(picked) == shop.Policy.WaveSize+len(shortfall) {
				break
			}
			if !cooling[c.ID.String()] && !moving[c.ID] {
				moveFroms, moveBookings = append(moveFroms, uuid.Nil), append(moveBookings, uuid.Nil)
				picked = append(picked, c.ID)
				serviceIDs, services = append(serviceIDs, c.ServiceID), append(services, c.FitName)
				durations, prices = append(durations, c.FitMinutes), append(prices, c.FitPrice)
				reasons = append(reasons, reasonOf(ranking, c, op.PriceCents, shop.Currency))
			}
		}
		if extra := min(len(picked)-shop.Policy.WaveSize, len(shortfall)); extra > 0 {
			if err := queries.OfferMarkReplaced(ctx, tx, db.OfferMarkReplacedParams{Ids: shortfall[:extra], Now: now.UTC()}); err != nil {
				return fmt.Errorf("mark undelivered offers replaced: %w", err)
			}
		}
		if len(picked) > 0 {
			reasonsJSON, err := json.Marshal(reasons)
			if err != nil {
				return fmt.Errorf("encode reasons: %w", err)
			}
			if err := queries.OfferInsertMany(ctx, tx, db.OfferInsertManyParams{
				OpeningID: op.ID, ShopID: shop.ID, Generation: op.Generation, Wave: int32(w.Wave),
				CreatedAt: now.UTC(), CustomerIds: picked,
				ServiceIds: serviceIDs, Services: services, Durations: durations, Prices: prices, MoveFroms: moveFroms,
				MoveFromBookings: moveBookings, Reasons: reasonsJSON,
			}); err != nil {
				return fmt.Errorf("insert offers: %w", err)
			}
		}
		if err := recordSkips(ctx, tx, shop, op, w, now, ranking, skipped); err != nil {
			return err
		}
		// The next wave is scheduled even when nobody is left: it picks up customers added
		// or out of cooldown by then, and the last one, run at the cutoff at the latest,
		// marks an unfilled opening expired.
		at := now.Add(shop.Policy.WaveInterval)
		if len(picked) == 0 {
			// Nobody to text now: look again less often, for customers added or out of
			// cooldown later, instead of every interval until a start months away.
			at = now.Add(max(shop.Policy.WaveInterval, idleWaveInterval))
		}
		if cutoff := shop.Cutoff(op.StartsAt); cutoff.Before(at) {
			at = cutoff
		}
		next := jobs.Wave{OpeningID: op.ID, Generation: w.Generation, Wave: w.Wave + 1}
		if _, err := s.queue.InsertTx(ctx, tx, next, &river.InsertOpts{ScheduledAt: at}); err != nil {
			return fmt.Errorf("schedule next wave: %w", err)
		}
		return nil
	})
}

// eligibility is who a wave of op may text, besides the rules that need no parameter
// (opted in, reachable, not offered this round): customers not paused at now, whose preferences contain the
// opening (its local day of the week, a window holding the whole appointment, or with
// services the service each is offered, its service), and who have not had the shop's daily cap of offers in the shop's local day
// of now.
func eligibility(shop shops.Shop, op db.OpeningForWaveRow, now time.Time, ranking shops.Ranking, skipAfterNoShows *int) db.CustomerListEligibleParams {
	local := op.StartsAt.In(shop.Location)
	startMinute := local.Hour()*60 + local.Minute()
	today := now.In(shop.Location)
	y, m, d := today.Date()
	dayStart := time.Date(y, m, d, 0, 0, 0, 0, shop.Location)
	return db.CustomerListEligibleParams{
		ShopID: shop.ID, OpeningID: op.ID, Generation: op.Generation,
		LocalDow:    int16(customers.ISODay(local.Weekday())),
		StartMinute: int32(startMinute),
		EndMinute:   int32(startMinute + int(op.DurationMinutes)),
		Service:     op.Service,
		MaxPerDay:   int32(shop.Policy.MaxOffersPerDay),
		// The person and length a service must fit (with services).
		StaffID:        op.StaffID,
		OpeningMinutes: op.DurationMinutes,
		DayStart:       dayStart.UTC(),
		// AddDate, not 24 hours: a day with a daylight-saving change is 23 or 25 hours.
		DayEnd:           time.Date(y, m, d+1, 0, 0, 0, 0, shop.Location).UTC(),
		Ranking:          string(rankingOr(ranking)),
		SkipAfterNoShows: nullableInt4(skipAfterNoShows),
		Since:            now.Add(-ReliabilityWindow).UTC(),
		// A customer's PAUSE holds until its time (customers.Customer.PausedUntil).
		Now: now.UTC(),
	}
}

// shopRanking is the shop's ranking settings as a wave reads them.
func shopRanking(shop shops.Shop) (shops.Ranking, *int) {
	return rankingOr(shop.Ranking), shop.SkipAfterNoShows
}

// judge runs the wave's one judging statement (CustomerListEligible): the customers it
// may text, in rank order, and the others by the first reason that leaves them out.
func judge(ctx context.Context, tx db.DBTX, params db.CustomerListEligibleParams) ([]db.CustomerListEligibleRow, map[Skip][]uuid.UUID, error) {
	rows, err := queries.CustomerListEligible(ctx, tx, params)
	if err != nil {
		return nil, nil, fmt.Errorf("judge customers: %w", err)
	}
	cands := make([]db.CustomerListEligibleRow, 0, len(rows))
	skipped := map[Skip][]uuid.UUID{}
	for _, r := range rows {
		if r.Skip == "" {
			cands = append(cands, r)
		} else {
			skipped[Skip(r.Skip)] = append(skipped[Skip(r.Skip)], r.ID)
		}
	}
	// The statement numbers the ranked rows in its order; a UNION's output order is
	// Postgres's to choose, the rank is not.
	slices.SortFunc(cands, func(a, b db.CustomerListEligibleRow) int { return cmp.Compare(a.Rank, b.Rank) })
	return cands, skipped, nil
}

// reasonOf is the facts that ranked a texted customer, as the judging statement read
// them; a service's price is the offer's (the opening's without services).
func reasonOf(ranking shops.Ranking, c db.CustomerListEligibleRow, openingPrice int64, currency string) Reason {
	r := Reason{Ranking: rankingOr(ranking), Priority: int(c.Priority)}
	if r.Ranking == shops.RankingPriority {
		return r
	}
	r.LastOfferedAt, r.LastBookedAt = timeOrNil(c.LastOfferedAt), timeOrNil(c.LastBookedAt)
	switch r.Ranking {
	case shops.RankingReliable:
		r.NoShows, r.LapsedHolds = int(c.NoShows), int(c.LapsedHolds)
	case shops.RankingValue:
		r.PriceCents, r.Currency = cmp.Or(c.FitPrice, openingPrice), currency
	}
	return r
}

// nullableInt4 is n as a nullable integer parameter.
func nullableInt4(n *int) pgtype.Int4 {
	if n == nil {
		return pgtype.Int4{}
	}
	return pgtype.Int4{Int32: int32(*n), Valid: true}
}

// timeOrNil reads a nullable timestamptz that sqlc could not type (a computed column).
func timeOrNil(v any) *time.Time {
	if t, ok := v.(time.Time); ok {
		t = t.UTC()
		return &t
	}
	return nil
}

// recordSkips keeps the wave's judgement (offer_waves): the counts of who it left out
// for each reason, and who they were (except already_offered: the offers say who).
func recordSkips(ctx context.Context, tx db.DBTX, shop shops.Shop, op db.OpeningForWaveRow, w jobs.Wave, now time.Time, ranking shops.Ranking, skipped map[Skip][]uuid.UUID) error {
	counts := make(map[Skip]int, len(Skips))
	ids := make(map[Skip][]uuid.UUID, len(skipped))
	for _, k := range Skips {
		counts[k] = len(skipped[k])
		if k != SkipAlreadyOffered && len(skipped[k]) > 0 {
			ids[k] = skipped[k]
		}
	}
	countsJSON, err := json.Marshal(counts)
	if err != nil {
		return fmt.Errorf("encode skipped counts: %w", err)
	}
	idsJSON, err := json.Marshal(ids)
	if err != nil {
		return fmt.Errorf("encode skipped customers: %w", err)
	}
	if err := queries.OfferWaveRecord(ctx, tx, db.OfferWaveRecordParams{
		OpeningID: op.ID, Generation: op.Generation, Wave: int32(w.Wave), ShopID: shop.ID, At: now.UTC(),
		Ranking: string(rankingOr(ranking)), Skipped: countsJSON, SkippedIds: idsJSON,
	}); err != nil {
		return fmt.Errorf("record wave: %w", err)
	}
	return nil
}
