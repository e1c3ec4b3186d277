-- 0090: an appointment records the connector that delivered it (issue 44): a shop may
-- have two connectors of one kind (two Square accounts, two cal.com webhooks), and a
-- move is written back with the API key of the connector that keeps the booking.
-- NULL: not delivered by a connector (the owners' API, a YES), delivered before 0090, or
-- its connector removed since (the appointment stays in the book).
ALTER TABLE appointments ADD COLUMN connector_id uuid REFERENCES connectors (id) ON DELETE SET NULL;
-- Removing a connector sets its appointments' connector_id NULL: found by this index.
CREATE INDEX appointments_connector_idx ON appointments (connector_id) WHERE connector_id IS NOT NULL;
-- book_appointments (0064, 0068, 0080) carries appointments.connector_id, so that a row
-- of the view is still an appointment row (a YES booking has no connector: NULL).
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
    CASE WHEN b.status IN ('pending_payment', 'confirmed') THEN 'booked' ELSE 'cancelled' END,
    0::bigint, b.updated_at, 0, b.created_at, b.updated_at, NULL::uuid, NULL::timestamptz, NULL::uuid
FROM bookings b
JOIN slot_openings s ON s.id = b.opening_id
JOIN customers c ON c.id = b.customer_id;
