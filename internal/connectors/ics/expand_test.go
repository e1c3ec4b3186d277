package ics_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/connectors"
	"github.com/slotrecovery/slotrecovery/internal/connectors/ics"
)

// seriesFeed is a weekly Cut on Tuesdays 10:00 New York time, six times from
// 2026-10-20 (across the end of daylight saving time on 1 November), with the second
// deleted (EXDATE) and the third moved to 14:00 (RECURRENCE-ID), and a daily rule that
// would never end.
const seriesFeed = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\n" +
	"BEGIN:VEVENT\r\nUID:cut@t\r\nDTSTAMP:20261001T000000Z\r\n" +
	"DTSTART;TZID=America/New_York:20261020T100000\r\nDTEND;TZID=America/New_York:20261020T104500\r\n" +
	"RRULE:FREQ=WEEKLY;COUNT=6\r\nEXDATE;TZID=America/New_York:20261027T100000\r\nSUMMARY:Cut\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nUID:cut@t\r\nDTSTAMP:20261001T000000Z\r\nRECURRENCE-ID;TZID=America/New_York:20261103T100000\r\n" +
	"DTSTART;TZID=America/New_York:20261103T140000\r\nDTEND;TZID=America/New_York:20261103T144500\r\nSUMMARY:Cut\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nUID:daily@t\r\nDTSTAMP:20261001T000000Z\r\nDTSTART:20260101T090000Z\r\nDTEND:20260101T091500Z\r\n" +
	"RRULE:FREQ=DAILY\r\nSUMMARY:Check-in\r\nEND:VEVENT\r\n" +
	"END:VCALENDAR\r\n"

// TestParseWindowExpandsSeries: the series' instances in the window are booked
// appointments at their wall-clock time in the series' zone (10:00 before and after DST
// ends), the deleted one cancelled and the moved one as its override says, each once;
// instances outside the window are left out; an endless rule yields the window's days.
func TestParseWindowExpandsSeries(t *testing.T) {
	t.Parallel()
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	from := time.Date(2026, 10, 21, 0, 0, 0, 0, time.UTC)
	to := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	f, err := ics.ParseWindow(strings.NewReader(seriesFeed), time.UTC, from, to)
	require.NoError(t, err)

	got := map[string]connectors.Status{}
	starts := map[string]time.Time{}
	daily := 0
	for _, a := range f.Appointments {
		if strings.HasPrefix(a.ExternalID, "daily@t/") {
			daily++
			continue
		}
		_, dup := got[a.ExternalID]
		require.False(t, dup, "each instance once: %s", a.ExternalID)
		got[a.ExternalID], starts[a.ExternalID] = a.Status, a.StartsAt
		require.Equal(t, 45, a.DurationMinutes)
		require.Equal(t, "Cut", a.Service)
	}
	id := func(d int, h int) string {
		return "cut@t/" + time.Date(2026, 10, d, h, 0, 0, 0, ny).UTC().Format(time.RFC3339)
	}
	nov := func(d int) string {
		return "cut@t/" + time.Date(2026, 11, d, 10, 0, 0, 0, ny).UTC().Format(time.RFC3339)
	}
	require.Equal(t, map[string]connectors.Status{
		id(27, 10): connectors.StatusCancelled, // EXDATE
		nov(3):     connectors.StatusBooked,    // the override, at 14:00
		nov(10):    connectors.StatusBooked,
		nov(17):    connectors.StatusBooked,
	}, got, "the first instance (20 October) is before the window, the sixth (24 November) after it")
	require.Equal(t, 14, starts[nov(3)].In(ny).Hour(), "the override's own time")
	require.Equal(t, 10, starts[nov(10)].In(ny).Hour(), "10:00 after DST ended too")
	require.Equal(t, 30, daily, "an endless daily rule: the window's 30 days")
	require.ElementsMatch(t, []string{"cut@t", "daily@t"}, f.Series)

	plain, err := ics.Parse(strings.NewReader(seriesFeed), time.UTC)
	require.NoError(t, err)
	require.Len(t, plain.Appointments, 2, "Parse alone: the deleted and the moved instance only")
}
