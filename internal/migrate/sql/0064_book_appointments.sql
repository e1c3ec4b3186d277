-- 0064_book_appointments: the shop's book as the owners read it (internal/book's Get and
-- List): the appointments its sources and the owners' API described, and the bookings a
-- YES made (source slotrecovery), read from the ledger's own rows rather than copied: a
-- YES writes its booking and nothing more. A booking held or paid is booked; one that
-- lapsed, failed or was cancelled is cancelled (the ledger reopens its opening itself:
-- it is not a release of the book and declares nothing). Its shop is its opening's, so
-- a shop's page is read through slot_openings_shop_status_idx, not a scan of bookings.
CREATE VIEW book_appointments AS
SELECT a.id, a.shop_id, a.source, a.external_id, a.customer_id, a.phone, a.customer_name, a.staff_id,
    a.external_staff, a.service, a.price_cents, a.starts_at, a.duration_minutes, a.status,
    a.source_version, a.source_updated_at, a.releases, a.created_at, a.changed_at
FROM appointments a
UNION ALL
SELECT b.id, s.shop_id, 'slotrecovery'::text, NULL::text, b.customer_id, NULLIF(c.phone, ''), c.name,
    COALESCE(b.staff_id, s.staff_id), ''::text, COALESCE(b.service, s.service), b.amount_cents, s.starts_at,
    COALESCE(b.duration_minutes, s.duration_minutes),
    CASE WHEN b.status IN ('pending_payment', 'confirmed') THEN 'booked' ELSE 'cancelled' END,
    0::bigint, b.updated_at, 0, b.created_at, b.updated_at
FROM bookings b
JOIN slot_openings s ON s.id = b.opening_id
JOIN customers c ON c.id = b.customer_id;
