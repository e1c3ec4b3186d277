package inbound

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/texts"
)

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
func (s *Service) lookUp(ctx context.Context, shop *shops.Shop, phone string) (sender, error) {
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
func (snd sender) words(shop *shops.Shop) texts.Words {
	return texts.In(snd.lang.Or(shop.Language))
}

// wordsFor is what the number phone is texted in by shop: its customer's language, else
// the shop's.
func (s *Service) wordsFor(ctx context.Context, shop *shops.Shop, phone string) (texts.Words, error) {
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
func (s *Service) learn(ctx context.Context, shop *shops.Shop, in Message, snd *sender, rd reading) {
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
