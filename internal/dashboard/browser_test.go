package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
)

// chromiumPath finds a Chromium or Chrome binary, or says why there is none.
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

// artifactsDir is where screenshots go: $ARTIFACTS_DIR, or a directory under the
// system's temporary directory. They are test output, never committed.
func artifactsDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("ARTIFACTS_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "slotrecovery-artifacts")
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

// saveScreenshot saves the whole page as a PNG.
func saveScreenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	saveShot(t, ctx, name, chromedp.FullScreenshot(100))
}

func saveShot(t *testing.T, ctx context.Context, name string, shot chromedp.Action[[]byte]) {
	t.Helper()
	png, err := chromedp.Run(ctx, shot)
	require.NoError(t, err)
	path := filepath.Join(artifactsDir(t), name)
	require.NoError(t, os.WriteFile(path, png, 0o644))
	t.Logf("screenshot: %s", path)
}

// simulateYes does to the database what a customer's YES does: the opening becomes
// filled by customerID and gets a booking. It is SQL on purpose: this package's browser
// tests are about what the dashboard shows. The real YES (a signed Twilio webhook on a
// running server) is covered end to end by TestBrowserOwnerSeesARealYes in
// cmd/server/browser_test.go.
func simulateYes(t *testing.T, pool *pgxpool.Pool, openingID, customerID uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `
			UPDATE slot_openings SET status = 'filled', filled_by = $2, filled_at = $3, updated_at = $3, version = version + 1
			WHERE id = $1 AND status = 'open'`, openingID, customerID, now)
		if err != nil {
			return err
		}
		if tag.RowsAffected() != 1 {
			return pgx.ErrNoRows
		}
		_, err = tx.Exec(ctx, `
			INSERT INTO bookings (opening_id, customer_id, shop_id, status, amount_cents, currency, created_at, updated_at, confirmed_at,
				checkout_expires_at)
			SELECT s.id, $2, s.shop_id, 'confirmed', s.price_cents, sh.currency, $3, $3, $3,
				CASE WHEN sh.payment_mode <> 'none' THEN $3::timestamptz + interval '10 minutes' END
			FROM slot_openings s JOIN shops sh ON sh.id = s.shop_id WHERE s.id = $1`, openingID, customerID, now)
		return err
	})
	require.NoError(t, err, "simulate YES for opening %s", openingID)
}

// TestBrowserDeclareAndFill drives Debian's Chromium through the dashboard: sign in,
// fail and then pass the form, see the opening listed, see it turn filled after a YES
// without reloading (the live refresh), and keep screenshots.
func TestBrowserDeclareAndFill(t *testing.T) {
	path, why := chromiumPath()
	if path == "" {
		t.Skip(why)
	}
	en := newEnv(t, envOpts{dev: true, refreshEvery: time.Second, hooks: true})
	customer := en.addCustomer(t, en.shopA, "+15555550142", "Dana Whitfield")
	// Every answer the browser got that was not a success, by path, so a console error
	// about a failed resource says which one.
	var failedMu sync.Mutex
	var failed []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		en.e.ServeHTTP(rec, r)
		if rec.status >= 400 && rec.status != http.StatusUnprocessableEntity {
			failedMu.Lock()
			failed = append(failed, fmt.Sprintf("%d %s %s", rec.status, r.Method, r.URL.Path))
			failedMu.Unlock()
		}
	}))
	t.Cleanup(srv.Close)

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancelTab := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(cancelTab)
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(cancelTimeout)

	// Collect what the page writes to the console: a blocked script or style (the
	// Content-Security-Policy) or a script error shows up there.
	var consoleMu sync.Mutex
	var consoleErrors []string
	consoleCtx, stopConsole := context.WithCancel(ctx)
	consoleDone := make(chan struct{})
	messages := chromedp.Console(consoleCtx)
	go func() {
		defer close(consoleDone)
		for m, err := range messages {
			if err != nil {
				return
			}
			// The invalid form's 422 answer is expected; Chromium logs every 4xx.
			expected := strings.Contains(m.Text, "status of 422")
			if (m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleException) && !expected {
				consoleMu.Lock()
				consoleErrors = append(consoleErrors, m.Text)
				consoleMu.Unlock()
			}
		}
	}()

	// Sign in: the dashboard sends a signed-out visitor to the form.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/dashboard"),
		chromedp.WaitVisible(chromedp.ID("api_key")),
	))
	saveScreenshot(t, ctx, "dashboard-1-login.png")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("api_key"), en.keyA),
		chromedp.Click(chromedp.CSS(`form[action="/dashboard/login"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("declare-h")),
	))

	// An empty form comes back with its messages next to the fields.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`form[action="/dashboard/openings"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("starts-error")),
	))
	msg, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("price-error")))
	require.NoError(t, err)
	require.Contains(t, msg, "Enter the price")
	saveScreenshot(t, ctx, "dashboard-2-form-errors.png")
	// Stay on the form's answer longer than the refresh interval, as a slow machine
	// does. The address bar now holds the form's action (POST only): the live refresh
	// must fetch the dashboard page, not that address, or it gets a 404 (the flaky
	// "404 for a resource" on 2-core machines).
	require.NoError(t, chromedp.Do(ctx, chromedp.Sleep(2500*time.Millisecond)))

	// Declare an opening tomorrow at 15:00, shop time.
	day := time.Now().In(en.shopA.Location).AddDate(0, 0, 1).Format(time.DateOnly)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetValue(chromedp.ID("starts-date"), day),
		chromedp.SetValue(chromedp.ID("starts-time"), "15:00"),
		chromedp.SetValue(chromedp.ID("duration"), "45"),
		chromedp.SendKeys(chromedp.ID("service"), "Beard trim"),
		chromedp.SendKeys(chromedp.ID("price"), "25.00"),
		chromedp.Click(chromedp.CSS(`form[action="/dashboard/openings"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`p.notice`)),
		chromedp.WaitVisible(chromedp.CSS(`tr.open-row`)),
	))
	open, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("live-open")))
	require.NoError(t, err)
	require.Contains(t, open, "Beard trim")
	require.Contains(t, open, "15:00")
	require.Contains(t, open, "Wave 1 due now")

	list, err := en.slots.List(context.Background(), en.shopA.ID, slots.StatusOpen, 10)
	require.NoError(t, err)
	require.Len(t, list, 1)
	opening := list[0]
	require.Equal(t, 2500, int(opening.PriceCents))
	saveScreenshot(t, ctx, "dashboard-3-open.png")

	// The customer says YES; the open page picks it up on its own.
	simulateYes(t, en.pool, opening.ID, customer.ID)
	filledRow := chromedp.CSS(`tr.filled-row[data-opening="` + opening.ID.String() + `"]`)
	waitCtx, cancelWait := context.WithTimeout(ctx, 20*time.Second)
	defer cancelWait()
	require.NoError(t, chromedp.Do(waitCtx, chromedp.WaitVisible(filledRow)), "live refresh shows the filled slot")
	filled, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("live-filled")))
	require.NoError(t, err)
	require.Contains(t, filled, "Beard trim")
	require.Contains(t, filled, "Dana Whitfield")
	require.Contains(t, filled, "+155******42")
	require.Contains(t, filled, "Paid")
	require.Contains(t, filled, "$25.00")
	require.NotContains(t, filled, "+15555550142")
	open, err = chromedp.Run(ctx, chromedp.Text(chromedp.ID("live-open")))
	require.NoError(t, err)
	require.Contains(t, open, "No open slots")
	totals, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("live-totals")))
	require.NoError(t, err)
	require.Contains(t, totals, "$25.00")
	saveScreenshot(t, ctx, "dashboard-4-filled.png")

	// The same page on a phone, with one more opening still being offered.
	_, err = en.slots.Declare(context.Background(), en.shopA, slots.NewOpening{
		StartsAt: time.Now().Add(30 * time.Hour).Truncate(time.Hour), DurationMinutes: 60, Service: "Colour and cut", PriceCents: 8000,
	})
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)),
		chromedp.Reload(),
		chromedp.WaitVisible(filledRow),
	))
	saveScreenshot(t, ctx, "dashboard-5-phone.png")
	require.NoError(t, chromedp.Do(ctx, chromedp.ScrollIntoView(chromedp.CSS("header"))))
	saveShot(t, ctx, "dashboard-6-phone-top.png", chromedp.CaptureScreenshot())
	require.NoError(t, chromedp.Do(ctx, chromedp.ScrollIntoView(chromedp.ID("open-h"))))
	saveShot(t, ctx, "dashboard-7-phone-lists.png", chromedp.CaptureScreenshot())

	// The owner's list: import a small file, see the customers, edit one.
	stopped := en.addCustomer(t, en.shopA, "+15555550199", "Sam Stopped")
	require.NoError(t, en.customers.OptOut(context.Background(), stopped.ID))
	csvPath := filepath.Join(t.TempDir(), "customers.csv")
	require.NoError(t, os.WriteFile(csvPath, []byte("phone,name,priority,sms_opt_in,preferences\n"+
		"+15555550161,Ada Lovelace,5,yes,\"days=mon,tue; times=09:00-12:00\"\n"+
		"+15555550162,Bea Brown,,no,\n"+
		"+15555550163,Cy Chan,,,services=Beard trim\n"+
		"555-0164,Dee Bad,,yes,\n"+
		"+15555550142,Dana Whitfield,2,yes,\n"), 0o644))
	require.NoError(t, chromedp.Do(ctx,
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(srv.URL+"/dashboard/customers"),
		chromedp.WaitVisible(chromedp.ID("import-file")),
		chromedp.SetUploadFiles(chromedp.ID("import-file"), []string{csvPath}),
		chromedp.Click(chromedp.CSS(`form[action="/dashboard/customers/import"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("import-report")),
	))
	report, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("main")))
	require.NoError(t, err)
	require.Regexp(t, `3\s+new`, report)
	require.Regexp(t, `1\s+updated`, report)
	require.Regexp(t, `1\s+not imported`, report)
	require.Contains(t, report, "E.164")
	saveScreenshot(t, ctx, "dashboard-8-import-report.png")

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/dashboard/customers"),
		chromedp.WaitVisible(chromedp.ID("customer-list")),
	))
	listText, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("customer-list")))
	require.NoError(t, err)
	for _, want := range []string{"Ada Lovelace", "Bea Brown", "Cy Chan", "Sam Stopped", "Opted out (STOP)", "Not opted in", "days=mon,tue; times=09:00-12:00"} {
		require.Contains(t, listText, want)
	}
	require.NotContains(t, listText, "+15555550161", "phones masked")
	saveScreenshot(t, ctx, "dashboard-9-customers.png")

	// The opted-out customer: seen as such, and the page says why it cannot be undone.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/dashboard/customers/"+stopped.ID.String()),
		chromedp.WaitVisible(chromedp.ID("optout-note")),
	))
	note, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("optout-note")))
	require.NoError(t, err)
	require.Contains(t, note, "only their own START")
	disabled, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("sms_opt_in").disabled`))
	require.NoError(t, err)
	require.True(t, disabled)

	// Edit Cy: a bad preference first (the message sits by the field), then a good one.
	page, err := en.customers.List(context.Background(), en.shopA.ID, customers.Query{Search: "Cy Chan"})
	require.NoError(t, err)
	require.Len(t, page.Customers, 1)
	cy := page.Customers[0]
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/dashboard/customers/"+cy.ID.String()),
		chromedp.WaitVisible(chromedp.ID("preferences")),
		chromedp.SetValue(chromedp.ID("preferences"), "days=someday"),
		chromedp.Click(chromedp.CSS(`form[action="/dashboard/customers/`+cy.ID.String()+`"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("preferences-error")),
	))
	saveScreenshot(t, ctx, "dashboard-10-customer-error.png")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetValue(chromedp.ID("preferences"), "days=sat; times=10:00-14:00; services=Beard trim"),
		chromedp.SetValue(chromedp.ID("priority"), "9"),
		chromedp.SetValue(chromedp.ID("language"), "fr"),
		chromedp.Click(chromedp.ID("sms_opt_in")),
		chromedp.Click(chromedp.CSS(`form[action="/dashboard/customers/`+cy.ID.String()+`"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`p.notice`)),
	))
	cy, err = en.customers.Get(context.Background(), en.shopA.ID, cy.ID)
	require.NoError(t, err)
	require.Equal(t, 9, cy.Priority)
	require.True(t, cy.SMSOptIn)
	require.Equal(t, language.French, cy.Language)
	require.Equal(t, customers.Preferences{Days: []int{6}, Windows: []customers.Window{{Start: 600, End: 840}}, Services: []string{"Beard trim"}}, cy.Preferences)

	// Settings: an error by its field, then a change that sticks.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/dashboard/settings"),
		chromedp.WaitVisible(chromedp.ID("set-timezone")),
		chromedp.SetValue(chromedp.ID("set-timezone"), "Mars/Olympus"),
		chromedp.SetValue(chromedp.ID("set-max-per-day"), "2"),
		chromedp.Click(chromedp.CSS(`form[action="/dashboard/settings"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("set-timezone-error")),
	))
	saveScreenshot(t, ctx, "dashboard-11-settings-error.png")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetValue(chromedp.ID("set-timezone"), "America/Chicago"),
		chromedp.SetValue(chromedp.ID("set-delay"), "120"),
		chromedp.SetValue(chromedp.ID("set-language"), "es"),
		chromedp.Click(chromedp.CSS(`form[action="/dashboard/settings"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`p.notice`)),
	))
	saveScreenshot(t, ctx, "dashboard-12-settings-saved.png")
	shopA, err := en.shops.Get(context.Background(), en.shopA.ID)
	require.NoError(t, err)
	require.Equal(t, "America/Chicago", shopA.Timezone)
	require.Equal(t, 2, shopA.Policy.MaxOffersPerDay)
	require.Equal(t, 2*time.Minute, shopA.Policy.FirstWaveDelay)
	require.Equal(t, language.Spanish, shopA.Language)

	// Rotate the API key from the settings page: the warning is there, the box must be
	// ticked, and the answer shows the new key once; this browser stays signed in.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/dashboard/settings"),
		chromedp.WaitVisible(chromedp.ID("rotate-warning")),
		chromedp.ScrollIntoView(chromedp.ID("rotate-key")),
		chromedp.Click(chromedp.ID("rotate-confirm")),
		chromedp.Click(chromedp.CSS(`form[action="/dashboard/settings/rotate-key"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("new-key")),
	))
	newKey, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("new-key")))
	require.NoError(t, err)
	rotated, err := en.shops.Authenticate(context.Background(), strings.TrimSpace(newKey))
	require.NoError(t, err, "the page shows the shop's new key")
	require.Equal(t, en.shopA.ID, rotated.ID)
	_, err = en.shops.Authenticate(context.Background(), en.keyA)
	require.ErrorIs(t, err, shops.ErrUnauthorized, "the old key stopped working")
	effects, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("main")))
	require.NoError(t, err)
	require.Contains(t, effects, "Your old key stopped working just now.")
	saveScreenshot(t, ctx, "dashboard-13-key-rotated.png")
	cookies, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.cookie`))
	require.NoError(t, err)
	require.NotContains(t, cookies, strings.TrimSpace(newKey), "the key is in no cookie script can read")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`a[href="/dashboard/settings"].btn`)),
		chromedp.WaitVisible(chromedp.ID("rotate-key")),
	))
	settingsText, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("main")))
	require.NoError(t, err)
	require.NotContains(t, settingsText, strings.TrimSpace(newKey), "the key is not shown again")

	// Integrations: the calendar's address with its copy button (the page's script shows
	// it), and an endpoint added, its secret shown once.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`nav a[href="/dashboard/integrations"]`)),
		chromedp.WaitVisible(chromedp.ID("calendar-url")),
		chromedp.WaitVisible(chromedp.CSS(`button[data-copy="calendar-url"]`)),
	))
	feed, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("calendar-url")))
	require.NoError(t, err)
	require.Contains(t, feed, "/calendar/cal_")
	saveScreenshot(t, ctx, "dashboard-14-integrations.png")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("ep-url"), "https://crm.example.com/slot-events"),
		chromedp.Click(chromedp.ID("ep-event-opening-filled")),
		chromedp.Click(chromedp.CSS(`form[action="/dashboard/integrations/endpoints"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("new-secret")),
		chromedp.WaitVisible(chromedp.CSS(`button[data-copy="new-secret"]`)),
	))
	secret, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("new-secret")))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(strings.TrimSpace(secret), "whsec_"), secret)
	saveScreenshot(t, ctx, "dashboard-15-endpoint-secret.png")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`a[href="/dashboard/integrations#endpoints"].btn`)),
		chromedp.WaitVisible(chromedp.CSS(`article.endpoint`)),
	))
	endpoints, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("endpoints")))
	require.NoError(t, err)
	require.Contains(t, endpoints, "https://crm.example.com/slot-events")
	require.Contains(t, endpoints, "Events: opening.filled")
	require.NotContains(t, endpoints, strings.TrimSpace(secret), "the secret is not shown again")
	saveScreenshot(t, ctx, "dashboard-16-endpoints.png")

	// The inbox: Dana's text waits; the navigation counts it on every page, the list
	// shows it, opening the thread reads it, and the owner's reply is queued.
	conv := en.textIn(t, en.shopA, customer.Phone, customer.ID, "SM-browser-1", "can I come at 4 instead?")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/dashboard"),
		chromedp.WaitVisible(chromedp.ID("nav-unread")),
	))
	badge, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("nav-unread")))
	require.NoError(t, err)
	require.Equal(t, "1 unread", strings.Join(strings.Fields(badge), " "))
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.ID("nav-inbox")),
		chromedp.WaitVisible(chromedp.ID("conversation-list")),
	))
	inboxText, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("conversation-list")))
	require.NoError(t, err)
	require.Contains(t, inboxText, "Dana Whitfield")
	require.Contains(t, inboxText, "can I come at 4 instead?")
	require.Contains(t, inboxText, "1 unread")
	saveScreenshot(t, ctx, "dashboard-17-inbox.png")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`a[href="/dashboard/inbox/`+conv.String()+`"]`)),
		chromedp.WaitVisible(chromedp.ID("thread")),
	))
	threadText, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("thread")))
	require.NoError(t, err)
	require.Contains(t, threadText, "can I come at 4 instead?")
	unreadLeft, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("nav-unread") === null`))
	require.NoError(t, err)
	require.True(t, unreadLeft, "viewing the thread read it: no badge")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("reply-body"), "Yes, 4pm works. See you then!"),
		chromedp.Click(chromedp.CSS(`#reply-form button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("thread-notice")),
	))
	threadText, err = chromedp.Run(ctx, chromedp.Text(chromedp.ID("thread")))
	require.NoError(t, err)
	require.Less(t, strings.Index(threadText, "can I come at 4 instead?"), strings.Index(threadText, "Yes, 4pm works. See you then!"),
		"oldest first, the reply last")
	var queued int
	require.NoError(t, en.pool.QueryRow(context.Background(),
		`SELECT count(*) FROM river_job WHERE kind = 'sms_text' AND args->>'to' = $1 AND args->>'body' = 'Yes, 4pm works. See you then!'`,
		customer.Phone).Scan(&queued))
	require.Equal(t, 1, queued, "the reply is queued as a text")
	saveScreenshot(t, ctx, "dashboard-18-thread-replied.png")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#status-form button[type=submit]`)),
		// The answer's form offers to reopen it (the page before had the notice too).
		chromedp.WaitReady(chromedp.CSS(`#status-form input[name=status][value=open]`)),
	))
	closedText, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("thread-status")))
	require.NoError(t, err)
	require.Contains(t, closedText, "closed")

	stopConsole()
	<-consoleDone
	consoleMu.Lock()
	defer consoleMu.Unlock()
	failedMu.Lock()
	defer failedMu.Unlock()
	require.Empty(t, consoleErrors, "the browser console reports no errors; failed answers: %v", failed)
}

// statusRecorder remembers the status a handler answered with.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
