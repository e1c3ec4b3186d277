-- 0079: joining's allowed countries, refusal counts, spent budgets and preferences
-- (internal/join, issue 46).
-- join_allowed_countries: the calling codes a shop's join page and join keyword accept
-- besides the shop's own (its SMS number's), which is always allowed.
CREATE TABLE join_allowed_countries (
    shop_id      uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    calling_code text NOT NULL CHECK (calling_code ~ '^[1-9][0-9]{0,2}$'),
    PRIMARY KEY (shop_id, calling_code)
);

-- join_refusals: how many join requests a shop refused each day (UTC), by reason, for
-- the dashboard: one upsert a refusal. No number, no address: counts only.
CREATE TABLE join_refusals (
    shop_id uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    day     date NOT NULL,
    reason  text NOT NULL CHECK (reason IN ('honeypot', 'country', 'shape', 'own_number', 'ip', 'number', 'shop_budget', 'unavailable')),
    count   integer NOT NULL CHECK (count > 0),
    last_at timestamptz NOT NULL,
    PRIMARY KEY (shop_id, day, reason)
);
CREATE INDEX join_refusals_day_idx ON join_refusals (day);

-- join_budget_spent: the hours (UTC, truncated) in which a shop's hourly budget of
-- confirmation texts was spent. The primary key makes the owner's alert once an hour:
-- only the insert that creates the row queues it.
CREATE TABLE join_budget_spent (
    shop_id uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    hour    timestamptz NOT NULL,
    at      timestamptz NOT NULL,
    PRIMARY KEY (shop_id, hour)
);
CREATE INDEX join_budget_spent_hour_idx ON join_budget_spent (hour);

-- What a joining customer wants (days, times, services, people), kept with the request
-- and saved on the customer by their YES; NULL: nothing asked for (any opening).
ALTER TABLE join_requests ADD COLUMN preferences jsonb;
