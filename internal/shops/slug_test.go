package shops_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/migrate"
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
	// Numbered above the highest: joe-s-barbers-9 (an owner's own) takes the count on,
	// and joe-s-barbers-2x or joe-s-barbers-cuts-3 are not numbers of the name.
	for i, slug := range []string{"joe-s-barbers-9", "joe-s-barbers-2x", "joe-s-barbers-cuts-30"} {
		_, err = create("Other", fmt.Sprintf("+1555555031%d", i), slug)
		require.NoError(t, err)
	}
	d, err := create("Joe's Barbers", "+15555550304", "")
	require.NoError(t, err)
	require.Equal(t, "joe-s-barbers-10", d.Slug)

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

// TestSlugBackfill: migration 0070 gives the shops that existed a slug from their name,
// numbered where two would collide or the name leaves too little, all unique; a shop
// inserted without one afterwards gets a random one.
func TestSlugBackfill(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	all, err := migrate.All()
	require.NoError(t, err)
	var sql string
	for _, m := range all {
		if m.Version == 70 {
			sql = m.SQL
		}
	}
	require.NotEmpty(t, sql)
	// The shops table as it was before 0070.
	_, err = pool.Exec(ctx, `DROP INDEX shops_slug_key; ALTER TABLE shops DROP COLUMN slug, DROP COLUMN privacy_url`)
	require.NoError(t, err)
	names := []string{"Joe's Barbers", "Joe’s Barbers", "Joes Barbers", "A", "!!", "Salon", "salon-"}
	ids := map[string]string{}
	for i, name := range names {
		var id string
		require.NoError(t, pool.QueryRow(ctx, `INSERT INTO shops (name, timezone, sms_number, currency, payment_mode, wave_size,
			wave_interval_seconds, min_lead_minutes, cooldown_seconds, api_key_hash, created_at, calendar_token_hash)
			VALUES ($1, 'UTC', $2, 'usd', 'none', 5, 600, 60, 0, $3, now(), $4) RETURNING id::text`,
			name, "+1555555"+string(rune('0'+i))+"000", []byte{byte(i + 1)}, []byte{byte(i + 101)}).Scan(&id))
		ids[name] = id
	}
	_, err = pool.Exec(ctx, sql)
	require.NoError(t, err)
	slugs := map[string]string{}
	rows, err := pool.Query(ctx, `SELECT id::text, slug FROM shops`)
	require.NoError(t, err)
	for rows.Next() {
		var id, slug string
		require.NoError(t, rows.Scan(&id, &slug))
		slugs[id] = slug
	}
	require.NoError(t, rows.Err())
	seen := map[string]bool{}
	for name, id := range ids {
		s := slugs[id]
		_, err := shops.CheckSlug(s)
		require.NoError(t, err, "%q → %q", name, s)
		require.False(t, seen[s], "unique: %q", s)
		seen[s] = true
	}
	require.Equal(t, "joes-barbers", slugs[ids["Joes Barbers"]])
	require.Regexp(t, `^joe-s-barbers(-[0-9a-f]{8})?$`, slugs[ids["Joe's Barbers"]])
	require.Regexp(t, `^shop-[0-9a-f]{8}$`, slugs[ids["A"]])
	require.Regexp(t, `^salon(-[0-9a-f]{8})?$`, slugs[ids["salon-"]])

	var raw string
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO shops (name, timezone, sms_number, currency, payment_mode, wave_size,
		wave_interval_seconds, min_lead_minutes, cooldown_seconds, api_key_hash, created_at, calendar_token_hash)
		VALUES ('Raw', 'UTC', '+15555559999', 'usd', 'none', 5, 600, 60, 0, '\x99', now(), '\x98') RETURNING slug`).Scan(&raw))
	require.Regexp(t, `^shop-[0-9a-f]{12}$`, raw)
}
