package inbound

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/pgbatch"
	"github.com/slotrecovery/slotrecovery/internal/pgvalue"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/texts"
)

// clarify asks a customer whose reply leaned towards their newest live offer to answer
// it plainly, naming its slot; nothing is booked and the offer stays claimable. ok is
// false when the customer holds no live offer.
func (s *Service) clarify(ctx context.Context, w texts.Words, shop *shops.Shop, snd *sender) (Answer, bool, error) {
	var openingID uuid.UUID
	if snd.claims != nil {
		if len(snd.claims.Live) == 0 {
			return Answer{}, false, nil
		}
		openingID = snd.claims.Live[0].OpeningID
	} else {
		live, err := s.slots.Claimable(ctx, shop, snd.id)
		if err != nil {
			return retryLaterAt(w, shop), false, err
		}
		if len(live.Live) == 0 {
			return Answer{}, false, nil
		}
		openingID = live.Live[0].OpeningID
	}
	op, err := s.slots.Get(ctx, shop.ID, openingID)
	if err != nil {
		return retryLaterAt(w, shop), false, fmt.Errorf("read offered opening: %w", err)
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
func (s *Service) answersOffer(ctx context.Context, shop *shops.Shop, in Message, snd *sender) (bool, error) {
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

// claim books a YES. With sid (the text's, when its answer is this path's to store), a
// new booking's answer is stored with its payment link (see link).
func (s *Service) claim(ctx context.Context, w texts.Words, shop *shops.Shop, customerID uuid.UUID, claims *slots.Claimable, sid string) (Answer, error) {
	var c *slots.Claim
	var err error
	if s.cfg.Mover != nil {
		// A move-up is told by a column of the offer row read with the claim: a plain
		// YES reads nothing more for it.
		if claims == nil {
			cl, err := s.slots.Claimable(ctx, shop, customerID)
			if err != nil {
				return retryLaterAt(w, shop), err
			}
			claims = &cl
		}
		if live := claims.Live; len(live) > 0 && live[0].MoveFrom.Valid {
			return s.moveUp(ctx, w, shop, customerID, live[0], sid)
		}
	}
	if claims != nil {
		c, err = s.slots.BookClaimable(ctx, shop, customerID, *claims)
	} else {
		c, err = s.slots.Book(ctx, shop, customerID)
	}
	if err != nil {
		return retryLaterAt(w, shop), err
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
		return s.bookedAnswer(w, shop, c), nil
	case slots.Taken:
		if claims != nil && !claims.NewestKeeps.IsZero() && len(claims.Live) == 0 {
			return Answer{Outcome: OutcomeTaken, Message: w.MoveUpTaken(shop, claims.NewestKeeps)}, nil
		}
		return said(w, shop, Outcome(c.Outcome)), nil
	default:
		return said(w, shop, Outcome(c.Outcome)), nil
	}
}

// moveUp takes a YES to a move-up offer (Config.Mover): the winner is told both times
// (or, when the shop takes payments and an appointment of the book moved, gets the
// payment link as any booking does: that appointment carried no payment of ours; a
// booking made by a YES moves with its payment, so its new booking is confirmed and
// the answer names both times, with no link); a customer who lost the race keeps their
// booking and is told so.
func (s *Service) moveUp(ctx context.Context, w texts.Words, shop *shops.Shop, customerID uuid.UUID, offer slots.LiveOffer, sid string) (Answer, error) {
	m, err := s.cfg.Mover.MoveUp(ctx, *shop, customerID, offer)
	if err != nil {
		return retryLaterAt(w, shop), err
	}
	// A move is a booking: the customer cools down as after any (no plain offer of the
	// chain's next time, or any other, right after they moved) and a longer opening's
	// rest is offered, while the link is made; the answer waits for them.
	c := s.slots.Committed(ctx, *shop, customerID, m.Claim)
	defer c.Settle()
	switch {
	case c.Outcome == slots.Booked && c.New() && !c.Confirmed:
		s.m.Booking(ledger.BookingPendingPayment)
		return s.link(ctx, w, shop, &c, sid), nil
	case c.Outcome == slots.Booked && c.Repeat && !c.Confirmed:
		// The customer's own YES moved them a moment ago: its link again (or that it
		// follows), as any winner's YES said twice.
		return s.bookedAnswer(w, shop, &c), nil
	case c.Outcome == slots.Booked && c.Repeat:
		return Answer{Outcome: OutcomeBooked, BookingID: c.BookingID, Message: w.MovedUp(shop, c.Service, c.StartsAt, m.From)}, nil
	case c.Outcome == slots.Booked:
		s.m.Booking(ledger.BookingConfirmed)
		return Answer{Outcome: OutcomeBooked, BookingID: c.BookingID, Message: w.MovedUp(shop, c.Service, c.StartsAt, m.From)}, nil
	case c.Outcome == slots.Taken && !m.From.IsZero():
		return Answer{Outcome: OutcomeTaken, Message: w.MoveUpTaken(shop, m.From)}, nil
	}
	return said(w, shop, Outcome(c.Outcome)), nil
}

// link makes the payment link of the booking c has just made (the ledger's Checkout)
// and stores it; with sid, the answer that carries the link is stored in the same round
// trip, and only if the link was (Answer.stored): the winner's answer costs no round
// trip of its own (winners' answers were the p99), and an answer never names a link
// that was not stored. When the link cannot be made or stored in time, or the booking
// sweep stored its own first, the answer says that the link follows: the sweep makes or
// texts it.
func (s *Service) link(ctx context.Context, w texts.Words, shop *shops.Shop, booked *slots.Claim, sid string) Answer {
	c := *booked // c.PaymentURL is set below: the caller's claim stays as it is
	follows := c
	follows.LinkFollows = true
	if s.ledger == nil {
		s.log.WarnContext(ctx, "checkout deferred to job: payments are not configured here", "booking_id", c.BookingID)
		return s.bookedAnswer(w, shop, &follows)
	}
	co, err := s.ledger.Checkout(ctx, w, *shop, c.Booking, c.Service, c.StartsAt)
	if err != nil {
		s.log.WarnContext(ctx, "checkout deferred to job", "booking_id", c.BookingID, "err", err)
		return s.bookedAnswer(w, shop, &follows)
	}
	c.PaymentURL = co.URL
	ans := s.bookedAnswer(w, shop, &c)
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
		return s.bookedAnswer(w, shop, &follows)
	}
	if linkStored.RowsAffected() == 0 {
		return s.bookedAnswer(w, shop, &follows) // the sweep's link, which it texts
	}
	ans.stored = answerStored.RowsAffected() == 1
	return ans
}
