-- 0024_calendar_events: what each calendar feed event last said, with its SEQUENCE and
-- LAST-MODIFIED, so that both move on with every change of the event.
--
-- They were derived from the opening's and its booking's updated_at: SEQUENCE in tenths
-- of a second since the opening's creation, LAST-MODIFIED to the second. A hold paid
-- within the same second (or the same tenth) kept both, and a change that touches
-- neither row (the customer renamed, the shop showing full details) moved neither, so
-- a subscribed calendar could keep the version it had. The feed (internal/calendar)
-- now keeps, per opening and per view (with or without open openings: they say
-- different things), a hash of what the event says; when it differs, SEQUENCE goes up
-- by one and LAST-MODIFIED to the change's time, at least a second past the last. An
-- event seen for the first time starts where the derived values were, so calendars
-- that hold it already see the next change as newer.
CREATE TABLE calendar_events (
    opening_id   uuid NOT NULL REFERENCES slot_openings (id) ON DELETE CASCADE,
    include_open boolean NOT NULL,
    content_hash bytea NOT NULL CHECK (length(content_hash) = 32),
    sequence     integer NOT NULL CHECK (sequence >= 0),
    modified_at  timestamptz NOT NULL,
    PRIMARY KEY (opening_id, include_open)
);
