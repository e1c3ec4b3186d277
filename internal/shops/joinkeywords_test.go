package shops_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
)

// TestJoinKeywords: a shop has no join keywords of its own at first; the owner sets up
// to five, each 2 to 20 letters or digits, stored upper case and once each, and an
// empty list clears them. A word a reply already means something by (STOP, YES, HELP,
// PAUSE, RESUME, their Spanish and French words) is refused, as is a sixth word or a
// malformed one, and a refused change leaves the words as they were.
func TestJoinKeywords(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	svc := shops.New(pool, shops.Config{})
	shop, _, err := svc.Create(ctx, shops.NewShop{Name: "A", Timezone: "UTC", SMSNumber: "+15555550100", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	require.Empty(t, shop.JoinKeywords)

	set := func(words ...string) (shops.Shop, error) {
		t.Helper()
		return svc.Update(ctx, shop.ID, shops.ShopChange{JoinKeywords: &words})
	}
	got, err := set(" cuts ", "Cortes", "VIP2", "CUTS", "Coupés")
	require.NoError(t, err)
	require.Equal(t, []string{"CUTS", "CORTES", "VIP2", "COUPÉS"}, got.JoinKeywords)
	read, err := svc.Get(ctx, shop.ID)
	require.NoError(t, err)
	require.Equal(t, got.JoinKeywords, read.JoinKeywords, "as stored")

	for name, words := range map[string][]string{
		"stop":          {"CUTS", "STOP"},
		"yes":           {"yes"},
		"spanish yes":   {"SI"},
		"help":          {"HELP"},
		"start":         {"START"},
		"pause":         {"PAUSE"},
		"resume french": {"REPRENDRE"},
		"cancel":        {"CANCEL"},
		"baja":          {"BAJA"},
		"too short":     {"A"},
		"too long":      {"ABCDEFGHIJKLMNOPQRSTU"},
		"a space":       {"JOIN US"},
		"punctuation":   {"JOIN!"},
		"six":           {"AA", "BB", "CC", "DD", "EE", "FF"},
	} {
		_, err := set(words...)
		p, ok := problem.As(err)
		require.True(t, ok, "%s: %v", name, err)
		require.Equal(t, problem.Invalid, p.Kind, name)
		require.Equal(t, "join_keywords", p.Field, name)
	}
	read, err = svc.Get(ctx, shop.ID)
	require.NoError(t, err)
	require.Equal(t, []string{"CUTS", "CORTES", "VIP2", "COUPÉS"}, read.JoinKeywords, "refused changes changed nothing")

	other := "Other name"
	got, err = svc.Update(ctx, shop.ID, shops.ShopChange{Name: &other})
	require.NoError(t, err)
	require.Equal(t, read.JoinKeywords, got.JoinKeywords, "a change without them keeps them")
	got, err = set()
	require.NoError(t, err)
	require.Empty(t, got.JoinKeywords)
}
