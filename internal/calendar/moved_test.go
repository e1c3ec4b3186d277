package calendar_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/calendar"
)

// TestFeedShowsAMovedBooking: the time a YES booking was moved up from says who moved
// up, not that a hold lapsed: CANCELLED in the feed, offered again when open openings
// are shown; the time they moved to is their confirmed booking.
func TestFeedShowsAMovedBooking(t *testing.T) {
	t.Parallel()
	s := newScene(t)
	bea := s.customer("+447700900111", "Bea")
	now := s.clk.Now()
	to, newBooking := s.opening(now.Add(24*time.Hour), "filled", &bea, "confirmed")
	from, oldBooking := s.opening(now.Add(72*time.Hour), "open", &bea, "confirmed")
	_, err := s.pool.Exec(context.Background(), `UPDATE bookings SET status = 'moved', moved_to = $2 WHERE id = $1`, oldBooking, newBooking)
	require.NoError(t, err)

	c, _ := s.feed(calendar.Options{})
	ev := events(c)
	require.Equal(t, "CONFIRMED", prop(ev[to], "STATUS"))
	require.Equal(t, "CANCELLED", prop(ev[from], "STATUS"))
	require.Equal(t, "Moved: Cut & finish – Bea", prop(ev[from], "SUMMARY"))
	require.Contains(t, prop(ev[from], "DESCRIPTION"), "Bea moved up to an earlier time")
	require.NotContains(t, prop(ev[from], "DESCRIPTION"), "lapsed")

	c, _ = s.feed(calendar.Options{IncludeOpen: true})
	ev = events(c)
	require.Equal(t, "Open slot: Cut & finish", prop(ev[from], "SUMMARY"))
	require.Contains(t, prop(ev[from], "DESCRIPTION"), "Not booked: Bea moved up to an earlier time, and it is offered again.")
}
