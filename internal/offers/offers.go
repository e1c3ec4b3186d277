package offers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/slotrecovery/slotrecovery/internal/catalog"
	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/inbox"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/metrics"
	"github.com/slotrecovery/slotrecovery/internal/pgvalue"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/sms"
	"github.com/slotrecovery/slotrecovery/internal/texts"
)

// waveTimeout is WaveWorker's Timeout.
const waveTimeout = 5 * time.Minute

// orphanAge is how long after its claim an offer still sending must have been claimed by
// a run that is over, when RunWave cannot know better. A River attempt can
// (WaveWorker.Work): every offer still sending when a later attempt starts was claimed
// by an earlier one, which is over (River runs one attempt of a job at a time). A run
// called directly may run beside another run of the same wave, whose recent claims are
// its own business.
const orphanAge = 90 * time.Second

// idleWaveInterval is how often a wave that found nobody to text looks again.
const idleWaveInterval = time.Hour

// Texter sends one SMS and returns the provider's message id.
type Texter interface {
	Text(ctx context.Context, m sms.Message) (sid string, err error)
}

// Openings is what the waves ask of the openings' owner, internal/slots: the waves read
// openings themselves (OpeningForWave) but never change them; an opening past its
// cutoff is closed by its owner.
type Openings interface {
	// Expire closes an opening that is still open past its cutoff, with its offers
	// that were never texted.
	Expire(ctx context.Context, id uuid.UUID, now time.Time) error
}

// Pacer spaces out a sender's texts to the rate its number may send at, across
// instances; *pacing.Pacer implements it.
type Pacer interface {
	Wait(ctx context.Context, sender string, perSecond int) error
}

// CooldownChecker tells which customers are cooling down, in one round trip.
type CooldownChecker interface {
	Cooling(ctx context.Context, ids []string) (map[string]bool, error)
}

// Config configures the service; zero fields mean the defaults.
type Config struct {
	Now func() time.Time
	// MaxCandidates caps how many eligible customers one wave considers; default 5000.
	MaxCandidates int
	// SendParallelism is how many texts of a wave are in flight at once; default 32.
	SendParallelism int
	// MaxValidity caps an offer text's validity period; default 2h (never beyond the
	// cutoff).
	MaxValidity time.Duration
	// Pacer, when set, paces each shop's offer texts to its send rate (shops.Policy.
	// SendRate); nil sends as fast as SendParallelism allows.
	Pacer   Pacer
	Logger  *slog.Logger
	Metrics *metrics.Metrics
}

// queries is this package's one way to its SQL: sqlc's Queries holds no state, and
// each call is given the pool or the transaction it runs on.
var queries = db.New()

// Service runs the waves of offers.
type Service struct {
	pool      *pgxpool.Pool
	queue     jobs.Inserter
	texter    Texter
	cooldowns CooldownChecker
	shops     *shops.Service
	customers *customers.Service
	openings  Openings
	cfg       Config
	log       *slog.Logger
	m         *metrics.Metrics
}

// New returns a Service.
func New(pool *pgxpool.Pool, queue jobs.Inserter, texter Texter, cooldowns CooldownChecker, shopsSvc *shops.Service, customersSvc *customers.Service, openings Openings, cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxCandidates == 0 {
		cfg.MaxCandidates = 5000
	}
	if cfg.SendParallelism == 0 {
		cfg.SendParallelism = 32
	}
	if cfg.MaxValidity == 0 {
		cfg.MaxValidity = 2 * time.Hour
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{pool: pool, queue: queue, texter: texter, cooldowns: cooldowns,
		shops: shopsSvc, customers: customersSvc, openings: openings, cfg: cfg, log: cfg.Logger, m: cfg.Metrics}
}

// WaveResult says what a wave did.
type WaveResult struct {
	Texted   int
	Failed   int
	Stopped  string    // why nothing was texted: "not_found", "not_open", "old_generation", "expired"
	SnoozeTo time.Time // set when quiet hours postpone the wave
}

// RunWave runs one wave of an opening's offers. It is safe to run again after a crash
// or an error: offers already recorded are reused and a claimed offer is never texted
// twice.
func (s *Service) RunWave(ctx context.Context, w jobs.Wave) (WaveResult, error) {
	return s.runWave(ctx, w, s.cfg.Now().Add(-orphanAge))
}

// runWave is RunWave for a run that knows every offer of the wave claimed before
// orphansBefore was claimed by a run that is over (zero: that no run claimed any).
func (s *Service) runWave(ctx context.Context, w jobs.Wave, orphansBefore time.Time) (WaveResult, error) {
	// Offers an earlier run claimed (sending) and never marked: it was killed mid-send,
	// or could not record what it sent (Postgres gone for a moment). Each may have gone
	// out. They are settled as sent with no message id, like a send whose outcome is
	// unknown, rather than left claimed (neither claimable nor counted) for ever or texted
	// twice; and before anything else: the opening may have been cancelled, expired or
	// reopened since, and the run stops then.
	if !orphansBefore.IsZero() {
		if err := s.settleOrphans(ctx, w, orphansBefore); err != nil {
			return WaveResult{}, err
		}
	}
	op, err := queries.OpeningForWave(ctx, s.pool, w.OpeningID)
	if errors.Is(err, pgx.ErrNoRows) {
		return WaveResult{Stopped: "not_found"}, nil
	}
	if err != nil {
		return WaveResult{}, fmt.Errorf("get opening: %w", err)
	}
	if !op.Open {
		return WaveResult{Stopped: "not_open"}, nil
	}
	if int(op.Generation) != w.Generation {
		return WaveResult{Stopped: "old_generation"}, nil
	}
	shop, err := s.shops.Get(ctx, op.ShopID)
	if err != nil {
		return WaveResult{}, err
	}
	now := s.cfg.Now()
	cutoff := shop.Cutoff(op.StartsAt)
	if !now.Before(cutoff) {
		if err := s.openings.Expire(ctx, op.ID, now); err != nil {
			return WaveResult{}, fmt.Errorf("expire opening: %w", err)
		}
		return WaveResult{Stopped: "expired"}, nil
	}
	// The grace period after a declaration: the first wave of the first round waits,
	// so an owner who declared by mistake can cancel before anyone is texted. (A later
	// round, after a failed payment, is not a fresh declaration and does not wait.)
	if w.Generation == 1 && w.Wave == 1 {
		if at := op.CreatedAt.Add(shop.Policy.FirstWaveDelay); now.Before(at) {
			return WaveResult{SnoozeTo: at}, nil
		}
	}
	if q := shop.Policy.Quiet; q != nil && q.Contains(now.In(shop.Location)) {
		return WaveResult{SnoozeTo: q.EndAfter(now.In(shop.Location))}, nil
	}

	batch, err := queries.OfferListWave(ctx, s.pool, db.OfferListWaveParams{OpeningID: op.ID, Generation: op.Generation, Wave: int32(w.Wave)})
	if err != nil {
		return WaveResult{}, fmt.Errorf("list wave offers: %w", err)
	}
	if len(batch) == 0 {
		if err := s.recordWave(ctx, shop, op, w, now); err != nil {
			return WaveResult{}, err
		}
		if batch, err = queries.OfferListWave(ctx, s.pool, db.OfferListWaveParams{OpeningID: op.ID, Generation: op.Generation, Wave: int32(w.Wave)}); err != nil {
			return WaveResult{}, fmt.Errorf("list wave offers: %w", err)
		}
	}
	// Each customer reads the offer in their language, the shop's when theirs is unknown,
	// naming the service offered to them (the opening's own without services) and the
	// opening's person.
	type bodyKey struct {
		lang    language.Code
		service string
		price   int64
	}
	bodies := map[bodyKey]string{}
	body := func(o db.OfferListWaveRow) string {
		k := bodyKey{language.Code(o.Language.String).Or(shop.Language), op.Service, op.PriceCents}
		if o.Service != "" {
			k.service, k.price = o.Service, o.PriceCents
		}
		if _, ok := bodies[k]; !ok {
			bodies[k] = texts.In(k.lang).OfferWith(shop, k.service, op.StaffName, op.StartsAt, k.price)
		}
		return bodies[k]
	}
	for _, o := range batch {
		body(o) // written before the texts go out in parallel
	}
	return s.send(ctx, shop, batch, body, cutoff)
}

// settleOrphans settles the offers of wave w still claimed for sending by a run that
// claimed them before staleBefore (see RunWave and Healer).
func (s *Service) settleOrphans(ctx context.Context, w jobs.Wave, staleBefore time.Time) error {
	return settleOrphans(ctx, s.pool, s.log, w, staleBefore)
}

func settleOrphans(ctx context.Context, q db.DBTX, log *slog.Logger, w jobs.Wave, staleBefore time.Time) error {
	n, err := queries.OfferSettleOrphans(ctx, q, db.OfferSettleOrphansParams{
		OpeningID: w.OpeningID, Generation: int32(w.Generation), Wave: int32(w.Wave), StaleBefore: staleBefore.UTC(),
	})
	if err != nil {
		return fmt.Errorf("settle offers of a killed run: %w", err)
	}
	if n > 0 {
		log.WarnContext(ctx, "offers claimed by a killed wave settled as sent (outcome unknown)", "opening_id", w.OpeningID,
			"generation", w.Generation, "wave", w.Wave, "count", n)
	}
	return nil
}

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
		ids := make([]string, len(cands))
		for i, c := range cands {
			ids[i] = c.ID.String()
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
		var picked, serviceIDs []uuid.UUID
		var services []string
		var durations []int32
		var prices []int64
		for _, c := range cands {
			if len(picked) == shop.Policy.WaveSize+len(shortfall) {
				break
			}
			if !cooling[c.ID.String()] {
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
				ServiceIds: serviceIDs, Services: services, Durations: durations, Prices: prices,
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

// sendChunk is the most of a wave's offers claimed at once. The claim is what makes a
// text go out at most once; a crash mid-chunk leaves the chunk's unmarked offers
// claimed, and they are settled as sent (outcome unknown), so the chunk also bounds
// what a crash can cost. A paced wave claims one second of its sender's rate at a time
// (chunkSize): a long code's offers are claimed one by one, just before their text.
const sendChunk = 100

// chunkSize is how many of shop's offers one claim takes: a second's worth of texts at
// the shop's send rate when waves are paced (at least 1, at most sendChunk). Offers
// claimed and not yet texted are neither claimable nor sent: a long code's chunk of 100
// kept them so for 100 s.
func (s *Service) chunkSize(shop shops.Shop) int {
	if s.cfg.Pacer == nil {
		return sendChunk
	}
	return min(max(shop.Policy.SendRate, 1), sendChunk)
}

// send texts every queued offer of the batch: it claims them a chunk at a time
// (queued→sending, one statement), texts the chunk's offers a few at a time, and marks
// each sent as the provider accepts its text. A retried job skips the offers already
// claimed.
func (s *Service) send(ctx context.Context, shop shops.Shop, batch []db.OfferListWaveRow, body func(db.OfferListWaveRow) string, cutoff time.Time) (WaveResult, error) {
	var queued []db.OfferListWaveRow
	for _, o := range batch {
		if o.Status == "queued" {
			queued = append(queued, o)
		}
	}
	var res WaveResult
	var transient error
	for chunk := range slices.Chunk(queued, s.chunkSize(shop)) {
		if ctx.Err() != nil {
			break // the job ran out of time; the rest stay queued for the retry
		}
		r, err := s.sendChunk(ctx, shop, chunk, body, cutoff)
		res.Texted += r.Texted
		res.Failed += r.Failed
		if err != nil {
			transient = err
		}
	}
	if transient == nil && ctx.Err() != nil {
		transient = ctx.Err()
	}
	if transient != nil {
		return res, fmt.Errorf("text offers: %w", transient)
	}
	return res, nil
}

// sendChunk claims, texts and marks one chunk of offers. The claim rechecks opt-out and
// the opening at the last moment; each offer is marked sent as soon as the provider
// accepts its text (marker), so that its customer's YES can claim it then and not
// before; a number that cannot receive texts marks the customer so no later wave tries;
// a failure worth retrying puts the offer back to queued and is returned.
func (s *Service) sendChunk(ctx context.Context, shop shops.Shop, chunk []db.OfferListWaveRow, body func(db.OfferListWaveRow) string, cutoff time.Time) (WaveResult, error) {
	ids := make([]uuid.UUID, len(chunk))
	for i, o := range chunk {
		ids[i] = o.ID
	}
	claimed, err := s.claim(ctx, ids)
	if err != nil {
		return WaveResult{}, err
	}
	mine := make(map[uuid.UUID]bool, len(claimed))
	for _, id := range claimed {
		mine[id] = true
	}
	type failed struct {
		offer db.OfferListWaveRow
		err   error
	}
	var (
		mu    sync.Mutex
		fails []failed
		wg    sync.WaitGroup
		sem   = make(chan struct{}, s.cfg.SendParallelism)
		bg    = context.WithoutCancel(ctx)
		marks = &marker{s: s, ctx: bg, expect: len(claimed)}
		res   WaveResult
		errs  error
		sent  []inbox.OutboundText // for the customers' conversations
	)
	for _, o := range chunk {
		if !mine[o.ID] {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			b := body(o)
			sid, err := s.text(ctx, shop, o.Phone, b, cutoff)
			maybeSent := err != nil && sms.Refused(err).Then == sms.ThenAssumeSent
			if err == nil || maybeSent {
				mu.Lock()
				sent = append(sent, inbox.OutboundText{ShopID: shop.ID, Phone: o.Phone, CustomerID: o.CustomerID, Body: b,
					At: s.cfg.Now(), Key: "offer:" + o.ID.String(), Status: inbox.StatusSent, ProviderSID: sid})
				mu.Unlock()
			}
			switch {
			case err == nil:
				s.m.OfferTexted()
				marks.add(o.ID, sid)
			case maybeSent:
				// The text may have gone out. Count it as sent rather than risk texting
				// twice; the customer can still reply YES.
				s.m.SendError(0)
				s.log.WarnContext(ctx, "offer text outcome unknown", "offer_id", o.ID, "err", err)
				marks.add(o.ID, "")
			default:
				mu.Lock()
				fails = append(fails, failed{offer: o, err: err})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	sids, err := marks.wait()
	res.Texted = marks.count()
	errs = errors.Join(errs, err)
	s.showInInbox(bg, sent)

	for _, r := range fails {
		ref := sms.Refused(r.err)
		s.m.SendError(ref.Code)
		switch ref.Then {
		case sms.ThenGiveUp:
			// The offer fails (the next wave texts someone in its place), and the failure
			// says what it says of the customer or of the shop's own number
			// (customers.SMSFailed).
			if err := queries.OfferMarkFailed(bg, s.pool, db.OfferMarkFailedParams{ID: r.offer.ID, ErrorCode: pgvalue.Int4OrNull(ref.Code)}); err != nil {
				errs = errors.Join(errs, fmt.Errorf("mark offer failed: %w", err))
				continue
			}
			if err := s.customers.SMSFailed(bg, customers.SMSFailure{ShopID: shop.ID, Number: r.offer.Phone, CustomerID: r.offer.CustomerID,
				Reason: ref.Reason, Code: ref.Code}); err != nil {
				errs = errors.Join(errs, err)
				continue
			}
			if ref.Reason == sms.ReasonAccount {
				s.m.SMSAccountError(metrics.StageSend, ref.Code)
				s.log.ErrorContext(ctx, "the sms account cannot text this customer; check the shop's number and the account's geo permissions",
					"shop_id", shop.ID, "offer_id", r.offer.ID, "provider_code", ref.Code)
			} else {
				s.log.InfoContext(ctx, "customer unreachable by sms", "customer_id", r.offer.CustomerID, "reason", ref.Reason, "provider_code", ref.Code)
			}
			res.Failed++
		default:
			// Nothing was sent (the provider refused for now, or could not be reached).
			if err := queries.OfferUnclaim(bg, s.pool, r.offer.ID); err != nil {
				errs = errors.Join(errs, fmt.Errorf("unclaim offer: %w", err))
				continue
			}
			errs = errors.Join(errs, r.err)
		}
	}
	if len(sids) > 0 {
		// Reports that came before the ids were stored; the next report of each text
		// applies them too.
		errs = errors.Join(errs, s.applyReported(bg, sids))
	}
	return res, errs
}

// showInInbox records offers that went out (or may have) in their customers'
// conversations with the shop, so that the owner reads a reply beside the offer it
// answers. The inbox is a record, not what decides a send: a failure is logged, and
// the wave goes on.
func (s *Service) showInInbox(ctx context.Context, sent []inbox.OutboundText) {
	if len(sent) == 0 {
		return
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		_, err := inbox.RecordOutMany(ctx, tx, sent)
		return err
	})
	if err != nil {
		s.log.WarnContext(ctx, "offers sent; the owner's inbox does not show them", "texts", len(sent), "err", err)
	}
}

// marker marks a chunk's offers sent as their texts are accepted. While one statement
// runs, the texts accepted meanwhile wait for the next; and while more of the chunk's
// texts are on their way, a statement waits markLinger for them. So a long code's text
// (a chunk of one) is marked by its own statement at once, and a thousand texts a
// second by a statement for many. A text is claimable only once marked: the linger
// delays that by a few milliseconds, never the other way round.
type marker struct {
	s      *Service
	ctx    context.Context
	expect int // texts of the chunk

	mu       sync.Mutex
	ids      []uuid.UUID // accepted, waiting for a statement
	sids     []string
	running  bool
	done     sync.WaitGroup
	added    int      // texts accepted
	reported []string // message ids marked whose delivery reports came before
	err      error
}

// A failed mark is tried again markRetries times, markBackoff, then twice and four
// times that apart. A mark waits up to markLinger for more of its chunk's texts, unless
// markBatch are waiting already.
const (
	markRetries = 3
	markBackoff = 200 * time.Millisecond
	markLinger  = 5 * time.Millisecond
	markBatch   = 64
)

// add queues the mark of an accepted text ("" when its outcome is unknown) and starts a
// statement if none is running.
func (m *marker) add(id uuid.UUID, sid string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ids, m.sids = append(m.ids, id), append(m.sids, sid)
	m.added++
	if !m.running {
		m.running = true
		m.done.Add(1)
		go m.run()
	}
}

// run marks what is queued, statement after statement, until nothing is.
func (m *marker) run() {
	defer m.done.Done()
	lingered := false
	for {
		m.mu.Lock()
		if !lingered && len(m.ids) < markBatch && m.added < m.expect {
			m.mu.Unlock()
			time.Sleep(markLinger) // more of the chunk's texts are coming
			lingered = true
			continue
		}
		lingered = false
		ids, sids := m.ids, m.sids
		m.ids, m.sids = nil, nil
		if len(ids) == 0 {
			m.running = false
			m.mu.Unlock()
			return
		}
		m.mu.Unlock()
		// A mark that fails leaves accepted texts neither claimable nor counted until a
		// later attempt settles them (without their message ids): a short outage is
		// waited out here.
		reported, err := m.s.markSent(m.ctx, ids, sids)
		for try := 0; err != nil && try < markRetries; try++ {
			time.Sleep(markBackoff << try)
			reported, err = m.s.markSent(m.ctx, ids, sids)
		}
		m.mu.Lock()
		if err != nil {
			m.err = errors.Join(m.err, err)
		} else {
			m.reported = append(m.reported, reported...)
		}
		m.mu.Unlock()
	}
}

// wait returns, once every queued mark is done, the message ids marked whose delivery
// reports came before the mark, and the errors. No add may come after it.
func (m *marker) wait() ([]string, error) {
	m.done.Wait()
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reported, m.err
}

// count is how many texts were accepted (or may have been), marked or not.
func (m *marker) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.added
}

// The claim and the mark each change many offers of one opening, while a YES (losing
// the opening's other offers) or a cancel (closing its queued ones) locks the same rows
// in an order of its own. A statement that waits for a row while holding others can
// close a cycle with those, and Postgres aborts one of them: a YES answered with an
// error, or a wave that fails. So the many-row statements here never wait (SKIP
// LOCKED), and what they skipped is done one row per statement, each waiting while it
// holds nothing else.

// claim claims the given queued offers for sending and returns those this sender got.
func (s *Service) claim(ctx context.Context, ids []uuid.UUID) ([]uuid.UUID, error) {
	now := s.cfg.Now().UTC()
	claimed, err := queries.OfferClaimManyForSending(ctx, s.pool, db.OfferClaimManyForSendingParams{Ids: ids, Now: now})
	if err != nil {
		return nil, fmt.Errorf("claim offers: %w", err)
	}
	if len(claimed) == len(ids) {
		return claimed, nil
	}
	// Offers another run claimed, or that can no longer be texted, are not queued and
	// claimable any more; those still are were held by another statement a moment ago.
	skipped, err := queries.OfferListStillQueued(ctx, s.pool, except(ids, claimed))
	if err != nil {
		return nil, fmt.Errorf("list offers still queued: %w", err)
	}
	for _, id := range skipped {
		n, err := queries.OfferClaimForSending(ctx, s.pool, db.OfferClaimForSendingParams{ID: id, Now: now})
		if err != nil {
			return nil, fmt.Errorf("claim offer: %w", err)
		}
		if n == 1 {
			claimed = append(claimed, id)
		}
	}
	return claimed, nil
}

// markSent records that the provider accepted the texts of claimed offers, with their
// message ids ("" when the outcome of the send is unknown), and returns the ids whose
// delivery reports may have come before (to apply them).
func (s *Service) markSent(ctx context.Context, ids []uuid.UUID, sids []string) ([]string, error) {
	now := s.cfg.Now().UTC()
	rows, err := queries.OfferMarkManySent(ctx, s.pool, db.OfferMarkManySentParams{Ids: ids, Sids: sids, Now: now})
	if err != nil {
		return nil, fmt.Errorf("mark offers sent: %w", err)
	}
	sidOf := make(map[uuid.UUID]string, len(ids))
	for i, id := range ids {
		sidOf[id] = sids[i]
	}
	var reported []string
	marked := make([]uuid.UUID, len(rows))
	for i, r := range rows {
		marked[i] = r.ID
		if r.Reported {
			reported = append(reported, sidOf[r.ID])
		}
	}
	if len(marked) == len(ids) {
		return reported, nil
	}
	// Offers not marked yet were held by another statement a moment ago (or were
	// settled by another run: then they need nothing).
	left, err := queries.OfferListSending(ctx, s.pool, except(ids, marked))
	if err != nil {
		return reported, fmt.Errorf("list offers still sending: %w", err)
	}
	for _, id := range left {
		if err := queries.OfferMarkSent(ctx, s.pool, db.OfferMarkSentParams{ID: id, Sid: sidOf[id], Now: now}); err != nil {
			return reported, fmt.Errorf("mark offer sent: %w", err)
		}
		if sidOf[id] != "" {
			reported = append(reported, sidOf[id]) // not asked: applying finds out
		}
	}
	return reported, nil
}

// except returns the ids not in done.
func except(ids, done []uuid.UUID) []uuid.UUID {
	skip := make(map[uuid.UUID]bool, len(done))
	for _, id := range done {
		skip[id] = true
	}
	var out []uuid.UUID
	for _, id := range ids {
		if !skip[id] {
			out = append(out, id)
		}
	}
	return out
}

// WaveWorker runs jobs.Wave.
type WaveWorker struct {
	river.WorkerDefaults[jobs.Wave]
	Service *Service
}

// Timeout bounds one run (waveTimeout). River's default (1 min) would cut even an unpaced
// wave of 1000 texts short, with Twilio slow. A wave longer than that at its send rate (a
// long code's 1 text a second and more than 300 customers) is cut and retried within a
// minute, going on where it stopped; a shorter timeout lets River's rescuer take over a
// wave killed mid-run sooner (cmd/server's rescue horizon must stay above it).
func (w *WaveWorker) Timeout(*river.Job[jobs.Wave]) time.Duration { return waveTimeout }

// NextRetry retries a failed wave (Postgres, Redis or Twilio unavailable) soon and
// steadily, at most a minute apart, rather than River's growing backoff: offers are
// only worth sending before the slot starts.
func (w *WaveWorker) NextRetry(job *river.Job[jobs.Wave]) time.Time {
	d := time.Duration(job.Attempt*job.Attempt) * time.Second
	return time.Now().Add(min(d, time.Minute))
}

// Work implements river.Worker.
func (w *WaveWorker) Work(ctx context.Context, job *river.Job[jobs.Wave]) error {
	// A first attempt has nothing to settle (no run of this job claimed anything): it
	// saves the statement. A later one follows an attempt that is over (failed, timed
	// out, or rescued): what that left claimed is settled now, not orphanAge later, and
	// nothing of this wave is claimed by this attempt yet.
	orphansBefore := time.Time{}
	if job.Attempt > 1 {
		orphansBefore = w.Service.cfg.Now()
	}
	res, err := w.Service.runWave(ctx, job.Args, orphansBefore)
	switch {
	case err != nil:
		w.Service.m.WaveRun("error")
		return err
	case !res.SnoozeTo.IsZero():
		w.Service.m.WaveRun("quiet_hours")
		return river.JobSnooze(time.Until(res.SnoozeTo))
	case res.Stopped != "":
		w.Service.m.WaveRun(res.Stopped)
	default:
		w.Service.m.WaveRun("texted")
	}
	return nil
}

// errPastCutoff stops a paced offer text that could no longer reach the customer
// before the opening's cutoff; the offer goes back to queued and the retried wave finds
// the opening expired.
var errPastCutoff = errors.New("offers: the opening's cutoff has passed")

// text sends one offer text: when its turn comes at the shop's send rate, valid until
// the offer's deadline (the opening's cutoff) so the provider drops it rather than
// deliver it after the slot is gone.
func (s *Service) text(ctx context.Context, shop shops.Shop, to, body string, cutoff time.Time) (string, error) {
	if s.cfg.Pacer != nil {
		if err := s.cfg.Pacer.Wait(ctx, shop.SMSNumber, shop.Policy.SendRate); err != nil {
			return "", err
		}
	}
	validity := min(cutoff.Sub(s.cfg.Now()), s.cfg.MaxValidity)
	if validity <= 0 {
		return "", errPastCutoff
	}
	return s.texter.Text(ctx, sms.Message{From: shop.SMSNumber, To: to, Body: body, ValidityPeriod: validity})
}
