-- 0071_join_requests: a request to join a shop's list (internal/join), from its join page
-- or by texting its join keyword (method), waiting for the number's reply YES to the
-- confirmation text. It is not a customer: an
-- unconfirmed request expires (expires_at, 24 h after it was made) and leaves none, and
-- its name, number and address are purged with it. disclosure_* is the consent wording
-- the visitor ticked, kept verbatim for the consent record; confirmation_body is the text
-- sent. confirmed_at and customer_id are set once, by the reply that confirms it.
CREATE TABLE join_requests (
    id                 uuid PRIMARY KEY,
    shop_id            uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    phone              text NOT NULL CHECK (phone ~ '^\+[1-9][0-9]{7,14}$'),
    name               text NOT NULL CHECK (length(name) <= 100),
    language           text NOT NULL CHECK (language IN ('en', 'es', 'fr')),
    method             text NOT NULL DEFAULT 'page' CHECK (method IN ('page', 'keyword')),
    ip                 inet,
    user_agent         text NOT NULL CHECK (length(user_agent) <= 300),
    disclosure_version text NOT NULL,
    disclosure_text    text NOT NULL CHECK (length(disclosure_text) BETWEEN 1 AND 2000),
    confirmation_body  text NOT NULL,
    created_at         timestamptz NOT NULL,
    expires_at         timestamptz NOT NULL,
    confirmed_at       timestamptz,
    customer_id        uuid REFERENCES customers (id) ON DELETE SET NULL
);
-- A reply finds the number's newest live request of the shop.
CREATE INDEX join_requests_live_idx ON join_requests (shop_id, phone, created_at DESC);
-- The purge of expired requests.
CREATE INDEX join_requests_expires_idx ON join_requests (expires_at);
