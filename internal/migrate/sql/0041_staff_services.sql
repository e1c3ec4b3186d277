-- 0041_staff_services: a shop's people (staff) and what they do (services, with a
-- duration and a price); an opening may be one person's freed time, each offer names
-- the service it offers the customer at its price, and a booking records what was
-- booked. The database refuses two live bookings of one person that overlap.
CREATE EXTENSION IF NOT EXISTS btree_gist;

CREATE TABLE staff (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    shop_id    uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    name       text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    active     boolean NOT NULL DEFAULT true,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX staff_shop_name_idx ON staff (shop_id, lower(name));

-- staff_ids empty: anyone can do it.
CREATE TABLE services (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    shop_id          uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    name             text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    duration_minutes integer NOT NULL CHECK (duration_minutes BETWEEN 5 AND 480),
    price_cents      bigint NOT NULL CHECK (price_cents > 0 AND price_cents <= 99999999),
    staff_ids        uuid[] NOT NULL DEFAULT '{}',
    active           boolean NOT NULL DEFAULT true,
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL
);
CREATE UNIQUE INDEX services_shop_name_idx ON services (shop_id, lower(name));

-- Only these people (empty: anyone).
ALTER TABLE customers ADD COLUMN pref_staff_ids uuid[] NOT NULL DEFAULT '{}';

-- An opening is a person's freed time (staff_id, NULL: anyone's) and may be the rest of
-- another's after a shorter booking (parent_id). With services, it need not name one.
ALTER TABLE slot_openings
    ADD COLUMN staff_id  uuid REFERENCES staff (id),
    ADD COLUMN parent_id uuid REFERENCES slot_openings (id);
ALTER TABLE slot_openings DROP CONSTRAINT slot_openings_service_check;
ALTER TABLE slot_openings ADD CONSTRAINT slot_openings_service_check CHECK (length(service) <= 100);
ALTER TABLE slot_openings DROP CONSTRAINT slot_openings_price_cents_check;
ALTER TABLE slot_openings ADD CONSTRAINT slot_openings_price_cents_check CHECK (price_cents >= 0);

-- What the offer offers this customer: NULL, the opening's own service and price.
ALTER TABLE slot_offers
    ADD COLUMN service_id       uuid REFERENCES services (id),
    ADD COLUMN service          text,
    ADD COLUMN duration_minutes integer,
    ADD COLUMN price_cents      bigint;

-- What was booked, by whom and when: [starts_at, ends_at) of staff_id's time.
ALTER TABLE bookings
    ADD COLUMN service          text,
    ADD COLUMN duration_minutes integer,
    ADD COLUMN staff_id         uuid REFERENCES staff (id),
    ADD COLUMN starts_at        timestamptz,
    ADD COLUMN ends_at          timestamptz,
    ADD CONSTRAINT bookings_time_check CHECK (ends_at IS NULL OR ends_at > starts_at),
    ADD CONSTRAINT bookings_staff_no_overlap EXCLUDE USING gist (staff_id WITH =, tstzrange(starts_at, ends_at) WITH &&)
        WHERE (staff_id IS NOT NULL AND status IN ('pending_payment', 'confirmed'));
