-- 0016_webhook_endpoints: outbound event webhooks (Standard Webhooks), owned by
-- internal/hooks.
--
-- A shop registers endpoints; the owners of each change record an event in the change's
-- own transaction (an outbox: webhook_events), but only when one of the shop's enabled
-- endpoints is subscribed to its type, so a shop without endpoints pays one index probe.
-- A dispatcher renders each event once (payload: the exact bytes every attempt sends)
-- and fans it out to one delivery per subscribed endpoint, each a River job; every
-- attempt is logged. Rows are purged after 30 days.
CREATE TABLE webhook_endpoints (
    id                         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    shop_id                    uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    url                        text NOT NULL CHECK (length(url) BETWEEN 1 AND 2048),
    description                text NOT NULL DEFAULT '' CHECK (length(description) <= 500),
    -- Event types, or '{*}' for all of them.
    enabled_events             text[] NOT NULL CHECK (cardinality(enabled_events) BETWEEN 1 AND 50),
    -- whsec_<base64>: kept as is because signing needs it; shown to the owner only when
    -- made. After a rotation the previous secret signs too, until it expires (24 h).
    secret                     text NOT NULL,
    previous_secret            text,
    previous_secret_expires_at timestamptz,
    -- Disabled by the owner, or by the server after failing for days (the reason says).
    disabled_at                timestamptz,
    disabled_reason            text,
    -- Since when every attempt has failed (NULL: the last one succeeded).
    failing_since              timestamptz,
    created_at                 timestamptz NOT NULL,
    updated_at                 timestamptz NOT NULL,
    CHECK ((previous_secret IS NULL) = (previous_secret_expires_at IS NULL))
);
CREATE INDEX webhook_endpoints_shop_idx ON webhook_endpoints (shop_id, created_at);
-- What webhook_subscribed probes on every recorded change (the YES too).
CREATE INDEX webhook_endpoints_live_idx ON webhook_endpoints (shop_id) WHERE disabled_at IS NULL;

-- The outbox. No foreign key to shops: recording is part of other packages' hot
-- statements (the YES's claim), and a key check would lock the shop's row there (see
-- 0005); the purge removes old rows.
CREATE TABLE webhook_events (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    -- Orders a shop's events: two recorded by one statement share created_at.
    seq            bigint GENERATED ALWAYS AS IDENTITY,
    shop_id        uuid NOT NULL,
    type           text NOT NULL,
    created_at     timestamptz NOT NULL,
    -- The object as it stood at the event, recorded by SQL in the change's own
    -- statement (see webhook_opening_subject) or by the owner's Go code.
    subject        jsonb NOT NULL,
    -- The body every attempt sends, rendered once at dispatch.
    payload        bytea,
    dispatched_at  timestamptz,
    dispatch_error text
);
CREATE INDEX webhook_events_undispatched_idx ON webhook_events (seq) WHERE dispatched_at IS NULL;
CREATE INDEX webhook_events_created_idx ON webhook_events (created_at);
-- A shop's events (an erasure scrubs the customer's).
CREATE INDEX webhook_events_shop_idx ON webhook_events (shop_id, seq);

CREATE TABLE webhook_deliveries (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    -- The order the dispatcher made them in, which is their events' order: the owner's
    -- list pages by it, newest first.
    seq              bigint GENERATED ALWAYS AS IDENTITY,
    event_id         uuid NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
    endpoint_id      uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    shop_id          uuid NOT NULL,
    status           text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    -- Scheduled attempts made (an owner's "send again" is logged but not counted).
    attempts         integer NOT NULL DEFAULT 0,
    next_attempt_at  timestamptz,
    last_attempt_at  timestamptz,
    last_status_code integer,
    last_error       text,
    created_at       timestamptz NOT NULL,
    finished_at      timestamptz,
    UNIQUE (event_id, endpoint_id)
);
CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, seq DESC);
CREATE INDEX webhook_deliveries_created_idx ON webhook_deliveries (created_at);

CREATE TABLE webhook_attempts (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    delivery_id   uuid NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    attempted_at  timestamptz NOT NULL,
    manual        boolean NOT NULL DEFAULT false,
    status_code   integer,
    duration_ms   integer NOT NULL,
    -- The first bytes of the answer, as text.
    response_head text NOT NULL DEFAULT '',
    error         text
);
CREATE INDEX webhook_attempts_delivery_idx ON webhook_attempts (delivery_id, attempted_at);

-- The shop's enabled endpoints subscribed to any of the event types: the guard of
-- every recording ("WHERE EXISTS (SELECT FROM webhook_subscribers(shop, types))") and
-- the dispatcher's fan-out. A set-returning SQL function of one SELECT, so the planner
-- inlines it into the caller's statement: for a shop without endpoints, the guard costs
-- one probe of webhook_endpoints_live_idx. (A scalar function holding EXISTS would not
-- be inlined, and would be planned again on every call.)
CREATE FUNCTION webhook_subscribers(p_shop uuid, p_types text[]) RETURNS SETOF uuid
LANGUAGE sql STABLE PARALLEL SAFE ROWS 1
AS $$
    SELECT e.id FROM webhook_endpoints e
    WHERE e.shop_id = p_shop AND e.disabled_at IS NULL
      AND e.enabled_events && (p_types || '*'::text)
$$;

-- The events a YES's claim makes: opening.filled, and booking.confirmed too when the
-- booking is confirmed at once (a shop without payments), in that order.
CREATE FUNCTION webhook_claim_types(p_booking_status text) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE WHEN p_booking_status = 'confirmed' THEN ARRAY['opening.filled', 'booking.confirmed']
                ELSE ARRAY['opening.filled'] END
$$;

-- The subject of an opening or booking event: the opening's row and the booking's (the
-- one the event is about, or the latest) as they stand in the caller's statement, with
-- what the API shows beside them, read as they stood when the statement began (it
-- changes none of them): who holds the opening, how many offers were texted and the
-- shop's currency. A statement that changes the rows passes its RETURNING rows, so the
-- event shows the state the change made. Called only for recorded events (after the
-- guard); PL/pgSQL, so its statements' plans are kept for the session.
CREATE FUNCTION webhook_opening_subject(p_opening jsonb, p_booking jsonb) RETURNS jsonb
LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
BEGIN
    RETURN jsonb_build_object(
        'opening', p_opening,
        'booking', p_booking,
        'filler', (SELECT jsonb_build_object('id', c.id, 'phone', c.phone, 'name', c.name)
                   FROM customers c WHERE c.id = (p_opening ->> 'filled_by')::uuid),
        'offers_sent', (SELECT count(*) FROM slot_offers o
                        WHERE o.opening_id = (p_opening ->> 'id')::uuid AND o.sent_at IS NOT NULL),
        'currency', (SELECT s.currency FROM shops s WHERE s.id = (p_opening ->> 'shop_id')::uuid));
END
$$;

-- Records, for each of the types the shop has an endpoint subscribed to (in the order
-- given), an opening or booking event whose subject is webhook_opening_subject(opening,
-- booking), and returns how many it recorded. A statement that makes a change calls it
-- with its own RETURNING rows, guarded so that a shop without endpoints never reaches
-- it (and never touches webhook_events):
--   CASE WHEN EXISTS (SELECT FROM webhook_subscribers(shop, types))
--        THEN webhook_record_opening(shop, types, at, to_jsonb(opening_row), to_jsonb(booking_row))
--        ELSE 0 END
-- (the YES's claim, one statement; see internal/hooks). It is internal/hooks' way in
-- SQL of recording, as hooks.RecordOpening is in Go.
CREATE FUNCTION webhook_record_opening(p_shop uuid, p_types text[], p_at timestamptz, p_opening jsonb, p_booking jsonb)
RETURNS integer
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    n       integer := 0;
    t       text;
    subject jsonb;
BEGIN
    FOREACH t IN ARRAY p_types LOOP
        IF EXISTS (SELECT FROM webhook_subscribers(p_shop, ARRAY[t])) THEN
            IF subject IS NULL THEN
                subject := webhook_opening_subject(p_opening, p_booking);
            END IF;
            INSERT INTO webhook_events (shop_id, type, created_at, subject) VALUES (p_shop, t, p_at, subject);
            n := n + 1;
        END IF;
    END LOOP;
    RETURN n;
END
$$;
