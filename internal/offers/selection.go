package offers

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
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
		params := eligibility(shop, op, now)
		params.MaxRows = int32(s.cfg.MaxCandidates)
		if params.WithServices, err = catalog.HasServices(ctx, tx, shop.ID); err != nil {
			return err
		}
		if params.MaxPerDay > 0 {
			if err := queries.OfferLockShopWaves(ctx, tx, shop.ID); err != nil {
				return fmt.Errorf("lock shop waves: %w", err)
			}
		}
		cands, err := queries.CustomerListEligible(ctx, tx, params)
		if err != nil {
			return fmt.Errorf("list eligible customers: %w", err)
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
		// Offers of earlier waves whose texts never reached their customer are made up
		// for here: this wave texts that many more.
		shortfall, err := queries.OfferShortfall(ctx, tx, db.OfferShortfallParams{OpeningID: op.ID, Generation: op.Generation, Wave: int32(w.Wave)})
		if err != nil {
			return fmt.Errorf("find undelivered offers: %w", err)
		}
		// Each picked customer with the service they are offered (the opening's own, the
		// nil uuid, without services).
		var picked, serviceIDs, moveFroms []uuid.UUID
		var services []string
		var durations []int32
		var prices []int64
		moving := map[uuid.UUID]bool{}
		for _, m := range movers {
			if !cooling[m.CustomerID.String()] {
				// The opening's own service: the appointment's is the same.
				picked, serviceIDs, services = append(picked, m.CustomerID), append(serviceIDs, uuid.Nil), append(services, "")
				durations, prices, moveFroms = append(durations, 0), append(prices, 0), append(moveFroms, m.AppointmentID)
				moving[m.CustomerID] = true
			}
		}
		for _, c := range cands {
			if len(picked) == shop.Policy.WaveSize+len(shortfall) {
				break
			}
			if !cooling[c.ID.String()] && !moving[c.ID] {
				moveFroms = append(moveFroms, uuid.Nil)
				picked = append(picked, c.ID)
				serviceIDs, services = append(serviceIDs, c.ServiceID), append(services, c.FitName)
				durations, prices = append(durations, c.FitMinutes), append(prices, c.FitPrice)
			}
		}
		if extra := min(len(picked)-shop.Policy.WaveSize, len(shortfall)); extra > 0 {
			if err := queries.OfferMarkReplaced(ctx, tx, db.OfferMarkReplacedParams{Ids: shortfall[:extra], Now: now.UTC()}); err != nil {
				return fmt.Errorf("mark undelivered offers replaced: %w", err)
			}
		}
		if len(picked) > 0 {
			if err := queries.OfferInsertMany(ctx, tx, db.OfferInsertManyParams{
				OpeningID: op.ID, ShopID: shop.ID, Generation: op.Generation, Wave: int32(w.Wave),
				CreatedAt: now.UTC(), CustomerIds: picked,
				ServiceIds: serviceIDs, Services: services, Durations: durations, Prices: prices, MoveFroms: moveFroms,
			}); err != nil {
				return fmt.Errorf("insert offers: %w", err)
			}
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
// (opted in, reachable, not offered this round): customers whose preferences contain the
// opening (its local day of the week, a window holding the whole appointment, or with
// services the service each is offered, its service), and who have not had the shop's daily cap of offers in the shop's local day
// of now.
func eligibility(shop shops.Shop, op db.OpeningForWaveRow, now time.Time) db.CustomerListEligibleParams {
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
		DayEnd: time.Date(y, m, d+1, 0, 0, 0, 0, shop.Location).UTC(),
	}
}
