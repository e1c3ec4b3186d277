package inbound

import (
	"context"
	"fmt"
	"time"

	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/texts"
)

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
					w, err = s.wordsFor(ctx, &shop, m.FromPhone)
				}
				if err != nil {
					ans := retryLater(texts.English)
					ans.Replayed = true
					return ans, fmt.Errorf("read shop of stored message: %w", err)
				}
				ans.Message = said(w, &shop, ans.Outcome).Message
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

// bookedAnswer is the answer to a YES that holds the booking c: what a booked customer
// is told of it (ledger.BookedText), its payment link as the ledger gives it (short,
// on our own domain, when the server has one).
func (s *Service) bookedAnswer(w texts.Words, shop *shops.Shop, c *slots.Claim) Answer {
	url := s.ledger.Link(c.BookingID, c.PaymentURL)
	if c.LinkFollows {
		url = ""
	}
	return Answer{Outcome: OutcomeBooked, BookingID: c.BookingID,
		Message: ledger.BookedText(w, *shop, c.Service, c.StaffName, c.StartsAt, c.Confirmed, url, s.cfg.Now())}
}

// said is the answer whose words follow from its outcome alone: every answer but a
// booking's (bookedAnswer), a STOPped customer's YES and a text to nobody's number. A
// stored answer without its words (InboundStoreMany's late YES) is told with these.
func said(w texts.Words, shop *shops.Shop, o Outcome) Answer {
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
		m = w.RetryLaterAt(shop)
	}
	return Answer{Outcome: o, Message: m}
}

// retryLater is the answer to a text that could not be handled now, before its shop is
// known (see texts.Words.RetryLater); retryLaterAt names the shop once it is.
func retryLater(w texts.Words) Answer {
	return Answer{Outcome: OutcomeRetryLater, Message: w.RetryLater()}
}

func retryLaterAt(w texts.Words, shop *shops.Shop) Answer {
	return Answer{Outcome: OutcomeRetryLater, Message: w.RetryLaterAt(shop)}
}
