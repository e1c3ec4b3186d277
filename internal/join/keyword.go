package join

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/inbox"
	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// keywords are the default join keywords, each with the language it is written in.
var keywords = map[string]language.Code{"JOIN": language.English, "UNIRME": language.Spanish, "INSCRIRE": language.French}

// Keyword reports whether body is one of shop's join keywords (the whole text, in any
// case, with spaces and closing punctuation around it) and the language to answer it
// in: a default one (JOIN, UNIRME, INSCRIRE) is written in its own language, and the
// shop's own (shops.Shop.JoinKeywords) in the shop's.
func Keyword(shop shops.Shop, body string) (language.Code, bool) {
	w := strings.ToUpper(strings.Trim(strings.TrimSpace(body), " .!¡?¿\"'"))
	if lang, ok := keywords[w]; ok {
		return lang, true
	}
	if w != "" && slices.Contains(shop.JoinKeywords, w) {
		return shop.Language.Or(language.Default), true
	}
	return "", false
}

// KeywordOutcome is what RequestByText did.
type KeywordOutcome struct {
	Outcome
	// AlreadyJoined is true when the number is an opted-in customer: it was told so,
	// and asked nothing.
	AlreadyJoined bool
}

// RequestByText takes a text of the join keyword from number to shop's number (the
// inbound path reads it with Keyword and calls this with the keyword's language): a
// number that is an opted-in customer is told so; any other, within the number's and
// the shop's limits (no address here), gets the confirmation as the page's visitors do,
// and its YES joins it through Confirm, recorded as method keyword with the
// confirmation text as the words agreed to. The texts queued are the answer: the caller
// answers nothing more. messageSID, the provider's id of the keyword's text, keys the
// "already joined" answer, so a redelivery queues it once.
func (s *Service) RequestByText(ctx context.Context, shop shops.Shop, number, messageSID string, lang language.Code) (KeywordOutcome, error) {
	if _, ok := language.Parse(string(lang)); !ok {
		lang = shop.Language.Or(language.Default)
	}
	now := s.cfg.Now().UTC()
	perWeek := strconv.Itoa(s.cfg.PerWeek)
	c, err := s.customers.ByPhone(ctx, shop.ID, number)
	if p, ok := problem.As(err); err != nil && (!ok || p.Kind != problem.NotFound) {
		return KeywordOutcome{}, err
	}
	if err == nil && c.SMSOptIn && c.OptedOutAt == nil && c.UnreachableAt == nil {
		body := smsText(shop, c.Language.Or(lang), "already", "shop", shop.Name, "per_week", perWeek)
		err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			_, err := inbox.Queue(ctx, tx, s.queue, inbox.Outgoing{
				Key: "join_already:" + messageSID, ShopID: shop.ID, From: shop.SMSNumber, To: number, Body: body,
				CustomerID: c.ID, At: now,
			})
			return err
		})
		if err != nil {
			return KeywordOutcome{}, fmt.Errorf("tell a customer of shop %s they joined: %w", shop.ID, err)
		}
		return KeywordOutcome{Outcome: Outcome{Sent: true}, AlreadyJoined: true}, nil
	}
	if reason, err := s.allow(ctx, shop, number, Submission{}); reason != "" {
		return KeywordOutcome{Outcome: Outcome{Refused: reason}}, s.refused(ctx, shop, reason)
	} else if err != nil {
		return KeywordOutcome{}, fmt.Errorf("join request by text for shop %s: %w", shop.ID, err)
	}
	id := uuid.New()
	body := smsText(shop, lang, "confirm", "shop", shop.Name, "per_week", perWeek)
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := queries.JoinRequestInsert(ctx, tx, db.JoinRequestInsertParams{
			ID: id, ShopID: shop.ID, Phone: number, Name: "", Language: string(lang), Method: MethodKeyword,
			// What a texter agrees to is the confirmation they answer YES to.
			DisclosureVersion: "sms-" + DisclosureVersion, DisclosureText: body, ConfirmationBody: body,
			CreatedAt: now, ExpiresAt: now.Add(RequestTTL),
		}); err != nil {
			return fmt.Errorf("insert join request: %w", err)
		}
		_, err := inbox.Queue(ctx, tx, s.queue, inbox.Outgoing{
			Key: "join_confirm:" + id.String(), ShopID: shop.ID, From: shop.SMSNumber, To: number, Body: body,
			NotAfter: now.Add(RequestTTL), At: now,
		})
		return err
	})
	if err != nil {
		return KeywordOutcome{}, fmt.Errorf("join request by text for shop %s: %w", shop.ID, err)
	}
	return KeywordOutcome{Outcome: Outcome{Sent: true}}, nil
}

// Keywords are the default join keywords, one a language.
func Keywords() []string {
	out := make([]string, 0, len(keywords))
	for k := range keywords {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// ShopKeywords are every word that asks to join shop's list: the defaults, then the
// shop's own. It is what the shop's campaign registers.
func ShopKeywords(shop shops.Shop) []string {
	out := Keywords()
	for _, k := range shop.JoinKeywords {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// Confirmation is the text a number joining shop's list is sent, in the shop's language,
// as texted: what it answers YES to.
func (s *Service) Confirmation(shop shops.Shop) string {
	return smsText(shop, shop.Language.Or(language.Default), "confirm", "shop", shop.Name, "per_week", strconv.Itoa(s.cfg.PerWeek))
}
