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

// rdateFeed: a weekly Cut on Tuesdays 10:00 UTC from 2026-11-03 (three times) with extra
// dates (RDATE): Thursday 5 November 16:00, the rule's own 10 November again (once), a
// 90-minute PERIOD on Saturday 7 November, a PERIOD with a DURATION on the 12th, an
// all-day date (skipped); the Thursday deleted again by EXDATE. And a series of dates
// only (DTSTART and two RDATEs, no rule).
const rdateFeed = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\n" +
	"BEGIN:VEVENT\r\nUID:cut@t\r\nDTSTAMP:20261001T000000Z\r\n" +
	"DTSTART:20261103T100000Z\r\nDTEND:20261103T104500Z\r\nRRULE:FREQ=WEEKLY;COUNT=3\r\n" +
	"RDATE:20261105T160000Z,20261110T100000Z\r\n" +
	"RDATE;VALUE=PERIOD:20261107T090000Z/20261107T103000Z,20261112T080000Z/PT20M\r\n" +
	"RDATE;VALUE=DATE:20261114\r\n" +
	"EXDATE:20261105T160000Z\r\nSUMMARY:Cut\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nUID:color@t\r\nDTSTAMP:20261001T000000Z\r\n" +
	"DTSTART;TZID=Europe/Paris:20261104T140000\r\nDTEND;TZID=Europe/Paris:20261104T160000\r\n" +
	"RDATE;TZID=Europe/Paris:20261111T140000,20261118T090000\r\nSUMMARY:Color\r\nEND:VEVENT\r\n" +
	"END:VCALENDAR\r\n"

// TestParseWindowReadsRDATE: RDATE's dates are instances of their series beside the
// rule's, each once, a PERIOD with its own length, EXDATE deleting one of them; a series
// of dates only is its DTSTART and its RDATEs; all-day dates are not appointments.
func TestParseWindowReadsRDATE(t *testing.T) {
	t.Parallel()
	paris, err := time.LoadLocation("Europe/Paris")
	require.NoError(t, err)
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	to := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	f, err := ics.ParseWindow(strings.NewReader(rdateFeed), time.UTC, from, to)
	require.NoError(t, err)

	type seen struct {
		status  connectors.Status
		minutes int
	}
	got := map[string]seen{}
	for _, a := range f.Appointments {
		_, dup := got[a.ExternalID]
		require.False(t, dup, "each instance once: %s", a.ExternalID)
		got[a.ExternalID] = seen{a.Status, a.DurationMinutes}
	}
	utc := func(d, h, m int) string {
		return "cut@t/" + time.Date(2026, 11, d, h, m, 0, 0, time.UTC).Format(time.RFC3339)
	}
	color := func(d, h int) string {
		return "color@t/" + time.Date(2026, 11, d, h, 0, 0, 0, paris).UTC().Format(time.RFC3339)
	}
	require.Equal(t, map[string]seen{
		utc(3, 10, 0):  {connectors.StatusBooked, 45},
		utc(5, 16, 0):  {connectors.StatusCancelled, 45}, // an RDATE, deleted by EXDATE
		utc(7, 9, 0):   {connectors.StatusBooked, 90},    // a PERIOD start/end
		utc(10, 10, 0): {connectors.StatusBooked, 45},    // the rule's and an RDATE: once
		utc(12, 8, 0):  {connectors.StatusBooked, 20},    // a PERIOD start/duration
		utc(17, 10, 0): {connectors.StatusBooked, 45},
		color(4, 14):   {connectors.StatusBooked, 120}, // DTSTART of a series of dates
		color(11, 14):  {connectors.StatusBooked, 120},
		color(18, 9):   {connectors.StatusBooked, 120},
	}, got)
	require.ElementsMatch(t, []string{"cut@t", "color@t"}, f.Series)
}
