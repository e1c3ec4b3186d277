-- 0062_connector_feeds: what a calendar feed (an ics connector) last answered, for the
-- next poll's conditional GET (If-None-Match, If-Modified-Since), and when it was last
-- polled.
ALTER TABLE connectors
    ADD COLUMN feed_etag          text NOT NULL DEFAULT '' CHECK (length(feed_etag) <= 500),
    ADD COLUMN feed_last_modified text NOT NULL DEFAULT '' CHECK (length(feed_last_modified) <= 100),
    ADD COLUMN polled_at          timestamptz;
CREATE INDEX connectors_feeds_due_idx ON connectors (polled_at NULLS FIRST, id) WHERE kind = 'ics';
