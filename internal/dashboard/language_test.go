package dashboard_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// selectedOption is the value of the selected option of the select whose id is id.
func selectedOption(t *testing.T, body, id string) string {
	t.Helper()
	sel := regexp.MustCompile(`(?s)<select id="` + regexp.QuoteMeta(id) + `".*?</select>`).FindString(body)
	require.NotEmpty(t, sel, "no select #%s", id)
	m := regexp.MustCompile(`<option value="([^"]*)" selected>`).FindAllStringSubmatch(sel, -1)
	require.Len(t, m, 1, "one option selected in #%s: %s", id, sel)
	return m[0][1]
}

// TestSettingsLanguage: the settings page has a select of the shop's language; saving
// another changes it, any case read, and a value that is not a code is refused by its
// field with nothing changed; a form from before the field existed keeps it.
func TestSettingsLanguage(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday})
	ck := en.login(t, en.keyA)
	body, csrf := en.page(t, ck, "/dashboard/settings")
	require.Equal(t, "en", selectedOption(t, body, "set-language"))
	for _, want := range []string{`<option value="es">Spanish (español)</option>`, `<option value="fr">French (français)</option>`} {
		require.Contains(t, html.UnescapeString(body), want)
	}
	form := func(lang *string) url.Values {
		s := en.shopA
		p := s.Policy
		f := url.Values{"csrf": {csrf}, "name": {s.Name}, "timezone": {s.Timezone}, "currency": {s.Currency},
			"payment_mode": {s.PaymentMode}, "wave_size": {strconv.Itoa(p.WaveSize)}, "wave_interval_seconds": {strconv.Itoa(int(p.WaveInterval / time.Second))},
			"min_lead_minutes": {strconv.Itoa(int(p.MinLead / time.Minute))}, "cooldown_seconds": {strconv.Itoa(int(p.Cooldown / time.Second))},
			"first_wave_delay_seconds": {"0"}, "send_rate_per_second": {"1"}}
		if lang != nil {
			f.Set("language", *lang)
		}
		return f
	}
	str := func(s string) *string { return &s }
	tests := []struct {
		name   string
		lang   *string
		status int
		want   language.Code // the shop's language afterwards
	}{
		{"spanish", str("es"), http.StatusSeeOther, language.Spanish},
		{"an old form without the field", nil, http.StatusSeeOther, language.Spanish},
		{"not a code", str("de"), http.StatusUnprocessableEntity, language.Spanish},
		{"french, any case", str("FR"), http.StatusSeeOther, language.French},
	}
	for _, tt := range tests {
		rec := en.post("/dashboard/settings", form(tt.lang), ck)
		require.Equal(t, tt.status, rec.Code, "%s: %s", tt.name, rec.Body.String())
		if tt.status == http.StatusUnprocessableEntity {
			require.Equal(t, "Choose one of the languages in the list.", fieldError(rec.Body.String(), "set-language-error"), tt.name)
		}
		got, err := en.shops.Get(context.Background(), en.shopA.ID)
		require.NoError(t, err)
		require.Equal(t, tt.want, got.Language, tt.name)
	}
	body, _ = en.page(t, ck, "/dashboard/settings")
	require.Equal(t, "fr", selectedOption(t, body, "set-language"), "the page shows what is stored")
}

// TestCustomersLanguage: the list shows each customer's language (the shop's, named, for
// one without their own); a customer's page sets it, puts it back to the shop's, refuses
// a value that is not a code by its field, and a form from before the field existed
// leaves it as it is.
func TestCustomersLanguage(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday})
	ctx := context.Background()
	ann := en.addCustomer(t, en.shopA, "+15555550181", "Ann")
	bo, err := en.customers.Add(ctx, en.shopA.ID, customers.NewCustomer{Phone: "+15555550182", Name: "Bo", Language: language.Spanish})
	require.NoError(t, err)
	ck := en.login(t, en.keyA)

	listed := func() map[string]string {
		t.Helper()
		body, _ := en.page(t, ck, "/dashboard/customers")
		require.Contains(t, body, `<th scope="col">Language</th>`)
		got := map[string]string{}
		re := regexp.MustCompile(`(?s)data-customer="([^"]+)".*?<td data-label="Language"><div class="([^"]+)">([^<]*)</div>`)
		for _, m := range re.FindAllStringSubmatch(body, -1) {
			got[m[1]] = m[2] + ": " + html.UnescapeString(m[3])
		}
		return got
	}
	require.Equal(t, map[string]string{
		ann.ID.String(): "language muted: The shop's: English",
		bo.ID.String():  "language: Spanish (español)",
	}, listed())

	path := "/dashboard/customers/" + ann.ID.String()
	body, csrf := en.page(t, ck, path)
	require.Equal(t, "", selectedOption(t, body, "language"), "the shop's")
	require.Contains(t, html.UnescapeString(body), `<option value="" selected>The shop's: English</option>`)
	form := func(lang *string) url.Values {
		f := url.Values{"csrf": {csrf}, "name": {"Ann"}, "priority": {"0"}, "preferences": {""}, "sms_opt_in": {"yes"}}
		if lang != nil {
			f.Set("language", *lang)
		}
		return f
	}
	str := func(s string) *string { return &s }
	tests := []struct {
		name   string
		lang   *string
		status int
		want   language.Code // Ann's language afterwards
	}{
		{"french", str("fr"), http.StatusSeeOther, language.French},
		{"an old form without the field", nil, http.StatusSeeOther, language.French},
		{"not a code", str("klingon"), http.StatusUnprocessableEntity, language.French},
		{"the shop's again", str(""), http.StatusSeeOther, ""},
		{"spanish, any case", str("ES"), http.StatusSeeOther, language.Spanish},
	}
	for _, tt := range tests {
		rec := en.post(path, form(tt.lang), ck)
		require.Equal(t, tt.status, rec.Code, "%s: %s", tt.name, rec.Body.String())
		if tt.status == http.StatusUnprocessableEntity {
			require.Equal(t, "Choose one of the languages in the list.", fieldError(rec.Body.String(), "language-error"), tt.name)
		}
		got, err := en.customers.Get(ctx, en.shopA.ID, ann.ID)
		require.NoError(t, err)
		require.Equal(t, tt.want, got.Language, tt.name)
	}
	body, _ = en.page(t, ck, path)
	require.Equal(t, "es", selectedOption(t, body, "language"), "the page shows what is stored")

	// The shop's language is named as it is now.
	es := language.Spanish
	_, err = en.shops.Update(ctx, en.shopA.ID, shops.ShopChange{Language: &es})
	require.NoError(t, err)
	body, _ = en.page(t, ck, "/dashboard/customers/"+bo.ID.String())
	require.Contains(t, html.UnescapeString(body), `<option value="">The shop's: Spanish (español)</option>`)
	require.Equal(t, "es", selectedOption(t, body, "language"), "Bo's own, though it is the shop's too")
}

// TestSettingsTextsAndBook: the settings form shows and sets how the texts are written
// (formality, accents, the HELP contact) and whether a cancelled appointment's time is
// offered by itself; a bad value is shown next to its field and changes nothing; a form
// from before the fields existed keeps them.
func TestSettingsTextsAndBook(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{})
	ctx := context.Background()
	ck := en.login(t, en.keyA)
	body, csrf := en.page(t, ck, "/dashboard/settings")
	for _, id := range []string{`id="set-formality"`, `id="set-gsm7"`, `id="set-help-contact"`, `id="set-auto-declare"`} {
		require.Contains(t, body, id)
	}
	require.Regexp(t, `<option value="prefer" selected>`, body, "the default: accents dropped where that saves a part")
	require.Regexp(t, `id="set-auto-declare" name="auto_declare" type="checkbox" value="on" checked`, body, "on by default")
	base := func() url.Values {
		return url.Values{"csrf": {csrf}, "name": {"Ada's Barbers"}, "timezone": {"America/New_York"}, "currency": {"USD"},
			"payment_mode": {"checkout"}, "wave_size": {"10"}, "wave_interval_seconds": {"600"}, "min_lead_minutes": {"60"},
			"cooldown_seconds": {"86400"}}
	}
	form := base()
	form.Set("formality", "formal")
	form.Set("gsm7", "exact")
	form.Set("help_contact", " hello@adas.example ")
	form.Set("auto_declare_shown", "1") // the checkbox unticked: not sent
	rec := en.post("/dashboard/settings", form, ck)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	shop, err := en.shops.Get(ctx, en.shopA.ID)
	require.NoError(t, err)
	require.Equal(t, shops.FormalityFormal, shop.Formality)
	require.Equal(t, shops.GSM7Exact, shop.GSM7)
	require.Equal(t, "hello@adas.example", shop.HelpContact)
	require.False(t, shop.AutoDeclare)
	body, _ = en.page(t, ck, "/dashboard/settings")
	require.Contains(t, body, `<option value="formal" selected>`)
	require.Contains(t, body, `value="hello@adas.example"`)

	bad := base()
	bad.Set("gsm7", "sometimes")
	bad.Set("help_contact", strings.Repeat("x", 101))
	rec = en.post("/dashboard/settings", bad, ck)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	require.NotEmpty(t, fieldError(rec.Body.String(), "set-gsm7-error"))
	after, err := en.shops.Get(ctx, en.shopA.ID)
	require.NoError(t, err)
	require.Equal(t, shops.GSM7Exact, after.GSM7, "a refused form changes nothing")
	require.Equal(t, "hello@adas.example", after.HelpContact)

	old := base() // none of the four fields: they stay
	rec = en.post("/dashboard/settings", old, ck)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	kept, err := en.shops.Get(ctx, en.shopA.ID)
	require.NoError(t, err)
	require.Equal(t, shops.FormalityFormal, kept.Formality)
	require.False(t, kept.AutoDeclare)

	back := base()
	back.Set("formality", "")
	back.Set("help_contact", "")
	back.Set("auto_declare_shown", "1")
	back.Set("auto_declare", "on")
	rec = en.post("/dashboard/settings", back, ck)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	reset, err := en.shops.Get(ctx, en.shopA.ID)
	require.NoError(t, err)
	require.Equal(t, shops.FormalityDefault, reset.Formality, "empty: the language's usual way")
	require.Empty(t, reset.HelpContact, "empty: the texting number")
	require.True(t, reset.AutoDeclare)
}
