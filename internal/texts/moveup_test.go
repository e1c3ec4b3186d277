package texts_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/sms"
	"github.com/slotrecovery/slotrecovery/internal/texts"
)

// TestMoveUpTexts: a move-up offer names the earlier time, the booking it replaces and
// its service, and says the booking stays otherwise; the winner's answer names both
// times, the loser's the booking that stays. In English, with a 20-character shop name
// and service, the offer is one GSM-7 segment on every day of the year in a 24-hour and
// a 12-hour country.
func TestMoveUpTexts(t *testing.T) {
	t.Parallel()
	shop := shops.Shop{Name: "Joe's Barbers", Location: time.UTC, Currency: "eur", SMSNumber: "+447700900001"}
	at := time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC)   // Tue
	from := time.Date(2026, 12, 3, 16, 0, 0, 0, time.UTC) // Thu
	en := texts.In(language.English)
	require.Equal(t, "Joe's Barbers: earlier slot Tue 1 Dec 11:00 instead of your Thu 3 Dec 16:00 Cut. Reply YES to move, else your booking stays.",
		en.MoveUpOffer(&shop, "Cut", at, from))
	require.Equal(t, "Joe's Barbers: moved! Your Cut is now Tue 1 Dec 11:00 (was Thu 3 Dec 16:00). See you then!",
		en.MovedUp(&shop, "Cut", at, from))
	require.Equal(t, "Joe's Barbers: sorry, that earlier time was just taken. Your Thu 3 Dec 16:00 booking stays.",
		en.MoveUpTaken(&shop, from))
	require.Equal(t, "Joe's Barbers: hay hueco antes, el mar. 1 dic. a las 11:00, en vez de tu Cut del jue. 3 dic. a las 16:00. Responde SI para cambiar; si no, tu cita sigue igual.", // Í folded: one segment fewer
		texts.In(language.Spanish).MoveUpOffer(&shop, "Cut", at, from))
	formal := shop
	formal.Formality = shops.FormalityFormal
	require.Contains(t, texts.In(language.Spanish).MoveUpOffer(&formal, "Cut", at, from), "en vez de su Cut")
	require.Contains(t, texts.In(language.French).MoveUpOffer(&shop, "Cut", at, from), "au lieu de votre Cut du jeu. 3 déc. à 16h00")
	informal := shop
	informal.Formality = shops.FormalityInformal
	require.Contains(t, texts.In(language.French).MovedUp(&informal, "Cut", at, from), "Ton Cut est maintenant le mar. 1 déc. à 11h00 (au lieu du jeu. 3 déc. à 16h00)")

	long := shops.Shop{Name: "Twenty Char Barbers!", Currency: "eur", SMSNumber: "+447700900001"}
	for _, zone := range []string{"Europe/London", "America/New_York"} {
		loc, err := time.LoadLocation(zone)
		require.NoError(t, err)
		long.Location, long.Timezone = loc, zone
		for d := range 366 {
			at := time.Date(2026, 1, 1, 12, 30, 0, 0, loc).AddDate(0, 0, d)
			body := en.MoveUpOffer(&long, "Colour and blow-dry!", at, at.AddDate(0, 0, 9).Add(-30*time.Minute))
			require.True(t, sms.IsGSM7(body), body)
			require.Equal(t, 1, sms.Segments(body), "%d chars: %q", len(body), body)
		}
	}
}
