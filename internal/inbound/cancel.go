package inbound

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/texts"
)

// cancelRequest answers a booked customer who asks to cancel ("cancel my booking",
// KeywordCancel) or says they cannot come ("can't make it": a no with cannotCome) and
// holds no live offer that the words would answer. With one live booking whose opening
// has not started, in a shop that lets customers cancel by text, the ledger cancels it
// (refunding a paid one) and offers its opening again at once, in one transaction that
// also stores this text's answer (with sid; else the caller stores it) and keeps the
// text and its confirmation in the conversation: the confirmation is said once, by the
// text that cancelled. Where the shop does not let customers cancel by text, with two
// live bookings (which one is meant is for a person to ask), for a "can't make it" whose
// customer's last offer was not the one they booked (it may answer that offer), or
// without a ledger, the
// request goes to the owner's inbox marked as a cancellation (Answer.cancelAsked) and
// the customer is told the shop will get back to them. ok is false for a customer
// without a live booking, or a "can't make it" that answers a live offer: the text is
// handled as any other (declined, or for a person).
func (s *Service) cancelRequest(ctx context.Context, w texts.Words, shop *shops.Shop, in Message, rd reading, snd *sender, sid string) (Answer, bool, error) {
	now := s.cfg.Now()
	unsure := false
	if rd.kw == KeywordNo {
		// "Can't make it" to a live offer declines the offer: the booking stands.
		cl, err := s.slots.Claimable(ctx, shop, snd.id)
		if err != nil {
			return retryLaterAt(w, shop), true, err
		}
		if len(cl.Live) > 0 {
			return Answer{}, false, nil
		}
		// The last offer the customer got is not the one they booked (another slot,
		// taken or lost since): their "can't make it" may answer that offer as well as
		// their booking. A person asks; nothing is cancelled on a guess.
		unsure = cl.NewestOfferID != uuid.Nil && cl.NewestStatus != acceptedStatus
	}
	live, err := ledger.LiveBookings(ctx, s.pool, shop.ID, snd.id, now)
	if err != nil {
		return retryLaterAt(w, shop), true, err
	}
	if len(live) == 0 {
		return Answer{}, false, nil
	}
	if !shop.CustomersCancelByText || s.ledger == nil || len(live) > 1 || unsure {
		return Answer{Outcome: OutcomeCancelRequest, Message: w.CancelAsked(shop), cancelAsked: &live[0]}, true, nil
	}
	var ans Answer
	var c ledger.Cancellation
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		c, err = s.ledger.CancelByCustomer(ctx, tx, live[0].ID, now)
		if errors.Is(err, ledger.ErrNotCancellable) {
			// Moved up meanwhile (their YES to a move-up offer committed first): the
			// booking it became, with its payment, is the one they hold and mean. Read in
			// this transaction, which holds the booking they left and its opening, as the
			// move took them: the same order.
			held, herr := ledger.LiveBookings(ctx, tx, shop.ID, snd.id, now)
			if herr != nil {
				return herr
			}
			if len(held) == 1 && held[0].ID != live[0].ID {
				c, err = s.ledger.CancelByCustomer(ctx, tx, held[0].ID, now)
			}
		}
		switch {
		case errors.Is(err, ledger.ErrNotCancellable):
			// Cancelled meanwhile by another text of the customer's (sent twice): that
			// text's answer confirms it; this one says nothing more.
			ans = Answer{Outcome: OutcomeCancelRequest}
		case err != nil:
			return err
		case c.Late && (c.DepositKept || c.Fee != nil && c.Fee.State == ledger.FeePending):
			// Late by the policy the customer accepted: the answer says what it does.
			var fee int64
			if c.Fee != nil && c.Fee.State == ledger.FeePending {
				fee = c.Fee.AmountCents
			}
			ans = Answer{Outcome: OutcomeCancelRequest, Message: w.CancelledLate(shop, c.Service, c.StartsAt, c.LateCancelHours, c.DepositKept, c.Refunded, fee)}
		default:
			ans = Answer{Outcome: OutcomeCancelRequest, Message: w.Cancelled(shop, c.Service, c.StartsAt, c.Refunded)}
		}
		if sid == "" {
			return nil
		}
		if err := s.keep(ctx, tx, shop, snd, in, ans, false); err != nil {
			return err
		}
		return s.writeAnswers(ctx, tx, []answer{{sid: sid, outcome: string(ans.Outcome), reply: ans.Message}})
	})
	if err != nil {
		return retryLaterAt(w, shop), true, fmt.Errorf("cancel booking by text: %w", err)
	}
	if c.Cancelled {
		if c.OpenCheckout {
			s.ledger.EndCheckout(ctx, c.BookingID)
		}
		if c.Fee != nil && c.Fee.State == ledger.FeePending {
			// The late-cancel fee the answer announced, once the cancellation committed.
			s.ledger.ChargeFee(ctx, c)
		}
		s.m.Booking(ledger.BookingCancelled)
		s.log.InfoContext(ctx, "booking cancelled by its customer's text", "booking_id", c.BookingID, "opening", string(c.Result))
	}
	ans.stored = sid != ""
	return ans, true, nil
}

// optedOutAnswer is the answer to a STOP: a customer who holds a live booking is told it
// stands and how to cancel it by text (the bare CANCEL is an opt-out, not a
// cancellation).
func (s *Service) optedOutAnswer(ctx context.Context, w texts.Words, shop *shops.Shop, snd *sender) Answer {
	ans := said(w, shop, OutcomeOptedOut)
	if !snd.known {
		return ans
	}
	live, err := ledger.LiveBookings(ctx, s.pool, shop.ID, snd.id, s.cfg.Now())
	if err != nil {
		// The opt-out stands; only the words about the booking are lost.
		s.log.WarnContext(ctx, "opted-out customer's bookings not read", "err", err)
		return ans
	}
	if len(live) > 0 {
		ans.Message = w.OptedOutBooked(shop, live[0].Service, live[0].StartsAt)
	}
	return ans
}
