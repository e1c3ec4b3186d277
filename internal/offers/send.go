package offers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/inbox"
	"github.com/slotrecovery/slotrecovery/internal/metrics"
	"github.com/slotrecovery/slotrecovery/internal/pgvalue"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/sms"
)

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
//
// The chunks follow each other at the sender's rate: a chunk's marks, inbox record and
// failures are settled beside the next chunk's texts. Settling them between chunks left
// a fast sender idle for a few round trips ten times a second, longer than its pacer's
// burst covers: a 1,000/s sender reached 810-890 texts a second. The next chunk is still
// claimed only once this one's texts are with the provider, so a crash leaves at most
// one chunk claimed and untexted, as before.
func (s *Service) send(ctx context.Context, shop shops.Shop, batch []db.OfferListWaveRow, body func(db.OfferListWaveRow) string, cutoff time.Time) (WaveResult, error) {
	var queued []db.OfferListWaveRow
	for _, o := range batch {
		if o.Status == "queued" {
			queued = append(queued, o)
		}
	}
	var (
		mu        sync.Mutex
		res       WaveResult
		transient error
		tails     sync.WaitGroup
	)
	settle := func(r WaveResult, err error) {
		mu.Lock()
		defer mu.Unlock()
		res.Texted += r.Texted
		res.Failed += r.Failed
		if err != nil {
			transient = err
		}
	}
	for chunk := range slices.Chunk(queued, s.chunkSize(shop)) {
		if ctx.Err() != nil {
			break // the job ran out of time; the rest stay queued for the retry
		}
		tail, err := s.textChunk(ctx, shop, chunk, body, cutoff)
		if err != nil {
			settle(WaveResult{}, err)
			continue
		}
		tails.Add(1)
		go func() {
			defer tails.Done()
			settle(tail())
		}()
	}
	tails.Wait()
	if transient == nil && ctx.Err() != nil {
		transient = ctx.Err()
	}
	if transient != nil {
		return res, fmt.Errorf("text offers: %w", transient)
	}
	return res, nil
}

// textChunk claims and texts one chunk of offers and returns the chunk's tail, which
// settles it. The claim rechecks opt-out and the opening at the last moment; each offer
// is marked sent as soon as the provider accepts its text (marker), so that its
// customer's YES can claim it then and not before; the tail waits for the marks, records
// the texts in the inbox, marks a number that cannot receive texts so no later wave
// tries, and puts an offer whose failure is worth retrying back to queued and returns
// the failure.
func (s *Service) textChunk(ctx context.Context, shop shops.Shop, chunk []db.OfferListWaveRow,
	body func(db.OfferListWaveRow) string, cutoff time.Time) (tail func() (WaveResult, error), err error) {
	ids := make([]uuid.UUID, len(chunk))
	for i, o := range chunk {
		ids[i] = o.ID
	}
	claimed, err := s.claim(ctx, ids)
	if err != nil {
		return nil, err
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
	return func() (WaveResult, error) {
		var res WaveResult
		sids, errs := marks.wait()
		res.Texted = marks.count()
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
	}, nil
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
