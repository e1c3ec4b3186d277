package inbound

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/inbox"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/pgvalue"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// sweepRows is how many texts each part of a sweep reads at a time.
const sweepRows = 100

// sweepBudget bounds one sweep's batches: after a crash or a Postgres outage hundreds of
// texts may be waiting, and a sweep goes on batch after batch while it makes progress
// (one batch a minute once left customers minutes late). It stays well inside the job's
// timeout; what is left is the next sweep's.
const sweepBudget = 45 * time.Second

// Sweep makes sure the customer of every stored text hears an answer. It finishes the
// texts whose handler died before answering and that no redelivery took over, handling
// each again and texting the answer; then it texts the stored answers that were never
// reported sent by Twilio (retell). It goes on while a batch was full and did something,
// within sweepBudget. It returns how many texts it finished or retold.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	deadline := time.Now().Add(sweepBudget)
	total := 0
	for {
		finished, unanswered, ferr := s.finish(ctx)
		retold, unmarked, rerr := s.retell(ctx)
		total += finished + retold
		if err := errors.Join(ferr, rerr); err != nil {
			return total, err
		}
		full := unanswered == sweepRows || unmarked == sweepRows
		if !full || finished+retold == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			return total, nil
		}
	}
}

// finish handles again, and answers by text, the stored texts without an answer whose
// handler died. It returns how many it finished and how many it read.
func (s *Service) finish(ctx context.Context) (done, read int, err error) {
	now := s.cfg.Now()
	stale := now.Add(-s.cfg.StaleAfter).UTC()
	sids, err := queries.InboundListUnanswered(ctx, s.pool, db.InboundListUnansweredParams{StaleBefore: stale, MaxRows: sweepRows})
	if err != nil {
		return 0, 0, fmt.Errorf("list unanswered texts: %w", err)
	}
	read = len(sids)
	for _, sid := range sids {
		m, err := queries.InboundTakeOver(ctx, s.pool, db.InboundTakeOverParams{MessageSid: sid, Now: now.UTC(), StaleBefore: stale})
		if errors.Is(err, pgx.ErrNoRows) {
			continue // answered or taken over meanwhile
		}
		if err != nil {
			return done, read, fmt.Errorf("take over %s: %w", sid, err)
		}
		var shop shops.Shop
		known := m.ShopID.Valid
		if known {
			if shop, err = s.shops.Get(ctx, m.ShopID.UUID); err != nil {
				// Left for the next sweep (taken over again once stale); the others go on.
				s.log.ErrorContext(ctx, "unanswered text not finished: shop not read", "err", err)
				continue
			}
		}
		in := Message{MessageSID: m.MessageSid, From: m.FromPhone, To: m.ToPhone, Body: m.Body}
		ans, err := s.process(ctx, &shop, known, in, readReply(in.Body, ""), nil, func(tx pgx.Tx, ans Answer) error {
			if ans.Outcome == OutcomeRetryLater {
				// Nobody would answer it again: roll back, so the text stays unanswered
				// and a later sweep takes it over once this take-over is stale.
				return errLeaveForNextSweep
			}
			// Whatever follows tells the customer (or finds they know): the unmarked
			// answers retell lists skip this text.
			if err := queries.InboundMarkRetold(ctx, tx, db.InboundMarkRetoldParams{MessageSid: m.MessageSid, Now: now.UTC()}); err != nil {
				return fmt.Errorf("mark retold: %w", err)
			}
			if !known || ans.Message == "" {
				return nil
			}
			if ans.Outcome == OutcomeBooked && ans.BookingID != uuid.Nil {
				// The customer may know of this booking already (its payment link
				// or notice text, or the answer to another YES): the same news is not
				// texted twice.
				first, err := ledger.TellOnce(ctx, tx, ans.BookingID, now)
				if err != nil || !first {
					return err
				}
			}
			// No HTTP answer can carry it any more: it goes by text, from the shop's number
			// (the conversation shows the answer already).
			_, err := inbox.Queue(ctx, tx, s.queue, inbox.Outgoing{
				Key: "reply:" + m.MessageSid, ShopID: shop.ID, From: shop.SMSNumber, To: m.FromPhone, Body: ans.Message,
				Shown: inbox.ShownAlready,
			})
			return err
		})
		if err != nil {
			s.log.ErrorContext(ctx, "unanswered text not finished; the next sweep tries again", "outcome", ans.Outcome, "err", err)
			continue
		}
		s.log.InfoContext(ctx, "unanswered text finished by the sweeper", "outcome", ans.Outcome)
		done++
	}
	return done, read, nil
}

// errLeaveForNextSweep rolls back a sweep's answer that is only "try again later".
var errLeaveForNextSweep = errors.New("inbound: left for the next sweep")

// retell texts the stored answers that never reached their customer (it returns how
// many it texted or settled, and how many it read): the answer was stored (the outcome
// decided, perhaps a booking made), but the instance died or the connection broke
// before it was written back, or Twilio could not send it, so Twilio never reported it
// sent (MarkAnswerSent). A redelivery (connection overrides) replays a stored answer, but
// one that Twilio's retries did not reach is never replayed. Only answers stored
// between RetellWithin and RetellAfter ago are texted (a newer one may still be on its
// way). Each is claimed (retold_at) in the transaction that queues its text, under the
// key the take-over path uses ("reply:" and the MessageSid), so a text gets at most one
// answer by text. A booked answer is texted only if nothing has told the customer of
// the booking yet (TellOnce: the payment link, the notice, the answer to another YES).
//
// A stored retry_later is texted like the others, where finish rolls its own back: here
// it is the answer the customer was given and did not hear. What failed was not done
// (a claim fails closed), and "reply again" is still true; their next text is handled
// afresh. Handling the text again instead would act on the customer's behalf up to
// RetellWithin after they wrote.
func (s *Service) retell(ctx context.Context) (done, read int, err error) {
	now := s.cfg.Now()
	retellBefore := now.Add(-s.cfg.RetellAfter).UTC()
	sids, err := queries.InboundListUnheard(ctx, s.pool, db.InboundListUnheardParams{
		HeardBefore: retellBefore, NotBefore: now.Add(-s.cfg.RetellWithin).UTC(), MaxRows: sweepRows,
	})
	if err != nil {
		return 0, 0, fmt.Errorf("list unheard answers: %w", err)
	}
	read = len(sids)
	for _, sid := range sids {
		var outcome Outcome
		texted := false
		err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			m, err := queries.InboundRetell(ctx, tx, db.InboundRetellParams{MessageSid: sid, Now: now.UTC(), HeardBefore: retellBefore})
			if err != nil {
				return err
			}
			outcome = Outcome(m.Outcome.String)
			shop, err := shops.Read(ctx, tx, m.ShopID.UUID)
			if err != nil {
				return err
			}
			if outcome == OutcomeBooked {
				if !m.BookingID.Valid {
					return nil // the booking sweep tells the customer of their booking
				}
				first, err := ledger.TellOnce(ctx, tx, m.BookingID.UUID, now)
				if err != nil || !first {
					return err
				}
			}
			body := m.Reply.String
			if !m.Reply.Valid {
				// Stored without its words, which follow from the outcome.
				w, err := s.wordsFor(ctx, &shop, m.FromPhone)
				if err != nil {
					return err
				}
				body = said(w, &shop, outcome).Message
				if err := queries.InboundFillReply(ctx, tx, db.InboundFillReplyParams{MessageSid: m.MessageSid, Reply: pgvalue.Text(body)}); err != nil {
					return err
				}
			}
			_, err = inbox.Queue(ctx, tx, s.queue, inbox.Outgoing{
				Key: "reply:" + m.MessageSid, ShopID: shop.ID, From: shop.SMSNumber, To: m.FromPhone, Body: body,
				Shown: inbox.ShownAlready,
			})
			texted = err == nil
			return err
		})
		if errors.Is(err, pgx.ErrNoRows) {
			continue // marked sent by Twilio, or retold, meanwhile
		}
		if err != nil {
			s.log.ErrorContext(ctx, "unheard answer not texted; the next sweep tries again", "outcome", outcome, "err", err)
			continue
		}
		if texted {
			s.m.AnswerRetold(string(outcome))
			s.log.InfoContext(ctx, "answer not taken by twilio: texted by the sweeper", "outcome", outcome)
		} else {
			s.log.InfoContext(ctx, "answer not taken by twilio: the customer was told of the booking already", "outcome", outcome)
		}
		done++
	}
	return done, read, nil
}

// SweepWorker runs jobs.InboundSweep.
type SweepWorker struct {
	river.WorkerDefaults[jobs.InboundSweep]
	Service *Service
}

// Work implements river.Worker.
func (w *SweepWorker) Work(ctx context.Context, _ *river.Job[jobs.InboundSweep]) error {
	_, err := w.Service.Sweep(ctx)
	return err
}

// Timeout implements river.Worker: sweepBudget and the batch running when it ends.
func (w *SweepWorker) Timeout(*river.Job[jobs.InboundSweep]) time.Duration { return 2 * time.Minute }
