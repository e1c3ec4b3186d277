-- 0091: move-up offers for bookings made by a YES (issue 44). A confirmed YES booking
-- moved up to an earlier opening becomes moved: its payment (amount, Stripe ids,
-- account, fee, terms) went with it to the booking it became (moved_to), which is the
-- only live booking that can reach it. moved is not live: the partial indexes and the
-- exclusion constraint on bookings name pending_payment and confirmed only.
ALTER TABLE bookings DROP CONSTRAINT bookings_status_check;
ALTER TABLE bookings ADD CONSTRAINT bookings_status_check
    CHECK (status IN ('pending_payment', 'confirmed', 'payment_failed', 'cancelled', 'moved'));
ALTER TABLE bookings ADD COLUMN moved_to uuid REFERENCES bookings (id);
ALTER TABLE bookings ADD CONSTRAINT bookings_moved_check CHECK ((status = 'moved') = (moved_to IS NOT NULL));
-- slot_offers.move_from_booking: a move-up offer's YES booking (move_from names an
-- appointment of the book; at most one of them). slot_offers_claimable shows either as
-- move_from, so the claim reads a move-up of either kind as it did.
ALTER TABLE slot_offers ADD COLUMN move_from_booking uuid REFERENCES bookings (id) ON DELETE CASCADE;
ALTER TABLE slot_offers ADD CONSTRAINT slot_offers_move_from_one CHECK (move_from IS NULL OR move_from_booking IS NULL);
CREATE INDEX slot_offers_move_from_booking_idx ON slot_offers (move_from_booking) WHERE move_from_booking IS NOT NULL;
CREATE OR REPLACE VIEW slot_offers_claimable AS
SELECT o.id, o.opening_id, o.customer_id, o.shop_id, o.generation, o.created_at, s.starts_at,
    COALESCE(o.move_from, o.move_from_booking) AS move_from
FROM slot_offers o
JOIN slot_openings s ON s.id = o.opening_id
WHERE o.status = 'sent' AND s.status = 'open' AND o.generation = s.generation;
-- A moved booking's opening's chain is read by the next wave's candidates (a chain
-- never moves a customer twice): a customer's moved bookings.
CREATE INDEX bookings_customer_moved_idx ON bookings (customer_id) WHERE status = 'moved';
-- And a customer's moved appointments, for the same check: without it the check read
-- every appointment of the table once per candidate (a first wave over 2,000 booked
-- appointments took 180 ms, nearly all of it there).
CREATE INDEX appointments_customer_moved_idx ON appointments (customer_id) WHERE status = 'moved';
-- The booking a moved one became, for the chains' line (BookChains: who left which time).
CREATE INDEX bookings_moved_to_idx ON bookings (moved_to) WHERE moved_to IS NOT NULL;
-- book_appointments (0064, 0068, 0080, 0090): a moved YES booking is moved, moved_to the
-- opening its new booking holds (as appointments.moved_to names an opening).
CREATE OR REPLACE VIEW book_appointments AS
SELECT a.id, a.shop_id, a.source, a.external_id, a.customer_id, a.phone, a.customer_name, a.staff_id,
    a.external_staff, a.service, a.price_cents, a.starts_at, a.duration_minutes, a.status,
    a.source_version, a.source_updated_at, a.releases, a.created_at, a.changed_at, a.moved_to, a.copied_at,
    a.connector_id
FROM appointments a
UNION ALL
SELECT b.id, s.shop_id, 'slotrecovery'::text, NULL::text, b.customer_id, NULLIF(c.phone, ''), c.name,
    COALESCE(b.staff_id, s.staff_id), ''::text, COALESCE(b.service, s.service), b.amount_cents, s.starts_at,
    COALESCE(b.duration_minutes, s.duration_minutes),
    CASE WHEN b.status IN ('pending_payment', 'confirmed') THEN 'booked' WHEN b.status = 'moved' THEN 'moved'
         ELSE 'cancelled' END,
    0::bigint, b.updated_at, 0, b.created_at, b.updated_at,
    (SELECT nb.opening_id FROM bookings nb WHERE nb.id = b.moved_to), NULL::timestamptz, NULL::uuid
FROM bookings b
JOIN slot_openings s ON s.id = b.opening_id
JOIN customers c ON c.id = b.customer_id;
