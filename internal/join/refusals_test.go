package join_test

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/join"
	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/ratelimit"
)

// TestPumpingNumberShape: a premium, toll-free or non-mobile number is refused by its
// shape, from the page and by text, before it spends anything of the limits; the visitor
// reads the same, and each refusal is counted by reason in Postgres as on /metrics.
func TestPumpingNumberShape(t *testing.T) {
	t.Parallel()
	f := setup(t, join.Limits{PerIP: ratelimit.Limit{Burst: 1, Every: time.Hour}})
	ctx := context.Background()
	for _, n := range []string{"(900) 555-1234", "+18005551234", "+18885551234", "+12129761234", "+11234567890"} {
		out, err := f.join.Request(ctx, f.shop, sub(n))
		require.NoError(t, err)
		require.Equal(t, "shape", out.Refused, n)
	}
	out, err := f.join.RequestByText(ctx, f.shop, "+18665551234", "SMshape", language.English)
	require.NoError(t, err)
	require.Equal(t, "shape", out.Refused)
	require.Equal(t, 0, f.count(t, `SELECT count(*) FROM river_job`), "nothing texted")
	require.Equal(t, 0, f.count(t, `SELECT count(*) FROM join_requests`))
	// The address's one request was not spent on them.
	out2, err := f.join.Request(ctx, f.shop, sub("+15555550130"))
	require.NoError(t, err)
	require.True(t, out2.Sent, out2.Refused)

	got, err := f.join.Refusals(ctx, f.shop.ID, f.clock.Now())
	require.NoError(t, err)
	require.Equal(t, map[string]int64{"shape": 6}, got.ByReason)
	require.Equal(t, int64(6), got.Total)
	require.Nil(t, got.BudgetSpentAt)
	require.Equal(t, 6, f.refused["shape"])
}

// TestAllowedCountries: a shop accepts its own country's numbers and those it adds;
// the setting is validated and read back with the shop's own first; an added country's
// numbers still pass the shape rules.
func TestAllowedCountries(t *testing.T) {
	t.Parallel()
	f := setup(t, join.Limits{})
	ctx := context.Background()
	got, err := f.join.AllowedCountries(ctx, f.shop)
	require.NoError(t, err)
	require.Equal(t, []string{"1"}, got, "by default the shop's own")

	out, err := f.join.Request(ctx, f.shop, sub("+447700900123"))
	require.NoError(t, err)
	require.Equal(t, "country", out.Refused)

	for _, bad := range [][]string{{"+4"}, {"440"}, {"0"}, {"abc"}, {"+1234"}, {""},
		{"33", "34", "44", "52", "49", "39", "31", "32", "41", "43", "45"}} {
		_, err := f.join.SetAllowedCountries(ctx, f.shop, bad)
		p, ok := problem.As(err)
		require.True(t, ok, "%v: %v", bad, err)
		require.Equal(t, problem.Invalid, p.Kind, bad)
		require.Equal(t, join.AllowedCountriesField, p.Field, bad)
	}
	got, err = f.join.AllowedCountries(ctx, f.shop)
	require.NoError(t, err)
	require.Equal(t, []string{"1"}, got, "a refused setting changes nothing")

	got, err = f.join.SetAllowedCountries(ctx, f.shop, []string{"+44", " 52 ", "+1", "44", "353"})
	require.NoError(t, err)
	require.Equal(t, []string{"1", "353", "44", "52"}, got)
	got, err = f.join.AllowedCountries(ctx, f.shop)
	require.NoError(t, err)
	require.Equal(t, []string{"1", "353", "44", "52"}, got)

	i := 0
	for number, want := range map[string]string{
		"+447700900123": "", "+442079460000": "shape", "+525512345678": "", "+353851234567": "",
		"+33612345678": "country", "+15555550131": "",
	} {
		i++
		s := sub(number)
		s.IP = netip.AddrFrom4([4]byte{198, 51, 100, byte(i)}) // the address's allowance is not the point
		out, err := f.join.Request(ctx, f.shop, s)
		require.NoError(t, err)
		require.Equal(t, want, out.Refused, number)
	}
	kw, err := f.join.RequestByText(ctx, f.shop, "+447700900124", "SMuk", language.English)
	require.NoError(t, err)
	require.True(t, kw.Sent, "an added country joins by text too")

	got, err = f.join.SetAllowedCountries(ctx, f.shop, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"1"}, got)
	out, err = f.join.Request(ctx, f.shop, sub("+447700900125"))
	require.NoError(t, err)
	require.Equal(t, "country", out.Refused, "removed again")
}

// TestBudgetSpentTellsOwner: once the shop's hourly budget is spent, the page sends
// nothing more, the owner's confirmed alert number gets one text an hour saying so,
// and the dashboard's counts say how many were refused and when the budget was spent.
func TestBudgetSpentTellsOwner(t *testing.T) {
	t.Parallel()
	f := setup(t, join.Limits{PerShop: ratelimit.Limit{Burst: 2, Every: time.Hour}})
	ctx := context.Background()
	const owner = "+15555550777"
	_, err := f.pool.Exec(ctx, `UPDATE shops SET notify_phone = $1 WHERE id = $2`, owner, f.shop.ID)
	require.NoError(t, err)
	shop, err := f.shops.Get(ctx, f.shop.ID)
	require.NoError(t, err)
	require.Equal(t, owner, shop.NotifyPhone)

	try := func(i int) join.Outcome {
		t.Helper()
		s := sub(fmt.Sprintf("+1555555%04d", 3000+i))
		s.IP = netip.AddrFrom4([4]byte{198, 51, 100, byte(i + 1)})
		out, err := f.join.Request(ctx, shop, s)
		require.NoError(t, err)
		return out
	}
	start := f.clock.Now()
	sent := 0
	for i := range 6 {
		if try(i).Sent {
			sent++
		}
		f.clock.Add(time.Minute)
	}
	require.Equal(t, 2, sent)
	alerts := f.texts(t, owner)
	require.Len(t, alerts, 1, "one alert however many refusals in the hour")
	require.Contains(t, alerts[0], "Joe's Barbers: your join page hit its limit of 2 confirmation texts an hour")

	got, err := f.join.Refusals(ctx, f.shop.ID, start)
	require.NoError(t, err)
	require.Equal(t, map[string]int64{"shop_budget": 4}, got.ByReason)
	require.NotNil(t, got.BudgetSpentAt)
	require.Equal(t, start.Add(2*time.Minute), *got.BudgetSpentAt, "the first refusal of the hour")

	// The next hour (by the service's clock; the bucket, on Redis's, is still empty):
	// its first refusal tells the owner again, once, in the shop's language.
	f.clock.Add(time.Hour)
	shop.Language = language.Spanish
	require.Equal(t, "shop_budget", try(10).Refused)
	require.Equal(t, "shop_budget", try(11).Refused)
	alerts = f.texts(t, owner)
	require.Len(t, alerts, 2)
	require.Contains(t, alerts, "Joe's Barbers: tu pagina de inscripcion llego a su limite de 2 mensajes de confirmacion por hora y no enviara mas por ahora. "+
		"Si no esperabas tantas inscripciones, alguien podria estar abusando de ella. Se reanuda sola.", "folded to GSM-7: fewer segments")

	// A shop with no alert number is counted, not texted.
	f.clock.Add(2 * time.Hour)
	f.shop.NotifyPhone = ""
	for i := range 3 {
		s := sub(fmt.Sprintf("+1555555%04d", 3100+i))
		s.IP = netip.AddrFrom4([4]byte{198, 51, 101, byte(i + 1)})
		_, err := f.join.Request(ctx, f.shop, s)
		require.NoError(t, err)
	}
	require.Len(t, f.texts(t, owner), 2)
	got, err = f.join.Refusals(ctx, f.shop.ID, start)
	require.NoError(t, err)
	require.Equal(t, int64(9), got.ByReason["shop_budget"])
	require.Equal(t, start.Add(3*time.Hour+6*time.Minute), *got.BudgetSpentAt)
	require.Equal(t, 3, f.count(t, `SELECT count(*) FROM join_budget_spent`), "three hours spent")
}
