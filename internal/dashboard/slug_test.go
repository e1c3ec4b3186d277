package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSettingsJoinPage: the settings form shows the join page's slug and sets it and the
// privacy link; a malformed slug, another shop's, or a privacy link that is not https is
// shown next to its field and changes nothing.
func TestSettingsJoinPage(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{})
	ctx := context.Background()
	ck := en.login(t, en.keyA)
	before, err := en.shops.Get(ctx, en.shopA.ID)
	require.NoError(t, err)
	require.NotEmpty(t, before.Slug, "every shop has one from its name")
	body, csrf := en.page(t, ck, "/dashboard/settings")
	require.Contains(t, body, `id="set-slug"`)
	require.Contains(t, body, `value="`+before.Slug+`"`)
	require.Contains(t, body, `id="set-privacy-url"`)
	require.Contains(t, body, `id="join-qr" src="/join/`+before.Slug+`/qr.svg"`, "the counter card")
	require.Regexp(t, `id="join-url" href="[^"]*/join/`+before.Slug+`"`, body)

	base := func() url.Values {
		return url.Values{"csrf": {csrf}, "name": {"Ada's Barbers"}, "timezone": {"America/New_York"}, "currency": {"USD"},
			"payment_mode": {"checkout"}, "wave_size": {"10"}, "wave_interval_seconds": {"600"}, "min_lead_minutes": {"60"},
			"cooldown_seconds": {"86400"}}
	}
	form := base()
	form.Set("slug", " Adas-Cuts ")
	form.Set("privacy_url", "https://adas.example/privacy")
	rec := en.post("/dashboard/settings", form, ck)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	shop, err := en.shops.Get(ctx, en.shopA.ID)
	require.NoError(t, err)
	require.Equal(t, "adas-cuts", shop.Slug)
	require.Equal(t, "https://adas.example/privacy", shop.PrivacyURL)

	other, err := en.shops.Get(ctx, en.shopB.ID)
	require.NoError(t, err)
	for name, c := range map[string]struct{ field, value, errID string }{
		"malformed":  {"slug", "adas cuts!", "set-slug-error"},
		"taken":      {"slug", other.Slug, "set-slug-error"},
		"not https":  {"privacy_url", "http://adas.example/privacy", "set-privacy-url-error"},
		"not a link": {"privacy_url", "javascript:alert(1)", "set-privacy-url-error"},
	} {
		bad := base()
		bad.Set(c.field, c.value)
		rec = en.post("/dashboard/settings", bad, ck)
		require.Equal(t, http.StatusUnprocessableEntity, rec.Code, name)
		require.NotEmpty(t, fieldError(rec.Body.String(), c.errID), name)
	}
	after, err := en.shops.Get(ctx, en.shopA.ID)
	require.NoError(t, err)
	require.Equal(t, "adas-cuts", after.Slug, "a refused form changes nothing")
	require.Equal(t, "https://adas.example/privacy", after.PrivacyURL)

	rec = en.post("/dashboard/settings", base(), ck) // a form from before the fields existed keeps them
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	kept, err := en.shops.Get(ctx, en.shopA.ID)
	require.NoError(t, err)
	require.Equal(t, "adas-cuts", kept.Slug)
}

// TestSettingsJoinCountries: the join card's countries besides the shop's own are shown
// and set as the API sets join_countries; a code that is no calling code, or too many,
// is shown next to the field and changes nothing (the rest of the form neither).
func TestSettingsJoinCountries(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{})
	ctx := context.Background()
	ck := en.login(t, en.keyA)
	body, csrf := en.page(t, ck, "/dashboard/settings")
	require.Contains(t, body, `id="set-join-countries"`)
	require.Contains(t, body, "Numbers of your own country (+1) always may.")

	form := func(countries, name string) url.Values {
		return url.Values{"csrf": {csrf}, "name": {name}, "timezone": {"America/New_York"}, "currency": {"USD"},
			"payment_mode": {"checkout"}, "wave_size": {"10"}, "wave_interval_seconds": {"600"}, "min_lead_minutes": {"60"},
			"cooldown_seconds": {"86400"}, "join_countries": {countries}}
	}
	rec := en.post("/dashboard/settings", form(" +44; 33 +1 ", "Ada's Barbers"), ck)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	joinSvc := en.join
	got, err := joinSvc.AllowedCountries(ctx, en.shopA)
	require.NoError(t, err)
	require.Equal(t, []string{"1", "33", "44"}, got, "the own code first, the others sorted, +1 not twice")
	body, _ = en.page(t, ck, "/dashboard/settings")
	require.Contains(t, body, `value="+33, +44"`)

	for name, bad := range map[string]string{"no calling code": "+44, +0", "words": "France", "too long": "+4412",
		"too many": "+30, +31, +32, +33, +34, +36, +39, +40, +41, +43, +44"} {
		rec = en.post("/dashboard/settings", form(bad, "Renamed"), ck)
		require.Equal(t, http.StatusUnprocessableEntity, rec.Code, name)
		require.NotEmpty(t, fieldError(rec.Body.String(), "set-join-countries-error"), name)
	}
	got, err = joinSvc.AllowedCountries(ctx, en.shopA)
	require.NoError(t, err)
	require.Equal(t, []string{"1", "33", "44"}, got, "refused lists change nothing")
	shop, err := en.shops.Get(ctx, en.shopA.ID)
	require.NoError(t, err)
	require.Equal(t, "Ada's Barbers", shop.Name, "nor the rest of the form")

	rec = en.post("/dashboard/settings", form("", "Ada's Barbers"), ck)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	got, err = joinSvc.AllowedCountries(ctx, en.shopA)
	require.NoError(t, err)
	require.Equal(t, []string{"1"}, got, "emptied: the shop's own only")
}

// TestSettingsJoinKeywords: the shop's own join words are shown and set as the API sets
// join_keywords (upper case, kept once); a word a reply already means, or a malformed
// one, is shown next to the field and changes nothing.
func TestSettingsJoinKeywords(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{})
	ctx := context.Background()
	ck := en.login(t, en.keyA)
	body, csrf := en.page(t, ck, "/dashboard/settings")
	require.Contains(t, body, `id="set-join-keywords"`)
	form := func(words string) url.Values {
		return url.Values{"csrf": {csrf}, "name": {"Ada's Barbers"}, "timezone": {"America/New_York"}, "currency": {"USD"},
			"payment_mode": {"checkout"}, "wave_size": {"10"}, "wave_interval_seconds": {"600"}, "min_lead_minutes": {"60"},
			"cooldown_seconds": {"86400"}, "join_keywords": {words}}
	}
	rec := en.post("/dashboard/settings", form("cuts, Fade cuts"), ck)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	shop, err := en.shops.Get(ctx, en.shopA.ID)
	require.NoError(t, err)
	require.Equal(t, []string{"CUTS", "FADE"}, shop.JoinKeywords)
	body, _ = en.page(t, ck, "/dashboard/settings")
	require.Contains(t, body, `value="CUTS, FADE"`)
	for name, bad := range map[string]string{"a reply's word": "CUTS, STOP", "malformed": "cuts!", "one letter": "X",
		"too many": "AA, BB, CC, DD, EE, FF"} {
		rec = en.post("/dashboard/settings", form(bad), ck)
		require.Equal(t, http.StatusUnprocessableEntity, rec.Code, name)
		require.NotEmpty(t, fieldError(rec.Body.String(), "set-join-keywords-error"), name)
	}
	// A refused keyword keeps the form's good countries unsaved too.
	both := form("CUTS, STOP")
	both.Set("join_countries", "+44")
	rec = en.post("/dashboard/settings", both, ck)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	countries, err := en.join.AllowedCountries(ctx, en.shopA)
	require.NoError(t, err)
	require.Equal(t, []string{"1"}, countries, "a refused form changes no country")
	shop, err = en.shops.Get(ctx, en.shopA.ID)
	require.NoError(t, err)
	require.Equal(t, []string{"CUTS", "FADE"}, shop.JoinKeywords, "refused forms change nothing")
	rec = en.post("/dashboard/settings", form(""), ck)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	shop, err = en.shops.Get(ctx, en.shopA.ID)
	require.NoError(t, err)
	require.Empty(t, shop.JoinKeywords)
}
