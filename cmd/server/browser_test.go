package main

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
)

// TestBrowserOwnerSeesARealYes is the owners' story end to end on one real server: in
// Debian's Chromium the owner signs in, declares an opening with the form, the offer
// goes out through the Twilio fake, the customer's signed YES arrives over the real
// webhook, and the page shows the slot filled. Screenshots are kept as test artifacts
// ($ARTIFACTS_DIR, else a temporary directory), never committed.
func TestBrowserOwnerSeesARealYes(t *testing.T) {
	path := ""
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(n); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		t.Skip("no Chromium on PATH: install it with `apt-get install -y chromium` (scripts/services.sh chromium) to run the browser test")
	}
	t.Parallel()
	e := newEnv(t)
	// DEV_MODE only so the session cookie is not Secure on plain-HTTP loopback.
	base := e.start(map[string]string{"DEV_MODE": "1"}, fastTune)
	shop := e.newShop(base, "checkout", nil)
	c := e.newCustomer(base, shop, "+15550000777", true)

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancelTab := chromedp.NewContext(actx)
	defer cancelTab()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/dashboard"),
		chromedp.WaitVisible(chromedp.ID("api_key")),
		chromedp.SendKeys(chromedp.ID("api_key"), shop.APIKey),
		chromedp.Click(chromedp.CSS(`form[action="/dashboard/login"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("declare-h")),
	))
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	day := time.Now().In(ny).AddDate(0, 0, 1).Format(time.DateOnly)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetValue(chromedp.ID("starts-date"), day),
		chromedp.SetValue(chromedp.ID("starts-time"), "15:00"),
		chromedp.SetValue(chromedp.ID("duration"), "30"),
		chromedp.SendKeys(chromedp.ID("service"), "Haircut"),
		chromedp.SendKeys(chromedp.ID("price"), "45.00"),
		chromedp.Click(chromedp.CSS(`form[action="/dashboard/openings"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr.open-row`)),
	))

	e.eventually("the offer text", func() bool { return len(e.twilio.MessagesTo(c.Phone)) == 1 })
	require.Contains(t, e.twilio.MessagesTo(c.Phone)[0].Body, "Haircut")
	a := e.text(base, c.Phone, shop.SMSNumber, "Yes!")
	require.Equal(t, "booked", a.Outcome, a.Body)

	require.NoError(t, chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`tr.filled-row`))))
	filled, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("live-filled")))
	require.NoError(t, err)
	require.Contains(t, filled, "Haircut")
	require.Contains(t, filled, "15:00")
	require.Contains(t, filled, "+155******77", "masked phone")
	require.NotContains(t, filled, c.Phone)
	require.Contains(t, filled, "$45.00")

	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	dir := os.Getenv("ARTIFACTS_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "slotrecovery-artifacts")
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	shot := filepath.Join(dir, "e2e-owner-sees-real-yes.png")
	require.NoError(t, os.WriteFile(shot, png, 0o644))
	t.Logf("screenshot: %s", shot)
	require.False(t, strings.Contains(filled, "No slots recovered"))
}
