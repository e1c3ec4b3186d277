package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/connectors/calcom"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
)

// TestConnectorAcrossInstances: a cal.com connector made through one instance verifies
// its deliveries on another (its secret is sealed under the setting both share, not a
// key of one process), a delivery larger than the API's 64 KiB is taken (the webhooks'
// own limit), and the cancellation becomes the shop's opening.
func TestConnectorAcrossInstances(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a, b := e.start(nil, nil), e.start(nil, nil)
	shop := e.newShop(a, "none", nil)

	var conn struct {
		ID         string `json:"id"`
		WebhookURL string `json:"webhook_url"`
		Secret     string `json:"secret"`
	}
	require.Equal(t, http.StatusCreated, e.api(a, http.MethodPost, "/api/connectors", shop.APIKey, map[string]any{"kind": "calcom"}, &conn))
	require.Equal(t, publicURL+"/webhooks/calcom/"+conn.ID, conn.WebhookURL)
	path := strings.TrimPrefix(conn.WebhookURL, publicURL)

	raw, err := os.ReadFile("../../internal/connectors/calcom/testdata/booking_cancelled.json")
	require.NoError(t, err)
	day := time.Now().UTC().AddDate(0, 0, 3).Format("2006-01-02")
	body := append([]byte(strings.ReplaceAll(string(raw), "2026-12-01", day)), bytes.Repeat([]byte(" "), 100<<10)...)

	post := func(base, sig string) (int, string) {
		req, err := http.NewRequest(http.MethodPost, base+path, bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(calcom.SignatureHeader, sig)
		res, err := e.client.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		out, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res.StatusCode, string(out)
	}
	status, out := post(b, calcom.Sign("wrong", body))
	require.Equal(t, http.StatusUnauthorized, status, out)
	require.Contains(t, out, `"code":"bad_signature"`)

	status, out = post(b, calcom.Sign(conn.Secret, body))
	require.Equal(t, http.StatusOK, status, out)
	require.Contains(t, out, `"result":"applied"`)
	status, out = post(a, calcom.Sign(conn.Secret, body))
	require.Equal(t, http.StatusOK, status, out)
	require.Contains(t, out, `"result":"duplicate"`)

	var list struct {
		Openings []struct {
			Status        string  `json:"status"`
			Source        string  `json:"source"`
			AppointmentID *string `json:"appointment_id"`
		} `json:"openings"`
	}
	require.Equal(t, http.StatusOK, e.api(a, http.MethodGet, "/api/openings", shop.APIKey, nil, &list))
	require.Len(t, list.Openings, 1, "the cancellation declared its opening")
	require.Equal(t, "appointment", list.Openings[0].Source)
	require.NotNil(t, list.Openings[0].AppointmentID)
	var appt struct {
		External struct {
			ID string `json:"id"`
		} `json:"external"`
		Status string `json:"status"`
	}
	require.Equal(t, http.StatusOK, e.api(a, http.MethodGet, "/api/appointments/"+*list.Openings[0].AppointmentID, shop.APIKey, nil, &appt))
	require.Equal(t, "bFJeNb2uX8ANpT3JL5EfXw", appt.External.ID, "the opening names the cal.com booking's appointment")
	require.Equal(t, "cancelled", appt.Status)
	var got struct {
		LastDelivery struct {
			Result string `json:"result"`
			Event  string `json:"event"`
		} `json:"last_delivery"`
	}
	require.Equal(t, http.StatusOK, e.api(b, http.MethodGet, "/api/connectors/"+conn.ID, shop.APIKey, nil, &got))
	require.Equal(t, "duplicate", got.LastDelivery.Result)
	require.Equal(t, "BOOKING_CANCELLED", got.LastDelivery.Event)
}

// TestFeedPolledThroughTheGuard: a shop's calendar feed (an ics connector) is polled by
// the server's job through the webhooks' guarded client: with WEBHOOK_ALLOW_PRIVATE=1 a
// feed on loopback is read, and its series' deleted instance (EXDATE) becomes one
// opening; without it, the loopback address is refused and nothing is read.
func TestFeedPolledThroughTheGuard(t *testing.T) {
	t.Parallel()
	first := time.Now().UTC().AddDate(0, 0, 3)
	day := func(t time.Time) string { return t.Format("20060102") }
	feed := strings.Join([]string{
		"BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Slot recovery tests//EN",
		"BEGIN:VEVENT", "UID:series-1@test", "DTSTAMP:20261101T000000Z", "LAST-MODIFIED:20261101T000000Z",
		"DTSTART:" + day(first) + "T150000Z", "DTEND:" + day(first) + "T154500Z",
		"RRULE:FREQ=WEEKLY;COUNT=4", "EXDATE:" + day(first.AddDate(0, 0, 7)) + "T150000Z", "SUMMARY:Cut", "END:VEVENT",
		"END:VCALENDAR", ""}, "\r\n")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/calendar")
		_, _ = io.WriteString(w, feed)
	}))
	t.Cleanup(srv.Close)

	for _, c := range []struct {
		name         string
		allowPrivate string
		result       string
		openings     int
	}{
		{"private allowed", "1", "applied", 1},
		{"private refused", "", "failed", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			// DEV_MODE: the httptest feed is http://.
			base := e.start(map[string]string{"WEBHOOK_ALLOW_PRIVATE": c.allowPrivate, "DEV_MODE": "1"}, nil)
			shop := e.newShop(base, "none", nil)
			require.Equal(t, http.StatusCreated, e.api(base, http.MethodPost, "/api/services", shop.APIKey,
				map[string]any{"name": "Cut", "duration_minutes": 45, "price_cents": 3000}, nil))
			var conn struct {
				ID string `json:"id"`
			}
			require.Equal(t, http.StatusCreated, e.api(base, http.MethodPost, "/api/connectors", shop.APIKey,
				map[string]any{"kind": "ics", "url": srv.URL + "/basic.ics"}, &conn))

			rc, err := river.NewClient(riverpgxv5.New(e.pool), &river.Config{})
			require.NoError(t, err)
			_, err = rc.Insert(context.Background(), jobs.AppointmentsPollFeeds{}, nil)
			require.NoError(t, err)
			e.settle("appointments_poll_feeds")

			var got struct {
				LastDelivery *struct {
					Result string `json:"result"`
					Event  string `json:"event"`
				} `json:"last_delivery"`
			}
			require.Equal(t, http.StatusOK, e.api(base, http.MethodGet, "/api/connectors/"+conn.ID, shop.APIKey, nil, &got))
			require.NotNil(t, got.LastDelivery, "polled")
			require.Equal(t, c.result, got.LastDelivery.Result)
			require.Equal(t, "poll", got.LastDelivery.Event)
			var list struct {
				Openings []struct {
					StartsAt time.Time `json:"starts_at"`
				} `json:"openings"`
			}
			require.Equal(t, http.StatusOK, e.api(base, http.MethodGet, "/api/openings", shop.APIKey, nil, &list))
			require.Len(t, list.Openings, c.openings)
		})
	}
}

// TestSimulateCalcom: the simulate command signs a cal.com delivery with the connector's
// secret, as cal.com does: the server applies it (and its cancellation declares the
// opening), refuses it signed with another secret, and the command says what the server
// answered; its help never prints a secret.
func TestSimulateCalcom(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(nil, nil)
	shop := e.newShop(base, "none", nil)
	var conn struct {
		WebhookURL string `json:"webhook_url"`
		Secret     string `json:"secret"`
	}
	require.Equal(t, http.StatusCreated, e.api(base, http.MethodPost, "/api/connectors", shop.APIKey, map[string]any{"kind": "calcom"}, &conn))
	target := base + strings.TrimPrefix(conn.WebhookURL, publicURL)

	raw, err := os.ReadFile("../../internal/connectors/calcom/testdata/booking_cancelled.json")
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "cancelled.json")
	day := time.Now().UTC().AddDate(0, 0, 3).Format("2006-01-02")
	require.NoError(t, os.WriteFile(file, []byte(strings.ReplaceAll(string(raw), "2026-12-01", day)), 0o600))

	var out bytes.Buffer
	err = run(context.Background(), []string{"simulate", "calcom", "--url", target, "--secret", "not-the-secret", "--file", file},
		func(string) string { return "" }, &out, io.Discard)
	require.ErrorContains(t, err, "401")
	require.Contains(t, out.String(), "bad_signature")
	require.Zero(t, e.count(`SELECT count(*) FROM slot_openings`), "nothing read from a delivery signed with another secret")

	out.Reset()
	err = run(context.Background(), []string{"simulate", "calcom", "--url", target, "--secret", conn.Secret, "--file", file},
		func(string) string { return "" }, &out, io.Discard)
	require.NoError(t, err, out.String())
	require.Contains(t, out.String(), "HTTP 200")
	require.Contains(t, out.String(), `"result":"applied"`)
	require.Equal(t, 1, e.count(`SELECT count(*) FROM slot_openings`), "the cancellation declared its opening")

	out.Reset()
	_ = run(context.Background(), []string{"simulate", "calcom", "-h"}, func(string) string { return "" }, &out, &out)
	require.Contains(t, out.String(), "-secret")
	require.NotContains(t, out.String(), conn.Secret)
}
