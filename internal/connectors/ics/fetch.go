package ics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/slotrecovery/slotrecovery/internal/connectors"
)

// ErrFeedUnavailable means the feed could not be read this time (the address refused,
// timed out or answered an error): the next poll tries again, and nothing is read as
// gone meanwhile.
var ErrFeedUnavailable = errors.New("ics: feed unavailable")

// Reader fetches and reads calendar feeds: a conditional GET (If-None-Match with the
// last ETag, If-Modified-Since with the last Last-Modified) of at most MaxFeed bytes,
// then ParseWindow from now to ExpandAhead. Client must be the webhooks' guarded client (no private, loopback or
// metadata addresses, checked at every connection, no redirects followed blindly): a
// feed's address is the owner's to choose.
type Reader struct {
	Client *http.Client
	// Timeout bounds one fetch; default 20 s.
	Timeout time.Duration
	// UserAgent is sent with each fetch; default "SlotRecovery-Calendar/1".
	UserAgent string
	// Now is the clock the series' expansion window starts at; nil means time.Now.
	Now func() time.Time
}

// ExpandAhead is how far ahead of now ReadFeed expands recurring series (ParseWindow):
// the book holds their instances that far.
const ExpandAhead = 92 * 24 * time.Hour

// ReadFeed fetches the feed at url, sending the validators of the last poll, and reads
// it in loc (the shop's zone). A 304 is Feed.NotModified.
func (r Reader) ReadFeed(ctx context.Context, url, etag, lastModified string, loc *time.Location) (connectors.Feed, error) {
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = 20 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return connectors.Feed{}, fmt.Errorf("%w: %v", ErrFeedUnavailable, err)
	}
	ua := r.UserAgent
	if ua == "" {
		ua = "SlotRecovery-Calendar/1"
	}
	req.Header.Set("User-Agent", ua)
	req.Header.Set("Accept", "text/calendar, */*;q=0.1")
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	if lastModified != "" {
		req.Header.Set("If-Modified-Since", lastModified)
	}
	res, err := r.Client.Do(req)
	if err != nil {
		// The error names the address, whose token is the feed's credential: never
		// pass it on.
		return connectors.Feed{}, fmt.Errorf("%w: the request failed", ErrFeedUnavailable)
	}
	defer res.Body.Close()
	switch {
	case res.StatusCode == http.StatusNotModified:
		return connectors.Feed{NotModified: true}, nil
	case res.StatusCode != http.StatusOK:
		return connectors.Feed{}, fmt.Errorf("%w: answered %d", ErrFeedUnavailable, res.StatusCode)
	}
	now := time.Now()
	if r.Now != nil {
		now = r.Now()
	}
	// Parse reads at most MaxFeed+1 bytes and refuses a longer feed. An instance
	// already begun is left out: the book frees no time that has started.
	f, err := ParseWindow(io.LimitReader(res.Body, MaxFeed+1), loc, now, now.Add(ExpandAhead))
	if err != nil {
		return connectors.Feed{}, err
	}
	return connectors.Feed{Appointments: f.Appointments, ETag: res.Header.Get("ETag"),
		LastModified: res.Header.Get("Last-Modified")}, nil
}
