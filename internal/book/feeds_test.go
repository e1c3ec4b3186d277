package book_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/book"
	"github.com/slotrecovery/slotrecovery/internal/catalog"
	"github.com/slotrecovery/slotrecovery/internal/connectors"
	"github.com/slotrecovery/slotrecovery/internal/connectors/ics"
)

// feedServer serves a calendar feed with an ETag and answers a matching If-None-Match
// with 304, as Google's does; it counts the full answers.
type feedServer struct {
	mu    sync.Mutex
	body  string
	etag  string
	full  int
	saw   []string // the If-None-Match of each request
	fails bool
}

func (f *feedServer) set(body, etag string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.body, f.etag = body, etag
}

func (f *feedServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.saw = append(f.saw, r.Header.Get("If-None-Match"))
	if f.fails {
		http.Error(w, "busy", http.StatusServiceUnavailable)
		return
	}
	if r.Header.Get("If-None-Match") == f.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	f.full++
	w.Header().Set("ETag", f.etag)
	w.Header().Set("Content-Type", "text/calendar")
	_, _ = w.Write([]byte(f.body))
}

// weeklyFeed is a weekly series of four Cuts from first at 15:00 UTC with its second
// instance deleted (EXDATE), and, with oneOff, a Beard the day after first.
func weeklyFeed(first time.Time, oneOff bool) string {
	day := func(t time.Time) string { return t.Format("20060102") }
	lines := []string{
		"BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Slot recovery tests//EN",
		"BEGIN:VEVENT", "UID:series-1@test", "DTSTAMP:20261101T000000Z", "LAST-MODIFIED:20261101T000000Z",
		"DTSTART:" + day(first) + "T150000Z", "DTEND:" + day(first) + "T154500Z",
		"RRULE:FREQ=WEEKLY;COUNT=4", "EXDATE:" + day(first.AddDate(0, 0, 7)) + "T150000Z", "SUMMARY:Cut", "END:VEVENT",
	}
	if oneOff {
		lines = append(lines, "BEGIN:VEVENT", "UID:oneoff-1@test", "DTSTAMP:20261101T000000Z", "LAST-MODIFIED:20261101T000000Z",
			"DTSTART:"+day(first.AddDate(0, 0, 1))+"T170000Z", "DTEND:"+day(first.AddDate(0, 0, 1))+"T173000Z",
			"SUMMARY:Beard", "END:VEVENT")
	}
	return strings.Join(append(lines, "END:VCALENDAR"), "\r\n") + "\r\n"
}

// TestFeedPollDeclaresTheDeletedInstance: a feed served over HTTP with a recurring
// series whose one instance is deleted (EXDATE) books the other instances and declares
// one opening of that instance;
// the next poll sends the ETag and, answered 304, changes nothing; a new version without
// a one-off event cancels it (gone from the feed) and declares its time; a feed that
// fails is recorded and changes nothing.
func TestFeedPollDeclaresTheDeletedInstance(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	_, err := catalog.New(f.pool, nil).AddService(ctx, f.shop.ID, catalog.NewService{Name: "Cut", DurationMinutes: 45, PriceCents: 3000})
	require.NoError(t, err)
	first := time.Now().UTC().AddDate(0, 0, 3)
	fs := &feedServer{}
	fs.set(weeklyFeed(first, true), `"v1"`)
	srv := httptest.NewServer(fs)
	t.Cleanup(srv.Close)
	reader := ics.Reader{Client: srv.Client()}
	_, err = f.book.CreateConnector(ctx, f.shop.ID, book.NewConnector{Kind: connectors.SourceICS, URL: srv.URL + "/basic.ics"})
	require.Error(t, err, "https only, unless AllowHTTPFeeds (DEV_MODE)")
	f.book = book.New(f.pool, f.shops, f.openings, book.Config{AllowHTTPFeeds: true})

	c, err := f.book.CreateConnector(ctx, f.shop.ID, book.NewConnector{Kind: connectors.SourceICS, URL: srv.URL + "/basic.ics"})
	require.NoError(t, err)
	_, err = f.book.CreateConnector(ctx, f.shop.ID, book.NewConnector{Kind: connectors.SourceICS, URL: srv.URL + "/other.ics"})
	require.Error(t, err, "one feed per shop: a second would read the first one's events as gone")

	got, err := f.book.PollFeed(ctx, reader, f.shop.ID, c.Connector.ID)
	require.NoError(t, err)
	require.Equal(t, book.ResultApplied, got.LastDelivery.Result)
	ops := f.openingsOf(t)
	require.Len(t, ops, 1, "the deleted instance, and nothing else")
	require.True(t, ops[0].StartsAt.Equal(time.Date(first.Year(), first.Month(), first.Day()+7, 15, 0, 0, 0, time.UTC)), ops[0].StartsAt)
	require.Equal(t, 45, ops[0].DurationMinutes)
	page, err := f.book.List(ctx, f.shop.ID, book.Query{Status: connectors.StatusBooked})
	require.NoError(t, err)
	require.Len(t, page.Appointments, 4, "the series' three other instances, expanded, and the one-off")
	for _, a := range page.Appointments {
		require.Equal(t, c.Connector.ID, a.ConnectorID, "each names the feed it came from")
	}

	got, err = f.book.PollFeed(ctx, reader, f.shop.ID, c.Connector.ID)
	require.NoError(t, err)
	require.Equal(t, book.ResultNotModified, got.LastDelivery.Result)
	require.Equal(t, 1, fs.full, "a conditional GET")
	require.Equal(t, []string{"", `"v1"`}, fs.saw)
	require.Len(t, f.openingsOf(t), 1)

	fs.set(weeklyFeed(first, false), `"v2"`)
	got, err = f.book.PollFeed(ctx, reader, f.shop.ID, c.Connector.ID)
	require.NoError(t, err)
	require.Equal(t, book.ResultApplied, got.LastDelivery.Result)
	require.Len(t, f.openingsOf(t), 2, "the one-off gone from the feed freed its time")
	a, err := f.book.GetExternal(ctx, f.shop.ID, connectors.SourceICS, "oneoff-1@test")
	require.NoError(t, err)
	require.Equal(t, connectors.StatusCancelled, a.Status)
	require.Equal(t, c.Connector.ID, a.ConnectorID, "gone from the feed, still the feed's")

	fs.mu.Lock()
	fs.fails = true
	fs.mu.Unlock()
	got, err = f.book.PollFeed(ctx, reader, f.shop.ID, c.Connector.ID)
	require.NoError(t, err)
	require.Equal(t, book.ResultFailed, got.LastDelivery.Result)
	require.Len(t, f.openingsOf(t), 2)

	// PollFeeds takes the feeds not polled for FeedEvery: this one was just polled.
	n, err := f.book.PollFeeds(ctx, reader, 10)
	require.NoError(t, err)
	require.Zero(t, n)
}
