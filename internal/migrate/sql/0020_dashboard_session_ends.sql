-- 0020_dashboard_session_ends: a dashboard sign-out is recorded in Postgres.
--
-- Dashboard sessions are signed cookies. Signing out recorded the session's id in Redis
-- until the cookie would have expired; a Redis restarted without persistence forgot
-- them, and a copy of a signed-out cookie worked again for up to 12 hours. Postgres is
-- the record now. The dashboard reads it in the statement that reads the shop, which it
-- does on every signed-in request anyway, so the check costs no round trip. Only this
-- session ends: the shop's other sessions (other devices) go on, and rotating the API
-- key still ends them all (the key's version in the cookie).
CREATE TABLE dashboard_session_ends (
    -- The random id in the session's cookie.
    session_id text PRIMARY KEY CHECK (length(session_id) <= 64),
    shop_id uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    -- When the cookie expires anyway (plus a minute for instances' clocks): the row is
    -- purged after it, by the sign-outs that follow.
    expires_at timestamptz NOT NULL
);
CREATE INDEX dashboard_session_ends_expires_idx ON dashboard_session_ends (expires_at);
