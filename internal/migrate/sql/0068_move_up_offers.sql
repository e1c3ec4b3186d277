-- 0068_move_up_offers: move-up offers and chains (issue 44).
-- slot_offers.move_from: a move-up offer's appointment, the later booking of the
-- customer that taking the opening would move (NULL: a plain offer). It is read with the
-- offer by the claim (slot_offers_claimable), so a plain YES reads nothing more.
-- appointments.moved_to: the opening a move-up moved the appointment to (status moved).
-- slot_openings.chain_*: an opening freed by a move-up: the chain's id (its first
-- opening), how many moves made it (1 for the first) and the appointment moved away.
ALTER TABLE slot_offers ADD COLUMN move_from uuid REFERENCES appointments (id) ON DELETE CASCADE;
CREATE INDEX slot_offers_move_from_idx ON slot_offers (move_from) WHERE move_from IS NOT NULL;
ALTER TABLE appointments ADD COLUMN moved_to uuid REFERENCES slot_openings (id);
ALTER TABLE slot_openings
    ADD COLUMN chain_id         uuid,
    ADD COLUMN chain_position   integer CHECK (chain_position >= 1),
    ADD COLUMN chain_moved_from uuid,
    ADD CONSTRAINT slot_openings_chain_whole CHECK ((chain_id IS NULL) = (chain_position IS NULL)
        AND (chain_id IS NULL) = (chain_moved_from IS NULL));
CREATE OR REPLACE VIEW slot_offers_claimable AS
SELECT o.id, o.opening_id, o.customer_id, o.shop_id, o.generation, o.created_at, s.starts_at, o.move_from
FROM slot_offers o
JOIN slot_openings s ON s.id = o.opening_id
WHERE o.status = 'sent' AND s.status = 'open' AND o.generation = s.generation;
-- book_appointments (0064) carries appointments.moved_to, so that a row of the view is
-- an appointment row (a YES booking moved nowhere: NULL).
CREATE OR REPLACE VIEW book_appointments AS
SELECT a.id, a.shop_id, a.source, a.external_id, a.customer_id, a.phone, a.customer_name, a.staff_id,
    a.external_staff, a.service, a.price_cents, a.starts_at, a.duration_minutes, a.status,
    a.source_version, a.source_updated_at, a.releases, a.created_at, a.changed_at, a.moved_to
FROM appointments a
UNION ALL
SELECT b.id, s.shop_id, 'slotrecovery'::text, NULL::text, b.customer_id, NULLIF(c.phone, ''), c.name,
    COALESCE(b.staff_id, s.staff_id), ''::text, COALESCE(b.service, s.service), b.amount_cents, s.starts_at,
    COALESCE(b.duration_minutes, s.duration_minutes),
    CASE WHEN b.status IN ('pending_payment', 'confirmed') THEN 'booked' ELSE 'cancelled' END,
    0::bigint, b.updated_at, 0, b.created_at, b.updated_at, NULL::uuid
FROM bookings b
JOIN slot_openings s ON s.id = b.opening_id
JOIN customers c ON c.id = b.customer_id;
