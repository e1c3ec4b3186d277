package dashboard_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/connectors"
	"github.com/slotrecovery/slotrecovery/internal/dashboard"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/slots"
)

// phoneWidth is the CSS width of a common phone's screen (an iPhone 12 to 15).
const phoneWidth = 390

// TestBrowserEveryPageFitsAPhone signs in on a 390 px phone and opens every page of
// the navigation: none is wider than the screen. Chromium in a mobile context widens
// the layout viewport (innerWidth) to fit wide content, so the page's width is held to
// the screen's 390 px, not to innerWidth.
func TestBrowserEveryPageFitsAPhone(t *testing.T) {
	path, why := chromiumPath()
	if path == "" {
		t.Skip(why)
	}
	en := newEnv(t, envOpts{dev: true, hooks: true})
	dana := en.addCustomer(t, en.shopA, "+15555550142", "Dana Whitfield-Montgomery")
	// An opening still offered (its first wave sent: its record) and one filled: the
	// lists as an owner sees them.
	var offered uuid.UUID
	for i, name := range []string{"Colour, cut and blow-dry", "Beard trim"} {
		op, err := en.slots.Declare(context.Background(), en.shopA, slots.NewOpening{
			StartsAt: time.Now().Add(time.Duration(30+i) * time.Hour).Truncate(time.Hour), DurationMinutes: 60, Service: name, PriceCents: 8000,
		})
		require.NoError(t, err)
		if i == 0 {
			offered = op.ID
			_, err = en.offers.RunWave(context.Background(), jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 1})
			require.NoError(t, err)
		}
		if i == 1 {
			simulateYes(t, en.pool, op.ID, dana.ID)
		}
	}
	// The book's day: a booked and a cancelled appointment with long names (the
	// cancellation's declaration in words), and a customer marked possibly reassigned.
	ctx0 := context.Background()
	day := time.Now().In(en.shopA.Location).AddDate(0, 0, 1)
	for i, status := range []connectors.Status{connectors.StatusBooked, connectors.StatusCancelled} {
		_, err := en.book.Upsert(ctx0, en.shopA, connectors.Appointment{Source: connectors.SourceCalcom,
			ExternalID: "phone-" + string(status), Status: status,
			StartsAt:        time.Date(day.Year(), day.Month(), day.Day(), 10+i, 0, 0, 0, en.shopA.Location),
			DurationMinutes: 45, Service: "Colour, cut and blow-dry", PriceCents: 8000, Phone: "+15555550143",
			CustomerName: "Maximiliana Featherstonehaugh-Smythe"})
		require.NoError(t, err)
	}
	require.NoError(t, pgx.BeginFunc(ctx0, en.pool, func(tx pgx.Tx) error {
		return en.customers.MarkPossiblyReassigned(ctx0, tx, en.shopA.ID, dana.Phone, time.Now())
	}))
	srv := httptest.NewServer(en.e)
	t.Cleanup(srv.Close)

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancelTab := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(cancelTab)
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(cancelTimeout)

	require.NoError(t, chromedp.Do(ctx,
		chromedp.EmulateViewport(phoneWidth, 844, chromedp.EmulateMobile, chromedp.EmulateTouch, chromedp.EmulateScale(3)),
		chromedp.Navigate(srv.URL+"/dashboard"),
		chromedp.WaitVisible(chromedp.ID("api_key")),
		chromedp.SendKeys(chromedp.ID("api_key"), en.keyA),
		chromedp.Click(chromedp.CSS(`form[action="/dashboard/login"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("declare-h")),
	))
	pages := []struct{ name, path string }{
		{"slots", "/dashboard"},
		{"book", "/dashboard/book?day=" + day.Format("2006-01-02")},
		{"inbox", "/dashboard/inbox"},
		{"customers", "/dashboard/customers"},
		{"customer", "/dashboard/customers/" + dana.ID.String()},
		{"opening", dashboard.OpeningPath + "/" + offered.String() + "?q=Dana"},
		{"figures", dashboard.StatsPath + "?group_by=service"},
		{"staff", "/dashboard/staff"},
		{"services", "/dashboard/services"},
		{"integrations", "/dashboard/integrations"},
		{"settings", "/dashboard/settings"},
	}
	for _, p := range pages {
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+p.path), chromedp.WaitReady("body")), p.name)
		width, err := chromedp.Run(ctx, chromedp.Evaluate[int](`Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)`))
		require.NoError(t, err, p.name)
		saveScreenshot(t, ctx, "phone-"+p.name+".png")
		require.LessOrEqual(t, width, phoneWidth, "%s (%s) is %d px wide on a %d px phone", p.name, p.path, width, phoneWidth)
	}
	browseJoinPage(t, ctx, srv.URL+"/join/"+en.shopA.Slug)
}

// browseJoinPage opens the join page on the phone in each language, sends it empty (each
// error shows right above its field, and the page still fits), then fills it in and
// reads "check your phone".
func browseJoinPage(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	fits := func(name string) {
		t.Helper()
		width, err := chromedp.Run(ctx, chromedp.Evaluate[int](`Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)`))
		require.NoError(t, err, name)
		saveScreenshot(t, ctx, "phone-"+name+".png")
		require.LessOrEqual(t, width, phoneWidth, "%s is %d px wide on a %d px phone", name, width, phoneWidth)
	}
	for lang, title := range map[string]string{"en": "Join", "es": "Únete", "fr": "Rejoindre"} {
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(page+"?lang="+lang), chromedp.WaitVisible(chromedp.ID("join-submit"))), lang)
		h1, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('h1').textContent`))
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(h1, title), "%s: %q", lang, h1)
		fits("join-" + lang)
	}
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.ID("join-submit")), chromedp.WaitVisible(chromedp.ID("join-phone-error"))))
	for _, field := range []string{"name", "phone"} {
		next, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('join-`+field+`-error').nextElementSibling.id`))
		require.NoError(t, err)
		require.Equal(t, "join-"+field, next, "the %s error sits right above its field", field)
	}
	fits("join-errors")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("join-name"), "Dana"),
		chromedp.SendKeys(chromedp.ID("join-phone"), "(555) 555-0177"),
		chromedp.Click(chromedp.ID("join-consent")),
		chromedp.Click(chromedp.ID("join-submit")),
		chromedp.WaitVisible(chromedp.ID("join-done")),
	))
	fits("join-done")
}
