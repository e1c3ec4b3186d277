-- 0017_idempotency_keys: Idempotency-Key on the creating POSTs (Stripe's convention),
-- owned by internal/idempotency.
--
-- A key is taken by the first request that carries it (the row, answer not yet stored);
-- its answer is stored when it ends, and a retry with the same key and the same request
-- gets that answer again for 24 hours. Postgres is the truth, so it holds across restarts
-- and instances. A 5xx answer is not kept (the row goes): the retry runs afresh.
CREATE TABLE idempotency_keys (
    shop_id        uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    key            text NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
    -- SHA-256 of the method, path and body: the same key with another request is refused.
    request_hash   bytea NOT NULL,
    created_at     timestamptz NOT NULL,
    -- The request holding the key (a random id) and when it started: a request that
    -- died holding it is taken over once that is longer ago than a request may run.
    holder         uuid NOT NULL,
    locked_at      timestamptz NOT NULL,
    -- The stored answer; NULL while the first request is running.
    status         integer,
    content_type   text,
    location       text,
    cache_control  text,
    body           bytea,
    PRIMARY KEY (shop_id, key)
);
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);
