package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	ics "github.com/arran4/golang-ical"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/payments/stripe"
	"github.com/slotrecovery/slotrecovery/internal/testkit/hookstest"
)

// The shop's integrations end to end, through the server: outbound webhooks to a real
// local receiver that verifies every request with the Standard Webhooks library, the
// calendar feed read by a real iCalendar parser, and Idempotency-Key.

// hooksVars lets deliveries reach the local receiver: http:// (DEV_MODE) on loopback
// (WEBHOOK_ALLOW_PRIVATE).
var hooksVars = map[string]string{"DEV_MODE": "1", "WEBHOOK_ALLOW_PRIVATE": "1"}

// fastHooks dispatches often and retries at test speed, keeping the schedule's shape.
func fastHooks(c *hooks.Config) {
	c.PollEvery = 50 * time.Millisecond
	c.BusyWait = 50 * time.Millisecond
	c.Schedule = []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond,
		400 * time.Millisecond, 500 * time.Millisecond, 500 * time.Millisecond, 500 * time.Millisecond,
		500 * time.Millisecond, 500 * time.Millisecond, 500 * time.Millisecond, 500 * time.Millisecond}
}

// endpoint registers a webhook endpoint for the receiver through the API and gives the
// receiver its secret; it returns the endpoint's id.
func (e *env) endpoint(base string, shop shopInfo, r *hookstest.Receiver, events ...string) string {
	e.t.Helper()
	body := map[string]any{"url": r.URL(), "description": "the test's receiver"}
	if len(events) > 0 {
		body["enabled_events"] = events
	}
	var ep struct {
		ID     string `json:"id"`
		Secret string `json:"secret"`
	}
	require.Equal(e.t, http.StatusCreated, e.api(base, http.MethodPost, "/api/webhook_endpoints", shop.APIKey, body, &ep))
	require.True(e.t, strings.HasPrefix(ep.Secret, hooks.SecretPrefix), ep.Secret)
	r.SetSecrets(ep.Secret)
	return ep.ID
}

// hooksSettled waits until every recorded event is dispatched and every delivery job
// is final: what the receiver has then is all it will get.
func (e *env) hooksSettled() {
	e.t.Helper()
	e.until(asyncStep, "webhook events dispatched and delivered", func() bool {
		return e.count(`SELECT count(*) FROM webhook_events WHERE dispatched_at IS NULL`) == 0 &&
			e.count(`SELECT count(*) FROM river_job WHERE kind = 'webhook_delivery' AND state NOT IN ('completed', 'cancelled', 'discarded')`) == 0
	})
}

// storyEvent is an event as the full story checks it: its type and what its data says.
type storyEvent struct {
	Type, Opening, Status, Booking, BookingStatus string
}

func (s storyEvent) String() string {
	short := func(id string) string {
		if len(id) >= 8 {
			return id[:8]
		}
		return "-"
	}
	return fmt.Sprintf("%-18s opening %s (%s)  booking %s (%s)", s.Type, short(s.Opening), s.Status, short(s.Booking), s.BookingStatus)
}

func storyEventOf(t *testing.T, ev hookstest.Event) storyEvent {
	t.Helper()
	var data struct {
		ID      string `json:"id"`
		Status  string `json:"status"`
		Booking *struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"booking"`
	}
	require.NoError(t, json.Unmarshal(ev.Data, &data), "%s", ev.Data)
	s := storyEvent{Type: ev.Type, Opening: data.ID, Status: data.Status}
	if data.Booking != nil {
		s.Booking, s.BookingStatus = data.Booking.ID, data.Booking.Status
	}
	return s
}

// feed reads the shop's calendar feed as a calendar would (If-None-Match: etag when set)
// and parses it; a 304 returns a nil calendar.
func (e *env) feed(base, feedPath, etag string) (*ics.Calendar, string) {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+feedPath, nil)
	require.NoError(e.t, err)
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	res, err := e.client.Do(req)
	require.NoError(e.t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(e.t, err)
	if res.StatusCode == http.StatusNotModified {
		return nil, etag
	}
	require.Equal(e.t, http.StatusOK, res.StatusCode, "%s", body)
	require.Equal(e.t, "text/calendar; charset=utf-8", res.Header.Get("Content-Type"))
	cal, err := ics.ParseCalendar(bytes.NewReader(body))
	require.NoError(e.t, err, "%s", body)
	return cal, res.Header.Get("ETag")
}

// calendarEvent is the feed's event of an opening (by its UID's id), or nil.
func calendarEvent(cal *ics.Calendar, openingID string) *ics.VEvent {
	for _, ev := range cal.Events() {
		if p := ev.GetProperty(ics.ComponentPropertyUniqueId); p != nil && strings.Contains(p.Value, openingID) {
			return ev
		}
	}
	return nil
}

func icsProp(ev *ics.VEvent, p ics.ComponentProperty) string {
	if v := ev.GetProperty(p); v != nil {
		return v.Value
	}
	return ""
}

// TestCalendarEventMovesOnWithEveryChange: read through the server as a subscribed
// calendar reads it, an opening's event gets a higher SEQUENCE and a later LAST-MODIFIED
// (and DTSTAMP) with every change of what it says: a hold paid at once (within the same
// second), the customer renamed, the shop showing full details. A calendar that kept
// the version it had would otherwise keep showing "awaiting payment". Read again
// unchanged, it is the same version.
func TestCalendarEventMovesOnWithEveryChange(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(nil, fastTune)
	shop := e.newShop(base, "checkout", map[string]any{"wave_interval_seconds": 3600})
	ana := e.newCustomer(base, shop, "+15557770011", true)
	var shopJSON struct {
		CalendarURL string `json:"calendar_url"`
	}
	require.Equal(t, http.StatusOK, e.api(base, http.MethodGet, "/api/shop", shop.APIKey, nil, &shopJSON))
	feedPath := strings.TrimPrefix(shopJSON.CalendarURL, publicURL)
	op := e.newOpening(base, shop, 3*time.Hour)
	e.waveDone(op.ID, 1, 1)

	type version struct {
		Status, Summary, Description string
		Sequence                     int
		Modified, Stamp              time.Time
	}
	read := func(what string) version {
		t.Helper()
		cal, _ := e.feed(base, feedPath, "")
		vev := calendarEvent(cal, op.ID)
		require.NotNil(t, vev, what)
		var v version
		var err error
		v.Status, v.Summary = icsProp(vev, ics.ComponentPropertyStatus), icsProp(vev, ics.ComponentPropertySummary)
		v.Description = icsProp(vev, ics.ComponentPropertyDescription)
		v.Sequence, err = strconv.Atoi(icsProp(vev, ics.ComponentPropertySequence))
		require.NoError(t, err, what)
		v.Modified, err = vev.GetLastModifiedAt()
		require.NoError(t, err, what)
		v.Stamp, err = vev.GetDtStampTime()
		require.NoError(t, err, what)
		return v
	}
	var held openingInfo
	steps := []struct {
		name   string
		change func()
		status string
	}{
		{"held", func() {
			require.Equal(t, "booked", e.text(base, ana.Phone, shop.SMSNumber, "YES").Outcome)
			e.eventually("the link stored", func() bool {
				held = e.opening(base, shop, op.ID)
				return held.Booking != nil && held.Booking.SessionID != ""
			})
		}, "TENTATIVE"},
		{"paid at once", func() {
			require.Equal(t, "confirmed", e.send(base, event{id: evtID(), typ: stripe.EventCheckoutCompleted, booking: held.Booking.ID,
				session: held.Booking.SessionID, intent: "pi_cal"}).Result)
		}, "CONFIRMED"},
		{"customer renamed", func() {
			require.Equal(t, http.StatusOK, e.api(base, http.MethodPatch, "/api/customers/"+ana.ID, shop.APIKey,
				map[string]any{"name": "Anabel Lima"}, nil))
		}, "CONFIRMED"},
		{"full details shown", func() {
			require.Equal(t, http.StatusOK, e.api(base, http.MethodPatch, "/api/shop", shop.APIKey,
				map[string]any{"calendar_full_details": true}, nil))
		}, "CONFIRMED"},
	}
	var prev version
	for i, st := range steps {
		st.change()
		v := read(st.name)
		require.Equal(t, st.status, v.Status, st.name)
		if i > 0 {
			require.NotEqual(t, prev.Summary+prev.Description, v.Summary+v.Description, "%s: the event says something else", st.name)
			require.Greater(t, v.Sequence, prev.Sequence, "%s: SEQUENCE", st.name)
			require.True(t, v.Modified.After(prev.Modified), "%s: LAST-MODIFIED %s, before %s", st.name, v.Modified, prev.Modified)
			require.True(t, v.Stamp.After(prev.Stamp), "%s: DTSTAMP %s, before %s", st.name, v.Stamp, prev.Stamp)
		}
		require.Equal(t, v, read(st.name+", read again"), "%s: unchanged, the same version", st.name)
		prev = v
	}
}

// TestIntegrationsFullStory follows two openings through the server: declared, offered,
// held by Ana's YES, lapsed (her checkout expired) and offered again, held by Ben, paid
// by Ben; Ana's late payment refunded; a second opening declared and cancelled. The
// receiver gets exactly the expected events, each verified with the Standard Webhooks
// library, in order per opening, each showing the opening as it stood then. The
// calendar feed, read by an iCalendar parser at each step, follows the booking.
func TestIntegrationsFullStory(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.startWith(hooksVars, serveOptions{tune: fastTune, tuneHooks: fastHooks})
	shop := e.newShop(base, "checkout", map[string]any{"wave_interval_seconds": 3600})
	r := hookstest.NewReceiver(t)
	e.endpoint(base, shop, r)
	ana := e.newCustomer(base, shop, "+15557770001", true)
	ben := e.newCustomer(base, shop, "+15557770002", true)

	var shopJSON struct {
		CalendarURL string `json:"calendar_url"`
	}
	require.Equal(t, http.StatusOK, e.api(base, http.MethodGet, "/api/shop", shop.APIKey, nil, &shopJSON))
	require.True(t, strings.HasPrefix(shopJSON.CalendarURL, publicURL+"/calendar/cal_"), shopJSON.CalendarURL)
	feedPath := strings.TrimPrefix(shopJSON.CalendarURL, publicURL)
	cal, etag := e.feed(base, feedPath, "")
	require.Empty(t, cal.Events(), "no booking yet")

	// Declared and offered; Ana holds it.
	op := e.newOpening(base, shop, 3*time.Hour)
	e.waveDone(op.ID, 1, 1)
	require.Equal(t, "booked", e.text(base, ana.Phone, shop.SMSNumber, "YES").Outcome)
	var held openingInfo
	e.eventually("Ana's link stored", func() bool {
		held = e.opening(base, shop, op.ID)
		return held.Booking != nil && held.Booking.SessionID != ""
	})
	anaBooking := held.Booking
	cal, etag = e.feed(base, feedPath, etag)
	require.NotNil(t, cal, "the feed changed")
	vev := calendarEvent(cal, op.ID)
	require.NotNil(t, vev)
	require.Equal(t, "TENTATIVE", icsProp(vev, ics.ComponentPropertyStatus), "held, awaiting payment")
	seq0, err := strconv.Atoi(icsProp(vev, ics.ComponentPropertySequence))
	require.NoError(t, err)
	again, _ := e.feed(base, feedPath, etag)
	require.Nil(t, again, "unchanged: 304 to a calendar that has it")

	// Her checkout expires: the opening is offered again, and Ben holds it.
	require.Equal(t, "reopened", e.send(base, event{id: evtID(), typ: stripe.EventCheckoutExpired, booking: anaBooking.ID, session: anaBooking.SessionID}).Result)
	cal, etag = e.feed(base, feedPath, etag)
	require.Equal(t, "CANCELLED", icsProp(calendarEvent(cal, op.ID), ics.ComponentPropertyStatus), "the hold lapsed")
	e.waveDone(op.ID, 2, 1)
	require.Equal(t, "booked", e.text(base, ben.Phone, shop.SMSNumber, "YES").Outcome)
	e.eventually("Ben's link stored", func() bool {
		held = e.opening(base, shop, op.ID)
		return held.Booking != nil && held.Booking.ID != anaBooking.ID && held.Booking.SessionID != ""
	})
	benBooking := held.Booking

	// Ben pays; Ana's payment arrives late and is refunded.
	require.Equal(t, "confirmed", e.send(base, event{id: evtID(), typ: stripe.EventCheckoutCompleted, booking: benBooking.ID,
		session: benBooking.SessionID, intent: "pi_ben"}).Result)
	cal, etag = e.feed(base, feedPath, etag)
	vev = calendarEvent(cal, op.ID)
	require.Equal(t, "CONFIRMED", icsProp(vev, ics.ComponentPropertyStatus))
	seq, err := strconv.Atoi(icsProp(vev, ics.ComponentPropertySequence))
	require.NoError(t, err)
	require.Greater(t, seq, seq0, "SEQUENCE moves on with every change")
	require.Equal(t, "refunded", e.send(base, event{id: evtID(), typ: stripe.EventCheckoutCompleted, booking: anaBooking.ID,
		session: anaBooking.SessionID, intent: "pi_ana_late"}).Result)
	e.settle("booking_refund")

	// A second opening, declared and cancelled.
	op2 := e.newOpening(base, shop, 5*time.Hour)
	var cancelled openingInfo
	require.Equal(t, http.StatusOK, e.api(base, http.MethodPost, "/api/openings/"+op2.ID+"/cancel", shop.APIKey, nil, &cancelled))
	require.Equal(t, "cancelled", cancelled.Status)

	want := map[string][]storyEvent{
		op.ID: {
			{hooks.OpeningDeclared, op.ID, "open", "", ""},
			{hooks.OpeningFilled, op.ID, "filled", anaBooking.ID, "pending_payment"},
			{hooks.OpeningReopened, op.ID, "open", anaBooking.ID, "payment_failed"},
			{hooks.OpeningFilled, op.ID, "filled", benBooking.ID, "pending_payment"},
			{hooks.BookingConfirmed, op.ID, "filled", benBooking.ID, "confirmed"},
			{hooks.BookingRefunded, op.ID, "filled", anaBooking.ID, "payment_failed"},
		},
		op2.ID: {
			{hooks.OpeningDeclared, op2.ID, "open", "", ""},
			{hooks.OpeningCancelled, op2.ID, "cancelled", "", ""},
		},
	}
	got := r.WaitFor(t, 8, asyncStep)
	e.hooksSettled()
	got = hookstest.InRecordedOrder(t, e.pool, r.Accepted())
	require.Empty(t, r.Unverified(), "every request verifies with the Standard Webhooks library")
	ids := hookstest.IDs(got)
	require.Len(t, ids, 8, "exactly the story's events: %v", hookstest.Types(got))
	slices.Sort(ids)
	require.Len(t, slices.Compact(ids), 8, "none twice")
	perOpening := map[string][]storyEvent{}
	for _, ev := range got {
		s := storyEventOf(t, ev)
		perOpening[s.Opening] = append(perOpening[s.Opening], s)
		t.Logf("received %s  %s", ev.ID[:12], s)
		require.Equal(t, ev.ID, ev.Header.Get("webhook-id"))
	}
	require.Equal(t, want, perOpening)
}

// TestIntegrationsReceiverDownThenBack: a receiver that answers 503 for a while gets
// every event once it answers again, each exactly once after its 2xx; the failed
// attempts are logged and visible through the API.
func TestIntegrationsReceiverDownThenBack(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// Growing delays, as the real schedule's, then 5 s apart for well over asyncStep: the
	// attempts must outlast the test's own waits on a slow machine (a CI run once took
	// 44 s to see three attempts of every delivery, and two had used all twelve of an
	// earlier, 23-second schedule).
	schedule := []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond,
		time.Second, time.Second, 2 * time.Second, 2 * time.Second, 3 * time.Second, 3 * time.Second}
	for range 3 * int(asyncStep/(5*time.Second)) {
		schedule = append(schedule, 5*time.Second)
	}
	base := e.startWith(hooksVars, serveOptions{tune: fastTune, tuneHooks: func(c *hooks.Config) {
		fastHooks(c)
		c.Schedule = schedule
	}})
	shop := e.newShop(base, "none", nil)
	r := hookstest.NewReceiver(t)
	r.Answer(http.StatusServiceUnavailable)
	epID := e.endpoint(base, shop, r, hooks.OpeningDeclared, hooks.OpeningCancelled)
	const n = 5
	for range n {
		op := e.newOpening(base, shop, 4*time.Hour)
		require.Equal(t, http.StatusOK, e.api(base, http.MethodPost, "/api/openings/"+op.ID+"/cancel", shop.APIKey, nil, nil))
	}
	e.until(asyncStep, "three failed attempts of every delivery", func() bool {
		return e.count(`SELECT count(*) FROM webhook_deliveries WHERE attempts >= 3`) == 2*n
	})
	require.Equal(t, 2*n, e.count(`SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'`), "attempts are left; seen (status, attempts): %s",
		e.str(`SELECT string_agg(status || ' ' || attempts, ', ' ORDER BY created_at) FROM webhook_deliveries`))
	require.Empty(t, r.Accepted())
	var list struct {
		Deliveries []struct {
			ID             string  `json:"id"`
			Status         string  `json:"status"`
			LastStatusCode *int    `json:"last_status_code"`
			LastError      *string `json:"last_error"`
		} `json:"deliveries"`
	}
	require.Equal(t, http.StatusOK, e.api(base, http.MethodGet, "/api/webhook_endpoints/"+epID+"/deliveries", shop.APIKey, nil, &list))
	require.Len(t, list.Deliveries, 2*n)
	require.Equal(t, 503, *list.Deliveries[0].LastStatusCode)
	require.Equal(t, "answered 503", *list.Deliveries[0].LastError)

	r.Answer(http.StatusNoContent)
	r.WaitFor(t, 2*n, asyncStep)
	e.hooksSettled()
	got := r.Accepted()
	require.Len(t, got, 2*n, "every event, none twice: %v", hookstest.Types(got))
	ids := hookstest.IDs(got)
	slices.Sort(ids)
	require.Len(t, slices.Compact(ids), 2*n)
	require.Equal(t, 2*n, e.count(`SELECT count(*) FROM webhook_deliveries WHERE status = 'succeeded'`))
	require.Empty(t, r.Unverified())
	var detail struct {
		AttemptLog []struct {
			StatusCode *int `json:"status_code"`
		} `json:"attempt_log"`
	}
	require.Equal(t, http.StatusOK, e.api(base, http.MethodGet, "/api/webhook_endpoints/"+epID+"/deliveries/"+list.Deliveries[0].ID,
		shop.APIKey, nil, &detail))
	require.GreaterOrEqual(t, len(detail.AttemptLog), 4)
	require.Equal(t, 503, *detail.AttemptLog[0].StatusCode)
	require.Equal(t, 204, *detail.AttemptLog[len(detail.AttemptLog)-1].StatusCode)
}

// TestIntegrationsSSRFRefused: an endpoint may not point the server at itself or its
// network: http without DEV_MODE, loopback, private, link-local and metadata addresses,
// credentials in the URL are refused when the endpoint is made; a name that resolves to
// loopback is refused at the connection, and the attempt says why.
func TestIntegrationsSSRFRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(nil, fastTune) // no DEV_MODE, no WEBHOOK_ALLOW_PRIVATE
	shop := e.newShop(base, "none", nil)
	for _, u := range []string{
		"http://crm.example.com/hook",
		"https://127.0.0.1/hook",
		"https://[::1]/hook",
		"https://10.1.2.3/hook",
		"https://192.168.1.10:8443/hook",
		"https://169.254.169.254/latest/meta-data/",
		"https://[::ffff:127.0.0.1]/hook",
		"https://[64:ff9b::a9fe:a9fe]/hook",
		"https://localhost:8080/hook",
		"https://user:pass@crm.example.com/hook",
		"ftp://crm.example.com/hook",
	} {
		var res struct {
			Error struct{ Code, Field string } `json:"error"`
		}
		status := e.api(base, http.MethodPost, "/api/webhook_endpoints", shop.APIKey, map[string]any{"url": u}, &res)
		require.Equal(t, http.StatusUnprocessableEntity, status, u)
		require.Equal(t, "url", res.Error.Field, u)
	}
	require.Zero(t, e.count(`SELECT count(*) FROM webhook_endpoints`))

	// A name is judged where it leads, at each connection.
	host, err := os.Hostname()
	require.NoError(t, err)
	addrs, err := net.LookupHost(host)
	if err != nil || len(addrs) == 0 || !(net.ParseIP(addrs[0]).IsLoopback() || net.ParseIP(addrs[0]).IsPrivate()) {
		t.Logf("the machine's name %q resolves to %v (%v), not a private address: the connection check is covered by internal/hooks", host, addrs, err)
		return
	}
	r := hookstest.NewReceiver(t)
	_, port, err := net.SplitHostPort(strings.TrimPrefix(strings.TrimSuffix(r.URL(), "/hooks"), "http://"))
	require.NoError(t, err)
	var ep struct {
		ID string `json:"id"`
	}
	require.Equal(t, http.StatusCreated, e.api(base, http.MethodPost, "/api/webhook_endpoints", shop.APIKey,
		map[string]any{"url": "https://" + host + ":" + port + "/hooks"}, &ep))
	e.newOpening(base, shop, 4*time.Hour)
	var list struct {
		Deliveries []struct {
			LastError *string `json:"last_error"`
		} `json:"deliveries"`
	}
	e.eventually("the attempt refused", func() bool {
		e.api(base, http.MethodGet, "/api/webhook_endpoints/"+ep.ID+"/deliveries", shop.APIKey, nil, &list)
		return len(list.Deliveries) == 1 && list.Deliveries[0].LastError != nil
	})
	require.Equal(t, hooks.Unreachable, *list.Deliveries[0].LastError, "one wording for an address not allowed or unreachable")
	require.Contains(t, *list.Deliveries[0].LastError, "WEBHOOK_ALLOW_PRIVATE")
	require.Zero(t, r.Requests(), "nothing reached the receiver")
}

// TestIntegrationsIdempotentDeclare: a booking system retrying one declaration many
// times at once with one Idempotency-Key (its first request timed out) makes one
// opening, whose offers text each customer once; every retry gets the first answer or
// is told the first is still running.
func TestIntegrationsIdempotentDeclare(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(nil, fastTune)
	shop := e.newShop(base, "none", nil)
	phones := []string{"+15557770101", "+15557770102", "+15557770103"}
	for _, p := range phones {
		e.newCustomer(base, shop, p, true)
	}
	body, err := json.Marshal(map[string]any{"starts_at": time.Now().Add(3 * time.Hour).UTC().Truncate(time.Second).Format(time.RFC3339),
		"duration_minutes": 30, "service": "Haircut", "price_cents": 4500})
	require.NoError(t, err)
	declare := func() (int, string, string) {
		req, err := http.NewRequest(http.MethodPost, base+"/api/openings", bytes.NewReader(body))
		if err != nil {
			return 0, "", err.Error()
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+shop.APIKey)
		req.Header.Set("Idempotency-Key", "booking-system-42")
		res, err := e.client.Do(req)
		if err != nil {
			return 0, "", err.Error()
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, res.Header.Get("Idempotent-Replayed"), string(b)
	}
	const tries = 30
	type answer struct {
		status         int
		replayed, body string
	}
	answers := make([]answer, tries)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range tries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			s, rp, b := declare()
			answers[i] = answer{s, rp, b}
		}()
	}
	close(start)
	wg.Wait()
	var first string
	created := 0
	for _, a := range answers {
		switch {
		case a.status == http.StatusCreated && a.replayed == "":
			created++
			first = a.body
		case a.status == http.StatusCreated && a.replayed == "true":
		case a.status == http.StatusConflict:
			require.Contains(t, a.body, "idempotency_request_in_progress")
		default:
			t.Fatalf("unexpected answer %d %q", a.status, a.body)
		}
	}
	require.Equal(t, 1, created, "one request ran")
	status, replayed, again := declare()
	require.Equal(t, http.StatusCreated, status)
	require.Equal(t, "true", replayed)
	require.JSONEq(t, first, again, "a later retry gets the first answer")
	var op openingInfo
	require.NoError(t, json.Unmarshal([]byte(first), &op))
	require.Equal(t, 1, e.count(`SELECT count(*) FROM slot_openings WHERE shop_id = $1`, shop.ID))
	e.waveDone(op.ID, 1, 1) // its texts are all out once it is done; the next wave is an hour away
	for _, p := range phones {
		require.Len(t, e.twilio.MessagesTo(p), 1, "%s texted once", p)
	}
}

// childServeEnv marks the test binary started as a server instance of
// TestIntegrationsKilledInstanceLosesNothing (see killedServer).
const childServeEnv = "SLOTRECOVERY_TEST_CHILD_SERVE"

// childHooksTimeout is the attempt timeout of the killed child and of the instance that
// takes over: the delivery job's River timeout follows from it (2 × it + 5 s).
const childHooksTimeout = 500 * time.Millisecond

// killedServer runs the server when this binary was started as the child instance, and
// never returns then (the parent kills it).
func killedServer() bool {
	if os.Getenv(childServeEnv) != "1" {
		return false
	}
	err := serve(context.Background(), os.Getenv, os.Stderr, serveOptions{tune: fastTune, tuneHooks: func(c *hooks.Config) {
		fastHooks(c)
		c.Timeout = childHooksTimeout
	}})
	fmt.Fprintln(os.Stderr, "child server stopped:", err)
	os.Exit(3)
	return true
}

// TestIntegrationsKilledInstanceLosesNothing: a server instance killed (SIGKILL) while
// it delivers an event leaves the delivery's job running; another instance's River
// rescues it once its timeout has passed, and the event arrives. At least once: the
// killed attempt reached the receiver, which never answered it.
func TestIntegrationsKilledInstanceLosesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := hookstest.NewReceiver(t)
	r.Hold() // the first attempt hangs: the instance dies with it in flight

	child := exec.Command(os.Args[0], "-test.run=^$")
	vars := e.vars(hooksVars)
	child.Env = append(os.Environ(), childServeEnv+"=1")
	for _, k := range []string{"DATABASE_URL", "REDIS_URL", "REDIS_KEY_PREFIX", "HTTP_ADDR", "PUBLIC_URL", "ADMIN_TOKEN",
		"ERASURE_KEY", "SECRETS_KEY", "TWILIO_ACCOUNT_SID", "TWILIO_AUTH_TOKEN", "TWILIO_API_URL", "STRIPE_SECRET_KEY", "STRIPE_WEBHOOK_SECRET", "STRIPE_API_URL",
		"DEV_MODE", "WEBHOOK_ALLOW_PRIVATE"} {
		child.Env = append(child.Env, k+"="+vars(k))
	}
	child.Env = append(child.Env, "LOG_LEVEL=info") // its "serving" line says where it listens
	logs := &syncBuffer{}
	child.Stderr = logs
	require.NoError(t, child.Start())
	killed := false
	t.Cleanup(func() {
		if !killed {
			_ = child.Process.Kill()
			_ = child.Wait()
		}
	})
	var base string
	e.until(asyncStep, "the child instance serving", func() bool {
		for _, line := range strings.Split(logs.String(), "\n") {
			if i := strings.Index(line, `"addr":"`); i >= 0 && strings.Contains(line, `"msg":"serving"`) {
				base = "http://" + strings.SplitN(line[i+len(`"addr":"`):], `"`, 2)[0]
			}
		}
		return base != ""
	})
	shop := e.newShop(base, "none", nil)
	e.endpoint(base, shop, r, hooks.OpeningDeclared)
	e.newOpening(base, shop, 4*time.Hour)
	select {
	case <-r.Started():
	case <-time.After(asyncStep):
		t.Fatalf("the child instance never attempted the delivery\n%s", logs.String())
	}
	require.NoError(t, child.Process.Signal(syscall.SIGKILL))
	_ = child.Wait()
	killed = true
	require.Equal(t, 1, e.count(`SELECT count(*) FROM river_job WHERE kind = 'webhook_delivery' AND state = 'running'`),
		"the killed instance left its job running")
	require.Zero(t, e.count(`SELECT count(*) FROM webhook_attempts`), "the killed attempt was never recorded")
	r.Release()

	// River rescues a job only once it has run longer than its rescue horizon, which
	// must exceed the job's own timeout (2 × 500 ms + 5 s): the instance that takes over
	// starts once that has passed, so its rescuer's first run finds the job stuck.
	rescueAfter := 7 * time.Second
	e.until(asyncStep, "the killed job past its rescue horizon", func() bool {
		return e.count(`SELECT count(*) FROM river_job WHERE kind = 'webhook_delivery' AND attempted_at < now() - $1::interval`,
			(rescueAfter+time.Second).String()) == 1
	})
	e.startWith(hooksVars, serveOptions{tune: fastTune, rescueAfter: rescueAfter, tuneHooks: func(c *hooks.Config) {
		fastHooks(c)
		c.Timeout = childHooksTimeout
	}})
	got := r.WaitFor(t, 1, 2*asyncStep)
	require.Equal(t, hooks.OpeningDeclared, got[0].Type)
	e.hooksSettled()
	require.Equal(t, 1, e.count(`SELECT count(*) FROM webhook_deliveries WHERE status = 'succeeded'`))
	require.Empty(t, r.Unverified())
}
