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

	"github.com/slotrecovery/slotrecovery/internal/book"
	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/join"
	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/metrics"
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
	// RetellAfter is how long after its answer was stored a text whose answer Twilio
	// never reported sending (MarkAnswerSent) is retold, by text: longer than a
	// request lives (Twilio waits 15 s; requests end after 20 s) and than Twilio's report
	// of the answer takes; default 30s.
	RetellAfter time.Duration
	// RetellWithin is how old an answer not reported sent may be and still be texted: an older one
	// is of no use to the customer any more; default 30m.
	RetellWithin time.Duration
	// Mover, when set, takes a YES to a move-up offer (the customer's newest live offer
	// moves a booking of theirs, an appointment of the book or a booking made by a YES:
	// slots.LiveOffer.MoveFrom): the booking and the move in one transaction
	// (book.Service.MoveUp). Nil: move-up offers are never claimed
	// (slots.BookClaimable leaves them out), so offers.Config.MoveUps goes with it.
	Mover Mover
	// Joins, when set, takes the texts of people joining the shop's list
	// (internal/join): the join keyword (JOIN, UNIRME, INSCRIRE), and the YES or START
	// that confirms a join request from the page or by text; and it keeps a customer's
	// opt-out and opt-in (START) by text in the consent record. Nil: nobody joins by text.
	Joins Joins
	// HourlyCap is how many texts that need a person one number may send a shop in an
	// hour and still raise an event, an alert or an answer; beyond it they are only kept
	// in the conversation (toOwner). Default NumberHourlyCap. A YES to an offer is never
	// held to it: it books as any other.
	HourlyCap int
	Logger    *slog.Logger
	Metrics   *metrics.Metrics
}

// Mover moves a customer's booking up to the earlier opening of a move-up offer
// (internal/book's Service).
type Mover interface {
	MoveUp(ctx context.Context, shop shops.Shop, customerID uuid.UUID, offer slots.LiveOffer) (book.Move, error)
}

// Joins takes the texts of people joining a shop's list (internal/join's Service).
type Joins interface {
	RequestByText(ctx context.Context, shop shops.Shop, number, messageSID string, lang language.Code) (join.KeywordOutcome, error)
	Confirm(ctx context.Context, shop shops.Shop, r join.Reply) (handled bool, err error)
	RecordOptOut(ctx context.Context, shop shops.Shop, customerID uuid.UUID, lang language.Code, words, messageSID string, at time.Time) error
	RecordOptIn(ctx context.Context, shop shops.Shop, customerID uuid.UUID, lang language.Code, words, messageSID string, at time.Time) error
}

// queries is this package's one way to its SQL: sqlc's Queries holds no state, and
// each call is given the pool or the transaction it runs on.
var queries = db.New()

// Service answers customers' texts.
type Service struct {
	pool  *pgxpool.Pool
	queue jobs.Inserter
	// stores, answers and sent write the texts, the answers and the marks of answers
	// Twilio sent of concurrent requests together.
	stores    *group[newText, stored]
	answers   *group[answer, struct{}]
	sent      *group[sentAnswer, struct{}]
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
	if cfg.RetellAfter == 0 {
		cfg.RetellAfter = 30 * time.Second
	}
	if cfg.RetellWithin == 0 {
		cfg.RetellWithin = 30 * time.Minute
	}
	if cfg.HourlyCap == 0 {
		cfg.HourlyCap = NumberHourlyCap
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

	OutcomeDeclined Outcome = "declined"
	OutcomeOptedOut Outcome = "opted_out"
	OutcomeOptedIn  Outcome = "opted_in"
	// OutcomeJoinRequested: the join keyword; the confirmation (or "you are in
	// already") is texted, and the HTTP answer says nothing more.
	OutcomeJoinRequested Outcome = "join_requested"
	// OutcomePaused: PAUSE from a customer; no offers for 14 days, and they are told
	// until when. OutcomeResumed: RESUME; offers again.
	OutcomePaused       Outcome = "paused"
	OutcomeResumed      Outcome = "resumed"
	OutcomeHelp         Outcome = "help"
	OutcomeUnrecognized Outcome = "unrecognized"
	// OutcomeClarify: a reply that leaned towards the offer without plainly taking it is
	// asked again, naming the slot; nothing is booked.
	OutcomeClarify    Outcome = "clarify"
	OutcomeRetryLater Outcome = "retry_later"
	// OutcomeCancelRequest: a booked customer asked to cancel ("can't make it", "cancel
	// my booking"): the booking is cancelled and its opening offered again, or, where the
	// shop does not let customers cancel by text, the request is in the owner's inbox.
	OutcomeCancelRequest Outcome = "cancel_request"
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
	// InboundStoreMany); Twilio's report that it sent the answer carries them
	// (AnswerReport.Words), and the mark stores them, so the owner's inbox shows them.
	WordsLeft bool
	// cancelAsked is the booking a cancellation request left to the owner is about: the
	// text goes to the inbox marked as a cancellation (toOwner).
	cancelAsked *ledger.LiveBooking
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
	if shop == nil {
		shop = &shops.Shop{} // a text to a number no shop owns is answered as from no shop
	}
	if st.fresh && st.late {
		// A late YES, its outcome stored with it.
		snd := st.sender
		s.learn(ctx, shop, in, &snd, rd)
		ans := said(snd.words(shop), shop, OutcomeTaken)
		if c := snd.claims; c != nil && !c.NewestKeeps.IsZero() {
			// A move-up lost: the booking it would have moved stays. (A redelivery,
			// told from the stored outcome alone, gets the plain taken.)
			ans.Message = snd.words(shop).MoveUpTaken(shop, c.NewestKeeps)
		}
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
func (s *Service) process(ctx context.Context, shop *shops.Shop, known bool, in Message, rd reading, snd *sender, then func(pgx.Tx, Answer) error) (Answer, error) {
	var ans Answer
	var herr error
	if !known {
		ans = Answer{Outcome: OutcomeUnrecognized, Message: texts.English.UnknownNumber()}
	} else if snd == nil {
		found, err := s.lookUp(ctx, shop, in.From)
		if err != nil {
			ans, herr = retryLaterAt(texts.In(shop.Language), shop), err
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
	case known && (needsOwner(ans.Outcome) || ans.cancelAsked != nil):
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

// clean makes a text storable: Postgres refuses NUL bytes and invalid UTF-8 in text
// columns, and one such text must not fail the statement that stores the others.
func clean(in Message) Message {
	in.MessageSID, in.From, in.To, in.Body, in.OptOutType = cleanText(in.MessageSID), cleanText(in.From), cleanText(in.To), cleanText(in.Body), cleanText(in.OptOutType)
	return in
}

func cleanText(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
}
