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
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/metrics"
	"github.com/slotrecovery/slotrecovery/internal/offers"
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
	Logger     *slog.Logger
	Metrics    *metrics.Metrics
}

// Service answers customers' texts.
type Service struct {
	pool  *pgxpool.Pool
	q     *db.Queries
	queue jobs.Inserter
	// stores and answers write the texts and answers of concurrent requests together.
	stores  *group[newText, stored]
	answers *group[answer, struct{}]
	shops   *shops.Service
	slots   *slots.Service
	cfg     Config
	log     *slog.Logger
	m       *metrics.Metrics
}

// New returns a Service.
func New(pool *pgxpool.Pool, queue jobs.Inserter, shopsSvc *shops.Service, slotsSvc *slots.Service, cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.StaleAfter == 0 {
		cfg.StaleAfter = 45 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Service{pool: pool, q: db.New(), queue: queue, shops: shopsSvc, slots: slotsSvc, cfg: cfg, log: cfg.Logger, m: cfg.Metrics}
	s.initGroups()
	return s
}

// Outcome is what a reply led to; it is the X-Slot-Outcome header of the public contract.
type Outcome string

// Reply outcomes, also sent in the X-Slot-Outcome header of the answer (README, HTTP API).
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
	OutcomeRetryLater   Outcome = "retry_later"
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
}

// Reply handles one inbound text. It stores the message first (MessageSid is the key),
// so a redelivery gets the first answer again and does nothing else; a redelivery of a
// text whose first handler died without answering takes it over and answers it. A
// failure of Postgres or Redis gives retry_later and no booking; the error is returned
// alongside the answer for logging.
func (s *Service) Reply(ctx context.Context, in Message) (Answer, error) {
	in = clean(in)
	now := s.cfg.Now()
	shop, err := s.shops.BySMSNumber(ctx, in.To)
	known := err == nil
	if err != nil && !errors.Is(err, shops.ErrNoShopForNumber) {
		return Answer{Outcome: OutcomeRetryLater, Message: texts.RetryLater}, err
	}
	var snd *sender
	stored := true
	if known {
		st, err := s.stores.do(ctx, newText{in: in, shopID: shop.ID})
		if err != nil {
			return Answer{Outcome: OutcomeRetryLater, Message: texts.RetryLater}, err
		}
		stored = st.fresh
		if stored {
			snd = &st.sender
		}
	} else {
		_, err := s.q.InboundInsert(ctx, s.pool, db.InboundInsertParams{
			MessageSid: in.MessageSID, FromPhone: in.From, ToPhone: in.To, Body: in.Body, ReceivedAt: now.UTC(),
		})
		if errors.Is(err, pgx.ErrNoRows) {
			stored = false
		} else if err != nil {
			return Answer{Outcome: OutcomeRetryLater, Message: texts.RetryLater}, fmt.Errorf("store inbound message: %w", err)
		}
	}
	if !stored {
		_, err := s.q.InboundTakeOver(ctx, s.pool, db.InboundTakeOverParams{
			MessageSid: in.MessageSID, Now: now.UTC(), StaleBefore: now.Add(-s.cfg.StaleAfter).UTC(),
		})
		if err == nil {
			s.log.WarnContext(ctx, "redelivered text had no answer: handling it again")
			return s.process(ctx, shop, known, in, nil, nil)
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return Answer{Outcome: OutcomeRetryLater, Message: texts.RetryLater, Replayed: true}, fmt.Errorf("take over stored message: %w", err)
		}
		ans, err := s.replay(ctx, in.MessageSID)
		ans.Keyword = Parse(in.Body, in.OptOutType)
		return ans, err
	}
	return s.process(ctx, shop, known, in, snd, nil)
}

// process handles a stored text and stores its answer; with then, the answer is stored
// in the transaction then runs (which also texts it).
func (s *Service) process(ctx context.Context, shop shops.Shop, known bool, in Message, snd *sender, then func(pgx.Tx, Answer) error) (Answer, error) {
	kw := Parse(in.Body, in.OptOutType)
	var ans Answer
	var herr error
	if !known {
		ans = Answer{Outcome: OutcomeUnrecognized, Message: texts.UnknownNumber}
	} else {
		ans, herr = s.handle(ctx, shop, in, kw, snd)
	}
	ans.Keyword = kw
	// The answer is stored even when it is retry_later, so that a redelivery of this
	// MessageSid repeats it; the customer's next text is a new message and is handled
	// afresh.
	bg := context.WithoutCancel(ctx)
	store := func(q db.DBTX) error {
		return s.q.InboundSetOutcome(bg, q, db.InboundSetOutcomeParams{
			MessageSid: in.MessageSID, Outcome: text(string(ans.Outcome)), Reply: text(ans.Message), HandledAt: ptr(s.cfg.Now().UTC()),
		})
	}
	var err error
	if then == nil {
		_, err = s.answers.do(ctx, answer{sid: in.MessageSID, outcome: string(ans.Outcome), reply: ans.Message})
	} else {
		err = pgx.BeginFunc(bg, s.pool, func(tx pgx.Tx) error {
			if err := store(tx); err != nil {
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

// Delivered records that ans was written back to Twilio in time to reach the customer:
// a booked customer then needs no notice text.
func (s *Service) Delivered(ctx context.Context, ans Answer) error {
	if ans.Outcome != OutcomeBooked || ans.BookingID == uuid.Nil {
		return nil
	}
	return s.slots.MarkTold(ctx, ans.BookingID)
}

// Sweep finishes the stored texts whose handler died before answering and that no
// redelivery took over: it handles each again and texts the answer, so nobody is left
// without one. It returns how many it finished.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	now := s.cfg.Now()
	stale := now.Add(-s.cfg.StaleAfter).UTC()
	sids, err := s.q.InboundListUnanswered(ctx, s.pool, db.InboundListUnansweredParams{StaleBefore: stale, MaxRows: 100})
	if err != nil {
		return 0, fmt.Errorf("list unanswered texts: %w", err)
	}
	done := 0
	for _, sid := range sids {
		m, err := s.q.InboundTakeOver(ctx, s.pool, db.InboundTakeOverParams{MessageSid: sid, Now: now.UTC(), StaleBefore: stale})
		if errors.Is(err, pgx.ErrNoRows) {
			continue // answered or taken over meanwhile
		}
		if err != nil {
			return done, fmt.Errorf("take over %s: %w", sid, err)
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
		ans, err := s.process(ctx, shop, known, in, nil, func(tx pgx.Tx, ans Answer) error {
			if ans.Outcome == OutcomeRetryLater {
				// Nobody would answer it again: roll back, so the text stays unanswered
				// and a later sweep takes it over once this take-over is stale.
				return errLeaveForNextSweep
			}
			if !known || ans.Message == "" {
				return nil
			}
			if ans.Outcome == OutcomeBooked && ans.BookingID != uuid.Nil {
				// The customer may have heard of this booking already (its payment link
				// or notice text, or the answer to another YES): the same news is not
				// texted twice.
				first, err := s.slots.TellOnce(ctx, tx, ans.BookingID)
				if err != nil || !first {
					return err
				}
			}
			// No HTTP answer can carry it any more: it goes by text, from the shop's number.
			_, err := s.queue.InsertTx(ctx, tx, jobs.Text{
				Key: "reply:" + m.MessageSid, ShopID: shop.ID, From: shop.SMSNumber, To: m.FromPhone, Body: ans.Message,
			}, nil)
			return err
		})
		if err != nil {
			s.log.ErrorContext(ctx, "unanswered text not finished; the next sweep tries again", "outcome", ans.Outcome, "err", err)
			continue
		}
		s.log.InfoContext(ctx, "unanswered text finished by the sweeper", "outcome", ans.Outcome)
		done++
	}
	return done, nil
}

// errLeaveForNextSweep rolls back a sweep's answer that is only "try again later".
var errLeaveForNextSweep = errors.New("inbound: left for the next sweep")

// clean makes a text storable: Postgres refuses NUL bytes and invalid UTF-8 in text
// columns, and one such text must not fail the statement that stores the others.
func clean(in Message) Message {
	fix := func(s string) string {
		return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
	}
	in.MessageSID, in.From, in.To, in.Body, in.OptOutType = fix(in.MessageSID), fix(in.From), fix(in.To), fix(in.Body), fix(in.OptOutType)
	return in
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
		m, err := s.q.InboundGet(ctx, s.pool, sid)
		if err != nil {
			return Answer{Outcome: OutcomeRetryLater, Message: texts.RetryLater}, fmt.Errorf("read stored message: %w", err)
		}
		if m.Outcome.Valid {
			return Answer{Outcome: Outcome(m.Outcome.String), Message: m.Reply.String, Replayed: true}, nil
		}
		if time.Now().After(deadline) {
			return Answer{Outcome: OutcomeRetryLater, Message: texts.RetryLater, Replayed: true}, nil
		}
		select {
		case <-ctx.Done():
			return Answer{Outcome: OutcomeRetryLater, Message: texts.RetryLater, Replayed: true}, nil
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// sender is who sent a text, as far as answering it needs.
type sender struct {
	known    bool
	id       uuid.UUID
	optedOut bool
	// claims is what a YES can claim, when it was read together with the text.
	claims *slots.Claimable
}

// lookUp finds the sender when it was not read with the text.
func (s *Service) lookUp(ctx context.Context, shop shops.Shop, phone string) (sender, error) {
	cust, err := s.shops.CustomerByPhone(ctx, shop.ID, phone)
	var p *problem.Error
	if errors.As(err, &p) && p.Kind == problem.NotFound {
		return sender{}, nil
	}
	if err != nil {
		return sender{}, err
	}
	return sender{known: true, id: cust.ID, optedOut: cust.OptedOutAt != nil}, nil
}

func (s *Service) handle(ctx context.Context, shop shops.Shop, in Message, kw Keyword, snd *sender) (Answer, error) {
	if snd == nil {
		found, err := s.lookUp(ctx, shop, in.From)
		if err != nil {
			return Answer{Outcome: OutcomeRetryLater, Message: texts.RetryLater}, err
		}
		snd = &found
	}
	known := snd.known
	switch kw {
	case KeywordYes:
		if !known {
			return Answer{Outcome: OutcomeNoOffer, Message: texts.NoOffer(shop)}, nil
		}
		if snd.optedOut {
			if !strings.EqualFold(in.OptOutType, "START") {
				// Someone who said STOP cannot take a slot: with carrier opt-out on, not
				// even the payment link would reach them.
				return Answer{Outcome: OutcomeNoOffer, Message: texts.OptedOutYes(shop)}, nil
			}
			// Twilio counted this YES as an opt-in and will deliver to the number again;
			// follow it, or the customer would never hear of another opening.
			if err := s.shops.OptIn(ctx, snd.id); err != nil {
				return Answer{Outcome: OutcomeRetryLater, Message: texts.RetryLater}, fmt.Errorf("opt in: %w", err)
			}
		}
		return s.claim(ctx, shop, snd.id, snd.claims)
	case KeywordNo:
		if known {
			if off, err := s.q.OfferNewestClaimable(ctx, s.pool, snd.id); err == nil {
				if err := offers.Decline(ctx, s.pool, off.OfferID); err != nil {
					return Answer{Outcome: OutcomeRetryLater, Message: texts.RetryLater}, err
				}
			} else if !errors.Is(err, pgx.ErrNoRows) {
				return Answer{Outcome: OutcomeRetryLater, Message: texts.RetryLater}, fmt.Errorf("find offer to decline: %w", err)
			}
		}
		return Answer{Outcome: OutcomeDeclined, Message: texts.Declined(shop)}, nil
	case KeywordStop:
		if known {
			if err := s.shops.OptOut(ctx, snd.id); err != nil {
				return Answer{Outcome: OutcomeRetryLater, Message: texts.RetryLater}, fmt.Errorf("opt out: %w", err)
			}
		}
		return Answer{Outcome: OutcomeOptedOut, Message: texts.OptedOut(shop)}, nil
	case KeywordStart:
		if known {
			if err := s.shops.OptIn(ctx, snd.id); err != nil {
				return Answer{Outcome: OutcomeRetryLater, Message: texts.RetryLater}, fmt.Errorf("opt in: %w", err)
			}
		}
		return Answer{Outcome: OutcomeOptedIn, Message: texts.OptedIn(shop)}, nil
	case KeywordHelp:
		return Answer{Outcome: OutcomeHelp, Message: texts.Help(shop)}, nil
	default:
		return Answer{Outcome: OutcomeUnrecognized, Message: texts.Unrecognized(shop)}, nil
	}
}

func (s *Service) claim(ctx context.Context, shop shops.Shop, customerID uuid.UUID, claims *slots.Claimable) (Answer, error) {
	var c slots.Claim
	var err error
	if claims != nil {
		c, err = s.slots.BookClaimable(ctx, shop, customerID, *claims)
	} else {
		c, err = s.slots.Book(ctx, shop, customerID)
	}
	if err != nil {
		return Answer{Outcome: OutcomeRetryLater, Message: texts.RetryLater}, err
	}
	switch c.Outcome {
	case slots.Booked:
		ans := Answer{Outcome: OutcomeBooked, BookingID: c.BookingID}
		if c.Repeat {
			s.log.InfoContext(ctx, "repeated yes from the slot's holder", "booking_id", c.BookingID)
		} else if c.Confirmed {
			s.m.Booking(slots.BookingConfirmed)
		} else {
			s.m.Booking(slots.BookingPendingPayment)
		}
		switch {
		case c.Confirmed:
			ans.Message = texts.Confirmed(shop, c.Service, c.StartsAt)
		case c.LinkFollows:
			ans.Message = texts.BookedLinkFollows(shop, c.Service, c.StartsAt)
		default:
			ans.Message = texts.Link(shop, c.Service, c.StartsAt, c.PaymentURL, s.slots.PayWithin())
		}
		return ans, nil
	case slots.Taken:
		return Answer{Outcome: OutcomeTaken, Message: texts.Taken(shop)}, nil
	default:
		return Answer{Outcome: OutcomeNoOffer, Message: texts.NoOffer(shop)}, nil
	}
}

func text(s string) pgtype.Text { return pgtype.Text{String: s, Valid: true} }

func ptr[T any](v T) *T { return &v }
