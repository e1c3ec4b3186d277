package offers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
)

// Outcome is what a reply led to; it is the X-Slot-Outcome header of the public contract.
type Outcome string

// Reply outcomes (DESIGN §6).
const (
	OutcomeBooked       Outcome = "booked"
	OutcomeTaken        Outcome = "taken"
	OutcomeNoOffer      Outcome = "no_offer"
	OutcomeDeclined     Outcome = "declined"
	OutcomeOptedOut     Outcome = "opted_out"
	OutcomeOptedIn      Outcome = "opted_in"
	OutcomeHelp         Outcome = "help"
	OutcomeUnrecognized Outcome = "unrecognized"
	OutcomeRetryLater   Outcome = "retry_later"
)

// Inbound is one text a customer sent to a shop's number.
type Inbound struct {
	MessageSID string
	From, To   string
	Body       string
	// OptOutType is Twilio's Advanced Opt-Out classification (STOP, START, HELP), if any.
	OptOutType string
}

// Answer is what the customer is told, and why.
type Answer struct {
	Outcome Outcome
	Message string
	// Replayed is true when this MessageSid was answered before and the stored answer is
	// being repeated.
	Replayed bool
}

// Reply handles one inbound text. It stores the message first (MessageSid is the key),
// so a redelivery gets the first answer again and does nothing else. A failure of
// Postgres or Redis gives retry_later and no booking; the error is returned alongside
// the answer for logging.
func (s *Service) Reply(ctx context.Context, in Inbound) (Answer, error) {
	now := s.cfg.Now()
	shop, err := s.shops.BySMSNumber(ctx, in.To)
	known := err == nil
	if err != nil && !errors.Is(err, shops.ErrNoShopForNumber) {
		return Answer{Outcome: OutcomeRetryLater, Message: retryLaterText}, err
	}
	var shopID uuid.NullUUID
	if known {
		shopID = uuid.NullUUID{UUID: shop.ID, Valid: true}
	}
	_, err = s.q.InboundInsert(ctx, s.pool, db.InboundInsertParams{
		MessageSid: in.MessageSID, ShopID: shopID, FromPhone: in.From, ToPhone: in.To, Body: in.Body, ReceivedAt: now.UTC(),
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return s.replay(ctx, in.MessageSID)
	}
	if err != nil {
		return Answer{Outcome: OutcomeRetryLater, Message: retryLaterText}, fmt.Errorf("store inbound message: %w", err)
	}

	var ans Answer
	var herr error
	if !known {
		ans = Answer{Outcome: OutcomeUnrecognized, Message: unknownNumberText}
	} else {
		ans, herr = s.handle(ctx, shop, in)
	}
	// The answer is stored even when it is retry_later, so that a redelivery of this
	// MessageSid repeats it; the customer's next text is a new message and is handled
	// afresh.
	if err := s.q.InboundSetOutcome(context.WithoutCancel(ctx), s.pool, db.InboundSetOutcomeParams{
		MessageSid: in.MessageSID, Outcome: text(string(ans.Outcome)), Reply: text(ans.Message), HandledAt: ptr(s.cfg.Now().UTC()),
	}); err != nil {
		herr = errors.Join(herr, fmt.Errorf("store reply outcome: %w", err))
	}
	return ans, herr
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
			return Answer{Outcome: OutcomeRetryLater, Message: retryLaterText}, fmt.Errorf("read stored message: %w", err)
		}
		if m.Outcome.Valid {
			return Answer{Outcome: Outcome(m.Outcome.String), Message: m.Reply.String, Replayed: true}, nil
		}
		if time.Now().After(deadline) {
			return Answer{Outcome: OutcomeRetryLater, Message: retryLaterText, Replayed: true}, nil
		}
		select {
		case <-ctx.Done():
			return Answer{Outcome: OutcomeRetryLater, Message: retryLaterText, Replayed: true}, nil
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (s *Service) handle(ctx context.Context, shop shops.Shop, in Inbound) (Answer, error) {
	kw := Parse(in.Body, in.OptOutType)
	cust, err := s.shops.CustomerByPhone(ctx, shop.ID, in.From)
	var p *problem.Error
	isNotFound := errors.As(err, &p) && p.Kind == problem.NotFound
	if err != nil && !isNotFound {
		return Answer{Outcome: OutcomeRetryLater, Message: retryLaterText}, err
	}
	known := err == nil
	switch kw {
	case KeywordYes:
		if !known {
			return Answer{Outcome: OutcomeNoOffer, Message: noOfferText(shop)}, nil
		}
		if cust.OptedOutAt != nil && strings.EqualFold(in.OptOutType, "START") {
			// Twilio counted this YES as an opt-in and will deliver to the number again;
			// follow it, or the customer would never hear of another opening.
			if _, err := s.q.CustomerOptIn(ctx, s.pool, cust.ID); err != nil {
				return Answer{Outcome: OutcomeRetryLater, Message: retryLaterText}, fmt.Errorf("opt in: %w", err)
			}
		}
		return s.claim(ctx, shop, cust)
	case KeywordNo:
		if known {
			if off, err := s.q.OfferNewestClaimable(ctx, s.pool, cust.ID); err == nil {
				if _, err := s.q.OfferDecline(ctx, s.pool, off.OfferID); err != nil && !errors.Is(err, pgx.ErrNoRows) {
					return Answer{Outcome: OutcomeRetryLater, Message: retryLaterText}, fmt.Errorf("decline offer: %w", err)
				}
			} else if !errors.Is(err, pgx.ErrNoRows) {
				return Answer{Outcome: OutcomeRetryLater, Message: retryLaterText}, fmt.Errorf("find offer to decline: %w", err)
			}
		}
		return Answer{Outcome: OutcomeDeclined, Message: declinedText(shop)}, nil
	case KeywordStop:
		if known {
			if _, err := s.q.CustomerOptOut(ctx, s.pool, db.CustomerOptOutParams{ID: cust.ID, Now: s.cfg.Now().UTC()}); err != nil {
				return Answer{Outcome: OutcomeRetryLater, Message: retryLaterText}, fmt.Errorf("opt out: %w", err)
			}
		}
		return Answer{Outcome: OutcomeOptedOut, Message: optedOutText(shop)}, nil
	case KeywordStart:
		if known {
			if _, err := s.q.CustomerOptIn(ctx, s.pool, cust.ID); err != nil {
				return Answer{Outcome: OutcomeRetryLater, Message: retryLaterText}, fmt.Errorf("opt in: %w", err)
			}
		}
		return Answer{Outcome: OutcomeOptedIn, Message: optedInText(shop)}, nil
	case KeywordHelp:
		return Answer{Outcome: OutcomeHelp, Message: helpText(shop)}, nil
	default:
		return Answer{Outcome: OutcomeUnrecognized, Message: unrecognizedText(shop)}, nil
	}
}

func (s *Service) claim(ctx context.Context, shop shops.Shop, cust shops.Customer) (Answer, error) {
	c, err := s.slots.Book(ctx, shop, cust.ID)
	if err != nil {
		return Answer{Outcome: OutcomeRetryLater, Message: retryLaterText}, err
	}
	switch c.Outcome {
	case slots.Booked:
		if c.Repeat {
			s.log.InfoContext(ctx, "repeated yes from the slot's holder", "booking_id", c.BookingID)
		} else if c.Confirmed {
			s.m.Booking(slots.BookingConfirmed)
		} else {
			s.m.Booking(slots.BookingPendingPayment)
		}
		switch {
		case c.Confirmed:
			return Answer{Outcome: OutcomeBooked, Message: slots.ConfirmedText(shop, c.Service, c.StartsAt)}, nil
		case c.LinkFollows:
			return Answer{Outcome: OutcomeBooked, Message: bookedLinkFollowsText(shop, c.Service, c.StartsAt)}, nil
		default:
			return Answer{Outcome: OutcomeBooked, Message: slots.LinkText(shop, c.Service, c.StartsAt, c.PaymentURL)}, nil
		}
	case slots.Taken:
		return Answer{Outcome: OutcomeTaken, Message: takenText(shop)}, nil
	default:
		return Answer{Outcome: OutcomeNoOffer, Message: noOfferText(shop)}, nil
	}
}

func text(s string) pgtype.Text { return pgtype.Text{String: s, Valid: true} }

func ptr[T any](v T) *T { return &v }
