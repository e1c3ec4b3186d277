package inbound

import (
	"context"
	"fmt"
	"strings"

	"github.com/slotrecovery/slotrecovery/internal/join"
	"github.com/slotrecovery/slotrecovery/internal/offers"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/texts"
)

// handle answers a stored text from snd. With sid, the answer to a YES that books is
// stored with the booking's payment link (Answer.stored).
func (s *Service) handle(ctx context.Context, shop *shops.Shop, in Message, rd reading, snd *sender, sid string) (Answer, error) {
	known := snd.known
	s.learn(ctx, shop, in, snd, rd)
	w := snd.words(shop)
	if s.cfg.Joins != nil {
		if ans, ok, err := s.joining(ctx, w, shop, in, rd, snd); ok || err != nil {
			return ans, err
		}
	}
	if known && (rd.kw == KeywordCancel || rd.kw == KeywordNo && rd.cannotCome) {
		if ans, ok, err := s.cancelRequest(ctx, w, shop, in, rd, snd, sid); ok || err != nil {
			return ans, err
		}
	}
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
				return retryLaterAt(w, shop), fmt.Errorf("opt in: %w", err)
			}
			s.recordOptIn(ctx, shop, in, snd)
		}
		if rd.loose {
			offered, err := s.answersOffer(ctx, shop, in, snd)
			if err != nil {
				return retryLaterAt(w, shop), err
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
				return retryLaterAt(w, shop), err
			}
		}
		return said(w, shop, OutcomeDeclined), nil
	case KeywordStop:
		// Customer or not: the number's STOP is kept, so that a later add or import of
		// it does not opt it in (customers.OptOutNumber).
		if err := s.customers.OptOutNumber(ctx, shop.ID, in.From); err != nil {
			return retryLaterAt(w, shop), fmt.Errorf("opt out: %w", err)
		}
		if s.cfg.Joins != nil && known {
			// The consent record keeps the customer's own words. The opt-out stands
			// whatever becomes of the record: a failure is logged, not answered.
			if err := s.cfg.Joins.RecordOptOut(ctx, *shop, snd.id, snd.lang, in.Body, in.MessageSID, s.cfg.Now()); err != nil {
				s.log.ErrorContext(ctx, "opt-out not kept in the consent record", "err", err)
			}
		}
		return s.optedOutAnswer(ctx, w, shop, snd), nil
	case KeywordStart:
		// The number's own START clears its STOP, customer or not.
		if err := s.customers.OptInNumber(ctx, shop.ID, in.From); err != nil {
			return retryLaterAt(w, shop), fmt.Errorf("opt in: %w", err)
		}
		if known {
			s.recordOptIn(ctx, shop, in, snd)
		}
		return said(w, shop, OutcomeOptedIn), nil
	case KeywordPause, KeywordResume:
		return s.pause(ctx, w, shop, rd.kw, snd)
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

// joining answers the texts of someone joining the shop's list: the join keyword asks
// for the confirmation text; a YES or START from a number with a live join request (and
// no offer to answer) confirms it, and the welcome text is the answer; a START from a
// number the shop has never had (no customer, no STOP on record, no live request) asks
// for the confirmation as the join keyword does, in the shop's language. ok is false for
// every other text (a START from a number with a STOP clears it, as before: handle).
// The answers over HTTP say nothing: the texts queued say it all.
func (s *Service) joining(ctx context.Context, w texts.Words, shop *shops.Shop, in Message, rd reading, snd *sender) (Answer, bool, error) {
	if lang, ok := join.Keyword(*shop, in.Body); ok {
		if _, err := s.cfg.Joins.RequestByText(ctx, *shop, in.From, in.MessageSID, lang); err != nil {
			return retryLaterAt(w, shop), true, fmt.Errorf("join by text: %w", err)
		}
		return Answer{Outcome: OutcomeJoinRequested}, true, nil
	}
	if rd.kw != KeywordYes && rd.kw != KeywordStart {
		return Answer{}, false, nil
	}
	if snd.known && snd.claims != nil && len(snd.claims.Live) > 0 {
		return Answer{}, false, nil // a YES to an offer
	}
	// A START from a number the shop has never had (no customer, no STOP on record)
	// asks to join, unless it confirms a live request.
	stranger := false
	if rd.kw == KeywordStart && !snd.known {
		stopped, err := s.customers.OptedOut(ctx, shop.ID, in.From)
		if err != nil {
			return retryLaterAt(w, shop), true, fmt.Errorf("look up a stranger's stop: %w", err)
		}
		stranger = !stopped
	}
	if rd.kw == KeywordStart && !stranger {
		// START clears the number's STOP first: the welcome must be allowed to reach it.
		if err := s.customers.OptInNumber(ctx, shop.ID, in.From); err != nil {
			return retryLaterAt(w, shop), true, fmt.Errorf("opt in: %w", err)
		}
	}
	handled, err := s.cfg.Joins.Confirm(ctx, *shop, join.Reply{From: in.From, Body: in.Body, MessageSID: in.MessageSID, At: s.cfg.Now()})
	if err != nil {
		return retryLaterAt(w, shop), true, fmt.Errorf("confirm join: %w", err)
	}
	if handled {
		return Answer{Outcome: OutcomeOptedIn}, true, nil
	}
	if stranger {
		// As the join keyword, in the shop's language: the confirmation is the answer.
		if _, err := s.cfg.Joins.RequestByText(ctx, *shop, in.From, in.MessageSID, ""); err != nil {
			return retryLaterAt(w, shop), true, fmt.Errorf("join by START: %w", err)
		}
		return Answer{Outcome: OutcomeJoinRequested}, true, nil
	}
	return Answer{}, false, nil
}

// pause answers a customer's PAUSE (no offers for customers.PauseFor; they are told
// until which day, in the shop's time zone) or RESUME (offers again). A number that is
// no customer has nothing to pause: a person reads it. A customer who said STOP is
// paused or resumed all the same, and a RESUME tells them that only START brings the
// offers back.
func (s *Service) pause(ctx context.Context, w texts.Words, shop *shops.Shop, kw Keyword, snd *sender) (Answer, error) {
	if !snd.known {
		return said(w, shop, OutcomeUnrecognized), nil
	}
	if kw == KeywordPause {
		until, err := s.customers.Pause(ctx, snd.id)
		if err != nil {
			return retryLaterAt(w, shop), fmt.Errorf("pause: %w", err)
		}
		return Answer{Outcome: OutcomePaused, Message: w.Paused(shop, until)}, nil
	}
	if _, err := s.customers.Resume(ctx, snd.id); err != nil {
		return retryLaterAt(w, shop), fmt.Errorf("resume: %w", err)
	}
	if snd.optedOut {
		return Answer{Outcome: OutcomeResumed, Message: w.OptedOutYes(shop)}, nil
	}
	return Answer{Outcome: OutcomeResumed, Message: w.Resumed(shop)}, nil
}

// recordOptIn keeps a customer's own opt-in by text (START, or a YES the carrier counted
// as one) in the consent record, as their STOP is. The opt-in stands whatever becomes
// of the record: a failure is logged, not answered.
func (s *Service) recordOptIn(ctx context.Context, shop *shops.Shop, in Message, snd *sender) {
	if s.cfg.Joins == nil {
		return
	}
	if err := s.cfg.Joins.RecordOptIn(ctx, *shop, snd.id, snd.lang, in.Body, in.MessageSID, s.cfg.Now()); err != nil {
		s.log.ErrorContext(ctx, "opt-in not kept in the consent record", "err", err)
	}
}
