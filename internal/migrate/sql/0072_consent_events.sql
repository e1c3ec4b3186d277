-- 0072_consent_events: the consent record (internal/join): every opt-in and opt-out of a
-- customer, with how it was given (method), when, from where (ip and user_agent, for the
-- join page only), in which language, to which words (disclosure_*: the version, the
-- SHA-256 of the text and the text itself), the reply that confirmed it (confirmation_*:
-- the customer's message's provider id, its words and when; NULL when none was asked),
-- whether the owner asserted it (an import, the API, the dashboard) and by whom, and the
-- customer's own words for an opt-out (revocation_text). Rows are never changed: an
-- erasure of the customer blanks the customer, the record keeps the proof.
CREATE TABLE consent_events (
    id                 uuid PRIMARY KEY,
    shop_id            uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    customer_id        uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
    kind               text NOT NULL CHECK (kind IN ('opt_in', 'opt_out')),
    method             text NOT NULL CHECK (method IN ('page', 'keyword', 'import', 'api', 'dashboard', 'reply')),
    at                 timestamptz NOT NULL,
    ip                 inet,
    user_agent         text CHECK (length(user_agent) <= 300),
    language           text NOT NULL CHECK (language IN ('en', 'es', 'fr')),
    disclosure_version text,
    disclosure_sha256  bytea CHECK (length(disclosure_sha256) = 32),
    disclosure_text    text,
    confirmation_sid   text,
    confirmation_body  text,
    confirmation_at    timestamptz,
    asserted_by_owner  boolean NOT NULL DEFAULT false,
    asserted_by        text,
    revocation_text    text CHECK (length(revocation_text) <= 1600),
    -- The join request a page opt-in confirmed: it is recorded once.
    join_request_id    uuid UNIQUE,
    CHECK (method = 'page' OR (ip IS NULL AND user_agent IS NULL)),
    CHECK ((disclosure_text IS NULL) = (disclosure_sha256 IS NULL)),
    CHECK (confirmation_at IS NOT NULL OR (confirmation_sid IS NULL AND confirmation_body IS NULL))
);
-- The export reads a shop's events by time.
CREATE INDEX consent_events_shop_at_idx ON consent_events (shop_id, at, id);
CREATE INDEX consent_events_customer_idx ON consent_events (customer_id, at);
