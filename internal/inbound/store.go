package inbound

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/pgbatch"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
)

// newText is a text to store.
type newText struct {
	in Message
	// yes is true when the text is a YES (Parse): a late one is answered as it is stored.
	yes bool
}

// stored is what storing a text found.
type stored struct {
	// known is false for a text to a number no shop owns: it was not stored.
	known bool
	// shop owns the number the text was sent to, as it was when the text was stored
	// (nil when known is false). A pointer: a Shop is over 600 bytes, and this travels
	// through the batch's channel and down every frame of the YES path.
	shop *shops.Shop
	// fresh is false for a MessageSid seen before (a redelivery).
	fresh  bool
	sender sender
	// late is true for a YES that came after every slot it could claim was decided: its
	// outcome, taken, was stored with the text (see InboundStoreMany).
	late bool
}

// answer is an answer to store.
type answer struct {
	sid, outcome, reply string
	// bookingID is the booking a booked answer tells of; uuid.Nil for none.
	bookingID uuid.UUID
}

// sentAnswer is an answer Twilio reported sending (MarkAnswerSent).
type sentAnswer struct {
	sid, outcome string
	// words are the answer's words when they were not stored with it (a late YES); ""
	// for every other answer.
	words string
	// booking is the booking a booked answer told of (uuid.Nil: none).
	booking uuid.UUID
}

func (s *Service) storeTexts(ctx context.Context, batch []newText) ([]stored, error) {
	p := db.InboundStoreManyParams{ReceivedAt: s.cfg.Now().UTC(), LateStatuses: slots.LateStatuses(), LateOutcome: string(OutcomeTaken)}
	for _, t := range batch {
		p.MessageSids = append(p.MessageSids, t.in.MessageSID)
		p.FromPhones = append(p.FromPhones, t.in.From)
		p.ToPhones = append(p.ToPhones, t.in.To)
		p.Bodies = append(p.Bodies, t.in.Body)
		p.Yes = append(p.Yes, t.yes)
	}
	rows, err := queries.InboundStoreMany(ctx, s.pool, p)
	if err != nil {
		return nil, fmt.Errorf("store inbound messages: %w", err)
	}
	// The rows by pointer: each is over a kilobyte (the shop's whole row).
	bySID := make(map[string][]*db.InboundStoreManyRow, len(batch))
	for i := range rows {
		r := &rows[i]
		bySID[r.MessageSid] = append(bySID[r.MessageSid], r)
	}
	out := make([]stored, len(batch))
	for i := range batch {
		rs := bySID[batch[i].in.MessageSID]
		if len(rs) == 0 {
			continue // no shop owns the number
		}
		shop, err := shops.FromRow(&rs[0].Shop)
		if err != nil {
			return nil, err
		}
		out[i] = stored{known: true, shop: &shop, fresh: rs[0].Stored, sender: senderFrom(rs), late: rs[0].Late}
	}
	return out, nil
}

// storeAnswers stores the answers of concurrent requests (the answers group).
func (s *Service) storeAnswers(ctx context.Context, answers []answer) ([]struct{}, error) {
	if err := s.writeAnswers(ctx, s.pool, answers); err != nil {
		return nil, err
	}
	return make([]struct{}, len(answers)), nil
}

// writeAnswers stores answers on q, each only if its text has none yet: the one
// statement that stores an answer, but for a winner's, stored with its payment link
// (link), and a late YES's outcome, stored with the text (InboundStoreMany).
func (s *Service) writeAnswers(ctx context.Context, q db.DBTX, answers []answer) error {
	p := db.InboundSetOutcomesParams{HandledAt: s.cfg.Now().UTC()}
	for _, a := range answers {
		p.Sids = append(p.Sids, a.sid)
		p.Outcomes = append(p.Outcomes, a.outcome)
		p.Replies = append(p.Replies, a.reply)
		p.BookingIds = append(p.BookingIds, a.bookingID)
	}
	return queries.InboundSetOutcomes(ctx, q, p)
}

// markAnswersSent records that Twilio sent answers, and that the customers of the booked
// ones have learnt of their bookings: one round trip for a batch, since every reply of
// a storm makes one.
func (s *Service) markAnswersSent(ctx context.Context, answers []sentAnswer) ([]struct{}, error) {
	p := db.InboundMarkAnsweredParams{AnsweredAt: s.cfg.Now().UTC()}
	var told []uuid.UUID
	for _, a := range answers {
		if a.outcome != "" {
			p.Sids = append(p.Sids, a.sid)
			p.Outcomes = append(p.Outcomes, a.outcome)
			p.Replies = append(p.Replies, a.words)
		}
		if a.booking != uuid.Nil {
			told = append(told, a.booking)
		}
	}
	var q pgbatch.Queue
	if len(p.Sids) > 0 {
		if err := queries.InboundMarkAnswered(ctx, &q, p); err != nil {
			return nil, fmt.Errorf("mark answers taken: %w", err)
		}
	}
	if err := ledger.MarkTold(ctx, &q, p.AnsweredAt, told...); err != nil {
		return nil, err
	}
	if err := q.Send(ctx, s.pool); err != nil {
		return nil, fmt.Errorf("mark answers taken: %w", err)
	}
	return make([]struct{}, len(answers)), nil
}

// senderFrom reads the sender and their claims from one text's rows.
func senderFrom(rows []*db.InboundStoreManyRow) sender {
	r := rows[0]
	if !r.CustomerID.Valid {
		return sender{}
	}
	snd := sender{known: true, id: r.CustomerID.UUID, optedOut: r.OptedOutAt != nil, lang: language.Code(r.CustomerLanguage.String),
		claims: &slots.Claimable{}}
	if r.NewestOfferID != uuid.Nil {
		snd.claims.NewestOfferID, snd.claims.NewestStatus = r.NewestOfferID, r.NewestOfferStatus
		// The zero time: no booking the newest offer would have moved still stands.
		switch {
		case !r.NewestKeepsAt.IsZero():
			snd.claims.NewestKeeps = r.NewestKeepsAt.UTC()
		case !r.NewestKeepsBookingAt.IsZero():
			snd.claims.NewestKeeps = r.NewestKeepsBookingAt.UTC()
		}
	}
	for _, r := range rows {
		if r.OfferID != uuid.Nil {
			snd.claims.Live = append(snd.claims.Live, slots.LiveOffer{OfferID: r.OfferID, OpeningID: r.OpeningID, Generation: r.Generation, StartsAt: r.StartsAt,
				EventFacts: r.EventFacts, MoveFrom: r.MoveFrom})
		}
	}
	return snd
}

// groupMax bounds one statement's texts.
const groupMax = 500

func (s *Service) initGroups() {
	s.stores = &group[newText, stored]{max: groupMax, key: func(t newText) string { return t.in.MessageSID }, run: s.storeTexts}
	s.answers = &group[answer, struct{}]{max: groupMax, key: func(a answer) string { return a.sid }, run: s.storeAnswers}
	s.sent = &group[sentAnswer, struct{}]{max: groupMax, key: func(a sentAnswer) string { return a.sid }, run: s.markAnswersSent,
		linger: func() { time.Sleep(markLinger) }}
}

// markLinger is how long a batch of marks waits for more: the marks come with Twilio's
// reports of answers it has already sent (MarkAnswerSent), so the wait costs no customer
// anything and a storm's marks take a few statements instead of one every few replies.
// It stays far below the sweeper's wait before it texts an unmarked answer
// (RetellAfter).
const markLinger = 25 * time.Millisecond

// Purge deletes up to limit stored texts (the sender's number and words, the outcome
// and the answer) received before `before`, and returns how many it deleted
// (internal/retention runs it until a batch is short). The retention that sets `before`
// is days: long past Twilio's redeliveries (within its 15 s webhook window) and the
// sweeper, which finishes a text minutes after its handler died.
func Purge(ctx context.Context, conn db.DBTX, before time.Time, limit int32) (int64, error) {
	n, err := queries.InboundPurge(ctx, conn, db.InboundPurgeParams{Before: before.UTC(), MaxRows: limit})
	if err != nil {
		return 0, fmt.Errorf("purge inbound messages: %w", err)
	}
	return n, nil
}
