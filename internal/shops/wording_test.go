package shops_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
)

// TestWordingSettings: a new shop takes the language's formality, gsm7 prefer and no
// help contact; each can be changed, stored and put back, and a bad value is an Invalid
// problem naming its field.
func TestWordingSettings(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	svc := shops.New(pool, shops.Config{})
	s, _, err := svc.Create(ctx, shops.NewShop{Name: "A", Timezone: "UTC", SMSNumber: "+15555550300", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	require.Equal(t, shops.FormalityDefault, s.Formality)
	require.Equal(t, shops.GSM7Prefer, s.GSM7)
	require.Empty(t, s.HelpContact)

	formal, exact, contact := shops.FormalityFormal, shops.GSM7Exact, "  help@ana.example  "
	_, err = svc.Update(ctx, s.ID, shops.ShopChange{Formality: &formal, GSM7: &exact, HelpContact: &contact})
	require.NoError(t, err)
	got, err := svc.Get(ctx, s.ID)
	require.NoError(t, err)
	require.Equal(t, shops.FormalityFormal, got.Formality)
	require.Equal(t, shops.GSM7Exact, got.GSM7)
	require.Equal(t, "help@ana.example", got.HelpContact, "trimmed")

	def, none := shops.FormalityDefault, ""
	got, err = svc.Update(ctx, s.ID, shops.ShopChange{Formality: &def, HelpContact: &none})
	require.NoError(t, err)
	require.Equal(t, shops.FormalityDefault, got.Formality)
	require.Equal(t, shops.GSM7Exact, got.GSM7, "left as it was")
	require.Empty(t, got.HelpContact)

	bad := func(field string, ch shops.ShopChange) {
		t.Helper()
		_, err := svc.Update(ctx, s.ID, ch)
		var pe *problem.Error
		require.ErrorAs(t, err, &pe)
		require.Equal(t, problem.Invalid, pe.Kind)
		require.Equal(t, field, pe.Field)
	}
	polite, loose, long, twoLines := shops.Formality("polite"), shops.GSM7("loose"), strings.Repeat("a", 101), "a\nb"
	bad("formality", shops.ShopChange{Formality: &polite})
	bad("gsm7", shops.ShopChange{GSM7: &loose})
	bad("help_contact", shops.ShopChange{HelpContact: &long})
	bad("help_contact", shops.ShopChange{HelpContact: &twoLines})
	hundred := strings.Repeat("é", 100)
	got, err = svc.Update(ctx, s.ID, shops.ShopChange{HelpContact: &hundred})
	require.NoError(t, err, "100 characters, not bytes")
	require.Equal(t, hundred, got.HelpContact)
}

// TestParseWording: owners' values are read in any case.
func TestParseWording(t *testing.T) {
	t.Parallel()
	f, err := shops.ParseFormality(" Formal ")
	require.NoError(t, err)
	require.Equal(t, shops.FormalityFormal, f)
	_, err = shops.ParseFormality("")
	require.Error(t, err, "the default is no value")
	g, err := shops.ParseGSM7("EXACT")
	require.NoError(t, err)
	require.Equal(t, shops.GSM7Exact, g)
	_, err = shops.ParseGSM7("")
	require.Error(t, err)
}

// TestCountry: the country comes from the time zone, for the zones whose conventions
// the texts tell apart.
func TestCountry(t *testing.T) {
	t.Parallel()
	for zone, want := range map[string]string{
		"America/New_York": "US", "Pacific/Honolulu": "US", "America/Toronto": "CA", "America/Montreal": "CA",
		"America/Mexico_City": "MX", "America/Tijuana": "MX", "Europe/Paris": "", "UTC": "",
	} {
		require.Equal(t, want, shops.Shop{Timezone: zone}.Country(), zone)
	}
}
