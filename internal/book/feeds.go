package book

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/connectors"
	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/problem"
)

// FeedReader fetches and reads a calendar feed (connectors/ics.Reader, over the
// webhooks' guarded client): a conditional GET with the validators of the last poll, the
// feed read in loc.
type FeedReader interface {
	ReadFeed(ctx context.Context, url, etag, lastModified string, loc *time.Location) (connectors.Feed, error)
}

// FeedEvery is how often a calendar feed is polled.
const FeedEvery = 2 * time.Minute

// feedSlack is how early a feed counts as due: the periodic job's runs are FeedEvery
// apart give or take a little, and a feed polled by one run is due for the next.
const feedSlack = 15 * time.Second

// feedsAtOnce is how many feeds PollFeeds polls at once.
const feedsAtOnce = 8

// Results of a poll, besides ResultApplied, ResultBadPayload, ResultRejected and
// ResultFailed.
const (
	// ResultNotModified: the feed answered 304, nothing to read.
	ResultNotModified DeliveryResult = "not_modified"
)

// feedEvent is the last delivery's event of a poll.
const feedEvent = "poll"

// maxValidator bounds the validators kept (the column's limits): a longer one is not
// kept, and the next poll fetches the whole feed.
const (
	maxETag         = 500
	maxLastModified = 100
)

// PollFeeds polls, through r, at most limit of the shops' calendar feeds (ics
// connectors) not polled for FeedEvery, longest waiting first, and applies each as a
// snapshot of its shop's ics appointments (Snapshot): new and changed events are
// upserted, and booked ones the feed no longer lists are cancelled, so each cancelled
// future time declares its opening once. It returns how many it polled. A feed that
// fails is recorded as its connector's last delivery and polled again next time; it does
// not stop the others.
func (s *Service) PollFeeds(ctx context.Context, r FeedReader, limit int) (int, error) {
	now := s.cfg.Now().UTC()
	rows, err := queries.ConnectorFeedsDue(ctx, s.pool, db.ConnectorFeedsDueParams{Before: now.Add(-FeedEvery + feedSlack), MaxRows: int32(limit)})
	if err != nil {
		return 0, fmt.Errorf("list feeds due: %w", err)
	}
	// A few at once: a feed is mostly waiting on its server.
	var (
		mu     sync.Mutex
		errs   []error
		polled int
		wg     sync.WaitGroup
		slots  = make(chan struct{}, feedsAtOnce)
	)
	for _, row := range rows {
		if ctx.Err() != nil {
			break // the rest are due for the next run
		}
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			err := s.pollFeed(ctx, r, row)
			mu.Lock()
			defer mu.Unlock()
			polled++
			if err != nil {
				errs = append(errs, fmt.Errorf("feed %s: %w", row.ID, err))
			}
		})
	}
	wg.Wait()
	return polled, errors.Join(errs...)
}

// PollFeed polls shopID's ics connector id now (the owner's "check now", and tests).
func (s *Service) PollFeed(ctx context.Context, r FeedReader, shopID, id uuid.UUID) (Connector, error) {
	row, err := queries.ConnectorGet(ctx, s.pool, db.ConnectorGetParams{ID: id, ShopID: shopID})
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && row.Kind != string(connectors.SourceICS)) {
		return Connector{}, ErrConnectorNotFound
	}
	if err != nil {
		return Connector{}, fmt.Errorf("get connector %s: %w", id, err)
	}
	if err := s.pollFeed(ctx, r, row); err != nil {
		return Connector{}, err
	}
	return s.Connector(ctx, shopID, id)
}

// pollFeed polls one feed and records the outcome. Only a failure to record it is
// returned: the feed's own failures are the owner's to see (the last delivery).
func (s *Service) pollFeed(ctx context.Context, r FeedReader, row db.Connector) error {
	at := s.cfg.Now().UTC()
	p := db.ConnectorFeedPolledParams{ID: row.ID, At: at, Event: feedEvent, KeepValidators: true}
	record := func(result DeliveryResult) error {
		p.Result = string(result)
		if err := queries.ConnectorFeedPolled(ctx, s.pool, p); err != nil {
			return fmt.Errorf("record poll: %w", err)
		}
		return nil
	}
	plain, err := s.cfg.Secrets.Open(row.Secret.String, connectorSealContext(row.ShopID, row.ID))
	if err != nil {
		_ = record(ResultFailed)
		return fmt.Errorf("the feed's address cannot be read (SECRETS_KEY): %w", err)
	}
	shop, err := s.shops.Get(ctx, row.ShopID)
	if err != nil {
		return fmt.Errorf("shop of feed: %w", err)
	}
	loc, err := time.LoadLocation(shop.Timezone)
	if err != nil {
		loc = time.UTC
	}
	feed, err := r.ReadFeed(ctx, string(plain), row.FeedEtag, row.FeedLastModified, loc)
	switch {
	case errors.Is(err, connectors.ErrPayload):
		return record(ResultBadPayload)
	case err != nil:
		s.cfg.Logger.WarnContext(ctx, "calendar feed not read", "connector_id", row.ID, "error", err)
		return record(ResultFailed)
	case feed.NotModified:
		return record(ResultNotModified)
	}
	if _, err := s.snapshot(ctx, shop, connectors.SourceICS, feed.Appointments, at, row.ID); err != nil {
		// The validators stay the last good poll's: the next poll reads the whole feed
		// again (the snapshot is idempotent) rather than hear "not modified".
		// An empty feed, or events the book refuses, is the feed's problem; anything
		// else a passing one.
		result := ResultFailed
		var prob *problem.Error
		if errors.As(err, &prob) {
			result = ResultRejected
		}
		s.cfg.Logger.WarnContext(ctx, "calendar feed not applied", "connector_id", row.ID, "result", result, "error", err)
		return record(result)
	}
	p.KeepValidators = false
	if len(feed.ETag) <= maxETag {
		p.Etag = feed.ETag
	}
	if len(feed.LastModified) <= maxLastModified {
		p.LastModified = feed.LastModified
	}
	return record(ResultApplied)
}
