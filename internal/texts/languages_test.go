package texts_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

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
		for id := range cat {
			require.Contains(t, en, id, "%s has %q, which English lacks", l, id)
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
		language.Spanish: "sáb. 28 nov. 15:00",
		language.French:  "sam. 28 nov. 15h00",
	} {
		require.Equal(t, want, texts.In(l).When(shop, at), l)
	}
	require.Equal(t, "Sat 28 Nov 15:00", texts.In("de").When(shop, at), "an unknown language is English")
	require.Equal(t, "Sat 28 Nov 15:00", shop.When(at), "English is the shop's own format")
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

// TestSegments prints, for every text in every language with a 20-character shop name
// and service, its encoding and segment count (segments cost money), and fails when an
// offer needs more than two.
func TestSegments(t *testing.T) {
	t.Parallel()
	london, err := time.LoadLocation("Europe/London")
	require.NoError(t, err)
	shop := shops.Shop{Name: "Twenty Char Barbers!", Location: london, Currency: "eur", SMSNumber: "+447700900001"}
	require.Len(t, shop.Name, 20)
	const service = "Colour and blow-dry!"
	require.Len(t, service, 20)
	at := time.Date(2026, 11, 28, 15, 0, 0, 0, time.UTC)
	url := "https://checkout.stripe.com/c/pay/cs_test_a1b2c3d4e5f6g7h8i9j0"
	for _, l := range language.All {
		w := texts.In(l)
		all := []struct{ name, body string }{
			{"offer", w.Offer(shop, service, at, 4500)},
			{"link", w.Link(shop, service, at, url, 31*time.Minute)},
			{"booked_link_follows", w.BookedLinkFollows(shop, service, at)},
			{"confirmed", w.Confirmed(shop, service, at)},
			{"lapsed", w.Lapsed(shop, service, at)},
			{"refunded", w.Refunded(shop, service, at)},
			{"duplicate_refunded", w.DuplicateRefunded(shop, service, at)},
			{"clarify", w.Clarify(shop, service, at)},
			{"taken", w.Taken(shop)},
			{"no_offer", w.NoOffer(shop)},
			{"declined", w.Declined(shop)},
			{"opted_out", w.OptedOut(shop)},
			{"opted_in", w.OptedIn(shop)},
			{"opted_out_yes", w.OptedOutYes(shop)},
			{"help", w.Help(shop)},
			{"unrecognized", w.Unrecognized(shop)},
			{"inbox_ack", w.InboxAck(shop)},
			{"unknown_number", w.UnknownNumber()},
			{"retry_later", w.RetryLater()},
		}
		for _, x := range all {
			enc := "UCS-2"
			if sms.IsGSM7(x.body) {
				enc = "GSM-7"
			}
			n := sms.Segments(x.body)
			t.Logf("%s %-20s %-5s %d segment(s), %3d chars: %s", l, x.name, enc, n, len([]rune(x.body)), x.body)
			require.NotContains(t, x.body, "<nil>", "%s %s: a placeholder without data", l, x.name)
			require.True(t, strings.HasPrefix(x.body, shop.Name) || x.name == "unknown_number" || x.name == "retry_later",
				"%s %s starts with the shop's name: %q", l, x.name, x.body)
			if x.name == "offer" {
				require.LessOrEqual(t, n, 2, "%s offer is %d segments: %q", l, n, x.body)
			}
		}
	}
}

// TestInboxAlertIsShort: the owner's alert quotes at most 100 characters of the text.
func TestInboxAlertIsShort(t *testing.T) {
	t.Parallel()
	shop := shops.Shop{Name: "Joe's Barbers"}
	long := strings.Repeat("é", 150)
	got := texts.English.InboxAlert(shop, "Ana", long)
	require.Equal(t, "Joe's Barbers inbox: Ana: "+strings.Repeat("é", 100)+"…", got)
	require.Equal(t, "Bandeja de Joe's Barbers: +1555•••0123: hola", texts.In(language.Spanish).InboxAlert(shop, "+1555•••0123", "hola"))
}
