package offers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/api"
	"github.com/slotrecovery/slotrecovery/internal/catalog"
	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// ErrOpeningNotFound means the shop has no such opening (the code slots.ErrNotFound
// answers with: offers cannot import slots).
var ErrOpeningNotFound = problem.New(problem.NotFound, "opening_not_found", "no such opening")

// CustomerRef names a customer in the record (an erased customer's name is "").
type CustomerRef = api.CustomerRef

// Texted is one customer a wave texted (or is texting), with the reason in words.
type Texted = api.OfferTexted

// Skipped counts who a wave left out, by the first reason that held (Skips).
type Skipped = api.OfferSkipped

// skippedOf is the counts kept by recordSkips.
func skippedOf(counts map[Skip]int) Skipped {
	return Skipped{
		OptedOut: counts[SkipOptedOut], Cooldown: counts[SkipCooldown], DailyCap: counts[SkipDailyCap],
		QuietHours: counts[SkipQuietHours], NoFitService: counts[SkipNoFitService], NoFitStaff: counts[SkipNoFitStaff],
		NoFitWindow: counts[SkipNoFitWindow], NoConsent: counts[SkipNoConsent], NoShows: counts[SkipNoShows],
		AlreadyOffered: counts[SkipAlreadyOffered], Paused: counts[SkipPaused],
	}
}

// WaveRecord is one wave of an opening on the record.
type WaveRecord = api.OfferWave

// Reply is a customer's text answering an offer of the opening.
type Reply = api.OfferReply

// Record is an opening's offers on the record: its waves and the replies to them.
type Record = api.OfferRecord

// shopOpening is the opening if it is the shop's, else ErrOpeningNotFound.
func (s *Service) shopOpening(ctx context.Context, shopID, openingID uuid.UUID) (db.OpeningForWaveRow, error) {
	op, err := queries.OpeningForWave(ctx, s.pool, openingID)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && op.ShopID != shopID) {
		return db.OpeningForWaveRow{}, ErrOpeningNotFound
	}
	if err != nil {
		return db.OpeningForWaveRow{}, fmt.Errorf("get opening %s: %w", openingID, err)
	}
	return op, nil
}

// Record returns the shop's opening's offers on the record: each wave with who it
// texted (in rank order, with the reason in words, relative to now) and who it left
// out, and the replies; ErrOpeningNotFound when the shop has no such opening.
func (s *Service) Record(ctx context.Context, shopID, openingID uuid.UUID) (Record, error) {
	if _, err := s.shopOpening(ctx, shopID, openingID); err != nil {
		return Record{}, err
	}
	now := s.cfg.Now()
	waves, err := queries.OfferWaveList(ctx, s.pool, openingID)
	if err != nil {
		return Record{}, fmt.Errorf("list waves: %w", err)
	}
	offers, err := queries.OfferListForRecord(ctx, s.pool, openingID)
	if err != nil {
		return Record{}, fmt.Errorf("list offers: %w", err)
	}
	replies, err := queries.OfferListReplies(ctx, s.pool, openingID)
	if err != nil {
		return Record{}, fmt.Errorf("list replies: %w", err)
	}
	rec := Record{Waves: []WaveRecord{}, Replies: make([]Reply, 0, len(replies))}
	type key struct{ gen, wave int32 }
	index := map[key]int{}
	for _, w := range waves {
		var counts map[Skip]int
		if err := json.Unmarshal(w.Skipped, &counts); err != nil {
			return Record{}, fmt.Errorf("decode wave %d's counts: %w", w.Wave, err)
		}
		index[key{w.Generation, w.Wave}] = len(rec.Waves)
		rec.Waves = append(rec.Waves, WaveRecord{N: int(w.Wave), Generation: int(w.Generation), At: w.At,
			Ranking: string(rankingOr(shops.Ranking(w.Ranking))), Texted: []Texted{}, Skipped: skippedOf(counts)})
	}
	for _, o := range offers {
		k := key{o.Generation, o.Wave}
		i, ok := index[k]
		if !ok {
			// A wave recorded before its judgement was kept: its offers alone.
			i = len(rec.Waves)
			index[k] = i
			rec.Waves = append(rec.Waves, WaveRecord{N: int(o.Wave), Generation: int(o.Generation), At: o.CreatedAt,
				Ranking: string(shops.RankingPriority), Texted: []Texted{}})
		}
		rec.Waves[i].Texted = append(rec.Waves[i].Texted, Texted{
			Customer: CustomerRef{ID: o.CustomerID, Name: o.Name}, Rank: int(o.Rank), Reason: reasonWords(o.Reason, now),
		})
	}
	slices.SortStableFunc(rec.Waves, func(a, b WaveRecord) int {
		if a.Generation != b.Generation {
			return a.Generation - b.Generation
		}
		return a.N - b.N
	})
	for _, r := range replies {
		rec.Replies = append(rec.Replies, Reply{Customer: CustomerRef{ID: r.CustomerID, Name: r.Name}, At: r.ReceivedAt, Outcome: r.Outcome})
	}
	return rec, nil
}

// reasonWords renders a stored reason; an offer recorded before reasons were kept has
// none.
func reasonWords(stored []byte, now time.Time) string {
	if len(stored) == 0 {
		return ""
	}
	var r Reason
	if err := json.Unmarshal(stored, &r); err != nil {
		return ""
	}
	return r.Words(now)
}

// Explanation says why a customer was or was not texted an opening.
type Explanation struct {
	Customer CustomerRef `json:"customer"`
	// Texted: the customer was texted (or is being texted) in wave Wave of generation
	// Generation, at At, with rank Rank for Reason.
	Texted     bool       `json:"texted"`
	Generation int        `json:"generation,omitempty"`
	Wave       int        `json:"wave,omitempty"`
	At         *time.Time `json:"at,omitempty"`
	Rank       int        `json:"rank,omitempty"`
	// Skip is the first reason that left the customer out of the opening's latest wave
	// that judged them ("" when texted, or when no wave left them out).
	Skip Skip `json:"skip,omitempty"`
	// Now is the first reason that would leave them out now ("" when none would);
	// StillHolds says whether Skip still does.
	Now        Skip `json:"now,omitempty"`
	StillHolds bool `json:"still_holds"`
	// Words is the whole explanation as an owner reads it.
	Words string `json:"words"`
}

// API is e as the owners' API shows it.
func (e Explanation) API() api.OfferExplanation {
	return api.OfferExplanation{Customer: e.Customer, Texted: e.Texted, Generation: e.Generation, Wave: e.Wave, At: e.At,
		Rank: e.Rank, Skip: string(e.Skip), Now: string(e.Now), StillHolds: e.StillHolds, Words: e.Words}
}

// Explain says why the shop's customer was or was not texted the opening: texted in
// which wave and why there, or the first reason that left them out of the latest wave
// that judged them, and whether it still holds now. ErrOpeningNotFound or
// customers.ErrNotFound when the shop has no such opening or customer.
func (s *Service) Explain(ctx context.Context, shopID, openingID, customerID uuid.UUID) (Explanation, error) {
	op, err := s.shopOpening(ctx, shopID, openingID)
	if err != nil {
		return Explanation{}, err
	}
	c, err := s.customers.Get(ctx, shopID, customerID)
	if err != nil {
		return Explanation{}, err
	}
	now := s.cfg.Now()
	ex := Explanation{Customer: CustomerRef{ID: c.ID, Name: c.Name}}
	name := c.Name

	offer, err := queries.OfferForCustomer(ctx, s.pool, db.OfferForCustomerParams{OpeningID: openingID, CustomerID: customerID})
	switch {
	case err == nil && (offer.SentAt != nil || offer.Status == "queued" || offer.Status == "sending"):
		ex.Texted, ex.Generation, ex.Wave, ex.Rank = true, int(offer.Generation), int(offer.Wave), int(offer.Rank)
		ex.At = offer.SentAt
		if ex.At == nil {
			ex.At = &offer.CreatedAt
		}
		ex.Words = fmt.Sprintf("%s was texted in wave %d", name, offer.Wave)
		if words := reasonWords(offer.Reason, now); words != "" {
			ex.Words += fmt.Sprintf(", ranked %d: %s", offer.Rank, words)
		}
		ex.Words += "."
		return ex, nil
	case err != nil && !errors.Is(err, pgx.ErrNoRows):
		return Explanation{}, fmt.Errorf("get offer: %w", err)
	}

	waves, err := queries.OfferWaveList(ctx, s.pool, openingID)
	if err != nil {
		return Explanation{}, fmt.Errorf("list waves: %w", err)
	}
	var then db.OfferWaveListRow
	for _, w := range slices.Backward(waves) {
		var ids map[Skip][]uuid.UUID
		if err := json.Unmarshal(w.SkippedIds, &ids); err != nil {
			return Explanation{}, fmt.Errorf("decode wave %d's skipped: %w", w.Wave, err)
		}
		for _, k := range Skips {
			if slices.Contains(ids[k], customerID) {
				ex.Skip, ex.Generation, ex.Wave, then = k, int(w.Generation), int(w.Wave), w
				break
			}
		}
		if ex.Skip != "" {
			break
		}
	}
	if ex.Now, err = s.judgeNow(ctx, shopID, op, customerID, now); err != nil {
		return Explanation{}, err
	}
	if ex.Skip == "" && ex.Now == SkipAlreadyOffered {
		// Offered in this generation without a text (it failed), declined, or held it:
		// the offers' own record, not a wave's.
		ex.Skip = SkipAlreadyOffered
	}
	ex.StillHolds = ex.Skip != "" && ex.Now == ex.Skip
	switch {
	case ex.Skip != "" && then.Wave != 0:
		ex.At = &then.At
		ex.Words = fmt.Sprintf("%s was not texted in wave %d: %s %s.", name, then.Wave, name, ex.Skip.Words())
	case ex.Skip != "":
		ex.Words = fmt.Sprintf("%s was not texted: %s %s.", name, name, ex.Skip.Words())
	case len(waves) == 0:
		ex.Words = fmt.Sprintf("%s has not been texted: no wave has run for this opening yet.", name)
	default:
		ex.Words = fmt.Sprintf("%s has not been texted yet: the waves so far were filled by customers ranked ahead.", name)
	}
	switch {
	case ex.StillHolds:
		ex.Words += " This still holds."
	case ex.Now != "":
		ex.Words += fmt.Sprintf(" Now %s %s.", name, ex.Now.Words())
	case ex.Skip != "":
		ex.Words += fmt.Sprintf(" That no longer holds: %s may be texted in a later wave.", name)
	default:
		ex.Words += fmt.Sprintf(" Nothing keeps %s out now.", name)
	}
	return ex, nil
}

// judgeNow is the first reason that would leave the customer out of a wave of op now
// ("" when none would): the wave's own judging statement for them alone, the cooldown,
// and the shop's quiet hours.
func (s *Service) judgeNow(ctx context.Context, shopID uuid.UUID, op db.OpeningForWaveRow, customerID uuid.UUID, now time.Time) (Skip, error) {
	shop, err := s.shops.Get(ctx, shopID)
	if err != nil {
		return "", err
	}
	ranking, skipAfter := shopRanking(shop)
	params := eligibility(shop, op, now, ranking, skipAfter)
	params.MaxRows = 1
	params.OnlyCustomer = uuid.NullUUID{UUID: customerID, Valid: true}
	if params.WithServices, err = catalog.HasServices(ctx, s.pool, shopID); err != nil {
		return "", err
	}
	cands, skipped, err := judge(ctx, s.pool, params)
	if err != nil {
		return "", err
	}
	for _, k := range Skips {
		if len(skipped[k]) > 0 {
			return k, nil
		}
	}
	if len(cands) == 0 {
		return "", nil
	}
	cooling, err := s.cooldowns.Cooling(ctx, []string{customerID.String()})
	if err != nil {
		return "", fmt.Errorf("check cooldown: %w", err)
	}
	if cooling[customerID.String()] {
		return SkipCooldown, nil
	}
	if q := shop.Policy.Quiet; q != nil && q.Contains(now.In(shop.Location)) {
		return SkipQuietHours, nil
	}
	return "", nil
}

// The outcomes of an offer in a customer's history.
const (
	OutcomeSending   = "sending"   // recorded, its text going out
	OutcomeNoReply   = "no_reply"  // texted, no YES or NO to it
	OutcomeBooked    = "booked"    // their YES booked it
	OutcomeDeclined  = "declined"  // they said NO
	OutcomeMissed    = "missed"    // texted, but someone else booked it or it closed first
	OutcomeWithdrawn = "withdrawn" // never texted: the opening closed first
	OutcomeFailed    = "failed"    // the text was not delivered, or the booking's payment failed
)

// OutcomeOf is an offer's outcome from its status and whether it was texted: the one
// rule the record, a customer's history and the shop's figures (internal/stats) read.
func OutcomeOf(status string, sentAt *time.Time) string {
	switch status {
	case "queued", "sending":
		return OutcomeSending
	case "sent":
		return OutcomeNoReply
	case "accepted":
		return OutcomeBooked
	case "declined":
		return OutcomeDeclined
	case "lost":
		if sentAt != nil {
			return OutcomeMissed
		}
		return OutcomeWithdrawn
	}
	return OutcomeFailed
}

// OpeningRef names an opening in a customer's history.
type OpeningRef = api.OpeningRef

// HistoryEntry is one offer a customer was made.
type HistoryEntry = api.OfferHistoryEntry

// MaxHistory is the most entries History returns at once.
const MaxHistory = 200

// History returns the shop's customer's offers, newest first: at most limit (1 to
// MaxHistory; 0: 50) recorded before before (zero: now); the next page is before the
// last entry's RecordedAt. customers.ErrNotFound when the shop has no such customer.
func (s *Service) History(ctx context.Context, shopID, customerID uuid.UUID, before time.Time, limit int) ([]HistoryEntry, error) {
	if _, err := s.customers.Get(ctx, shopID, customerID); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, MaxHistory)
	if before.IsZero() {
		before = s.cfg.Now().Add(time.Second)
	}
	rows, err := queries.OfferHistory(ctx, s.pool, db.OfferHistoryParams{
		CustomerID: customerID, ShopID: shopID, Before: before.UTC(), MaxRows: int32(limit),
	})
	if err != nil {
		return nil, fmt.Errorf("list offers of customer %s: %w", customerID, err)
	}
	out := make([]HistoryEntry, 0, len(rows))
	for _, r := range rows {
		at := r.CreatedAt
		if r.SentAt != nil {
			at = *r.SentAt
		}
		out = append(out, HistoryEntry{
			OfferID: r.ID, Opening: OpeningRef{ID: r.OpeningID, StartsAt: r.StartsAt, Service: r.Service},
			At: at, RecordedAt: r.CreatedAt, Generation: int(r.Generation), Wave: int(r.Wave), Outcome: OutcomeOf(r.Status, r.SentAt),
		})
	}
	return out, nil
}
