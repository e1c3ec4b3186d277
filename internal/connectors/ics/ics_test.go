package ics_test

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/connectors"
	"github.com/slotrecovery/slotrecovery/internal/connectors/ics"
)

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func TestParseFeed(t *testing.T) {
	t.Parallel()
	body, err := os.ReadFile("testdata/feed.ics")
	require.NoError(t, err)
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	f, err := ics.Parse(bytes.NewReader(body), ny)
	require.NoError(t, err)

	const series = "weekly-ana-3f2e1d@google.com"
	ana := connectors.Appointment{Source: connectors.SourceICS, DurationMinutes: 30, Service: "Beard trim"}
	exdate := ana
	exdate.ExternalID, exdate.Status, exdate.StartsAt = series+"/2026-12-15T14:00:00Z", connectors.StatusCancelled, at("2026-12-15T14:00:00Z")
	exdate.CustomerName, exdate.Phone, exdate.UpdatedAt = "Ana +1 555 555 0177", "+1 555 555 0177", at("2026-11-27T08:30:00Z")
	moved := ana
	moved.ExternalID, moved.Status, moved.StartsAt = series+"/2026-12-22T14:00:00Z", connectors.StatusBooked, at("2026-12-22T16:00:00Z")
	moved.Version, moved.UpdatedAt = 1, at("2026-11-27T08:35:00Z")
	dropped := ana
	dropped.ExternalID, dropped.Status, dropped.StartsAt = series+"/2026-12-29T14:00:00Z", connectors.StatusCancelled, at("2026-12-29T14:00:00Z")
	dropped.Version, dropped.UpdatedAt = 1, at("2026-11-28T09:00:00Z")

	want := []connectors.Appointment{
		{Source: connectors.SourceICS, ExternalID: "7kq2m9d4v1c8x3b6n5z0a2s4d6@google.com", Status: connectors.StatusBooked,
			StartsAt: at("2026-12-01T15:00:00Z"), DurationMinutes: 45, Service: "Cut", Phone: "(555) 555-0123",
			CustomerName: "Kim Lee", ExternalStaff: "dana@example-barbers.test", Version: 1, UpdatedAt: at("2026-11-25T10:10:10Z")},
		{Source: connectors.SourceICS, ExternalID: "0p9o8i7u6y5t4r3e2w1q@google.com", Status: connectors.StatusCancelled,
			StartsAt: at("2026-12-02T19:00:00Z"), DurationMinutes: 60, Service: "Colour", Phone: "+44 7700 900123",
			Version: 2, UpdatedAt: at("2026-11-28T17:05:00Z")},
		exdate, moved, dropped,
		{Source: connectors.SourceICS, ExternalID: "040000008200E00074C5B7101A82E00800000000B0F7@outlook", Status: connectors.StatusBooked,
			StartsAt: at("2026-12-03T21:00:00Z"), DurationMinutes: 75, Service: "Colour and cut", Phone: "+1-555-555-0199",
			CustomerName: "Sam Ortiz", UpdatedAt: at("2026-11-29T09:15:00Z")},
	}
	require.Equal(t, want, f.Appointments)
	require.Equal(t, []string{series}, f.Series, "the series' own instances are not expanded")
	require.Equal(t, 1, f.Skipped, "the all-day event")
}

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"html":      "<html>Sign in</html>",
		"truncated": "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:x\r\n",
		"too big":   "BEGIN:VCALENDAR\r\n" + strings.Repeat("X", ics.MaxFeed),
	} {
		_, err := ics.Parse(strings.NewReader(body), time.UTC)
		require.ErrorIs(t, err, connectors.ErrPayload, name)
	}
}

func TestParseFloatingTimesInTheShopsZone(t *testing.T) {
	t.Parallel()
	paris, err := time.LoadLocation("Europe/Paris")
	require.NoError(t, err)
	body := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//t//EN\r\nBEGIN:VEVENT\r\nUID:float\r\nDTSTAMP:20261129T000000Z\r\n" +
		"DTSTART:20261201T100000\r\nDURATION:PT30M\r\nSUMMARY:Coupe\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
	f, err := ics.Parse(strings.NewReader(body), paris)
	require.NoError(t, err)
	require.Len(t, f.Appointments, 1)
	require.Equal(t, at("2026-12-01T09:00:00Z"), f.Appointments[0].StartsAt)
}

// FuzzParse: whatever the feed, Parse never panics, and what it reads is an appointment
// the book can take.
func FuzzParse(f *testing.F) {
	body, err := os.ReadFile("testdata/feed.ics")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(body)
	f.Add([]byte("BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:x\r\nDTSTART:20261201T100000Z\r\nDURATION:-PT5M\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"))
	f.Add([]byte("BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:x\r\nDTSTART:20261201T100000Z\r\nRRULE:FREQ=DAILY\r\nEXDATE:20261202T100000Z,bad,20261203\r\nDTEND:20261201T110000Z\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		feed, err := ics.Parse(bytes.NewReader(body), time.UTC)
		if err != nil {
			require.ErrorIs(t, err, connectors.ErrPayload)
			return
		}
		for _, a := range feed.Appointments {
			require.Equal(t, connectors.SourceICS, a.Source)
			require.NotEmpty(t, strings.TrimSpace(a.ExternalID))
			require.True(t, a.Status.Valid())
			require.False(t, a.StartsAt.IsZero())
			require.GreaterOrEqual(t, a.Version, int64(0))
			require.True(t, a.DurationMinutes >= 1 && a.DurationMinutes <= 1440, "%d minutes", a.DurationMinutes)
		}
	})
}
