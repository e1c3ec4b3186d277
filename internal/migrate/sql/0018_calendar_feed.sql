-- 0018_calendar_feed: each shop's secret calendar feed (/calendar/<token>.ics).
--
-- The token is kept as is, because the owner reads the feed's address again and again
-- (the API, the dashboard's copy button), and as its SHA-256, by which a request finds
-- the shop: the lookup's timing depends on the hash, never on the token. Rotating it
-- replaces both in one UPDATE, and every instance reads them from Postgres on every
-- request, so the old address is dead from the commit on. Existing shops get a token
-- here (two random UUIDs' hex, 244 random bits).
ALTER TABLE shops ADD COLUMN calendar_token text;
ALTER TABLE shops ADD COLUMN calendar_token_hash bytea;
UPDATE shops SET calendar_token = 'cal_' || replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '');
UPDATE shops SET calendar_token_hash = sha256(convert_to(calendar_token, 'UTF8'));
ALTER TABLE shops ALTER COLUMN calendar_token SET NOT NULL;
ALTER TABLE shops ALTER COLUMN calendar_token_hash SET NOT NULL;
ALTER TABLE shops ADD CONSTRAINT shops_calendar_token_hash_key UNIQUE (calendar_token_hash);
-- Feed addresses get shared: the feed shows customers' first names and masked phones
-- unless the owner asks for full names and numbers.
ALTER TABLE shops ADD COLUMN calendar_full_details boolean NOT NULL DEFAULT false;
