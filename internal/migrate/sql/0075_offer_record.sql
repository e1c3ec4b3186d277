-- 0075_offer_record: every offer on the record with its reason (internal/offers), and
-- what the ranking and the stats read.
-- Attendance of a booking (written by internal/ledger): at most one of the two is set.
ALTER TABLE bookings ADD COLUMN attended_at timestamptz;
ALTER TABLE bookings ADD COLUMN no_show_at timestamptz;
ALTER TABLE bookings ADD CONSTRAINT bookings_attendance_check CHECK (attended_at IS NULL OR no_show_at IS NULL);
-- A customer's bookings by time, with what the ranking reads of them (an index-only
-- scan a customer: the ranking's last booking, no-shows and lapsed holds), the stats.
CREATE INDEX bookings_customer_created_idx ON bookings (customer_id, created_at DESC) INCLUDE (status, no_show_at);
-- The owner cleared the customer's no-shows: those before this moment no longer keep
-- them from being offered (shops' skip_after_no_shows).
ALTER TABLE customers ADD COLUMN no_shows_cleared_at timestamptz;
-- An offer's rank in its wave (1: texted first) and the facts that put it there
-- (offers.Reason, rendered in words in Go). NULL for offers recorded before 0075.
ALTER TABLE slot_offers ADD COLUMN rank integer;
ALTER TABLE slot_offers ADD COLUMN reason jsonb;
-- Each recorded wave: when, under which ranking, and who was left out for each reason
-- (skipped: counts by reason; skipped_ids: the customers by reason, except
-- already_offered, which the offers themselves record).
CREATE TABLE offer_waves (
    opening_id  uuid NOT NULL REFERENCES slot_openings (id) ON DELETE CASCADE,
    generation  integer NOT NULL,
    wave        integer NOT NULL,
    shop_id     uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    at          timestamptz NOT NULL,
    ranking     text NOT NULL,
    skipped     jsonb NOT NULL,
    skipped_ids jsonb NOT NULL,
    PRIMARY KEY (opening_id, generation, wave)
);
