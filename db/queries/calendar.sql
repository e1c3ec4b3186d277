-- The calendar feed's reads (internal/calendar): it writes nothing.

-- name: CalendarOpenings :many
-- A shop's openings starting in [from, to) that a calendar shows: every one that has had
-- a booking (its latest booking says what the event is: held, confirmed, or cancelled
-- once the hold lapsed or the payment was refunded), and with include_open the others
-- too (open ones as tentative, cancelled or expired ones as cancelled). last_modified is
-- the latest change to the opening or to that booking.
SELECT s.id, s.starts_at, s.duration_minutes, s.service, s.price_cents, s.status, s.created_at,
    GREATEST(s.updated_at, COALESCE(b.updated_at, s.updated_at))::timestamptz AS last_modified,
    COALESCE(b.id::text, '')::text AS booking_id, COALESCE(b.status, '')::text AS booking_status,
    COALESCE(b.amount_cents, 0)::bigint AS booking_amount_cents,
    (b.refund_id IS NOT NULL OR b.refund_requested_at IS NOT NULL)::boolean AS booking_refunded,
    COALESCE(c.name, '')::text AS customer_name, COALESCE(c.phone, '')::text AS customer_phone,
    (c.erased_at IS NOT NULL)::boolean AS customer_erased
FROM slot_openings s
LEFT JOIN LATERAL (
    SELECT * FROM bookings bk WHERE bk.opening_id = s.id ORDER BY bk.created_at DESC, bk.id LIMIT 1
) b ON true
LEFT JOIN customers c ON c.id = b.customer_id
WHERE s.shop_id = sqlc.arg(shop_id)
  AND s.starts_at >= sqlc.arg(from_time)::timestamptz AND s.starts_at < sqlc.arg(to_time)::timestamptz
  AND (b.id IS NOT NULL OR sqlc.arg(include_open)::boolean)
ORDER BY s.starts_at, s.id
LIMIT sqlc.arg(max_rows);
