package page_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/catalog"
)

// phoneWidth is the CSS width of a common phone's screen (an iPhone 12 to 15).
const phoneWidth = 390

func chromiumPath() (string, string) {
	names := []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, ""
		}
	}
	return "", "no Chromium found on PATH (looked for " + strings.Join(names, ", ") +
		"); install it with `apt-get update && apt-get install -y chromium`"
}

// TestBrowserWantsFitAPhone opens the join page of a shop with long service and people
// names on a 390 px phone in each language: it fits. Picking a time range backwards
// shows the error right above the range, the picks still ticked, and the page still
// fits; picked right, it answers "check your phone" and the request keeps the picks.
func TestBrowserWantsFitAPhone(t *testing.T) {
	path, why := chromiumPath()
	if path == "" {
		t.Skip(why)
	}
	e := setup(t)
	ctx0 := context.Background()
	cat := catalog.New(e.pool, nil)
	for _, n := range []string{"Maximiliana Featherstonehaugh-Smythe", "Bo", "Jean-Christophe de La Rochefoucauld"} {
		_, err := cat.AddStaff(ctx0, e.shop.ID, n)
		require.NoError(t, err)
	}
	for _, n := range []string{"Colour, cut and blow-dry with a long consultation", "Beard trim", "Hot towel shave"} {
		_, err := cat.AddService(ctx0, e.shop.ID, catalog.NewService{Name: n, DurationMinutes: 30, PriceCents: 3000})
		require.NoError(t, err)
	}

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
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(cancelTimeout)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.EmulateViewport(phoneWidth, 844, chromedp.EmulateMobile, chromedp.EmulateTouch, chromedp.EmulateScale(3))))

	fits := func(name string) {
		t.Helper()
		width, err := chromedp.Run(ctx, chromedp.Evaluate[int](`Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)`))
		require.NoError(t, err, name)
		shot(t, ctx, "join-"+name+".png")
		require.LessOrEqual(t, width, phoneWidth, "%s is %d px wide on a %d px phone", name, width, phoneWidth)
	}
	page := e.srv.URL + "/join/" + e.shop.Slug
	for lang, legend := range map[string]string{"en": "What would you like?", "es": "¿Qué te interesa?", "fr": "Qu'est-ce qui vous intéresse ?"} {
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(page+"?lang="+lang), chromedp.WaitVisible(chromedp.ID("join-times"))), lang)
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('fieldset.wants legend').textContent`))
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(got, legend), "%s: %q", lang, got)
		fits("wants-" + lang)
	}
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(page+"?lang=en"), chromedp.WaitVisible(chromedp.ID("join-submit")),
		chromedp.SendKeys(chromedp.ID("join-name"), "Dana"),
		chromedp.SendKeys(chromedp.ID("join-phone"), "(555) 555-0177"),
		chromedp.Click(chromedp.CSS(`input[name=services][value="Beard trim"]`)),
		chromedp.Click(chromedp.CSS(`input[name=days][value=sat]`)),
		chromedp.SetValue(chromedp.ID("join-from"), "17:00"),
		chromedp.SetValue(chromedp.ID("join-to"), "10:00"),
		chromedp.Click(chromedp.ID("join-consent")),
		chromedp.Click(chromedp.ID("join-submit")),
		chromedp.WaitVisible(chromedp.ID("join-times-error")),
	))
	next, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('join-times-error').nextElementSibling.id`))
	require.NoError(t, err)
	require.Equal(t, "join-times", next, "the range's error sits right above it")
	kept, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('input[name=services][value="Beard trim"]').checked && document.querySelector('input[name=days][value=sat]').checked && document.getElementById('join-from').value === '17:00'`))
	require.NoError(t, err)
	require.True(t, kept, "the picks are kept")
	fits("wants-error")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetValue(chromedp.ID("join-to"), "20:00"),
		chromedp.Click(chromedp.ID("join-submit")),
		chromedp.WaitVisible(chromedp.ID("join-done")),
	))
	fits("wants-done")
	var prefs string
	require.NoError(t, e.pool.QueryRow(ctx0, `SELECT preferences::text FROM join_requests`).Scan(&prefs))
	require.JSONEq(t, `{"days":[6],"windows":[{"start":1020,"end":1200}],"services":["Beard trim"]}`, prefs)
}

// shot saves the whole page as a PNG under $ARTIFACTS_DIR (or the system's temporary
// directory): test output, never committed.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("ARTIFACTS_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "slotrecovery-artifacts")
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, png, 0o644))
	t.Logf("screenshot: %s", p)
}
