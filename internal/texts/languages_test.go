package texts_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/sms"
	"github.com/slotrecovery/slotrecovery/internal/texts"
)

// TestCataloguesAreComplete: every language's catalogue has exactly the messages the
// English one has, with the same placeholders, so no customer ever reads a message
// fallen back to English or a template's hole.
func TestCataloguesAreComplete(t *testing.T) {
	t.Parallel()
	read := func(l language.Code) map[string]any {
		t.Helper()
		b, err := os.ReadFile("catalogue/" + string(l) + ".json")
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(b, &m))
		return m
	}
	placeholders := func(v any) []string {
		var all []string
		var walk func(any)
		walk = func(v any) {
			switch v := v.(type) {
			case string:
				for _, part := range strings.Split(v, "{{.")[1:] {
					all = append(all, strings.SplitN(part, "}}", 2)[0])
				}
			case map[string]any:
				for _, x := range v {
					walk(x)
				}
			}
		}
		walk(v)
		slices.Sort(all)
		return slices.Compact(all)
	}
	en := read(language.English)
	for _, l := range language.All {
		cat := read(l)
		for id, msg := range en {
			other, ok := cat[id]
			require.True(t, ok, "%s has no %q", l, id)
			require.Equal(t, placeholders(msg), placeholders(other), "%s %q uses other placeholders than English", l, id)
		}
		for id, msg := range cat {
			// id@formal and id@informal are id in the way of addressing the language
			// does not default to.
			base, variant, ok := strings.Cut(id, "@")
			require.Contains(t, en, base, "%s has %q, which English lacks", l, id)
			if ok {
				require.Contains(t, []string{"formal", "informal"}, variant, "%s %q", l, id)
				require.Equal(t, placeholders(en[base]), placeholders(msg), "%s %q uses other placeholders than English", l, id)
			}
		}
	}
}

// TestWhenInEachLanguage: weekday and month names come from CLDR, the clock from each
// catalogue.
func TestWhenInEachLanguage(t *testing.T) {
	t.Parallel()
	shop := shops.Shop{Name: "Joe's Barbers", Location: time.UTC}
	at := time.Date(2026, 11, 28, 15, 0, 0, 0, time.UTC)
	for l, want := range map[language.Code]string{
		language.English: "Sat 28 Nov 15:00",
		language.Spanish: "sáb. 28 nov. a las 15:00",
		language.French:  "sam. 28 nov. à 15h00",
	} {
		require.Equal(t, want, texts.In(l).When(&shop, at), l)
	}
	require.Equal(t, "Sat 28 Nov 15:00", texts.In("de").When(&shop, at), "an unknown language is English")
	require.Equal(t, "Sat 28 Nov 15:00", shop.When(at), "English is the shop's own format")
}

// TestClocks: the clock is written as the text's language writes it in the shop's
// country (its time zone's), and Spanish says "a la" before one o'clock.
func TestClocks(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		l         language.Code
		zone      string
		hour, min int
		want      string
	}{
		{language.English, "America/New_York", 15, 0, "Sat Nov 28 3:00 PM"},
		{language.English, "America/New_York", 0, 5, "Sat Nov 28 12:05 AM"},
		{language.English, "America/Los_Angeles", 9, 30, "Sat Nov 28 9:30 AM"},
		{language.English, "Europe/London", 15, 0, "Sat 28 Nov 15:00"},
		{language.English, "America/Toronto", 15, 0, "Sat 28 Nov 15:00"},
		{language.Spanish, "America/Los_Angeles", 15, 0, "sáb. 28 nov. a las 3:00 p. m."},
		{language.Spanish, "America/Mexico_City", 13, 30, "sáb. 28 nov. a la 1:30 p. m."},
		{language.Spanish, "America/Mexico_City", 9, 0, "sáb. 28 nov. a las 9:00 a. m."},
		{language.Spanish, "Europe/Madrid", 13, 0, "sáb. 28 nov. a las 13:00"},
		{language.Spanish, "Europe/Madrid", 1, 0, "sáb. 28 nov. a la 01:00"},
		{language.French, "America/Toronto", 15, 0, "sam. 28 nov. à 15 h"},
		{language.French, "America/Montreal", 15, 30, "sam. 28 nov. à 15 h 30"},
		{language.French, "Europe/Paris", 15, 0, "sam. 28 nov. à 15h00"},
		{language.French, "America/New_York", 15, 0, "sam. 28 nov. à 15h00"},
	} {
		loc, err := time.LoadLocation(c.zone)
		require.NoError(t, err)
		shop := shops.Shop{Name: "Joe's Barbers", Timezone: c.zone, Location: loc}
		at := time.Date(2026, 11, 28, c.hour, c.min, 0, 0, loc)
		require.Equal(t, c.want, texts.In(c.l).When(&shop, at), "%s %s", c.l, c.zone)
	}
	mexico, err := time.LoadLocation("America/Mexico_City")
	require.NoError(t, err)
	shop := shops.Shop{Name: "Ana", Timezone: "America/Mexico_City", Location: mexico}
	require.Contains(t, texts.In(language.Spanish).DuplicateRefunded(&shop, "Corte", time.Date(2026, 11, 28, 15, 0, 0, 0, mexico)),
		"del sab. 28 nov. a las 3:00 p. m. Te hemos", "the clock's dot ends the sentence")
}

// TestAmountInEachLanguage: an amount is written as the language writes it where the
// currency is spent (CLDR's digits and separators), with plain spaces (GSM-7).
func TestAmountInEachLanguage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		l        language.Code
		minor    int64
		currency string
		want     string
	}{
		{language.English, 4500, "usd", "$45.00"},
		{language.English, 4500, "eur", "€45.00"},
		{language.Spanish, 4500, "eur", "45,00 €"},
		{language.Spanish, 123450, "eur", "1.234,50 €"},
		{language.Spanish, 4500, "usd", "$45.00"},
		{language.Spanish, 123450, "mxn", "$1,234.50"},
		{language.French, 4500, "eur", "45,00 €"},
		{language.French, 123450, "eur", "1 234,50 €"},
		{language.French, 4500, "usd", "45,00 $ US"},
		{language.French, 4500, "chf", "45,00 CHF"},
		{language.French, 4500, "jpy", "4 500 ¥"},
		{language.Spanish, 12345, "kwd", "12,345 KWD"},
	} {
		got := texts.In(c.l).Amount(c.minor, c.currency)
		require.Equal(t, c.want, got, "%s %d %s", c.l, c.minor, c.currency)
		require.NotContains(t, got, "\u00a0", "no-break spaces are not GSM-7")
	}
}

// TestDurationInEachLanguage: plural forms come from the catalogues' CLDR rules.
func TestDurationInEachLanguage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		l    language.Code
		d    time.Duration
		want string
	}{
		{language.Spanish, 31 * time.Minute, "31 min"},
		{language.Spanish, time.Hour, "1 hora"},
		{language.Spanish, 2 * time.Hour, "2 horas"},
		{language.French, time.Hour, "1 heure"},
		{language.French, 3 * time.Hour, "3 heures"},
		{language.French, 90 * time.Minute, "1 h 30"},
	} {
		require.Equal(t, c.want, texts.In(c.l).Duration(c.d), "%s %s", c.l, c.d)
	}
}

// segmentCase is one text of TestSegments: its message and what it says for one shop
// at one moment.
type segmentCase struct {
	name string
	// oneSegment marks the texts that must fit one segment: the offer and the answers
	// to its replies that the customer gets most.
	oneSegment bool
	text       func(w texts.Words, shop *shops.Shop, at time.Time) string
}

// segmentCases are every text the customers get.
var segmentCases = func() []segmentCase {
	const service = "Colour and blow-dry!"
	url := "https://checkout.stripe.com/c/pay/cs_test_a1b2c3d4e5f6g7h8i9j0"
	slot := func(f func(texts.Words, *shops.Shop, string, time.Time) string) func(texts.Words, *shops.Shop, time.Time) string {
		return func(w texts.Words, shop *shops.Shop, at time.Time) string { return f(w, shop, service, at) }
	}
	only := func(f func(texts.Words, *shops.Shop) string) func(texts.Words, *shops.Shop, time.Time) string {
		return func(w texts.Words, shop *shops.Shop, _ time.Time) string { return f(w, shop) }
	}
	return []segmentCase{
		{"offer", true, func(w texts.Words, shop *shops.Shop, at time.Time) string { return w.Offer(shop, service, at, 4500) }},
		{"clarify", true, slot(texts.Words.Clarify)},
		{"taken", true, only(texts.Words.Taken)},
		// Two times and a service: one segment in English with these 20-character names
		// (TestMoveUpTexts), two in Spanish and French, whose dates are longer.
		{"move_up_offer", false, func(w texts.Words, shop *shops.Shop, at time.Time) string {
			return w.MoveUpOffer(shop, service, at, at.AddDate(0, 0, 2).Add(3*time.Hour))
		}},
		{"move_up_booked", true, func(w texts.Words, shop *shops.Shop, at time.Time) string {
			return w.MovedUp(shop, service, at, at.AddDate(0, 0, 2).Add(3*time.Hour))
		}},
		{"move_up_taken", true, func(w texts.Words, shop *shops.Shop, at time.Time) string {
			return w.MoveUpTaken(shop, at.AddDate(0, 0, 2))
		}},
		{"link", false, func(w texts.Words, shop *shops.Shop, at time.Time) string {
			return w.Link(shop, service, at, url, 31*time.Minute)
		}},
		{"booked_link_follows", false, slot(texts.Words.BookedLinkFollows)},
		{"confirmed", false, slot(texts.Words.Confirmed)},
		{"lapsed", false, slot(texts.Words.Lapsed)},
		{"refunded", false, slot(texts.Words.Refunded)},
		{"duplicate_refunded", false, slot(texts.Words.DuplicateRefunded)},
		// The answer to a booked customer's "can't make it" (issue 45).
		{"cancelled", true, func(w texts.Words, shop *shops.Shop, at time.Time) string {
			return w.Cancelled(shop, service, at, false)
		}},
		{"cancelled_refund", false, func(w texts.Words, shop *shops.Shop, at time.Time) string {
			return w.Cancelled(shop, service, at, true)
		}},
		{"cancel_asked", false, only(texts.Words.CancelAsked)},
		{"opted_out_booked", false, slot(texts.Words.OptedOutBooked)},
		{"cancel_refunded", false, slot(texts.Words.CancelRefunded)},
		{"no_offer", false, only(texts.Words.NoOffer)},
		{"declined", false, only(texts.Words.Declined)},
		{"opted_out", false, only(texts.Words.OptedOut)},
		{"opted_in", false, only(texts.Words.OptedIn)},
		{"opted_out_yes", false, only(texts.Words.OptedOutYes)},
		{"help", false, only(texts.Words.Help)},
		{"unrecognized", false, only(texts.Words.Unrecognized)},
		{"inbox_ack", false, only(texts.Words.InboxAck)},
		{"retry_later_at", false, only(texts.Words.RetryLaterAt)},
		{"unknown_number", false, func(w texts.Words, _ *shops.Shop, _ time.Time) string { return w.UnknownNumber() }},
		{"retry_later", false, func(w texts.Words, _ *shops.Shop, _ time.Time) string { return w.RetryLater() }},
		// The answers to PAUSE and RESUME (issue 46), a date 14 days on.
		{"paused", true, func(w texts.Words, shop *shops.Shop, at time.Time) string {
			return w.Paused(shop, at.AddDate(0, 0, 14))
		}},
		{"resumed", true, only(texts.Words.Resumed)},
		// The owner's alert when the join page's hourly budget is spent.
		{"join_budget_alert", false, func(w texts.Words, shop *shops.Shop, _ time.Time) string { return w.JoinBudgetAlert(shop, 30) }},
	}
}()

// segmentsTable asks TestSegments to log its every row (some 40,000 lines: not by
// default, since go test -json, as scripts/test.sh runs it, is verbose):
//
//	go test ./internal/texts -run TestSegments -v -args -segments-table
var segmentsTable = flag.Bool("segments-table", false, "TestSegments: log every text × language × formality × zone × weekday × month")

// TestSegments renders every text in every language and both formalities, with a
// 20-character shop name and service, on every weekday of every month (the longest
// names: "sáb.", "sept.", "août") at 12:30 (the longest clocks: "12:30 p. m."), in a shop
// of each country whose clock differs, and logs each text's most segments and its
// encodings (segments cost money; -segments-table logs every row). With gsm7 prefer, an
// offer, a clarify and a taken answer must be one segment.
func TestSegments(t *testing.T) {
	t.Parallel()
	name := "Twenty Char Barbers!"
	require.Len(t, name, 20)
	zones := []string{"Europe/London", "America/New_York", "America/Mexico_City", "America/Toronto"}
	type key struct {
		l    language.Code
		f    shops.Formality
		name string
	}
	worst := map[key]int{}
	encodings := map[key]map[string]bool{}
	var rows []string
	for _, l := range language.All {
		for _, f := range []shops.Formality{shops.FormalityInformal, shops.FormalityFormal} {
			for _, zone := range zones {
				loc, err := time.LoadLocation(zone)
				require.NoError(t, err)
				shop := shops.Shop{Name: name, Timezone: zone, Location: loc, Currency: "eur", SMSNumber: "+447700900001", Formality: f}
				for month := time.January; month <= time.December; month++ {
					for day := 1; day <= 7; day++ {
						at := time.Date(2026, month, day, 12, 30, 0, 0, loc)
						for _, c := range segmentCases {
							body := c.text(texts.In(l), &shop, at)
							enc := "UCS-2"
							if sms.IsGSM7(body) {
								enc = "GSM-7"
							}
							n := sms.Segments(body)
							k := key{l, f, c.name}
							worst[k] = max(worst[k], n)
							if encodings[k] == nil {
								encodings[k] = map[string]bool{}
							}
							encodings[k][enc] = true
							if *segmentsTable {
								rows = append(rows, fmt.Sprintf("%s %-8s %-19s %-19s %s %s %-5s %d segment(s), %3d chars: %s",
									l, f, zone, c.name, at.Weekday().String()[:3], month.String()[:3], enc, n, len([]rune(body)), body))
							}
							require.NotContains(t, body, "<nil>", "%s %s: a placeholder without data", l, c.name)
							require.True(t, strings.HasPrefix(body, shop.Name) || c.name == "unknown_number" || c.name == "retry_later",
								"%s %s starts with the shop's name: %q", l, c.name, body)
							if c.oneSegment {
								assert.Equal(t, 1, n, "%s %s %s %s: %d segments, %d chars: %q", l, f, zone, c.name, n, len([]rune(body)), body)
							}
						}
					}
				}
			}
		}
	}
	for _, r := range rows {
		t.Log(r)
	}
	above := 0
	for _, l := range language.All {
		for _, f := range []shops.Formality{shops.FormalityInformal, shops.FormalityFormal} {
			for _, c := range segmentCases {
				k := key{l, f, c.name}
				if worst[k] > 1 {
					above++
				}
				t.Logf("%s %-8s %-19s at most %d segment(s), %v", l, f, c.name, worst[k], slices.Sorted(maps.Keys(encodings[k])))
			}
		}
	}
	t.Logf("%d of %d texts (language × formality × text) above 1 segment somewhere", above, len(worst))
}

// TestGSM7Exact: a shop that keeps its accents gets them, whatever the segments; one
// that prefers GSM-7 gets them folded only where that saves a segment.
func TestGSM7Exact(t *testing.T) {
	t.Parallel()
	shop := shops.Shop{Name: "Twenty Char Barbers!", Location: time.UTC, Currency: "eur", SMSNumber: "+447700900001"}
	at := time.Date(2026, 11, 28, 15, 0, 0, 0, time.UTC) // a Saturday: "sáb."
	prefer := texts.In(language.Spanish).Offer(&shop, "Manicura", at, 4500)
	require.True(t, sms.IsGSM7(prefer), prefer)
	require.Contains(t, prefer, "sab. 28 nov. a las 15:00")
	shop.GSM7 = shops.GSM7Exact
	exact := texts.In(language.Spanish).Offer(&shop, "Manicura", at, 4500)
	require.Contains(t, exact, "sáb. 28 nov. a las 15:00")
	require.False(t, sms.IsGSM7(exact))
	// One UCS-2 segment either way: folding would save nothing, the accent stays.
	shop.GSM7 = shops.GSM7Prefer
	require.Equal(t, "Lo sentimos, este número no acepta respuestas.", texts.In(language.Spanish).UnknownNumber())
	short := shops.Shop{Name: "Ana", Location: time.UTC}
	require.Equal(t, "Ana: sin problema, te avisaremos de la próxima cita libre.", texts.In(language.Spanish).Declined(&short))
	require.Equal(t, "Ana: ¡La cita de Manicura del sab. 28 nov. a las 15:00 es tuya! Te enviamos el enlace de pago en otro mensaje.",
		texts.In(language.Spanish).BookedLinkFollows(&short, "Manicura", at), "two UCS-2 segments folded to one GSM-7")
}

// TestFoldGSM7: letters outside GSM-7 become their base, those GSM-7 has stay.
func TestFoldGSM7(t *testing.T) {
	t.Parallel()
	require.Equal(t, "sab. aout créneau à été recu, l'équipe ... oeuvre - Ñandu é è à ü ñ Ç 👍",
		texts.FoldGSM7("sáb. août créneau à été reçu, l’équipe … œuvre – Ñandú é è à ü ñ Ç 👍"))
}

// TestInboxAlertIsShort: the owner's alert quotes at most 100 characters of the text.
func TestInboxAlertIsShort(t *testing.T) {
	t.Parallel()
	shop := shops.Shop{Name: "Joe's Barbers"}
	long := strings.Repeat("é", 150)
	got := texts.English.InboxAlert(&shop, "Ana", long)
	// "…" is UCS-2, which would make the alert two segments: it is folded to "...".
	require.Equal(t, "Joe's Barbers inbox: Ana: "+strings.Repeat("é", 100)+"...", got)
	require.Equal(t, "Bandeja de Joe's Barbers: +1555•••0123: hola", texts.In(language.Spanish).InboxAlert(&shop, "+1555•••0123", "hola"))
}
