-- 0080: a move-up of an appointment another system keeps (cal.com, Square, a calendar
-- feed) is listed on the dashboard for the owner to copy into that system, until the
-- owner says it is copied (issue 44).
ALTER TABLE appointments ADD COLUMN copied_at timestamptz;
CREATE INDEX appointments_moves_to_copy_idx ON appointments (shop_id)
    WHERE status = 'moved' AND copied_at IS NULL AND source IN ('calcom', 'square', 'ics');
-- book_appointments (0064, 0068) carries appointments.copied_at, so that a row of the
-- view is still an appointment row (a YES booking is never copied anywhere: NULL).
CREATE OR REPLACE VIEW book_appointments AS
SELECT a.id, a.shop_id, a.source, a.external_id, a.customer_id, a.phone, a.customer_name, a.staff_id,
    a.external_staff, a.service, a.price_cents, a.starts_at, a.duration_minutes, a.status,
    a.source_version, a.source_updated_at, a.releases, a.created_at, a.changed_at, a.moved_to, a.copied_at
FROM appointments a
UNION ALL
SELECT b.id, s.shop_id, 'slotrecovery'::text, NULL::text, b.customer_id, NULLIF(c.phone, ''), c.name,
    COALESCE(b.staff_id, s.staff_id), ''::text, COALESCE(b.service, s.service), b.amount_cents, s.starts_at,
    COALESCE(b.duration_minutes, s.duration_minutes),
    CASE WHEN b.status IN ('pending_payment', 'confirmed') THEN 'booked' ELSE 'cancelled' END,
    0::bigint, b.updated_at, 0, b.created_at, b.updated_at, NULL::uuid, NULL::timestamptz
FROM bookings b
JOIN slot_openings s ON s.id = b.opening_id
JOIN customers c ON c.id = b.customer_id;
