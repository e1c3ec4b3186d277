-- 0060_appointment_book: the shop's appointment book (internal/book). An appointment is
-- named in its source by (source, external_id); (source_version, source_updated_at)
-- orders the source's descriptions of it, so an older one changes nothing. releases
-- counts the times it freed the time it held (cancelled, moved, or booked at another
-- time): each release may declare one opening, exactly once, fenced by
-- appointment_openings' primary key.
ALTER TABLE shops ADD COLUMN auto_declare boolean NOT NULL DEFAULT true;

CREATE TABLE appointments (
    id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    shop_id           uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    source            text NOT NULL CHECK (source IN ('api', 'calcom', 'square', 'ics', 'slotrecovery')),
    -- NULL for the book's own records (a booking made by a YES).
    external_id       text CHECK (length(external_id) BETWEEN 1 AND 300),
    customer_id       uuid REFERENCES customers (id),
    phone             text CHECK (phone ~ '^\+[1-9][0-9]{7,14}$'),
    customer_name     text NOT NULL DEFAULT '' CHECK (length(customer_name) <= 200),
    staff_id          uuid REFERENCES staff (id),
    external_staff    text NOT NULL DEFAULT '' CHECK (length(external_staff) <= 300),
    service           text NOT NULL DEFAULT '' CHECK (length(service) <= 200),
    price_cents       bigint NOT NULL DEFAULT 0 CHECK (price_cents >= 0),
    starts_at         timestamptz NOT NULL,
    duration_minutes  integer NOT NULL CHECK (duration_minutes BETWEEN 1 AND 1440),
    status            text NOT NULL CHECK (status IN ('booked', 'cancelled', 'moved', 'completed', 'no_show')),
    source_version    bigint NOT NULL DEFAULT 0,
    source_updated_at timestamptz NOT NULL,
    releases          integer NOT NULL DEFAULT 0 CHECK (releases >= 0),
    created_at        timestamptz NOT NULL,
    changed_at        timestamptz NOT NULL,
    CONSTRAINT appointments_external_key UNIQUE (shop_id, source, external_id)
);
CREATE INDEX appointments_shop_start_idx ON appointments (shop_id, starts_at, id);
CREATE INDEX appointments_booked_idx ON appointments (shop_id, staff_id, starts_at) WHERE status = 'booked';

-- The opening each release of an appointment declares, for the time it freed (the time
-- the book held: a cancelled appointment's, or a moved one's former time): waiting (the
-- shop does not declare by itself: the owner offers it), pending (claimed, not tried
-- yet), declaring (being declared since attempted_at), declared (opening_id), skipped
-- (reason: past the cutoff, the time already open or booked again, ...).
CREATE TABLE appointment_openings (
    shop_id          uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    appointment_id   uuid NOT NULL REFERENCES appointments (id) ON DELETE CASCADE,
    release_no       integer NOT NULL CHECK (release_no >= 1),
    starts_at        timestamptz NOT NULL,
    duration_minutes integer NOT NULL CHECK (duration_minutes BETWEEN 1 AND 1440),
    staff_id         uuid REFERENCES staff (id),
    state            text NOT NULL CHECK (state IN ('waiting', 'pending', 'declaring', 'declared', 'skipped')),
    opening_id     uuid REFERENCES slot_openings (id) ON DELETE SET NULL,
    reason         text NOT NULL DEFAULT '',
    attempted_at   timestamptz,
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL,
    PRIMARY KEY (shop_id, appointment_id, release_no)
);
CREATE INDEX appointment_openings_due_idx ON appointment_openings (attempted_at NULLS FIRST)
    WHERE state IN ('pending', 'declaring');
