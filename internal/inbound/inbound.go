package inbound

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/inbox"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/metrics"
	"github.com/slotrecovery/slotrecovery/internal/offers"
	"github.com/slotrecovery/slotrecovery/internal/pgbatch"
	"github.com/slotrecovery/slotrecovery/internal/pgvalue"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/texts"
)

// Config configures the service; zero fields mean the defaults.
type Config struct {
	Now func() time.Time
	// StaleAfter is how long after it arrived a stored text without an answer counts
	// as abandoned by its handler (requests end after 20 s); default 45s.
	StaleAfter time.Duration
	// UnheardAfter is how long after its answer was stored a text whose answer Twilio
	// never reported taking (AnswerTaken) counts as unheard, and is texted: longer than a
	// request lives (Twilio waits 15 s; requests end after 20 s) and than Twilio's report
	// of the answer takes; default 30s.
	UnheardAfter time.Duration
	// RetellWithin is how old an unheard answer may be and still be texted: an older one
	// is of no use to the customer any more; default 30m.
	RetellWithin time.Duration
	Logger       *slog.Logger
	Metrics      *metrics.Metrics
}

// queries is this package's one way to its SQL: sqlc's Queries holds no state, and
// each call is given the pool or the transaction it runs on.
var queries = db.New()

// Service answers customers' texts.
type Service struct {
	pool  *pgxpool.Pool
	queue jobs.Inserter
	// stores, answers and heard write the texts, the answers and the marks of answers
	// Twilio took of concurrent requests together.
	stores    *group[newText, stored]
	answers   *group[answer, struct{}]
	heard     *group[heard, struct{}]
	shops     *shops.Service
	customers *customers.Service
	slots     *slots.Service
	// ledger makes new bookings' payment links; nil: no link is made here (the answer
	// says it follows).
	ledger *ledger.Service
	cfg    Config
	log    *slog.Logger
	m      *metrics.Metrics
}

// New returns a Service. ledgerSvc makes the payment links of the bookings a YES makes;
// it may be nil where no shop takes payments.
func New(pool *pgxpool.Pool, queue jobs.Inserter, shopsSvc *shops.Service, customersSvc *customers.Service, slotsSvc *slots.Service, ledgerSvc *ledger.Service, cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.StaleAfter == 0 {
		cfg.StaleAfter = 45 * time.Second
	}
	if cfg.UnheardAfter == 0 {
		cfg.UnheardAfter = 30 * time.Second
	}
	if cfg.RetellWithin == 0 {
		cfg.RetellWithin = 30 * time.Minute
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Service{pool: pool, queue: queue, shops: shopsSvc, customers: customersSvc, slots: slotsSvc, ledger: ledgerSvc, cfg: cfg, log: cfg.Logger, m: cfg.Metrics}
	s.initGroups()
	return s
}

// Outcome is what a reply led to; it is the X-Slot-Outcome header of the public contract.
type Outcome string

// Reply outcomes, also sent in the X-Slot-Outcome header of the answer (docs/api.md).
const (
	// The outcomes of a YES are the claim's own (slots.Outcome), not a copy of them.
	OutcomeBooked  = Outcome(slots.Booked)
	OutcomeTaken   = Outcome(slots.Taken)
	OutcomeNoOffer = Outcome(slots.NoOffer)

	OutcomeDeclined     Outcome = "declined"
	OutcomeOptedOut     Outcome = "opted_out"
	OutcomeOptedIn      Outcome = "opted_in"
	OutcomeHelp         Outcome = "help"
	OutcomeUnrecognized Outcome = "unrecognized"
	// OutcomeClarify: a reply that leaned towards the offer without plainly taking it is
	// asked again, naming the slot; nothing is booked.
	OutcomeClarify    Outcome = "clarify"
	OutcomeRetryLater Outcome = "retry_later"
)

// Message is one text a customer sent to a shop's number.
type Message struct {
	MessageSID string
	From, To   string
	Body       string
	// OptOutType is Twilio's Advanced Opt-Out classification (STOP, START, HELP), if any.
	OptOutType string
}

// Answer is what the customer is told, and why.
type Answer struct {
	Outcome Outcome
	// Keyword is what the text asked for, as Parse read it.
	Keyword Keyword
	Message string
	// Replayed is true when this MessageSid was answered before and the stored answer is
	// being repeated.
	Replayed bool
	// BookingID is the booking a booked answer tells the customer of.
	BookingID uuid.UUID
	// stored means the answer was stored already, with its payment link (see link).
	stored bool
	// WordsLeft means the answer was stored without its words (a late YES: see
	// InboundStoreMany); Twilio's report that it took the answer carries them
	// (Taken.Words), and the mark stores them, so the owner's inbox shows them.
	WordsLeft bool
}

// Reply handles one inbound text. It stores the message first (MessageSid is the key),
// so a redelivery gets the first answer again and does nothing else; a redelivery of a
// text whose first handler died without answering takes it over and answers it. A
// failure of Postgres or Redis gives retry_later and no booking; the error is returned
// alongside the answer for logging.
func (s *Service) Reply(ctx context.Context, in Message) (Answer, error) {
	in = clean(in)
	now := s.cfg.Now()
	// Storing the text also finds the shop that owns the number, as it is now: a change
	// to its settings applies from the next text, on every instance.
	rd := readReply(in.Body, in.OptOutType)
	kw := rd.kw
	st, err := s.stores.do(ctx, newText{in: in, yes: kw == KeywordYes})
	if err != nil {
		return retryLater(texts.English), err
	}
	known, shop := st.known, st.shop
	if st.fresh && st.late {
		// A late YES, its outcome stored with it.
		snd := st.sender
		s.learn(ctx, shop, in, &snd, rd)
		ans := said(snd.words(shop), shop, OutcomeTaken)
		ans.Keyword, ans.WordsLeft = kw, true
		return ans, nil
	}
	var snd *sender
	stored := true
	if known {
		stored = st.fresh
		if stored {
			snd = &st.sender
		}
	} else {
		_, err := queries.InboundInsert(ctx, s.pool, db.InboundInsertParams{
			MessageSid: in.MessageSID, FromPhone: in.From, ToPhone: in.To, Body: in.Body, ReceivedAt: now.UTC(),
		})
		if errors.Is(err, pgx.ErrNoRows) {
			stored = false
		} else if err != nil {
			return retryLater(texts.English), fmt.Errorf("store inbound message: %w", err)
		}
	}
	if !stored {
		_, err := queries.InboundTakeOver(ctx, s.pool, db.InboundTakeOverParams{
			MessageSid: in.MessageSID, Now: now.UTC(), StaleBefore: now.Add(-s.cfg.StaleAfter).UTC(),
		})
		if err == nil {
			s.log.WarnContext(ctx, "redelivered text had no answer: handling it again")
			return s.process(ctx, shop, known, in, rd, nil, nil)
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			ans := retryLater(texts.In(shop.Language))
			ans.Replayed = true
			return ans, fmt.Errorf("take over stored message: %w", err)
		}
		ans, err := s.replay(ctx, in.MessageSID)
		ans.Keyword = kw
		return ans, err
	}
	return s.process(ctx, shop, known, in, rd, snd, nil)
}

// process handles a stored text, rd being what read found in it, and stores its answer;
// with then, the answer is stored in the transaction then runs (which also texts it).
func (s *Service) process(ctx context.Context, shop shops.Shop, known bool, in Message, rd reading, snd *sender, then func(pgx.Tx, Answer) error) (Answer, error) {
	var ans Answer
	var herr error
	if !known {
		ans = Answer{Outcome: OutcomeUnrecognized, Message: texts.English.UnknownNumber()}
	} else if snd == nil {
		found, err := s.lookUp(ctx, shop, in.From)
		if err != nil {
			ans, herr = retryLater(texts.In(shop.Language)), err
		}
		snd = &found
	}
	if known && herr == nil {
		// Without then, a new booking's answer is stored with its payment link.
		sid := ""
		if then == nil {
			sid = in.MessageSID
		}
		ans, herr = s.handle(ctx, shop, in, rd, snd, sid)
	}
	ans.Keyword = rd.kw
	// The answer is stored even when it is retry_later, so that a redelivery of this
	// MessageSid repeats it; the customer's next text is a new message and is handled
	// afresh.
	bg := context.WithoutCancel(ctx)
	a := answer{sid: in.MessageSID, outcome: string(ans.Outcome), reply: ans.Message, bookingID: ans.BookingID}
	var err error
	switch {
	case ans.stored:
		// Stored already, with its payment link.
	case known && needsOwner(ans.Outcome):
		// The text goes to the owner's inbox with its answer, in one transaction.
		err = pgx.BeginFunc(bg, s.pool, func(tx pgx.Tx) error {
			told, err := s.toOwner(bg, tx, shop, snd, snd.words(shop), in, ans)
			if err != nil {
				return err
			}
			a.reply = told.Message
			if err := s.writeAnswers(bg, tx, []answer{a}); err != nil {
				return err
			}
			ans = told
			if then != nil {
				return then(tx, ans)
			}
			return nil
		})
	case known && keepsConversation(ans.Outcome):
		// A keyword or a YES without an offer may come from a number the shop has no
		// conversation with yet (a stranger's STOP): recorded with its answer, so the
		// owner sees it. These are never a storm's replies.
		err = pgx.BeginFunc(bg, s.pool, func(tx pgx.Tx) error {
			if err := s.keep(bg, tx, shop, snd, in, ans, rd.wrongNumber); err != nil {
				return err
			}
			if err := s.writeAnswers(bg, tx, []answer{a}); err != nil {
				return err
			}
			if then != nil {
				return then(tx, ans)
			}
			return nil
		})
	case then == nil:
		_, err = s.answers.do(ctx, a)
	default:
		err = pgx.BeginFunc(bg, s.pool, func(tx pgx.Tx) error {
			if err := s.writeAnswers(bg, tx, []answer{a}); err != nil {
				return err
			}
			return then(tx, ans)
		})
	}
	if err != nil {
		herr = errors.Join(herr, fmt.Errorf("store reply outcome: %w", err))
	}
	return ans, herr
}

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
// taken by Twilio (retell). It goes on while a batch was full and did something,
// within sweepBudget. It returns how many texts it finished or retold.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	deadline := time.Now().Add(sweepBudget)
	total := 0
	for {
		finished, unanswered, ferr := s.finish(ctx)
		retold, unheard, rerr := s.retell(ctx)
		total += finished + retold
		if err := errors.Join(ferr, rerr); err != nil {
			return total, err
		}
		full := unanswered == sweepRows || unheard == sweepRows
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
		ans, err := s.process(ctx, shop, known, in, readReply(in.Body, ""), nil, func(tx pgx.Tx, ans Answer) error {
			if ans.Outcome == OutcomeRetryLater {
				// Nobody would answer it again: roll back, so the text stays unanswered
				// and a later sweep takes it over once this take-over is stale.
				return errLeaveForNextSweep
			}
			// Whatever follows tells the customer (or finds they know): the unheard
			// answers retell lists skip this text.
			if err := queries.InboundMarkRetold(ctx, tx, db.InboundMarkRetoldParams{MessageSid: m.MessageSid, Now: now.UTC()}); err != nil {
				return fmt.Errorf("mark retold: %w", err)
			}
			if !known || ans.Message == "" {
				return nil
			}
			if ans.Outcome == OutcomeBooked && ans.BookingID != uuid.Nil {
				// The customer may have heard of this booking already (its payment link
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
// taken (AnswerTaken). A redelivery (connection overrides) replays a stored answer, but
// one that Twilio's retries did not reach is never replayed. Only answers stored
// between RetellWithin and UnheardAfter ago are texted (a newer one may still be on its
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
	heardBefore := now.Add(-s.cfg.UnheardAfter).UTC()
	sids, err := queries.InboundListUnheard(ctx, s.pool, db.InboundListUnheardParams{
		HeardBefore: heardBefore, NotBefore: now.Add(-s.cfg.RetellWithin).UTC(), MaxRows: sweepRows,
	})
	if err != nil {
		return 0, 0, fmt.Errorf("list unheard answers: %w", err)
	}
	read = len(sids)
	for _, sid := range sids {
		var outcome Outcome
		texted := false
		err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			m, err := queries.InboundRetell(ctx, tx, db.InboundRetellParams{MessageSid: sid, Now: now.UTC(), HeardBefore: heardBefore})
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
				w, err := s.wordsFor(ctx, shop, m.FromPhone)
				if err != nil {
					return err
				}
				body = said(w, shop, outcome).Message
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
			continue // marked as taken by Twilio, or retold, meanwhile
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

// clean makes a text storable: Postgres refuses NUL bytes and invalid UTF-8 in text
// columns, and one such text must not fail the statement that stores the others.
func clean(in Message) Message {
	in.MessageSID, in.From, in.To, in.Body, in.OptOutType = cleanText(in.MessageSID), cleanText(in.From), cleanText(in.To), cleanText(in.Body), cleanText(in.OptOutType)
	return in
}

func cleanText(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
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

// replayWait bounds how long a redelivery waits for the first delivery of the same
// MessageSid to be answered, well inside Twilio's 15 s.
const replayWait = 5 * time.Second

// replay answers a redelivered MessageSid with the first delivery's answer. When the
// first delivery is still being handled (a redelivery racing it), it waits for that
// answer a little; only a first delivery that died mid-way, or takes longer than
// replayWait, leaves the redelivery with retry_later. It never acts twice.
func (s *Service) replay(ctx context.Context, sid string) (Answer, error) {
	deadline := time.Now().Add(replayWait)
	for {
		m, err := queries.InboundGet(ctx, s.pool, sid)
		if err != nil {
			return retryLater(texts.English), fmt.Errorf("read stored message: %w", err)
		}
		if m.Outcome.Valid {
			ans := Answer{Outcome: Outcome(m.Outcome.String), Message: m.Reply.String, Replayed: true, BookingID: m.BookingID.UUID}
			if !m.Reply.Valid {
				// Stored without its words, which follow from the outcome.
				shop, err := shops.Read(ctx, s.pool, m.ShopID.UUID)
				var w texts.Words
				if err == nil {
					w, err = s.wordsFor(ctx, shop, m.FromPhone)
				}
				if err != nil {
					ans := retryLater(texts.English)
					ans.Replayed = true
					return ans, fmt.Errorf("read shop of stored message: %w", err)
				}
				ans.Message = said(w, shop, ans.Outcome).Message
			}
			return ans, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			ans := retryLater(texts.English)
			ans.Replayed = true
			return ans, nil
		}
		select {
		case <-ctx.Done():
			continue
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// sender is who sent a text, as far as answering it needs.
type sender struct {
	known    bool
	id       uuid.UUID
	optedOut bool
	// lang is the customer's own language; "" means the shop's.
	lang language.Code
	// claims is what a YES can claim, when it was read together with the text.
	claims *slots.Claimable
}

// lookUp finds the sender when it was not read with the text.
func (s *Service) lookUp(ctx context.Context, shop shops.Shop, phone string) (sender, error) {
	cust, err := s.customers.ByPhone(ctx, shop.ID, phone)
	var p *problem.Error
	if errors.As(err, &p) && p.Kind == problem.NotFound {
		return sender{}, nil
	}
	if err != nil {
		return sender{}, err
	}
	return sender{known: true, id: cust.ID, optedOut: cust.OptedOutAt != nil, lang: cust.Language}, nil
}

// words is what the sender is texted in: their language, else the shop's.
func (snd sender) words(shop shops.Shop) texts.Words {
	return texts.In(snd.lang.Or(shop.Language))
}

// wordsFor is what the number phone is texted in by shop: its customer's language, else
// the shop's.
func (s *Service) wordsFor(ctx context.Context, shop shops.Shop, phone string) (texts.Words, error) {
	snd, err := s.lookUp(ctx, shop, phone)
	if err != nil {
		return texts.Words{}, err
	}
	return snd.words(shop), nil
}

// learn records the language of a customer's reply as theirs when they have none and
// its words belong to one supported language other than the shop's ("Sí", "oui"): they
// are texted in it from then on, this answer included. A language once recorded is not
// changed by a reply. One word that several languages write ("si", "va": reading.weak)
// teaches it only on the customer's first text: one who wrote before wrote in the
// shop's language (or words of no one language), and an ambiguous word is no evidence
// against that (one more read, InboundWroteBefore, only for such a word). A reply in
// the shop's own language changes nothing that is texted, and is not written (most YES
// of a storm are such). Only answers to an offer and opt-outs teach it: HELP and START are carriers'
// keywords, which customers send in English whatever they speak. A failure to record
// it costs only the language, and is logged.
func (s *Service) learn(ctx context.Context, shop shops.Shop, in Message, snd *sender, rd reading) {
	if !snd.known || snd.lang != "" || rd.lang == "" || rd.lang == shop.Language {
		return
	}
	if rd.kw == KeywordHelp || rd.kw == KeywordStart || rd.kw == KeywordUnknown {
		return
	}
	if rd.weak {
		wrote, err := queries.InboundWroteBefore(ctx, s.pool, db.InboundWroteBeforeParams{
			ShopID: uuid.NullUUID{UUID: shop.ID, Valid: true}, FromPhone: in.From, MessageSid: in.MessageSID,
		})
		if err != nil {
			s.log.WarnContext(ctx, "reply's language not recorded", "language", rd.lang, "err", err)
			return
		}
		if wrote {
			return
		}
	}
	if _, err := s.customers.LearnLanguage(ctx, snd.id, rd.lang); err != nil {
		s.log.WarnContext(ctx, "reply's language not recorded", "language", rd.lang, "err", err)
		return
	}
	snd.lang = rd.lang
}

// clarify asks a customer whose reply leaned towards their newest live offer to answer
// it plainly, naming its slot; nothing is booked and the offer stays claimable. ok is
// false when the customer holds no live offer.
func (s *Service) clarify(ctx context.Context, w texts.Words, shop shops.Shop, snd *sender) (Answer, bool, error) {
	var openingID uuid.UUID
	if snd.claims != nil {
		if len(snd.claims.Live) == 0 {
			return Answer{}, false, nil
		}
		openingID = snd.claims.Live[0].OpeningID
	} else {
		live, err := s.slots.Claimable(ctx, shop, snd.id)
		if err != nil {
			return retryLater(w), false, err
		}
		if len(live.Live) == 0 {
			return Answer{}, false, nil
		}
		openingID = live.Live[0].OpeningID
	}
	op, err := s.slots.Get(ctx, shop.ID, openingID)
	if err != nil {
		return retryLater(w), false, fmt.Errorf("read offered opening: %w", err)
	}
	return Answer{Outcome: OutcomeClarify, Message: w.Clarify(shop, op.Service, op.StartsAt)}, true, nil
}

// answersOffer reports whether a loose yes ("ok", 👍) answers an offer the customer can
// take: whether the last text they were sent was one of their live offers, or the
// question about it (a clarify answer). Only then does it book; an explicit YES claims
// the newest live offer whatever came last. The customer's newest offer is read with
// the text (InboundStoreMany): when it is their newest live one, no answer to a later
// text of theirs can have followed it (a YES's "taken", a NO's "declined" and a booking
// all change its status), and the YES path reads nothing more. Otherwise one more
// statement (InboundLastTextOffered, two index probes) tells. Without a live offer it
// reports true (the claim books nothing and answers as a YES would: taken, no offer)
// unless the customer's newest offer is the one they booked: their "ok" acknowledges
// the booking and is not answered with it again.
func (s *Service) answersOffer(ctx context.Context, shop shops.Shop, in Message, snd *sender) (bool, error) {
	var live uuid.UUID
	if c := snd.claims; c != nil {
		if len(c.Live) == 0 {
			return c.NewestStatus != acceptedStatus, nil
		}
		if c.Live[0].OfferID == c.NewestOfferID {
			return true, nil
		}
		live = c.Live[0].OfferID
	} else {
		c, err := s.slots.Claimable(ctx, shop, snd.id)
		if err != nil {
			return false, err
		}
		if len(c.Live) == 0 {
			return c.NewestStatus != acceptedStatus, nil
		}
		live = c.Live[0].OfferID
	}
	last, err := queries.InboundLastTextOffered(ctx, s.pool, db.InboundLastTextOfferedParams{
		CustomerID: snd.id, ShopID: uuid.NullUUID{UUID: shop.ID, Valid: true}, FromPhone: in.From, MessageSid: in.MessageSID,
	})
	if err != nil {
		return false, fmt.Errorf("read the last text sent: %w", err)
	}
	switch last.AnswerSince {
	case "":
		return last.OfferID == live, nil
	case string(OutcomeClarify):
		return true, nil
	}
	return false, nil
}

// acceptedStatus is the status of an offer its customer booked (slot_offers.status, as
// slots' noClaimable reads it; slots exports no name for it).
const acceptedStatus = "accepted"

// handle answers a stored text from snd. With sid, the answer to a YES that books is
// stored with the booking's payment link (Answer.stored).
func (s *Service) handle(ctx context.Context, shop shops.Shop, in Message, rd reading, snd *sender, sid string) (Answer, error) {
	known := snd.known
	s.learn(ctx, shop, in, snd, rd)
	w := snd.words(shop)
	switch rd.kw {
	case KeywordYes:
		if !known {
			return said(w, shop, OutcomeNoOffer), nil
		}
		if snd.optedOut {
			if !strings.EqualFold(in.OptOutType, "START") {
				// Someone who said STOP cannot take a slot: with carrier opt-out on, not
				// even the payment link would reach them.
				return Answer{Outcome: OutcomeNoOffer, Message: w.OptedOutYes(shop)}, nil
			}
			// Twilio counted this YES as an opt-in and will deliver to the number again;
			// follow it, or the customer would never hear of another opening.
			if err := s.customers.OptIn(ctx, snd.id); err != nil {
				return retryLater(w), fmt.Errorf("opt in: %w", err)
			}
		}
		if rd.loose {
			offered, err := s.answersOffer(ctx, shop, in, snd)
			if err != nil {
				return retryLater(w), err
			}
			if !offered {
				// An "ok" after "taken", "declined" or a confirmation acknowledges it:
				// it books nothing, and the customer is asked about their live offer;
				// without one (a booked customer's "ok"), a person reads it.
				if ans, ok, err := s.clarify(ctx, w, shop, snd); ok || err != nil {
					return ans, err
				}
				return said(w, shop, OutcomeUnrecognized), nil
			}
		}
		return s.claim(ctx, w, shop, snd.id, snd.claims, sid)
	case KeywordNo:
		if known {
			if err := offers.DeclineNewest(ctx, s.pool, snd.id); err != nil {
				return retryLater(w), err
			}
		}
		return said(w, shop, OutcomeDeclined), nil
	case KeywordStop:
		// Customer or not: the number's STOP is kept, so that a later add or import of
		// it does not opt it in (customers.OptOutNumber).
		if err := s.customers.OptOutNumber(ctx, shop.ID, in.From); err != nil {
			return retryLater(w), fmt.Errorf("opt out: %w", err)
		}
		return said(w, shop, OutcomeOptedOut), nil
	case KeywordStart:
		// The number's own START clears its STOP, customer or not.
		if err := s.customers.OptInNumber(ctx, shop.ID, in.From); err != nil {
			return retryLater(w), fmt.Errorf("opt in: %w", err)
		}
		return said(w, shop, OutcomeOptedIn), nil
	case KeywordHelp:
		return said(w, shop, OutcomeHelp), nil
	case KeywordClarify:
		if known {
			if ans, ok, err := s.clarify(ctx, w, shop, snd); ok || err != nil {
				return ans, err
			}
		}
		// Nothing to clarify without a live offer: a person reads it.
		return said(w, shop, OutcomeUnrecognized), nil
	default:
		return said(w, shop, OutcomeUnrecognized), nil
	}
}

// claim books a YES. With sid (the text's, when its answer is this path's to store), a
// new booking's answer is stored with its payment link (see link).
func (s *Service) claim(ctx context.Context, w texts.Words, shop shops.Shop, customerID uuid.UUID, claims *slots.Claimable, sid string) (Answer, error) {
	var c slots.Claim
	var err error
	if claims != nil {
		c, err = s.slots.BookClaimable(ctx, shop, customerID, *claims)
	} else {
		c, err = s.slots.Book(ctx, shop, customerID)
	}
	if err != nil {
		return retryLater(w), err
	}
	switch c.Outcome {
	case slots.Booked:
		// The lock's release and the cooldown run while the link is made; the answer
		// waits for them.
		defer c.Settle()
		switch {
		case c.Repeat:
			s.log.InfoContext(ctx, "repeated yes from the slot's holder", "booking_id", c.BookingID)
		case c.Confirmed:
			s.m.Booking(ledger.BookingConfirmed)
		default:
			s.m.Booking(ledger.BookingPendingPayment)
		}
		if c.New() && !c.Confirmed {
			return s.link(ctx, w, shop, c, sid), nil
		}
		return bookedAnswer(w, shop, c), nil
	default:
		return said(w, shop, Outcome(c.Outcome)), nil
	}
}

// link makes the payment link of the booking c has just made (the ledger's Checkout)
// and stores it; with sid, the answer that carries the link is stored in the same round
// trip, and only if the link was (Answer.stored): the winner's answer costs no round
// trip of its own (winners' answers were the p99), and an answer never names a link
// that was not stored. When the link cannot be made or stored in time, or the booking
// sweep stored its own first, the answer says that the link follows: the sweep makes or
// texts it.
func (s *Service) link(ctx context.Context, w texts.Words, shop shops.Shop, c slots.Claim, sid string) Answer {
	follows := c
	follows.LinkFollows = true
	if s.ledger == nil {
		s.log.WarnContext(ctx, "checkout deferred to job: payments are not configured here", "booking_id", c.BookingID)
		return bookedAnswer(w, shop, follows)
	}
	co, err := s.ledger.Checkout(ctx, w, shop, c.Booking, c.Service, c.StartsAt)
	if err != nil {
		s.log.WarnContext(ctx, "checkout deferred to job", "booking_id", c.BookingID, "err", err)
		return bookedAnswer(w, shop, follows)
	}
	c.PaymentURL = co.URL
	ans := bookedAnswer(w, shop, c)
	// Stored even if the request ends meanwhile: a link stored but answered as "link
	// follows" would be texted by nobody (the booking sweep finds it stored).
	storeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	now := s.cfg.Now().UTC()
	// The link (the ledger's statement) and the answer, in one round trip.
	var q pgbatch.Queue
	linkStored, err := ledger.QueueLink(storeCtx, &q, c.BookingID, co, now)
	var answerStored *pgbatch.Result // stays nil (0 rows) for a YES without a stored text
	if err == nil && sid != "" {
		_, err = queries.InboundSetLinkAnswer(storeCtx, &q, db.InboundSetLinkAnswerParams{
			MessageSid: sid, Outcome: pgvalue.Text(string(ans.Outcome)), Reply: pgvalue.Text(ans.Message), HandledAt: now,
			BookingID: uuid.NullUUID{UUID: c.BookingID, Valid: true}, PaymentUrl: co.URL,
		})
		answerStored = q.Last()
	}
	if err == nil {
		err = q.Send(storeCtx, s.pool)
	}
	if err != nil {
		s.log.WarnContext(ctx, "checkout not stored; deferred to job", "booking_id", c.BookingID, "err", err)
		return bookedAnswer(w, shop, follows)
	}
	if linkStored.RowsAffected() == 0 {
		return bookedAnswer(w, shop, follows) // the sweep's link, which it texts
	}
	ans.stored = answerStored.RowsAffected() == 1
	return ans
}

// bookedAnswer is the answer to a YES that holds the booking c: what a booked customer
// is told of it (ledger.BookedText).
func bookedAnswer(w texts.Words, shop shops.Shop, c slots.Claim) Answer {
	url := c.PaymentURL
	if c.LinkFollows {
		url = ""
	}
	return Answer{Outcome: OutcomeBooked, BookingID: c.BookingID,
		Message: ledger.BookedText(w, shop, c.Service, c.StaffName, c.StartsAt, c.Confirmed, url)}
}

// said is the answer whose words follow from its outcome alone: every answer but a
// booking's (bookedAnswer), a STOPped customer's YES and a text to nobody's number. A
// stored answer without its words (InboundStoreMany's late YES) is told with these.
func said(w texts.Words, shop shops.Shop, o Outcome) Answer {
	var m string
	switch o {
	case OutcomeTaken:
		m = w.Taken(shop)
	case OutcomeNoOffer:
		m = w.NoOffer(shop)
	case OutcomeDeclined:
		m = w.Declined(shop)
	case OutcomeOptedOut:
		m = w.OptedOut(shop)
	case OutcomeOptedIn:
		m = w.OptedIn(shop)
	case OutcomeHelp:
		m = w.Help(shop)
	case OutcomeUnrecognized:
		m = w.Unrecognized(shop)
	default:
		m = w.RetryLater()
	}
	return Answer{Outcome: o, Message: m}
}

// retryLater is the answer to a text that could not be handled now (see
// texts.Words.RetryLater).
func retryLater(w texts.Words) Answer {
	return Answer{Outcome: OutcomeRetryLater, Message: w.RetryLater()}
}
