// Package texts is where every SMS the customers read gets its wording, in each
// supported language: the offers, the answers to their replies, and the booking's
// transactional texts (payment link, confirmation, lapsed hold, refunds). The words live
// in message catalogues, one file per language (catalogue/<code>.json, keyed by a
// message id, in go-i18n's JSON shape: a string, or an object of plural forms), never in
// code; weekday and month names come from CLDR (go-playground/locales), plural forms
// from CLDR's rules (golang.org/x/text/feature/plural).
//
// A message's placeholders ({{.Name}}) are filled by plain substitution, not by
// text/template: a template's executor looks methods up by name at run time, and while
// it is reachable the linker keeps every exported method of every type in the server
// (go-i18n's templates grew the binary by half and each instance's memory by ~9 MiB).
//
// Every text starts with the shop's name (customers get texts from many senders), says
// the day and time in the shop's local time with the clock as the language writes it in
// the shop's country, writes amounts with internal/money, and addresses the customer as
// the shop chose (shops.Formality: a catalogue's plain ids are in the language's default
// way, tú in Spanish and vous in French; "<id>@formal" and "<id>@informal" are the other
// way). With the shop's gsm7 setting at prefer (the default), a text whose accents
// outside GSM-7 would make it more UCS-2 segments than it would be GSM-7 ones is sent with
// them folded to their GSM-7 base (fit). TestSegments renders every text in every
// language on every weekday and month (-args -segments-table prints them all), and holds
// the offer, clarify, taken and move-up answer texts to one segment with a 20-character shop name and
// service.
package texts

import (
	"cmp"
	"embed"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/go-playground/locales"
	locen "github.com/go-playground/locales/en"
	loces "github.com/go-playground/locales/es"
	locfr "github.com/go-playground/locales/fr"
	"golang.org/x/text/feature/plural"
	xlanguage "golang.org/x/text/language"
	"golang.org/x/text/message"
	"golang.org/x/text/number"

	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/money"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

//go:embed catalogue/*.json
var catalogues embed.FS

// Words writes the texts in one language. The zero value writes English.
type Words struct {
	lang language.Code
	tag  xlanguage.Tag
	cat  catalogue
	cal  locales.Translator
}

// catalogue is one language's messages: each id's text, by plural form (plural.Other
// for a message without forms).
type catalogue map[string]map[plural.Form]string

// forms names CLDR's plural forms as the catalogues write them.
var forms = map[string]plural.Form{
	"zero": plural.Zero, "one": plural.One, "two": plural.Two, "few": plural.Few, "many": plural.Many, "other": plural.Other,
}

// readCatalogue reads catalogue/<l>.json.
func readCatalogue(l language.Code) (catalogue, error) {
	b, err := catalogues.ReadFile("catalogue/" + string(l) + ".json")
	if err != nil {
		return nil, err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	cat := catalogue{}
	for id, v := range raw {
		var one string
		if json.Unmarshal(v, &one) == nil {
			cat[id] = map[plural.Form]string{plural.Other: one}
			continue
		}
		var byForm map[string]string
		if err := json.Unmarshal(v, &byForm); err != nil {
			return nil, fmt.Errorf("message %q: %w", id, err)
		}
		cat[id] = map[plural.Form]string{}
		for name, text := range byForm {
			f, ok := forms[name]
			if !ok {
				return nil, fmt.Errorf("message %q: no plural form %q", id, name)
			}
			cat[id][f] = text
		}
		if _, ok := cat[id][plural.Other]; !ok {
			return nil, fmt.Errorf("message %q: no \"other\" form", id)
		}
	}
	return cat, nil
}

// in holds one Words a supported language, built once.
var in = sync.OnceValue(func() map[language.Code]Words {
	cals := map[language.Code]locales.Translator{language.English: locen.New(), language.Spanish: loces.New(), language.French: locfr.New()}
	out := map[language.Code]Words{}
	for _, l := range language.All {
		cat, err := readCatalogue(l)
		if err != nil {
			// The catalogues are embedded and TestCataloguesAreComplete reads them all:
			// a broken one never gets past the tests.
			panic(fmt.Sprintf("texts: catalogue %s: %v", l, err))
		}
		out[l] = Words{lang: l, tag: xlanguage.Make(string(l)), cat: cat, cal: cals[l]}
	}
	return out
})

// In returns the texts in language l; an unknown or empty l gets English.
func In(l language.Code) Words {
	if w, ok := in()[l]; ok {
		return w
	}
	return in()[language.English]
}

// Language is the language w writes.
func (w Words) Language() language.Code { return w.words().lang }

// words makes the zero value English.
func (w Words) words() Words {
	if w.cat == nil {
		return In(language.English)
	}
	return w
}

// say renders message id with data, in the plural form of count when one is given. A
// message missing from a language's catalogue falls back to English
// (TestCataloguesAreComplete keeps that from happening).
func (w Words) say(id string, data map[string]any, count ...int) string {
	w = w.words()
	byForm, ok := w.cat[id]
	if !ok {
		if base, _, variant := strings.Cut(id, "@"); variant {
			return w.say(base, data, count...)
		}
		if w.lang != language.English {
			return In(language.English).say(id, data, count...)
		}
		return id
	}
	text := byForm[plural.Other]
	if len(count) > 0 {
		if t, ok := byForm[plural.Cardinal.MatchPlural(w.tag, count[0], 0, 0, 0, 0)]; ok {
			text = t
		}
	}
	return fill(text, data)
}

// defaultFormality is how each language addresses customers when the shop has not
// chosen: a catalogue's plain ids are written so, and its ids suffixed "@informal" or
// "@formal" are the other way (English has one way).
var defaultFormality = map[language.Code]shops.Formality{
	language.Spanish: shops.FormalityInformal, language.French: shops.FormalityFormal,
}

// text renders message id for shop's customers: in the shop's formality (the
// catalogue's id@formality when the shop chose the way its language does not default
// to), then fitted to the shop's GSM-7 setting (see fit).
func (w Words) text(shop *shops.Shop, id string, data map[string]any, count ...int) string {
	w = w.words()
	if f := shop.Formality; f != shops.FormalityDefault && f != defaultFormality[w.lang] {
		id += "@" + string(f)
	}
	return fit(shop, w.say(id, data, count...))
}

// fill replaces each {{.Name}} in text with data's Name.
func fill(text string, data map[string]any) string {
	var b strings.Builder
	for {
		i := strings.Index(text, "{{.")
		if i < 0 {
			b.WriteString(text)
			return b.String()
		}
		j := strings.Index(text[i:], "}}")
		if j < 0 {
			b.WriteString(text)
			return b.String()
		}
		b.WriteString(text[:i])
		v := fmt.Sprint(data[text[i+3:i+j]])
		text = text[i+j+2:]
		// A value that ends a sentence's abbreviation ("3:00 p. m.") takes the
		// sentence's full stop: one dot, not two.
		if strings.HasSuffix(v, ".") && strings.HasPrefix(text, ".") && !strings.HasPrefix(text, "..") {
			text = text[1:]
		}
		b.WriteString(v)
	}
}

// When writes a moment as customers read it in texts: the shop's local day and time,
// with the date and the clock as the language writes them in the shop's country (see
// clock): "Sat 28 Nov 15:00", "Sat Nov 28 3:00 PM" in the US (month first: the
// catalogue's "when_us"), "sáb. 28 nov. a las 15:00" (in the US and Mexico too, with
// their clock), "sam. 28 nov. à 15h00", "sam. 28 nov. à 15 h" in Canada.
func (w Words) When(shop *shops.Shop, t time.Time) string {
	w = w.words()
	loc := shop.Location
	if loc == nil {
		loc = time.UTC
	}
	lt := t.In(loc)
	country := shop.Country()
	clock, hour := w.clock(country, lt)
	id := "when"
	if country == "US" {
		id = "when_us"
	}
	return w.say(id, map[string]any{
		"Weekday": w.cal.WeekdayAbbreviated(lt.Weekday()), "Day": strconv.Itoa(lt.Day()),
		"Month": w.cal.MonthAbbreviated(lt.Month()), "Time": clock,
	}, hour)
}

// clock writes local time lt as the language writes it in country (an ISO code, "" when
// unknown), after CLDR's short time formats with plain spaces (GSM-7 has no narrow
// no-break space): 12-hour in the English of the US ("3:00 PM") and the Spanish of the
// US and Mexico ("3:00 p. m."), "15 h" in the French of Canada, and 24-hour elsewhere
// with the catalogue's "time" ("15:00", "15h00"). It also returns the hour as written,
// for the plural form of the words around it ("a la 1:00", "a las 3:00").
func (w Words) clock(country string, lt time.Time) (string, int) {
	h, m := lt.Hour(), lt.Minute()
	h12 := (h+11)%12 + 1
	switch {
	case w.lang == language.English && country == "US":
		return fmt.Sprintf("%d:%02d %s", h12, m, map[bool]string{false: "AM", true: "PM"}[h >= 12]), h12
	case w.lang == language.Spanish && (country == "US" || country == "MX"):
		return fmt.Sprintf("%d:%02d %s", h12, m, map[bool]string{false: "a. m.", true: "p. m."}[h >= 12]), h12
	case w.lang == language.French && country == "CA":
		if m == 0 {
			return fmt.Sprintf("%d h", h), h
		}
		return fmt.Sprintf("%d h %02d", h, m), h
	}
	return w.say("time", map[string]any{"Hour": fmt.Sprintf("%02d", h), "Minute": fmt.Sprintf("%02d", m)}), h
}

// Duration writes a time to pay as customers read it: whole minutes, rounded down so
// the text never promises more than the hold ("30 min", "1 hour", "1 h 30 min",
// "2 hours"); at least "1 min".
func (w Words) Duration(d time.Duration) string {
	m := max(int(d/time.Minute), 1)
	switch {
	case m < 60:
		return w.say("minutes", map[string]any{"Count": m})
	case m%60 == 0:
		return w.say("hours", map[string]any{"Count": m / 60}, m/60)
	default:
		return w.say("hours_minutes", map[string]any{"Hours": m / 60, "Minutes": fmt.Sprintf("%02d", m%60)})
	}
}

// about is the data of a text about one slot.
func (w Words) about(shop *shops.Shop, service string, startsAt time.Time) map[string]any {
	return map[string]any{"Shop": shop.Name, "Service": service, "When": w.When(shop, startsAt)}
}

// Offer is the offer SMS: shop, service, local day and time, price, how to book and how
// to stop.
func (w Words) Offer(shop *shops.Shop, service string, startsAt time.Time, price int64) string {
	d := w.about(shop, service, startsAt)
	d["Price"] = w.Amount(price, shop.Currency)
	return w.text(shop, "offer", d)
}

// OfferWith is Offer naming the person whose time it is ("Cut with Ana"); staff ""
// is Offer.
func (w Words) OfferWith(shop *shops.Shop, service, staff string, startsAt time.Time, price int64) string {
	if staff == "" {
		return w.Offer(shop, service, startsAt, price)
	}
	d := w.about(shop, service, startsAt)
	d["Price"] = w.Amount(price, shop.Currency)
	d["Staff"] = staff
	return w.text(shop, "offer_with", d)
}

// ServiceWith names a booked service with the person who gives it ("Cut with Ana"), as
// the offer named them; staff "" is the service alone.
func (w Words) ServiceWith(service, staff string) string {
	if staff == "" {
		return service
	}
	return w.say("service_with", map[string]any{"Service": service, "Staff": staff})
}

// Amount writes an amount of minor units of currency as the language writes it where
// the currency is spent: "$45.00" and "€45.00" in English; "45,00 €" in Spanish and
// French, but "$45.00" in the Spanish of the US (and of Mexico, for pesos) and
// "45,00 $ US" in French.
// The digits and separators come from CLDR (golang.org/x/text/number); the spaces are
// plain ones, which GSM-7 has (CLDR's no-break spaces would make the text UCS-2).
func (w Words) Amount(minor int64, currency string) string {
	w = w.words()
	if w.lang == language.English {
		return money.Format(minor, currency)
	}
	cur := strings.ToLower(currency)
	region, symbol := currencyPlaces[cur], money.Symbol(cur)
	switch {
	case w.lang == language.French && cur == "usd":
		symbol = "$ US"
	case w.lang == language.Spanish && cur == "mxn":
		symbol = "$" // as Mexico writes its pesos
	}
	tag := xlanguage.Make(string(w.lang) + "-" + region)
	if region == "" {
		tag = w.tag
	}
	value := float64(minor) / float64(money.MinorUnits(cur))
	digits := message.NewPrinter(tag).Sprint(number.Decimal(value, number.Scale(money.Decimals(cur))))
	digits = strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return ' '
		}
		return r
	}, digits)
	if w.lang == language.Spanish && (region == "US" || region == "MX") {
		return symbol + digits
	}
	return digits + " " + symbol
}

// currencyPlaces is where each currency is spent, for the conventions of writing its
// amounts (a euro amount in Spanish as in Spain, a dollar one as in the US).
var currencyPlaces = map[string]string{"usd": "US", "mxn": "MX", "cad": "CA", "gbp": "GB", "chf": "CH"}

// Link carries a payment link: the answer to a winning YES, or the text that follows
// when the link could not be made in time. payWithin is how long the customer has to
// pay (see Duration).
func (w Words) Link(shop *shops.Shop, service string, startsAt time.Time, url string, payWithin time.Duration) string {
	d := w.about(shop, service, startsAt)
	d["URL"], d["Within"] = url, w.Duration(payWithin)
	return w.text(shop, "link", d)
}

// LinkProtected is Link for a shop with no-show protection (issue 48): the payment page
// takes a deposit (deposit), or only keeps a card (card), or the price (any other
// mode); and, when the shop's policy makes a cancellation late, one line saying until
// when it is free and what it costs after ("Free to cancel until Fri 21 Nov 14:00;
// $20.00 after."), or, when it is late already at now, what cancelling costs.
func (w Words) LinkProtected(shop *shops.Shop, service string, startsAt time.Time, url string, payWithin time.Duration, now time.Time) string {
	d := w.about(shop, service, startsAt)
	d["URL"], d["Within"] = url, w.Duration(payWithin)
	id := "link"
	switch shop.PaymentMode {
	case shops.PaymentDeposit:
		id = "link_deposit"
	case shops.PaymentCard:
		id = "link_card"
	}
	out := w.text(shop, id, d)
	if line := w.PolicyLine(shop, startsAt, now); line != "" {
		out += " " + line
	}
	return out
}

// PolicyLine says in one line until when a booking starting at startsAt is free to
// cancel by the shop's policy and what a later cancellation costs; when that time has
// passed at now (a booking made inside the policy's hours), what cancelling costs now;
// "" when it costs nothing (no late-cancel fee, no deposit kept). A deposit shop with a
// fee says both: a late cancellation keeps the deposit and charges the fee.
func (w Words) PolicyLine(shop *shops.Shop, startsAt, now time.Time) string {
	p := shop.Protection
	free := startsAt.Add(-time.Duration(p.LateCancelHours) * time.Hour)
	late := !now.Before(free)
	d := map[string]any{"Until": w.When(shop, free), "Fee": w.Amount(p.LateCancelFeeCents, shop.Currency)}
	deposit := shop.PaymentMode == shops.PaymentDeposit
	switch {
	case p.LateCancelFeeCents > 0 && deposit && late:
		return w.words().say("policy_line_deposit_fee_late", d)
	case p.LateCancelFeeCents > 0 && deposit:
		return w.words().say("policy_line_deposit_fee", d)
	case p.LateCancelFeeCents > 0 && late:
		return w.words().say("policy_line_late", d)
	case p.LateCancelFeeCents > 0:
		return w.words().say("policy_line", d)
	case deposit && late:
		return w.words().say("policy_line_deposit_late", d)
	case deposit:
		return w.words().say("policy_line_deposit", d)
	}
	return ""
}

// BookedLinkFollows answers a winning YES whose payment link is not ready yet.
func (w Words) BookedLinkFollows(shop *shops.Shop, service string, startsAt time.Time) string {
	return w.text(shop, "booked_link_follows", w.about(shop, service, startsAt))
}

// CheckoutItem names the slot on the payment page (the line item the customer pays
// for).
func (w Words) CheckoutItem(shop *shops.Shop, service string, startsAt time.Time) string {
	return w.words().say("checkout_item", w.about(shop, service, startsAt))
}

// DepositItem is the line item of a deposit's payment page (issue 48): the same as
// CheckoutItem's, said to be a deposit.
func (w Words) DepositItem(shop *shops.Shop, service string, startsAt time.Time) string {
	return w.words().say("deposit_item", w.about(shop, service, startsAt))
}

// NoShowFeeItem is what a no-show fee's payment says it is (the customer's statement,
// the shop's Stripe dashboard).
func (w Words) NoShowFeeItem(shop *shops.Shop, service string, startsAt time.Time) string {
	return w.words().say("no_show_fee_item", w.about(shop, service, startsAt))
}

// LateCancelFeeItem is what a late cancellation's fee says it is.
func (w Words) LateCancelFeeItem(shop *shops.Shop, service string, startsAt time.Time) string {
	return w.words().say("late_cancel_fee_item", w.about(shop, service, startsAt))
}

// FeePayLink asks a customer whose bank wanted them to confirm a fee (fee, written as
// Amount writes it) to pay it themselves on the page at url.
func (w Words) FeePayLink(shop *shops.Shop, service string, startsAt time.Time, fee, url string) string {
	d := w.about(shop, service, startsAt)
	d["Fee"], d["URL"] = fee, url
	return w.text(shop, "fee_pay_link", d)
}

// Confirmed tells a customer they are booked (the payment went through, or the shop
// takes no payment).
func (w Words) Confirmed(shop *shops.Shop, service string, startsAt time.Time) string {
	return w.text(shop, "confirmed", w.about(shop, service, startsAt))
}

// Lapsed tells a customer their hold ended because the payment did not go through.
func (w Words) Lapsed(shop *shops.Shop, service string, startsAt time.Time) string {
	return w.text(shop, "lapsed", w.about(shop, service, startsAt))
}

// Refunded tells a customer their late payment was refunded.
func (w Words) Refunded(shop *shops.Shop, service string, startsAt time.Time) string {
	return w.text(shop, "refunded", w.about(shop, service, startsAt))
}

// DuplicateRefunded tells a customer that a second payment for a slot they had already
// paid for was refunded.
func (w Words) DuplicateRefunded(shop *shops.Shop, service string, startsAt time.Time) string {
	return w.text(shop, "duplicate_refunded", w.about(shop, service, startsAt))
}

// Cancelled confirms a customer's cancellation by text of their booking of service at
// startsAt; refunded says their payment goes back.
func (w Words) Cancelled(shop *shops.Shop, service string, startsAt time.Time, refunded bool) string {
	if refunded {
		return w.text(shop, "cancelled_refund", w.about(shop, service, startsAt))
	}
	return w.text(shop, "cancelled", w.about(shop, service, startsAt))
}

// CancelledLate confirms a customer's cancellation that came less than hours before the
// start, with what the policy they accepted then does (issue 48): the deposit kept, a fee
// of feeCents (0: none) charged to their card, or both; refunded says a full payment
// goes back all the same (a checkout's, with a fee).
func (w Words) CancelledLate(shop *shops.Shop, service string, startsAt time.Time, hours int, depositKept, refunded bool, feeCents int64) string {
	d := w.about(shop, service, startsAt)
	d["Hours"] = hours
	id := "late_deposit_kept"
	switch {
	case depositKept && feeCents > 0:
		id = "late_deposit_kept_fee"
	case refunded && feeCents > 0:
		id = "late_refund_fee"
	case feeCents > 0:
		id = "late_fee"
	}
	d["Terms"] = w.words().say(id, map[string]any{"Fee": w.Amount(feeCents, shop.Currency)})
	return w.text(shop, "cancelled_late", d)
}

// CancelAsked answers a booked customer's request to cancel in a shop that does not let
// customers cancel by text: the request is with the team, who will answer.
func (w Words) CancelAsked(shop *shops.Shop) string {
	return w.text(shop, "cancel_asked", shopOnly(shop))
}

// OptedOutBooked answers the STOP (or the bare CANCEL) of a customer who holds a
// booking of service at startsAt: no more offers, the booking stands, and how to cancel
// it by text.
func (w Words) OptedOutBooked(shop *shops.Shop, service string, startsAt time.Time) string {
	return w.text(shop, "opted_out_booked", w.about(shop, service, startsAt))
}

// CancelRefunded tells a customer that the payment of a booking they cancelled was
// refunded.
func (w Words) CancelRefunded(shop *shops.Shop, service string, startsAt time.Time) string {
	return w.text(shop, "cancel_refunded", w.about(shop, service, startsAt))
}

// Clarify asks a customer whose reply to an offer was unsure (a reaction, a question,
// "maybe") to answer it plainly, naming the slot.
func (w Words) Clarify(shop *shops.Shop, service string, startsAt time.Time) string {
	return w.text(shop, "clarify", w.about(shop, service, startsAt))
}

// MoveUpOffer offers a customer who holds a booking at from an earlier time for it,
// startsAt: both times, the service, and that their booking stays unless they say YES.
func (w Words) MoveUpOffer(shop *shops.Shop, service string, startsAt, from time.Time) string {
	d := w.about(shop, service, startsAt)
	d["From"] = w.When(shop, from)
	return w.text(shop, "move_up_offer", d)
}

// MovedUp answers the YES that moved a customer's booking from from to startsAt,
// naming both times.
func (w Words) MovedUp(shop *shops.Shop, service string, startsAt, from time.Time) string {
	d := w.about(shop, service, startsAt)
	d["From"] = w.When(shop, from)
	return w.text(shop, "move_up_booked", d)
}

// MoveUpTaken answers a YES to a move-up offer that came too late: the earlier time is
// gone and the booking at from stays.
func (w Words) MoveUpTaken(shop *shops.Shop, from time.Time) string {
	return w.text(shop, "move_up_taken", map[string]any{"Shop": shop.Name, "From": w.When(shop, from)})
}

// shopOnly is the data of a text that names only the shop.
func shopOnly(shop *shops.Shop) map[string]any { return map[string]any{"Shop": shop.Name} }

// Taken answers a YES that came too late.
func (w Words) Taken(shop *shops.Shop) string { return w.text(shop, "taken", shopOnly(shop)) }

// NoOffer answers a YES from a customer who holds no live offer.
func (w Words) NoOffer(shop *shops.Shop) string { return w.text(shop, "no_offer", shopOnly(shop)) }

// Declined answers a NO.
func (w Words) Declined(shop *shops.Shop) string { return w.text(shop, "declined", shopOnly(shop)) }

// OptedOut answers a STOP.
func (w Words) OptedOut(shop *shops.Shop) string { return w.text(shop, "opted_out", shopOnly(shop)) }

// OptedIn answers a START.
func (w Words) OptedIn(shop *shops.Shop) string { return w.text(shop, "opted_in", shopOnly(shop)) }

// OptedOutYes answers a YES from a customer who said STOP: they cannot take a slot.
func (w Words) OptedOutYes(shop *shops.Shop) string {
	return w.text(shop, "opted_out_yes", shopOnly(shop))
}

// Help answers HELP: what the texts are, the keywords, how to reach the shop (its
// HelpContact, or else its SMS number) and that the carrier's rates may apply.
func (w Words) Help(shop *shops.Shop) string {
	return w.text(shop, "help", map[string]any{"Shop": shop.Name, "Contact": cmp.Or(shop.HelpContact, shop.SMSNumber)})
}

// Unrecognized answers a reply that is none of the keywords.
func (w Words) Unrecognized(shop *shops.Shop) string {
	return w.text(shop, "unrecognized", shopOnly(shop))
}

// UnknownNumber answers a text to a number no shop uses: the one text with no shop to
// name.
func (w Words) UnknownNumber() string { return w.say("unknown_number", nil) }

// RetryLater answers a reply that could not be handled now (the database or Redis is
// unavailable) before its shop was known: nothing was decided, the customer may send it
// again. RetryLaterAt is the answer once the shop is known.
func (w Words) RetryLater() string { return w.say("retry_later", nil) }

// RetryLaterAt is RetryLater naming the shop, for a reply whose shop is known.
func (w Words) RetryLaterAt(shop *shops.Shop) string {
	return w.text(shop, "retry_later_at", shopOnly(shop))
}

// English writes the texts in English: for a text whose reader's language is not known
// (an answer to a number no shop owns, or one that could not be read).
var English = Words{}

// InboxAck acknowledges a customer's text that went to a person (the owner's inbox),
// once a day a conversation: the rest of the thread is the owner's.
func (w Words) InboxAck(shop *shops.Shop) string { return w.text(shop, "inbox_ack", shopOnly(shop)) }

// InboxAlert tells the owner, at the shop's alert number, that a customer's text waits
// in the inbox: who (their name, or their number masked) and the text's first 100
// characters.
func (w Words) InboxAlert(shop *shops.Shop, who, text string) string {
	return w.text(shop, "inbox_alert", map[string]any{"Shop": shop.Name, "Who": who, "Text": alertQuote(text)})
}

// InboxCancelAlert is InboxAlert for a booked customer's request to cancel, in a shop
// that does not let customers cancel by text: it says it is a cancellation, and of which
// booking.
func (w Words) InboxCancelAlert(shop *shops.Shop, who, service string, startsAt time.Time, text string) string {
	d := w.about(shop, service, startsAt)
	d["Who"], d["Text"] = who, alertQuote(text)
	return w.text(shop, "inbox_cancel_alert", d)
}

// alertQuote is the first 100 characters of a text an alert quotes.
func alertQuote(text string) string {
	if r := []rune(text); len(r) > 100 {
		return string(r[:100]) + "…"
	}
	return text
}

// NotifyPhoneCode carries the code that confirms a number as the shop's alert number,
// texted to that number; it says what to do with it and that a stranger may ignore it.
func (w Words) NotifyPhoneCode(shop *shops.Shop, code string) string {
	return w.text(shop, "notify_phone_code", map[string]any{"Shop": shop.Name, "Code": code})
}

// Date writes a day as customers read it in texts: the shop's local date, without the
// time, as the language writes it in the shop's country: "Sat 12 Dec", "Sat Dec 12" in
// the US (month first, as When), "sáb. 12 dic.", "sam. 12 déc.".
func (w Words) Date(shop *shops.Shop, t time.Time) string {
	w = w.words()
	loc := shop.Location
	if loc == nil {
		loc = time.UTC
	}
	lt := t.In(loc)
	id := "date"
	if shop.Country() == "US" {
		id = "date_us"
	}
	return w.say(id, map[string]any{
		"Weekday": w.cal.WeekdayAbbreviated(lt.Weekday()), "Day": strconv.Itoa(lt.Day()),
		"Month": w.cal.MonthAbbreviated(lt.Month()),
	})
}

// Paused answers a customer's PAUSE: no offers until the day of until (Date), how to
// get them sooner (RESUME) and how to stop.
func (w Words) Paused(shop *shops.Shop, until time.Time) string {
	return w.text(shop, "paused", map[string]any{"Shop": shop.Name, "Until": w.Date(shop, until)})
}

// Resumed answers a customer's RESUME: offers again, and how to pause or stop them.
func (w Words) Resumed(shop *shops.Shop) string { return w.text(shop, "resumed", shopOnly(shop)) }

// JoinBudgetAlert tells the owner, at the shop's alert number, that the join page spent
// its hourly budget of perHour confirmation texts and sends none until it refills:
// maybe someone abuses the page.
func (w Words) JoinBudgetAlert(shop *shops.Shop, perHour int) string {
	return w.text(shop, "join_budget_alert", map[string]any{"Shop": shop.Name, "Count": perHour})
}
