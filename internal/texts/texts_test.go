package texts_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/sms"
	"github.com/slotrecovery/slotrecovery/internal/texts"
)

func TestDuration(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		30 * time.Minute:                "30 min",
		30*time.Minute + 59*time.Second: "30 min",
		0:                               "1 min",
		time.Hour:                       "1 hour",
		90 * time.Minute:                "1 h 30 min",
		2 * time.Hour:                   "2 hours",
		24 * time.Hour:                  "24 hours",
	} {
		if got := texts.English.Duration(d); got != want {
			t.Errorf("Duration(%s) = %q, want %q", d, got, want)
		}
	}
}

// TestTextsFitOneSegment: with a typical shop name and service, the texts customers get
// most (offer, link, taken, confirmation) are one GSM-7 segment each.
func TestTextsFitOneSegment(t *testing.T) {
	t.Parallel()
	london, err := time.LoadLocation("Europe/London")
	if err != nil {
		t.Fatal(err)
	}
	shop := shops.Shop{Name: "Ana's Salon", Location: london, Currency: "gbp", SMSNumber: "+447700900001"}
	at := time.Date(2026, 11, 28, 15, 0, 0, 0, time.UTC)
	for name, body := range map[string]string{
		"offer":     texts.English.Offer(&shop, "Haircut", at, 4500),
		"link":      texts.English.Link(&shop, "Haircut", at, "https://checkout.stripe.com/c/pay/cs_test_a1b2c3d4e5", 31*time.Minute),
		"taken":     texts.English.Taken(&shop),
		"confirmed": texts.English.Confirmed(&shop, "Haircut", at),
	} {
		if n := sms.Segments(body); n != 1 {
			t.Errorf("%s text is %d segments: %q", name, n, body)
		}
	}
	if got := texts.English.Offer(&shop, "Haircut", at, 4500); !strings.Contains(got, "Sat 28 Nov 15:00, £45.00") {
		t.Errorf("offer text = %q, want the local time and the price", got)
	}
}

// TestServiceWith: a booked service names its person in each language, as the offer
// does; without one it is the service alone.
func TestServiceWith(t *testing.T) {
	for lang, want := range map[language.Code]string{"en": "Cut with Ana", "es": "Cut con Ana", "fr": "Cut avec Ana"} {
		if got := texts.In(lang).ServiceWith("Cut", "Ana"); got != want {
			t.Errorf("%s: %q, want %q", lang, got, want)
		}
		if got := texts.In(lang).ServiceWith("Cut", ""); got != "Cut" {
			t.Errorf("%s without a person: %q", lang, got)
		}
	}
}

// TestHelpAndFormality: HELP gives the shop's own contact (else its number) and the
// rates notice; the shop's formality picks tú or usted, tu or vous, and the default is
// each language's own.
func TestHelpAndFormality(t *testing.T) {
	t.Parallel()
	shop := shops.Shop{Name: "Ana's Salon", Location: time.UTC, SMSNumber: "+15555550100"}
	require.Contains(t, texts.English.Help(&shop), "Help: +15555550100. Msg & data rates may apply.")
	shop.HelpContact = "ana@salon.example"
	require.Contains(t, texts.English.Help(&shop), "Help: ana@salon.example. Msg & data rates may apply.")
	require.Contains(t, texts.In(language.Spanish).Help(&shop), "Ayuda: ana@salon.example. Pueden aplicarse tarifas de mensajes y datos.")
	require.Contains(t, texts.In(language.French).Help(&shop), "Aide : ana@salon.example.")

	es, fr := texts.In(language.Spanish), texts.In(language.French)
	require.Equal(t, "Ana's Salon: sin problema, te avisaremos de la próxima cita libre.", es.Declined(&shop), "tú by default")
	require.Equal(t, "Ana's Salon : pas de souci, nous vous préviendrons du prochain créneau.", fr.Declined(&shop), "vous by default")
	shop.Formality = shops.FormalityFormal
	require.Equal(t, "Ana's Salon: sin problema, le avisaremos de la próxima cita libre.", es.Declined(&shop))
	require.Equal(t, "Ana's Salon : pas de souci, nous vous préviendrons du prochain créneau.", fr.Declined(&shop))
	shop.Formality = shops.FormalityInformal
	require.Equal(t, "Ana's Salon: sin problema, te avisaremos de la próxima cita libre.", es.Declined(&shop))
	require.Equal(t, "Ana's Salon : pas de souci, on te préviendra du prochain créneau.", fr.Declined(&shop))
	require.Equal(t, "Ana's Salon: no problem, we'll let you know about the next opening.", texts.English.Declined(&shop), "English has one way")
	require.Equal(t, "Ana's Salon: sorry, we couldn't handle your reply just now. Please reply again in a minute.", texts.English.RetryLaterAt(&shop))
}

// TestPausedSaysUntilWhen: the answer to PAUSE names the day offers start again, in the
// shop's time zone and as the language writes a date there (month first in the US;
// Spanish folded to GSM-7, which saves a segment).
func TestPausedSaysUntilWhen(t *testing.T) {
	t.Parallel()
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	paris, err := time.LoadLocation("Europe/Paris")
	require.NoError(t, err)
	// 03:30 UTC on 12 Dec is still the 11th in New York.
	until := time.Date(2026, 12, 12, 3, 30, 0, 0, time.UTC)
	us := shops.Shop{Name: "Joe's Barbers", Timezone: "America/New_York", Location: ny, SMSNumber: "+15555550100"}
	fr := shops.Shop{Name: "Chez Ana", Timezone: "Europe/Paris", Location: paris, SMSNumber: "+33612345678"}
	require.Equal(t, "Joe's Barbers: offers paused until Fri Dec 11. Reply RESUME to get them sooner, STOP to opt out.",
		texts.English.Paused(&us, until))
	require.Equal(t, "Sat 12 Dec", texts.English.Date(&fr, until))
	require.Equal(t, "Chez Ana : offres en pause jusqu'au sam. 12 déc. Répondez REPRENDRE pour les recevoir avant, STOP pour vous désabonner.",
		texts.In(language.French).Paused(&fr, until))
	require.Contains(t, texts.In(language.Spanish).Paused(&fr, until), "hasta el sab. 12 dic. Responde REANUDAR")
	require.Contains(t, texts.In(language.Spanish).Resumed(&fr), "Responde PAUSA para pausarlas 14 dias")
	require.Contains(t, texts.English.Resumed(&us), "Reply PAUSE to pause them for 14 days")
}
