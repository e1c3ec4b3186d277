-- The calendar feed's queries (internal/calendar). It writes only calendar_events: what
-- each event it shows last said, and when that changed.

-- name: CalendarOpenings :many
-- A shop's openings starting in [from, to) that a calendar shows: every one that has had
-- a booking (its latest booking says what the event is: held, confirmed, or cancelled
-- once the hold lapsed or the payment was refunded; what was booked, and the opening's
-- person), and with include_open the others
-- too (open ones as tentative, cancelled or expired ones as cancelled). last_modified is
-- the latest change to the opening or to that booking.
SELECT s.id, s.starts_at, s.duration_minutes, s.service, s.price_cents, s.status, s.created_at,
    GREATEST(s.updated_at, COALESCE(b.updated_at, s.updated_at))::timestamptz AS last_modified,
    COALESCE(b.id::text, '')::text AS booking_id, COALESCE(b.status, '')::text AS booking_status,
    COALESCE(b.amount_cents, 0)::bigint AS booking_amount_cents,
    (b.refund_id IS NOT NULL OR b.refund_requested_at IS NOT NULL)::boolean AS booking_refunded,
    COALESCE(c.name, '')::text AS customer_name, COALESCE(c.phone, '')::text AS customer_phone,
    (c.erased_at IS NOT NULL)::boolean AS customer_erased,
    COALESCE(b.service, '')::text AS booked_service, COALESCE(st.name, '')::text AS staff_name
FROM slot_openings s
LEFT JOIN LATERAL (
    SELECT * FROM bookings bk WHERE bk.opening_id = s.id ORDER BY bk.created_at DESC, bk.id LIMIT 1
) b ON true
LEFT JOIN customers c ON c.id = b.customer_id
LEFT JOIN staff st ON st.id = s.staff_id
WHERE s.shop_id = sqlc.arg(shop_id)
  AND s.starts_at >= sqlc.arg(from_time)::timestamptz AND s.starts_at < sqlc.arg(to_time)::timestamptz
  AND (b.id IS NOT NULL OR sqlc.arg(include_open)::boolean)
ORDER BY s.starts_at, s.id
LIMIT sqlc.arg(max_rows);

-- name: CalendarEventsTrack :many
-- Records what the events of one view (include_open) say now, one per opening (hash:
-- SHA-256 of the event's content), and returns each one's SEQUENCE and LAST-MODIFIED.
-- An event first seen is stored with first_sequence and changed_at (to the second); one
-- whose hash is the stored one keeps its values; one that changed gets SEQUENCE + 1 and,
-- as LAST-MODIFIED, changed_at when the rows moved past the last one, else now (a change
-- no timestamp records, such as a customer's new name), and always at least a second
-- past the last, so that it moves on however soon the change came. Only changed events
-- are written. A feed rendered twice at once: one of the two writes a change, the other
-- finds it written (and shows the values it read, moved on at the next poll).
WITH shown AS (
    -- The arrays side by side (set-returning functions in one SELECT list are zipped).
    SELECT unnest(sqlc.arg(opening_ids)::uuid[]) AS opening_id,
        unnest(sqlc.arg(content_hashes)::bytea[]) AS content_hash,
        unnest(sqlc.arg(first_sequences)::integer[]) AS first_sequence,
        unnest(sqlc.arg(changed_at)::timestamptz[]) AS changed_at
), written AS (
    INSERT INTO calendar_events AS ce (opening_id, include_open, content_hash, sequence, modified_at)
    SELECT s.opening_id, sqlc.arg(include_open)::boolean, s.content_hash, s.first_sequence,
        date_trunc('second', s.changed_at)
    FROM shown s
    WHERE NOT EXISTS (
        SELECT 1 FROM calendar_events e
        WHERE e.opening_id = s.opening_id AND e.include_open = sqlc.arg(include_open)::boolean
          AND e.content_hash = s.content_hash)
    ON CONFLICT (opening_id, include_open) DO UPDATE
    SET content_hash = EXCLUDED.content_hash, sequence = ce.sequence + 1,
        modified_at = GREATEST(
            CASE WHEN EXCLUDED.modified_at > ce.modified_at THEN EXCLUDED.modified_at
                 ELSE date_trunc('second', sqlc.arg(now)::timestamptz) END,
            ce.modified_at + interval '1 second')
    WHERE ce.content_hash <> EXCLUDED.content_hash
    RETURNING ce.opening_id, ce.sequence, ce.modified_at
)
SELECT s.opening_id::uuid AS opening_id,
    COALESCE(w.sequence, e.sequence, s.first_sequence)::integer AS sequence,
    COALESCE(w.modified_at, e.modified_at, date_trunc('second', s.changed_at))::timestamptz AS modified_at
FROM shown s
LEFT JOIN written w ON w.opening_id = s.opening_id
LEFT JOIN calendar_events e ON e.opening_id = s.opening_id AND e.include_open = sqlc.arg(include_open)::boolean;
