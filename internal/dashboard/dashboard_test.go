package dashboard_test

import (
	"context"
	"encoding/csv"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/dashboard"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/slots"
)

// A Wednesday: 07:00 in New York, 12:00 in London.
var wednesday = time.Date(2026, 11, 18, 12, 0, 0, 0, time.UTC)

func TestNewRefusesAShortSecret(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday})
	_, err := dashboard.New(en.pool, en.shops, en.slots, dashboard.Config{SessionSecret: []byte("short")})
	require.ErrorContains(t, err, "32 bytes")
	_, err = dashboard.New(nil, en.shops, en.slots, dashboard.Config{SessionSecret: secret, Redis: en.redis})
	require.Error(t, err)
	_, err = dashboard.New(en.pool, en.shops, en.slots, dashboard.Config{SessionSecret: secret, Waves: en.waves})
	require.ErrorContains(t, err, "Redis is required")
	_, err = dashboard.New(en.pool, en.shops, en.slots, dashboard.Config{SessionSecret: secret, Redis: en.redis})
	require.ErrorContains(t, err, "Waves is required")
	_, err = dashboard.New(en.pool, en.shops, en.slots, dashboard.Config{SessionSecret: secret, Redis: en.redis, Waves: en.waves})
	require.ErrorContains(t, err, "Customers and Erasure are required")
}

func TestLoginPage(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday})

	rec := en.get("/dashboard")
	require.Equal(t, http.StatusSeeOther, rec.Code, "signed out: sent to the sign-in form")
	require.Equal(t, "/dashboard/login", rec.Header().Get("Location"))

	rec = en.get("/dashboard/login")
	require.Equal(t, http.StatusOK, rec.Code)
	body := rec.Body.String()
	assert.Contains(t, rec.Header().Get("Content-Type"), "text/html")
	assert.Contains(t, body, `<label for="api_key">Shop API key</label>`)
	assert.Contains(t, body, `<h1>Sign in</h1>`)
	assert.Contains(t, body, `<html lang="en">`)
	assert.Equal(t, "no-store", rec.Header().Get("Cache-Control"))
	assert.Contains(t, rec.Header().Get("Content-Security-Policy"), "frame-ancestors 'none'")
	ck := cookieNamed(rec, "sr_login")
	require.NotNil(t, ck)
	assert.True(t, ck.HttpOnly)
	assert.True(t, ck.Secure)
	assert.Equal(t, http.SameSiteLaxMode, ck.SameSite)
	assert.NotContains(t, body, ck.Value, "the form carries a MAC of the cookie, not the cookie itself")
}

func TestLogin(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday})
	form := en.get("/dashboard/login")
	loginCk := cookieNamed(form, "sr_login")
	token := csrfIn(t, form.Body.String())

	t.Run("a good key starts a session", func(t *testing.T) {
		rec := en.post("/dashboard/login", url.Values{"csrf": {token}, "api_key": {" " + en.keyA + " "}}, loginCk)
		require.Equal(t, http.StatusSeeOther, rec.Code)
		require.Equal(t, "/dashboard", rec.Header().Get("Location"))
		ck := cookieNamed(rec, "sr_session")
		require.NotNil(t, ck)
		assert.True(t, ck.HttpOnly)
		assert.True(t, ck.Secure)
		assert.Equal(t, http.SameSiteLaxMode, ck.SameSite)
		assert.Equal(t, "/dashboard", ck.Path)
		assert.Equal(t, int((12 * time.Hour).Seconds()), ck.MaxAge)
		assert.WithinDuration(t, wednesday.Add(12*time.Hour), ck.Expires, time.Second)
		if gone := cookieNamed(rec, "sr_login"); assert.NotNil(t, gone) {
			assert.Negative(t, gone.MaxAge, "the login cookie is cleared")
		}
		body, _ := en.page(t, ck, "/dashboard")
		assert.Contains(t, body, "Ada&#39;s Barbers")

		rec = en.get("/dashboard/login", ck)
		assert.Equal(t, http.StatusSeeOther, rec.Code, "signed in: the login page sends you on")
	})

	cases := []struct {
		name   string
		form   url.Values
		cookie bool
		status int
		says   string
	}{
		{"a wrong key", url.Values{"csrf": {token}, "api_key": {"shop_not-a-real-key"}}, true, http.StatusUnauthorized, "That API key is not valid"},
		{"no key", url.Values{"csrf": {token}}, true, http.StatusUnauthorized, "Enter your shop&#39;s API key"},
		{"no CSRF token", url.Values{"api_key": {en.keyA}}, true, http.StatusForbidden, "This form has expired"},
		{"a forged CSRF token", url.Values{"csrf": {"Zm9yZ2Vk"}, "api_key": {en.keyA}}, true, http.StatusForbidden, "This form has expired"},
		{"no login cookie", url.Values{"csrf": {token}, "api_key": {en.keyA}}, false, http.StatusForbidden, "This form has expired"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ck := loginCk
			if !tc.cookie {
				ck = nil
			}
			rec := en.post("/dashboard/login", tc.form, ck)
			require.Equal(t, tc.status, rec.Code)
			assert.Contains(t, rec.Body.String(), tc.says)
			assert.Contains(t, rec.Header().Get("Content-Type"), "text/html")
			assert.Nil(t, cookieNamed(rec, "sr_session"))
		})
	}
}

func TestSessionCookieIsNotSecureInDevMode(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday, dev: true})
	ck := en.login(t, en.keyA)
	assert.False(t, ck.Secure)
	assert.True(t, ck.HttpOnly)
	assert.Equal(t, http.SameSiteLaxMode, ck.SameSite)
}

func TestMissingOrForgedSession(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday})
	good := en.login(t, en.keyA)
	_, csrf := en.page(t, good, "/dashboard")
	open := insertOpening(t, en.pool, en.shopA.ID, wednesday.Add(48*time.Hour), wednesday, "Cut", 3000, slots.StatusOpen)

	// A second dashboard with another secret makes well-formed cookies this one must
	// refuse.
	other, err := dashboard.New(en.pool, en.shops, en.slots, dashboard.Config{
		Customers: en.customers, Erasure: en.erasure,
		SessionSecret: []byte("another-secret-another-secret-another"), Secure: true, Now: en.clock.Now,
		Redis: en.redis, KeyPrefix: en.prefix, Waves: en.waves,
	})
	require.NoError(t, err)
	otherEnv := *en
	otherEnv.e = newEcho(other)
	foreign := otherEnv.login(t, en.keyA)

	parts := strings.Split(good.Value, ".")
	require.Len(t, parts, 6)
	swapped := strings.Join(append([]string{parts[0], en.shopB.ID.String()}, parts[2:]...), ".")
	longer := strings.Join([]string{parts[0], parts[1], "9999999999", parts[3], parts[4], parts[5]}, ".")
	newerKey := strings.Join([]string{parts[0], parts[1], parts[2], parts[3], "2", parts[5]}, ".")

	cases := map[string]*http.Cookie{
		"no cookie":             nil,
		"garbage":               {Name: "sr_session", Value: "garbage"},
		"empty":                 {Name: "sr_session", Value: ""},
		"another shop's id":     {Name: "sr_session", Value: swapped},
		"a stretched expiry":    {Name: "sr_session", Value: longer},
		"a raised key version":  {Name: "sr_session", Value: newerKey},
		"another server secret": {Name: "sr_session", Value: foreign.Value},
		"a truncated MAC":       {Name: "sr_session", Value: good.Value[:len(good.Value)-4]},
	}
	for name, ck := range cases {
		t.Run(name, func(t *testing.T) {
			for _, path := range []string{"/dashboard", "/dashboard/export.csv?from=2026-11-01&to=2026-11-30"} {
				rec := en.get(path, ck)
				require.Equal(t, http.StatusSeeOther, rec.Code, path)
				require.Equal(t, "/dashboard/login", rec.Header().Get("Location"))
			}
			rec := en.post("/dashboard/openings/"+open.String()+"/cancel", url.Values{"csrf": {csrf}}, ck)
			require.Equal(t, http.StatusSeeOther, rec.Code)
			require.Equal(t, "/dashboard/login", rec.Header().Get("Location"))
			rec = en.post("/dashboard/openings", declareForm("2026-11-20", "15:00", "30", "Cut", "30.00", csrf), ck)
			require.Equal(t, http.StatusSeeOther, rec.Code)
			require.Equal(t, "/dashboard/login", rec.Header().Get("Location"))
		})
	}
	require.Equal(t, slots.StatusOpen, openingStatus(t, en.pool, open))
	require.Equal(t, 1, countOpenings(t, en.pool, en.shopA.ID))

	t.Run("expired", func(t *testing.T) {
		en.clock.Set(wednesday.Add(12*time.Hour + time.Second))
		defer en.clock.Set(wednesday)
		rec := en.get("/dashboard", good)
		require.Equal(t, http.StatusSeeOther, rec.Code)
		require.Equal(t, "/dashboard/login", rec.Header().Get("Location"))
	})
	t.Run("still valid just before expiry", func(t *testing.T) {
		en.clock.Set(wednesday.Add(12*time.Hour - time.Second))
		defer en.clock.Set(wednesday)
		rec := en.get("/dashboard", good)
		require.Equal(t, http.StatusOK, rec.Code)
	})
}

func TestLogout(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday})
	ck := en.login(t, en.keyA)
	_, csrf := en.page(t, ck, "/dashboard")

	rec := en.post("/dashboard/logout", url.Values{}, ck)
	require.Equal(t, http.StatusForbidden, rec.Code, "no CSRF token")
	assert.Nil(t, cookieNamed(rec, "sr_session"))

	rec = en.post("/dashboard/logout", url.Values{"csrf": {csrf}}, ck)
	require.Equal(t, http.StatusSeeOther, rec.Code)
	require.Equal(t, "/dashboard/login", rec.Header().Get("Location"))
	cleared := cookieNamed(rec, "sr_session")
	require.NotNil(t, cleared)
	assert.Negative(t, cleared.MaxAge)
	assert.Empty(t, cleared.Value)

	rec = en.post("/dashboard/logout", url.Values{"csrf": {csrf}})
	require.Equal(t, http.StatusSeeOther, rec.Code, "signing out twice is harmless")
}

func TestDashboardShowsOnlyTheShopsOwnData(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday})
	ada := en.addCustomer(t, en.shopA, "+15555550123", "Dana Whitfield")
	bea := en.addCustomer(t, en.shopB, "+447700900555", "Brian Other")

	// Friday 15:00 in New York.
	a := insertOpening(t, en.pool, en.shopA.ID, time.Date(2026, 11, 20, 20, 0, 0, 0, time.UTC), wednesday.Add(-time.Hour), "Skin fade", 4500, slots.StatusOpen)
	book(t, en.pool, a, ada.ID, ledger.BookingConfirmed, 4500, wednesday.Add(-30*time.Minute))
	b := insertOpening(t, en.pool, en.shopB.ID, wednesday.Add(30*time.Hour), wednesday.Add(-time.Hour), "Secret perm", 99999, slots.StatusOpen)
	book(t, en.pool, b, bea.ID, ledger.BookingConfirmed, 99999, wednesday.Add(-20*time.Minute))
	insertOpening(t, en.pool, en.shopB.ID, wednesday.Add(50*time.Hour), wednesday, "Hidden colour", 1234, slots.StatusOpen)

	body, _ := en.page(t, en.login(t, en.keyA), "/dashboard")
	assert.Contains(t, body, "Skin fade")
	assert.Contains(t, body, "Fri 20 Nov 2026, 15:00", "local day and time in the shop's zone")
	assert.Contains(t, body, `datetime="2026-11-20T20:00:00Z"`)
	assert.Contains(t, body, "Dana Whitfield")
	assert.Contains(t, html.UnescapeString(body), "+155******23", "masked phone")
	assert.NotContains(t, html.UnescapeString(body), "5555550123", "never the full phone")
	assert.Contains(t, body, `<span class="badge badge-ok">Paid</span>`)
	assert.Contains(t, body, "$45.00")
	for _, theirs := range []string{"Secret perm", "Brian Other", "999.99", "Hidden colour", "+4477"} {
		assert.NotContains(t, body, theirs)
	}

	body, _ = en.page(t, en.login(t, en.keyB), "/dashboard")
	assert.Contains(t, body, "Secret perm")
	assert.Contains(t, body, "Hidden colour")
	assert.Contains(t, body, `<span class="badge badge-ok">Confirmed</span>`, "a shop without payments sees Confirmed, not Paid")
	assert.Contains(t, body, "€999.99")
	assert.NotContains(t, body, "Skin fade")
	assert.NotContains(t, body, "Dana Whitfield")
}

func TestTotalsAndChart(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday})
	c := en.addCustomer(t, en.shopA, "+15555550123", "Dana Whitfield")
	later := wednesday.Add(72 * time.Hour)
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339, s)
		require.NoError(t, err)
		return tm
	}
	filled := func(created, booked string, status string, cents int64) {
		id := insertOpening(t, en.pool, en.shopA.ID, later, at(created), "Cut", cents, slots.StatusOpen)
		book(t, en.pool, id, c.ID, status, cents, at(booked))
	}
	// This week (from Monday 16 Nov 00:00 New York = 05:00Z).
	filled("2026-11-17T10:00:00Z", "2026-11-17T10:30:00Z", ledger.BookingConfirmed, 4500) // 30 min
	filled("2026-11-17T12:00:00Z", "2026-11-17T13:30:00Z", ledger.BookingConfirmed, 6000) // 90 min
	filled("2026-11-18T11:00:00Z", "2026-11-18T11:05:00Z", ledger.BookingPendingPayment, 2500)
	insertOpening(t, en.pool, en.shopA.ID, later, at("2026-11-18T09:00:00Z"), "Open", 1000, slots.StatusOpen)
	insertOpening(t, en.pool, en.shopA.ID, later, at("2026-11-18T10:00:00Z"), "Gone", 1000, slots.StatusCancelled)
	// Sunday 23:30 in New York, already Monday in UTC: last week, this month.
	filled("2026-11-16T04:00:00Z", "2026-11-16T04:30:00Z", ledger.BookingConfirmed, 700) // 30 min
	// Earlier this month.
	filled("2026-11-05T12:00:00Z", "2026-11-05T12:10:00Z", ledger.BookingConfirmed, 3000) // 10 min
	// Last month.
	filled("2026-10-20T12:00:00Z", "2026-10-20T12:10:00Z", ledger.BookingConfirmed, 1000)
	// Another shop's money never counts.
	bc := en.addCustomer(t, en.shopB, "+447700900555", "Brian Other")
	bo := insertOpening(t, en.pool, en.shopB.ID, later, at("2026-11-17T10:00:00Z"), "Perm", 88800, slots.StatusOpen)
	book(t, en.pool, bo, bc.ID, ledger.BookingConfirmed, 88800, at("2026-11-17T10:01:00Z"))

	body, _ := en.page(t, en.login(t, en.keyA), "/dashboard")
	week, month := section(t, body, `id="t-week"`, `id="t-month"`), section(t, body, `id="t-month"`, `<figure`)

	assert.Contains(t, week, "16–22 Nov")
	assert.Contains(t, week, `<p class="big">$105.00</p>`)
	assert.Contains(t, week, "plus $25.00 awaiting payment (1)")
	assert.Contains(t, week, "<dt>Slots recovered</dt><dd>2</dd>")
	assert.Contains(t, week, "75% <span class=\"muted\">3 of 4 openings filled</span>")
	assert.Contains(t, week, "<dt>Median time to booking</dt><dd>1 h 0 min</dd>")

	assert.Contains(t, month, "1–30 Nov")
	assert.Contains(t, month, `<p class="big">$142.00</p>`)
	assert.Contains(t, month, "<dt>Slots recovered</dt><dd>4</dd>")
	assert.Contains(t, month, "83% <span class=\"muted\">5 of 6 openings filled</span>")
	assert.Contains(t, month, "<dt>Median time to booking</dt><dd>30 min</dd>")

	assert.Contains(t, body, `<svg class="chart"`)
	assert.Contains(t, body, "<title>Week of 16 Nov: $105.00</title>")
	assert.Contains(t, body, "<title>Week of 9 Nov: $7.00</title>", "the Sunday-night booking is in the local week before")
	assert.Contains(t, body, "<title>Week of 2 Nov: $30.00</title>")
	assert.Contains(t, body, "<title>Week of 19 Oct: $10.00</title>")
	assert.Contains(t, body, "<title>Week of 28 Sep: $0.00</title>", "eight weeks, oldest first")
	assert.NotContains(t, body, "$888")
	assert.Contains(t, body, `text-anchor="middle">$105</text>`, "bar labels are short")
}

// section returns body from the first from marker to the next to marker.
func section(t *testing.T, body, from, to string) string {
	t.Helper()
	i := strings.Index(body, from)
	require.GreaterOrEqual(t, i, 0, from)
	j := strings.Index(body[i:], to)
	require.Greater(t, j, 0, to)
	return body[i : i+j]
}

func TestFilledSlotsArePaged(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday})
	c := en.addCustomer(t, en.shopA, "+15555550123", "Dana Whitfield")
	for i := range 27 {
		id := insertOpening(t, en.pool, en.shopA.ID, wednesday.Add(time.Duration(24+i)*time.Hour), wednesday.Add(-48*time.Hour),
			"Service "+string(rune('A'+i)), 1000, slots.StatusOpen)
		book(t, en.pool, id, c.ID, ledger.BookingConfirmed, 1000, wednesday.Add(-time.Duration(60-i)*time.Minute))
	}
	ck := en.login(t, en.keyA)

	body, _ := en.page(t, ck, "/dashboard")
	assert.Equal(t, 25, strings.Count(body, `class="filled-row"`))
	assert.Contains(t, body, "Service [", "newest booking first") // 'A'+26
	assert.NotContains(t, body, ">Service A<")
	assert.Contains(t, body, `href="/dashboard?page=2#filled" rel="next"`)
	assert.NotContains(t, body, `rel="prev"`)

	body, _ = en.page(t, ck, "/dashboard?page=2")
	assert.Equal(t, 2, strings.Count(body, `class="filled-row"`))
	assert.Contains(t, body, "Service A")
	assert.Contains(t, body, `href="/dashboard?page=1#filled" rel="prev"`)
	assert.NotContains(t, body, `rel="next"`)

	body, _ = en.page(t, ck, "/dashboard?page=nonsense")
	assert.Equal(t, 25, strings.Count(body, `class="filled-row"`))
}

func TestOpenSlotsShowOffersRepliesAndWaves(t *testing.T) {
	t.Parallel()
	// The real clock: River stamps the first wave's job with it.
	en := newEnv(t, envOpts{})
	now := time.Now()
	ctx := context.Background()
	o, err := en.slots.Declare(ctx, en.shopA, slots.NewOpening{
		StartsAt: now.Add(26 * time.Hour), DurationMinutes: 45, Service: "Hot towel shave", PriceCents: 3500,
	})
	require.NoError(t, err)
	ck := en.login(t, en.keyA)

	body, _ := en.page(t, ck, "/dashboard")
	row := section(t, body, `data-opening="`+o.ID.String()+`"`, "</tr>")
	assert.Contains(t, row, "Hot towel shave")
	assert.Contains(t, row, "$35.00")
	assert.Contains(t, row, "0 sent")
	assert.Contains(t, row, "Next: Wave 1 due now", "the first wave's job is waiting for a worker")

	// Wave 1 ran: three texts, one NO; wave 2 is scheduled in ten minutes.
	for i, status := range []string{"sent", "declined", "sent"} {
		cu := en.addCustomer(t, en.shopA, "+1555555020"+string(rune('0'+i)), "")
		_, err := en.pool.Exec(ctx, `
			INSERT INTO slot_offers (opening_id, customer_id, shop_id, generation, wave, status, created_at, sent_at)
			VALUES ($1, $2, $3, 1, 1, $4, $5, $5)`, o.ID, cu.ID, en.shopA.ID, status, now.Add(-5*time.Minute))
		require.NoError(t, err)
	}
	cu := en.addCustomer(t, en.shopA, "+15555550300", "")
	_, err = en.pool.Exec(ctx, `
		INSERT INTO slot_offers (opening_id, customer_id, shop_id, generation, wave, status, created_at)
		VALUES ($1, $2, $3, 1, 2, 'queued', $4)`, o.ID, cu.ID, en.shopA.ID, now)
	require.NoError(t, err)
	_, err = en.pool.Exec(ctx, `UPDATE river_job SET state = 'completed', finalized_at = now() WHERE kind = 'offer_wave'`)
	require.NoError(t, err)
	next := now.Add(10 * time.Minute)
	_, err = en.river.Insert(ctx, jobs.Wave{OpeningID: o.ID, Generation: 1, Wave: 2}, &river.InsertOpts{ScheduledAt: next})
	require.NoError(t, err)
	// A job of another opening (of another shop) does not leak in.
	bo := insertOpening(t, en.pool, en.shopB.ID, now.Add(30*time.Hour), now, "Perm", 1000, slots.StatusOpen)
	_, err = en.river.Insert(ctx, jobs.Wave{OpeningID: bo, Generation: 1, Wave: 7}, &river.InsertOpts{ScheduledAt: now.Add(time.Minute)})
	require.NoError(t, err)

	body, _ = en.page(t, ck, "/dashboard")
	row = section(t, body, `data-opening="`+o.ID.String()+`"`, "</tr>")
	local := func(t time.Time) string { return t.In(en.shopA.Location).Format("15:04") }
	assert.Contains(t, row, "3 sent")
	assert.Contains(t, row, "0 yes · 1 no")
	assert.Contains(t, row, "<strong>Wave 1</strong>: 3 texted, first at ")
	assert.Contains(t, row, "<strong>Wave 2</strong>: 1 queued")
	assert.Contains(t, row, "Next: Wave 2 at ")
	assert.Contains(t, row, local(next))
	assert.NotContains(t, body, "Wave 7")
}

func declareForm(date, tm, duration, service, price, csrf string) url.Values {
	v := url.Values{"date": {date}, "time": {tm}, "duration_minutes": {duration}, "service": {service}, "price": {price}}
	if csrf != "" {
		v.Set("csrf", csrf)
	}
	return v
}

func TestDeclareOpening(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday}) // 07:00 in New York; the shop needs an hour's lead
	ck := en.login(t, en.keyA)
	_, csrf := en.page(t, ck, "/dashboard")

	t.Run("valid", func(t *testing.T) {
		rec := en.post("/dashboard/openings", declareForm("2026-11-20", "15:00", "45", "  Colour  ", "45.50", csrf), ck)
		require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
		require.Equal(t, "/dashboard?notice=declared#open", rec.Header().Get("Location"))
		list, err := en.slots.List(context.Background(), en.shopA.ID, slots.StatusOpen, 10)
		require.NoError(t, err)
		require.Len(t, list, 1)
		o := list[0]
		assert.Equal(t, time.Date(2026, 11, 20, 20, 0, 0, 0, time.UTC), o.StartsAt, "15:00 in New York")
		assert.Equal(t, 45, o.DurationMinutes)
		assert.Equal(t, "Colour", o.Service)
		assert.Equal(t, int64(4550), o.PriceCents)

		body, _ := en.page(t, ck, "/dashboard?notice=declared")
		assert.Contains(t, body, `<p class="notice" role="status">Opening declared.`)
		assert.Contains(t, body, "Colour")
	})

	cases := []struct {
		name                      string
		date, tm, dur, svc, price string
		errID, says               string
		alsoID                    string
	}{
		{"no date", "", "15:00", "30", "Cut", "30", "starts-error", "Enter the date of the opening.", ""},
		{"no time", "2026-11-20", "", "30", "Cut", "30", "starts-error", "Enter the start time of the opening.", ""},
		{"a date that is not one", "2026-02-30", "15:00", "30", "Cut", "30", "starts-error", "Enter the date as YYYY-MM-DD", ""},
		{"in the past", "2026-11-17", "15:00", "30", "Cut", "30", "starts-error", "The start must be in the future.", ""},
		{"inside the lead time", "2026-11-18", "07:30", "30", "Cut", "30", "starts-error", "The start is inside the shop's minimum lead time of 60 minutes.", ""},
		{"more than a year ahead", "2027-12-01", "15:00", "30", "Cut", "30", "starts-error", "The start must be within a year.", ""},
		{"a length that is not a number", "2026-11-20", "15:00", "half an hour", "Cut", "30", "duration-error", "Enter the length in whole minutes", ""},
		{"a zero length", "2026-11-20", "15:00", "0", "Cut", "30", "duration-error", "The length in minutes must be between 1 and 1440.", ""},
		{"no service", "2026-11-20", "15:00", "30", "   ", "30", "service-error", "The service is required (at most 100 characters).", ""},
		{"a service too long", "2026-11-20", "15:00", "30", strings.Repeat("x", 101), "30", "service-error", "The service is required", ""},
		{"a price that is not a number", "2026-11-20", "15:00", "30", "Cut", "forty", "price-error", "Enter the price as a number with at most 2 decimals", ""},
		{"a price with too many decimals", "2026-11-20", "15:00", "30", "Cut", "45.999", "price-error", "Enter the price as a number", ""},
		{"a negative price", "2026-11-20", "15:00", "30", "Cut", "-5", "price-error", "Enter the price as a number", ""},
		{"a zero price", "2026-11-20", "15:00", "30", "Cut", "0.00", "price-error", "Enter a price above zero and at most $999,999.99.", ""},
		{"no price", "2026-11-20", "15:00", "30", "Cut", "", "price-error", "Enter the price, for example 45.00.", ""},
		{"two problems at once", "", "", "x", "Cut", "", "starts-error", "Enter the date and start time of the opening.", "price-error"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := countOpenings(t, en.pool, en.shopA.ID)
			rec := en.post("/dashboard/openings", declareForm(tc.date, tc.tm, tc.dur, tc.svc, tc.price, csrf), ck)
			require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
			body := rec.Body.String()
			assert.Contains(t, fieldError(body, tc.errID), tc.says)
			if tc.alsoID != "" {
				assert.NotEmpty(t, fieldError(body, tc.alsoID))
			}
			assert.Contains(t, body, `aria-invalid="true"`)
			assert.Contains(t, body, `<div class="error-summary" role="alert"`)
			assert.Contains(t, body, `value="`+strings.TrimSpace(tc.svc)+`"`, "what was typed is kept")
			assert.Equal(t, before, countOpenings(t, en.pool, en.shopA.ID))
		})
	}

	t.Run("no CSRF token", func(t *testing.T) {
		before := countOpenings(t, en.pool, en.shopA.ID)
		rec := en.post("/dashboard/openings", declareForm("2026-11-21", "15:00", "30", "Cut", "30", ""), ck)
		require.Equal(t, http.StatusForbidden, rec.Code)
		assert.Contains(t, rec.Body.String(), "This form has expired")
		assert.Equal(t, before, countOpenings(t, en.pool, en.shopA.ID))
	})
	t.Run("another session's CSRF token", func(t *testing.T) {
		_, otherCSRF := en.page(t, en.login(t, en.keyA), "/dashboard")
		require.NotEqual(t, csrf, otherCSRF)
		rec := en.post("/dashboard/openings", declareForm("2026-11-21", "15:00", "30", "Cut", "30", otherCSRF), ck)
		require.Equal(t, http.StatusForbidden, rec.Code)
	})
}

func TestCancelOpening(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday})
	ck := en.login(t, en.keyA)
	_, csrf := en.page(t, ck, "/dashboard")
	mine := insertOpening(t, en.pool, en.shopA.ID, wednesday.Add(48*time.Hour), wednesday, "Cut", 3000, slots.StatusOpen)
	theirs := insertOpening(t, en.pool, en.shopB.ID, wednesday.Add(48*time.Hour), wednesday, "Perm", 3000, slots.StatusOpen)
	filled := insertOpening(t, en.pool, en.shopA.ID, wednesday.Add(50*time.Hour), wednesday, "Beard", 3000, slots.StatusOpen)
	book(t, en.pool, filled, en.addCustomer(t, en.shopA, "+15555550123", "Dana").ID, ledger.BookingConfirmed, 3000, wednesday)

	t.Run("no CSRF token", func(t *testing.T) {
		rec := en.post("/dashboard/openings/"+mine.String()+"/cancel", url.Values{}, ck)
		require.Equal(t, http.StatusForbidden, rec.Code)
		require.Equal(t, slots.StatusOpen, openingStatus(t, en.pool, mine))
	})
	t.Run("another shop's opening is not found", func(t *testing.T) {
		rec := en.post("/dashboard/openings/"+theirs.String()+"/cancel", url.Values{"csrf": {csrf}}, ck)
		require.Equal(t, http.StatusNotFound, rec.Code)
		assert.Contains(t, rec.Header().Get("Content-Type"), "text/html")
		assert.Contains(t, rec.Body.String(), "<h1>Page not found</h1>")
		require.Equal(t, slots.StatusOpen, openingStatus(t, en.pool, theirs))
	})
	for _, id := range []string{uuid.NewString(), "not-a-uuid"} {
		t.Run("unknown id "+id, func(t *testing.T) {
			rec := en.post("/dashboard/openings/"+id+"/cancel", url.Values{"csrf": {csrf}}, ck)
			require.Equal(t, http.StatusNotFound, rec.Code)
			assert.Contains(t, rec.Header().Get("Content-Type"), "text/html")
		})
	}
	t.Run("a filled opening cannot be cancelled", func(t *testing.T) {
		rec := en.post("/dashboard/openings/"+filled.String()+"/cancel", url.Values{"csrf": {csrf}}, ck)
		require.Equal(t, http.StatusConflict, rec.Code)
		assert.Contains(t, rec.Body.String(), `<p class="alert" role="alert">That opening could not be cancelled: only an open opening can be cancelled; this one is filled.</p>`)
		require.Equal(t, slots.StatusFilled, openingStatus(t, en.pool, filled))
	})
	t.Run("own open opening", func(t *testing.T) {
		body, _ := en.page(t, ck, "/dashboard")
		assert.Contains(t, body, `action="/dashboard/openings/`+mine.String()+`/cancel"`)
		rec := en.post("/dashboard/openings/"+mine.String()+"/cancel", url.Values{"csrf": {csrf}}, ck)
		require.Equal(t, http.StatusSeeOther, rec.Code)
		require.Equal(t, "/dashboard?notice=cancelled#open", rec.Header().Get("Location"))
		require.Equal(t, slots.StatusCancelled, openingStatus(t, en.pool, mine))
		body, _ = en.page(t, ck, "/dashboard?notice=cancelled")
		assert.Contains(t, body, "Opening cancelled.")
		assert.NotContains(t, body, `action="/dashboard/openings/`+mine.String()+`/cancel"`)
	})
}

func TestExportCSV(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday})
	c := en.addCustomer(t, en.shopA, "+15555550123", "=HYPERLINK(\"x\")")
	ny := en.shopA.Location
	in1 := insertOpening(t, en.pool, en.shopA.ID, time.Date(2026, 11, 1, 0, 30, 0, 0, ny), wednesday, "First", 4500, slots.StatusOpen)
	b1 := book(t, en.pool, in1, c.ID, ledger.BookingConfirmed, 4500, wednesday)
	// A deposit booking whose customer accepted policy version 3 and was charged a no-show fee.
	_, err := en.pool.Exec(context.Background(), `INSERT INTO booking_terms (booking_id, shop_id, mode, price_cents, charged_cents,
			keep_card, policy_version, policy_text, policy_sha256, late_cancel_hours, no_show_fee_cents, late_cancel_fee_cents,
			accepted_at, created_at)
		VALUES ($1, $2, 'deposit', 4500, 900, true, 3, 'Policy', 'abc123', 24, 2000, 0, '2026-10-31T12:00:00Z', now())`, b1, en.shopA.ID)
	require.NoError(t, err)
	_, err = en.pool.Exec(context.Background(), `INSERT INTO booking_fees (booking_id, shop_id, kind, state, amount_cents, currency, created_at, updated_at)
		VALUES ($1, $2, 'no_show', 'charged', 2000, 'usd', now(), now())`, b1, en.shopA.ID)
	require.NoError(t, err)
	in2 := insertOpening(t, en.pool, en.shopA.ID, time.Date(2026, 11, 30, 23, 30, 0, 0, ny), wednesday, "Last", 1999, slots.StatusOpen)
	book(t, en.pool, in2, c.ID, ledger.BookingPendingPayment, 1999, wednesday)
	out := insertOpening(t, en.pool, en.shopA.ID, time.Date(2026, 12, 1, 0, 30, 0, 0, ny), wednesday, "December", 1000, slots.StatusOpen)
	book(t, en.pool, out, c.ID, ledger.BookingConfirmed, 1000, wednesday)
	insertOpening(t, en.pool, en.shopA.ID, time.Date(2026, 11, 10, 12, 0, 0, 0, ny), wednesday, "Still open", 1000, slots.StatusOpen)
	// The first slot was Ana's time: the file names her.
	_, err = en.pool.Exec(context.Background(), `WITH ana AS (INSERT INTO staff (shop_id, name, created_at, updated_at) VALUES ($1, 'Ana', now(), now()) RETURNING id)
		UPDATE slot_openings SET staff_id = (SELECT id FROM ana) WHERE id = $2`, en.shopA.ID, in1)
	require.NoError(t, err)
	bo := insertOpening(t, en.pool, en.shopB.ID, time.Date(2026, 11, 10, 12, 0, 0, 0, time.UTC), wednesday, "Theirs", 1000, slots.StatusOpen)
	book(t, en.pool, bo, en.addCustomer(t, en.shopB, "+447700900555", "Brian").ID, ledger.BookingConfirmed, 1000, wednesday)
	ck := en.login(t, en.keyA)

	rec := en.get("/dashboard/export.csv?from=2026-11-01&to=2026-11-30", ck)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Equal(t, "text/csv; charset=utf-8", rec.Header().Get("Content-Type"))
	assert.Equal(t, `attachment; filename="filled-slots_2026-11-01_2026-11-30.csv"`, rec.Header().Get("Content-Disposition"))
	rows, err := csv.NewReader(strings.NewReader(rec.Body.String())).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 3, rec.Body.String())
	assert.Equal(t, []string{"opening_id", "date", "start_time", "timezone", "duration_minutes", "service",
		"customer_name", "customer_phone_masked", "opening_status", "payment_status", "amount", "currency", "booking_id",
		"platform_fee", "net_amount", "staff",
		// No-show protection (issue 48).
		"payment_mode", "charged_at_yes", "policy_version", "policy_sha256", "policy_accepted_at",
		"fee_kind", "fee_outcome", "fee_amount"}, rows[0])
	assert.Equal(t, []string{in1.String(), "2026-11-01", "00:30", "America/New_York", "30", "First",
		`'=HYPERLINK("x")`, "+155******23", "filled", "Deposit paid", "45.00", "USD"}, rows[1][:12],
		"its payment as its own terms have it (a deposit), in a checkout shop")
	assert.NotEmpty(t, rows[1][12])
	assert.Equal(t, []string{"deposit", "9.00", "3", "abc123", "2026-10-31T12:00:00Z", "no_show", "charged", "20.00"}, rows[1][16:],
		"the booking's terms, its accepted policy and its fee (issue 48)")
	assert.Equal(t, []string{in2.String(), "2026-11-30", "23:30"}, rows[2][:3])
	assert.Equal(t, "Awaiting payment", rows[2][9])
	assert.Equal(t, "19.99", rows[2][10])
	assert.Equal(t, []string{"0.00", "19.99", ""}, rows[2][13:16], "no platform fee without Stripe Connect: the shop gets it all; anyone's time")
	assert.Equal(t, []string{"", "", "", "", "", "", "", ""}, rows[2][16:], "no terms, no fee: a plain checkout")
	assert.Equal(t, "Ana", rows[1][15], "the person whose time was booked")
	assert.NotContains(t, rec.Body.String(), "+15555550123")
	assert.NotContains(t, rec.Body.String(), "Theirs")

	for _, q := range []string{"", "from=2026-11-01", "from=yesterday&to=today", "from=2026-11-30&to=2026-11-01", "from=2025-01-01&to=2026-11-30"} {
		rec := en.get("/dashboard/export.csv?"+q, ck)
		assert.Equal(t, http.StatusBadRequest, rec.Code, q)
		assert.Contains(t, rec.Header().Get("Content-Type"), "text/html", q)
		assert.Contains(t, rec.Body.String(), "<h1>Check the dates</h1>", q)
	}
}

func TestStaticAndUnknownPaths(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday})

	body := en.get("/dashboard/login").Body.String()
	m := strings.Index(body, "/dashboard/static/dashboard.css?v=")
	require.GreaterOrEqual(t, m, 0, "the page links its versioned stylesheet")

	rec := en.get("/dashboard/static/dashboard.css")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "text/css; charset=utf-8", rec.Header().Get("Content-Type"))
	assert.Contains(t, rec.Body.String(), ".card")
	rec = en.get("/dashboard/static/refresh.js")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "text/javascript; charset=utf-8", rec.Header().Get("Content-Type"))

	rec = en.post("/dashboard", url.Values{})
	assert.Equal(t, http.StatusMethodNotAllowed, rec.Code)
	assert.Contains(t, rec.Header().Get("Content-Type"), "text/html")
	rec = en.get("/dashboard/")
	assert.Equal(t, http.StatusMovedPermanently, rec.Code)

	for _, p := range []string{"/dashboard/static/missing.css", "/dashboard/static/../dashboard.go", "/dashboard/nowhere",
		"/dashboard/logout", "/dashboard/openings", "/dashboard/openings/" + uuid.NewString() + "/cancel"} {
		rec := en.get(p)
		assert.Equal(t, http.StatusNotFound, rec.Code, p)
		assert.Contains(t, rec.Header().Get("Content-Type"), "text/html", p)
	}
}
