package shops_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
)

func TestSlugify(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		"Joe's Barbers":                         "joe-s-barbers",
		"  Peluquería Óscar  ":                  "peluqueria-oscar",
		"Ça Coiffe & Co.":                       "ca-coiffe-and-co",
		"A":                                     "shop",
		"!!!":                                   "shop",
		"The Very Long Name Of A Salon In Town": "the-very-long-name-of-a-salon-i",
		"日本":                                    "shop",
	} {
		got := shops.Slugify(name)
		require.Equal(t, want, got, name)
		_, err := shops.CheckSlug(got)
		require.NoError(t, err, "a derived slug is a valid one: %q", got)
	}
}

// TestSlug: a new shop's slug is derived from its name and made unique; the owner may
// set one, checked and unique; BySlug finds the shop by it, in any case.
func TestSlug(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	svc := shops.New(pool, shops.Config{})
	create := func(name, number, slug string) (shops.Shop, error) {
		s, _, err := svc.Create(ctx, shops.NewShop{Name: name, Timezone: "UTC", SMSNumber: number, Currency: "usd",
			PaymentMode: shops.PaymentNone, Slug: slug})
		return s, err
	}
	a, err := create("Joe's Barbers", "+15555550300", "")
	require.NoError(t, err)
	require.Equal(t, "joe-s-barbers", a.Slug)
	b, err := create("Joe’s  Barbers!", "+15555550301", "")
	require.NoError(t, err)
	require.Equal(t, "joe-s-barbers-2", b.Slug, "the same name: numbered")
	c, err := create("X", "+15555550302", "")
	require.NoError(t, err)
	require.Equal(t, "shop-2", c.Slug, "a slug that says nothing is always numbered")

	_, err = create("Other", "+15555550303", "joe-s-barbers")
	require.ErrorIs(t, err, shops.ErrSlugTaken)

	got, err := svc.BySlug(ctx, "JOE-S-BARBERS-2")
	require.NoError(t, err)
	require.Equal(t, b.ID, got.ID)
	_, err = svc.BySlug(ctx, "nobody-here")
	require.ErrorIs(t, err, shops.ErrShopNotFound)
	_, err = svc.BySlug(ctx, "../x")
	require.ErrorIs(t, err, shops.ErrShopNotFound)

	mine := " Joes-Cuts "
	privacy := "https://joes.example/privacy"
	a, err = svc.Update(ctx, a.ID, shops.ShopChange{Slug: &mine, PrivacyURL: &privacy})
	require.NoError(t, err)
	require.Equal(t, "joes-cuts", a.Slug)
	require.Equal(t, privacy, a.PrivacyURL)
	stored, err := svc.Get(ctx, a.ID)
	require.NoError(t, err)
	require.Equal(t, "joes-cuts", stored.Slug)
	require.Equal(t, privacy, stored.PrivacyURL)

	taken := "joe-s-barbers-2"
	_, err = svc.Update(ctx, a.ID, shops.ShopChange{Slug: &taken})
	require.ErrorIs(t, err, shops.ErrSlugTaken)
	for _, bad := range []string{"", "ab", "-joe", "joe--cuts", "joe_cuts", "joé", string(make([]byte, 41))} {
		_, err = svc.Update(ctx, a.ID, shops.ShopChange{Slug: &bad})
		var pe *problem.Error
		require.ErrorAs(t, err, &pe, "slug %q", bad)
		require.Equal(t, "slug", pe.Field)
	}
	for _, bad := range []string{"http://joes.example/privacy", "javascript:alert(1)", "https://"} {
		_, err = svc.Update(ctx, a.ID, shops.ShopChange{PrivacyURL: &bad})
		var pe *problem.Error
		require.ErrorAs(t, err, &pe, "privacy url %q", bad)
		require.Equal(t, "privacy_url", pe.Field)
	}
	none := ""
	a, err = svc.Update(ctx, a.ID, shops.ShopChange{PrivacyURL: &none})
	require.NoError(t, err)
	require.Empty(t, a.PrivacyURL)
	require.Equal(t, "joes-cuts", a.Slug, "left as it was")
}
