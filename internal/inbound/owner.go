package inbound

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/inbox"
	"github.com/slotrecovery/slotrecovery/internal/phone"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/texts"
)

// needsOwner reports whether a text answered with outcome waits for a person: one the
// server could not act on (unrecognized: with a live offer, neither yes nor no nor a
// keyword; without one, anything but a keyword) or an unsure one (clarify).
func needsOwner(o Outcome) bool { return o == OutcomeUnrecognized || o == OutcomeClarify }

// keepsConversation says a text with outcome o is recorded in the shop's conversation
// with its number as it is answered (keep): the keywords and a YES without an offer,
// which may come from a number the shop has no conversation with yet. The replies to an
// offer (booked, taken, declined) are not written again: the number has a conversation
// since its offer, and the thread reads them where the reply path stores them
// (conversation_texts), so a storm's YES costs the inbox nothing.
func keepsConversation(o Outcome) bool {
	return o == OutcomeOptedOut || o == OutcomeOptedIn || o == OutcomeHelp || o == OutcomeNoOffer || o == OutcomeJoinRequested ||
		o == OutcomeCancelRequest || o == OutcomePaused || o == OutcomeResumed
}

// keep records a text that needs no person, and its answer, in the shop's conversation
// with the number, in tx: the conversation stays as it is (closed unless a text in it
// waits), and gets no alert and no acknowledgement. A wrong number (an opt-out saying
// the number is not the customer's, so it may have been reassigned) opens it with one
// more unread instead, so that the owner sees it, and marks the shop's customer with the
// number possibly reassigned (customers.MarkPossiblyReassigned); still no alert and no
// acknowledgement, and the opt-out stands.
func (s *Service) keep(ctx context.Context, tx pgx.Tx, shop *shops.Shop, snd *sender, in Message, ans Answer, wrongNumber bool) error {
	now := s.cfg.Now()
	text := inbox.InboundText{ShopID: shop.ID, Phone: in.From, MessageSID: in.MessageSID, Body: in.Body, At: now, NeedsOwner: wrongNumber}
	if snd != nil && snd.known {
		text.CustomerID = snd.id
	}
	rec, err := inbox.RecordIn(ctx, tx, text)
	if err != nil {
		return fmt.Errorf("record text in the inbox: %w", err)
	}
	if rec.Duplicate {
		return nil
	}
	if wrongNumber {
		if err := s.customers.MarkPossiblyReassigned(ctx, tx, shop.ID, in.From, now); err != nil {
			return err
		}
	}
	return recordAnswer(ctx, tx, text, ans.Message)
}

// recordAnswer records answer, the words the webhook answered the text in with, in its
// conversation, in tx; nothing for an empty answer.
func recordAnswer(ctx context.Context, tx pgx.Tx, in inbox.InboundText, answer string) error {
	if answer == "" {
		return nil
	}
	if _, err := inbox.RecordOut(ctx, tx, inbox.OutboundText{
		ShopID: in.ShopID, Phone: in.Phone, CustomerID: in.CustomerID, Author: inbox.AuthorSystem,
		Body: answer, At: in.At, Key: "answer:" + in.MessageSID, Status: inbox.StatusSent,
	}); err != nil {
		return fmt.Errorf("record answer in the inbox: %w", err)
	}
	return nil
}

// NumberHourlyCap is the default of Config.HourlyCap: how many texts that need a person
// one number may send a shop in an hour and still raise an event, an alert or an answer;
// beyond it they are kept in the conversation, silently.
const NumberHourlyCap = 20

// toOwner puts a text that needs a person in the shop's conversation with its number
// (internal/inbox), in tx, the transaction that stores its answer: the conversation
// opens with one more unread, a message.received event is recorded for the shop's
// webhook endpoints, and the owner's alert number is texted when its window is free
// (once a conversation per inbox.AlertEvery). It returns the answer to give: an unsure
// reply keeps its question; an unrecognized text is acknowledged in the customer's
// language once a conversation a day (inbox.AckEvery), and after that gets no answer:
// the rest of the thread is the owner's. A booked customer's request to cancel, in a
// shop that does not let customers cancel by text (ans.cancelAsked), keeps its answer
// (the team will get back to them), and the owner's alert and the event say it is a
// cancellation of that booking. Beyond Config.HourlyCap texts from the number in an
// hour, a text is only kept. A redelivered text changes nothing here.
func (s *Service) toOwner(ctx context.Context, tx pgx.Tx, shop *shops.Shop, snd *sender, w texts.Words, in Message, ans Answer) (Answer, error) {
	now := s.cfg.Now()
	text := inbox.InboundText{
		ShopID: shop.ID, Phone: in.From, MessageSID: in.MessageSID, Body: in.Body, At: now,
		NeedsOwner: true, OwnerAlerts: shop.NotifyPhone != "",
		// An unsure reply is answered with its question, not the acknowledgement.
		Acknowledges: ans.Outcome == OutcomeUnrecognized,
	}
	if snd != nil && snd.known {
		text.CustomerID = snd.id
	}
	rec, err := inbox.RecordIn(ctx, tx, text)
	if err != nil {
		return ans, fmt.Errorf("record text in the inbox: %w", err)
	}
	if rec.Duplicate {
		return ans, nil
	}
	recent, err := inbox.TextsInSince(ctx, tx, rec.ConversationID, now.Add(-time.Hour))
	if err != nil {
		return ans, err
	}
	if recent > s.cfg.HourlyCap {
		// Kept in the conversation for the owner, and nothing more: a number texting on
		// and on (a stranger, a bot, two auto-responders answering each other) spends
		// neither the shop's webhooks nor its alerts nor an answer.
		s.log.InfoContext(ctx, "text kept without event, alert or answer: its number is over the hourly cap",
			"shop_id", shop.ID, "cap", s.cfg.HourlyCap)
		ans.Message = ""
		return ans, nil
	}
	if err := hooks.Record(ctx, tx, shop.ID, hooks.MessageReceived, now, rec.Event(text, string(ans.Outcome))); err != nil {
		return ans, err
	}
	if rec.Alert {
		who, err := s.who(ctx, shop, snd, in.From)
		if err != nil {
			return ans, err
		}
		body := texts.In(shop.Language).InboxAlert(shop, who, in.Body)
		if c := ans.cancelAsked; c != nil {
			body = texts.In(shop.Language).InboxCancelAlert(shop, who, c.Service, c.StartsAt, in.Body)
		}
		if _, err := inbox.Queue(ctx, tx, s.queue, inbox.Outgoing{
			Key: "inbox_alert:" + rec.MessageID.String(), ShopID: shop.ID, From: shop.SMSNumber, To: shop.NotifyPhone,
			Body: body, Shown: inbox.ShownNowhere, About: rec.ConversationID,
		}); err != nil {
			return ans, fmt.Errorf("enqueue inbox alert: %w", err)
		}
	}
	if ans.Outcome == OutcomeUnrecognized {
		ans.Message = ""
		if rec.Ack {
			ans.Message = w.InboxAck(shop)
		}
	}
	if err := recordAnswer(ctx, tx, text, ans.Message); err != nil {
		return ans, err
	}
	return ans, nil
}

// who names a number for the owner's alert: the customer's name, else the number
// masked.
func (s *Service) who(ctx context.Context, shop *shops.Shop, snd *sender, number string) (string, error) {
	if snd != nil && snd.known {
		c, err := s.customers.ByPhone(ctx, shop.ID, number)
		if err != nil {
			return "", fmt.Errorf("read customer for inbox alert: %w", err)
		}
		if c.Name != "" {
			return c.Name, nil
		}
	}
	return phone.Mask(number), nil
}
