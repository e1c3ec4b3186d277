-- 0004_owner_list_and_rules: shop owners run their own customer list (preferences,
-- erasure) and their offer rules (a daily cap per customer, a grace period before the
-- first wave).

-- At most this many offers texted to one customer per day (the shop's local day),
-- across openings; NULL means no cap.
ALTER TABLE shops ADD COLUMN max_offers_per_day integer CHECK (max_offers_per_day BETWEEN 1 AND 1000);
-- How long after an opening is declared its first wave waits, so a mistaken declaration
-- can be cancelled before anyone is texted.
ALTER TABLE shops ADD COLUMN first_wave_delay_seconds integer NOT NULL DEFAULT 0
    CHECK (first_wave_delay_seconds BETWEEN 0 AND 86400);

-- A customer's time preferences, in the shop's time zone: ISO days of the week (1 =
-- Monday ... 7 = Sunday) and windows as minutes after local midnight (start inclusive,
-- end exclusive, parallel arrays); optionally the services they want. Empty means "any".
ALTER TABLE customers ADD COLUMN pref_days smallint[] NOT NULL DEFAULT '{}'
    CHECK (cardinality(pref_days) <= 7 AND pref_days <@ '{1,2,3,4,5,6,7}'::smallint[]);
ALTER TABLE customers ADD COLUMN pref_window_starts integer[] NOT NULL DEFAULT '{}';
ALTER TABLE customers ADD COLUMN pref_window_ends integer[] NOT NULL DEFAULT '{}';
ALTER TABLE customers ADD COLUMN pref_services text[] NOT NULL DEFAULT '{}'
    CHECK (cardinality(pref_services) <= 20);
ALTER TABLE customers ADD CONSTRAINT customers_pref_windows_check
    CHECK (cardinality(pref_window_starts) = cardinality(pref_window_ends) AND cardinality(pref_window_starts) <= 4);

-- Erasure: the row stays (bookings and offers keep their foreign keys, so the shop's
-- totals stay right), but the name and phone are gone and the customer is opted out for
-- good. erased_phone_sha256 (of shop id and phone) lets a text queued before the erasure
-- recognise the number and not go out, without keeping the number.
ALTER TABLE customers ADD COLUMN erased_at timestamptz;
ALTER TABLE customers ADD COLUMN erased_phone_sha256 bytea;
CREATE INDEX customers_erased_phone_idx ON customers (shop_id, erased_phone_sha256) WHERE erased_at IS NOT NULL;
-- A phone is unique among a shop's live customers only: every erased row has an empty
-- phone, and the person may later come back as a new customer.
ALTER TABLE customers DROP CONSTRAINT customers_shop_id_phone_key;
CREATE UNIQUE INDEX customers_shop_phone_live ON customers (shop_id, phone) WHERE erased_at IS NULL;
-- The owners' list pages by creation order.
CREATE INDEX customers_shop_created_idx ON customers (shop_id, created_at, id);
