-- name: AppointmentLockExternal :one
-- The stored appointment a source names, locked until the transaction ends: the upsert
-- that follows compares with it and what it frees is read from it (no row: not stored
-- yet), and the change's event names the person it was with (staff_name).
SELECT sqlc.embed(a), COALESCE(st.name, '')::text AS staff_name
FROM appointments a
LEFT JOIN staff st ON st.id = a.staff_id
WHERE a.shop_id = sqlc.arg(shop_id) AND a.source = sqlc.arg(source) AND a.external_id = sqlc.arg(external_id)
FOR UPDATE OF a;

-- name: AppointmentLockName :exec
-- Serialises the first deliveries of an appointment not stored yet (AppointmentLockExternal
-- found no row), until the transaction ends: the one that waited reads the row the
-- other stored, and so compares with it as a later delivery would, instead of meeting it
-- only in the upsert's conflict (where what it replaced is no longer known). A
-- transaction-scoped advisory lock on the appointment's name in its source.
SELECT pg_advisory_xact_lock(hashtextextended(
    'appointment:' || sqlc.arg(shop_id)::uuid::text || ':' || sqlc.arg(source)::text || ':' || sqlc.arg(external_id)::text, 0));

-- name: AppointmentLock :one
-- The appointment, locked until the transaction ends: a declaration of one of its
-- releases (DeclarePending, Offer) holds it, as the change that made the release did,
-- so the checks, the opening and its record see no other change of it meanwhile.
SELECT * FROM appointments
WHERE shop_id = sqlc.arg(shop_id) AND id = sqlc.arg(id)
FOR UPDATE;

-- name: AppointmentUpsert :one
-- Records a source's description of an appointment. An existing one changes only for a
-- newer description, (source_version, source_updated_at) higher than the stored one
-- compared in that order: a redelivery or an older description arriving late changes
-- nothing and returns no row, so it never resurrects a cancelled appointment. ON
-- CONFLICT locks the stored row, so concurrent deliveries are compared one after the
-- other, each with what the one before it stored.
--
-- releases counts the times the appointment freed the time it held: it left booked (or
-- completed, no_show) for cancelled or moved, or stayed booked at another time, length or
-- person. Each release may declare one opening of the time freed (appointment_openings).
-- connector_id is the connector that delivered the newest description (kept when one
-- comes without: a snapshot's own cancellation of an event gone).
INSERT INTO appointments AS a (
    shop_id, source, external_id, customer_id, phone, customer_name, staff_id, external_staff,
    service, price_cents, starts_at, duration_minutes, status, source_version, source_updated_at,
    releases, created_at, changed_at, connector_id)
VALUES (
    sqlc.arg(shop_id), sqlc.arg(source), sqlc.arg(external_id), sqlc.narg(customer_id), sqlc.narg(phone),
    sqlc.arg(customer_name), sqlc.narg(staff_id), sqlc.arg(external_staff), sqlc.arg(service),
    sqlc.arg(price_cents), sqlc.arg(starts_at), sqlc.arg(duration_minutes), sqlc.arg(status),
    sqlc.arg(source_version), sqlc.arg(source_updated_at),
    CASE WHEN sqlc.arg(status)::text IN ('cancelled', 'moved') THEN 1 ELSE 0 END,
    sqlc.arg(now), sqlc.arg(now), sqlc.narg(connector_id))
ON CONFLICT (shop_id, source, external_id) DO UPDATE SET
    connector_id = COALESCE(EXCLUDED.connector_id, a.connector_id),
    customer_id = EXCLUDED.customer_id, phone = EXCLUDED.phone, customer_name = EXCLUDED.customer_name,
    staff_id = EXCLUDED.staff_id, external_staff = EXCLUDED.external_staff, service = EXCLUDED.service,
    price_cents = EXCLUDED.price_cents, starts_at = EXCLUDED.starts_at,
    duration_minutes = EXCLUDED.duration_minutes, status = EXCLUDED.status,
    source_version = EXCLUDED.source_version, source_updated_at = EXCLUDED.source_updated_at,
    releases = a.releases + CASE
        WHEN EXCLUDED.status IN ('cancelled', 'moved') AND a.status NOT IN ('cancelled', 'moved') THEN 1
        WHEN EXCLUDED.status = 'booked' AND a.status = 'booked'
             AND (EXCLUDED.starts_at, EXCLUDED.duration_minutes, EXCLUDED.staff_id)
                 IS DISTINCT FROM (a.starts_at, a.duration_minutes, a.staff_id) THEN 1
        ELSE 0 END,
    changed_at = EXCLUDED.changed_at
WHERE (EXCLUDED.source_version, EXCLUDED.source_updated_at) > (a.source_version, a.source_updated_at)
RETURNING a.*;

-- name: AppointmentCancel :one
-- The owner cancels a booked appointment in the book. The source's version stays and
-- its time moves to now (never back): a redelivery of what the source said before
-- changes nothing, and what the source says after still does.
UPDATE appointments
SET status = 'cancelled', releases = releases + 1,
    source_updated_at = GREATEST(source_updated_at, sqlc.arg(now)::timestamptz), changed_at = sqlc.arg(now)
WHERE shop_id = sqlc.arg(shop_id) AND id = sqlc.arg(id) AND status = 'booked'
RETURNING *;

-- name: AppointmentGet :one
SELECT sqlc.embed(a), COALESCE(st.name, '')::text AS staff_name, COALESCE(c.name, '')::text AS known_name
FROM appointments a
LEFT JOIN staff st ON st.id = a.staff_id
LEFT JOIN customers c ON c.id = a.customer_id
WHERE a.shop_id = sqlc.arg(shop_id) AND a.id = sqlc.arg(id);

-- name: AppointmentGetByExternal :one
SELECT sqlc.embed(a), COALESCE(st.name, '')::text AS staff_name, COALESCE(c.name, '')::text AS known_name
FROM appointments a
LEFT JOIN staff st ON st.id = a.staff_id
LEFT JOIN customers c ON c.id = a.customer_id
WHERE a.shop_id = sqlc.arg(shop_id) AND a.source = sqlc.arg(source) AND a.external_id = sqlc.arg(external_id);

-- name: AppointmentBookGet :one
-- One appointment of the shop's book as the owners read it: of its sources, or a
-- booking a YES made (book_appointments).
SELECT sqlc.embed(a), COALESCE(st.name, '')::text AS staff_name, COALESCE(c.name, '')::text AS known_name
FROM book_appointments a
LEFT JOIN staff st ON st.id = a.staff_id
LEFT JOIN customers c ON c.id = a.customer_id
WHERE a.shop_id = sqlc.arg(shop_id) AND a.id = sqlc.arg(id);

-- name: AppointmentList :many
-- A page of the shop's book (book_appointments: its sources' appointments and the
-- bookings YESes made) by start, then id, after the cursor's (after_start, after_id);
-- the filters left NULL match every row. from is inclusive, to exclusive.
SELECT sqlc.embed(a), COALESCE(st.name, '')::text AS staff_name, COALESCE(c.name, '')::text AS known_name
FROM book_appointments a
LEFT JOIN staff st ON st.id = a.staff_id
LEFT JOIN customers c ON c.id = a.customer_id
WHERE a.shop_id = sqlc.arg(shop_id)
  AND (a.starts_at, a.id) > (sqlc.arg(after_start)::timestamptz, sqlc.arg(after_id)::uuid)
  AND (sqlc.narg(from_time)::timestamptz IS NULL OR a.starts_at >= sqlc.narg(from_time)::timestamptz)
  AND (sqlc.narg(to_time)::timestamptz IS NULL OR a.starts_at < sqlc.narg(to_time)::timestamptz)
  AND (sqlc.narg(staff_id)::uuid IS NULL OR a.staff_id = sqlc.narg(staff_id)::uuid)
  AND (sqlc.narg(status)::text IS NULL OR a.status = sqlc.narg(status)::text)
ORDER BY a.starts_at, a.id
LIMIT sqlc.arg(max_rows);

-- name: AppointmentTimeTaken :one
-- Whether a time an appointment freed, [starts_at, ends_at), is taken again: by an
-- opening there that is open or was filled (opening), or by a booked appointment
-- (booked: another, or the same one booked there again), of the same person or, for a
-- time of no one's, of no one at the same start (a shop whose people are not mapped runs
-- appointments side by side).
SELECT
    EXISTS (
        SELECT 1 FROM slot_openings o
        WHERE o.shop_id = sqlc.arg(shop_id) AND o.status IN ('open', 'filled', 'completed')
          AND o.staff_id IS NOT DISTINCT FROM sqlc.narg(staff_id)::uuid
          AND CASE WHEN sqlc.narg(staff_id)::uuid IS NULL THEN o.starts_at = sqlc.arg(starts_at)::timestamptz
              ELSE tstzrange(o.starts_at, o.starts_at + make_interval(mins => o.duration_minutes))
                   && tstzrange(sqlc.arg(starts_at)::timestamptz, sqlc.arg(ends_at)::timestamptz) END
    )::boolean AS opening,
    EXISTS (
        SELECT 1 FROM appointments b
        WHERE b.shop_id = sqlc.arg(shop_id) AND b.status = 'booked'
          AND b.staff_id IS NOT DISTINCT FROM sqlc.narg(staff_id)::uuid
          AND CASE WHEN sqlc.narg(staff_id)::uuid IS NULL THEN b.starts_at = sqlc.arg(starts_at)::timestamptz
              ELSE tstzrange(b.starts_at, b.starts_at + make_interval(mins => b.duration_minutes))
                   && tstzrange(sqlc.arg(starts_at)::timestamptz, sqlc.arg(ends_at)::timestamptz) END
    )::boolean AS booked;

-- name: AppointmentForget :execrows
-- An erased customer's appointments keep their times (they are the shop's day) and lose
-- who: the link, the number and the name.
UPDATE appointments
SET customer_id = NULL, phone = NULL, customer_name = '', changed_at = sqlc.arg(now)
WHERE shop_id = sqlc.arg(shop_id)
  AND (customer_id = sqlc.arg(customer_id) OR (sqlc.arg(phone)::text <> '' AND phone = sqlc.arg(phone)::text));

-- name: AppointmentListBookedFrom :many
-- The shop's booked appointments of one source starting in [from_time, to_time): those a
-- snapshot of the source (a calendar feed) must list, or they are gone.
SELECT * FROM appointments
WHERE shop_id = sqlc.arg(shop_id) AND source = sqlc.arg(source) AND status = 'booked'
  AND starts_at >= sqlc.arg(from_time)::timestamptz AND starts_at < sqlc.arg(to_time)::timestamptz
ORDER BY starts_at, id;

-- name: AppointmentLockForMoveUp :one
-- A move-up's appointment, locked for the move: still booked and still the customer's.
-- No row: it was cancelled, moved or changed hands since the offer (the move is off).
SELECT * FROM appointments
WHERE shop_id = sqlc.arg(shop_id) AND id = sqlc.arg(id) AND customer_id = sqlc.arg(customer_id) AND status = 'booked'
FOR UPDATE;

-- name: AppointmentMarkMoved :one
-- A move-up taken: the appointment is moved to the opening its customer booked, and
-- its time released (releases + 1) for the book to declare. Its time in the source moves
-- to now (never back), as the owner's cancel does.
UPDATE appointments
SET status = 'moved', moved_to = sqlc.arg(opening_id)::uuid, releases = releases + 1,
    source_updated_at = GREATEST(source_updated_at, sqlc.arg(now)::timestamptz), changed_at = sqlc.arg(now)
WHERE shop_id = sqlc.arg(shop_id) AND id = sqlc.arg(id) AND status = 'booked'
RETURNING *;

-- name: AppointmentChainOf :one
-- The chain an opening belongs to, for the opening a move to it frees: its chain's id
-- (the opening itself when it starts one) and the moves that made it (0: none).
SELECT COALESCE(chain_id, id)::uuid AS chain_id, COALESCE(chain_position, 0)::integer AS position
FROM slot_openings WHERE id = sqlc.arg(opening_id);

-- name: BookChains :many
-- The shop's chains of moves with a link starting in [from, to), whole: each link (the
-- first opening, position 0, then each time a move freed) in order, who holds it and
-- the time they left for it (a move-up's old appointment, left_at, or YES booking,
-- left_booking_at; NULL for the waitlist).
WITH chains AS (
    SELECT DISTINCT o.chain_id FROM slot_openings o
    WHERE o.shop_id = sqlc.arg(shop_id) AND o.chain_id IS NOT NULL
      AND o.starts_at >= sqlc.arg(from_at) AND o.starts_at < sqlc.arg(to_at)
    UNION
    SELECT o.id FROM slot_openings o
    WHERE o.shop_id = sqlc.arg(shop_id) AND o.starts_at >= sqlc.arg(from_at) AND o.starts_at < sqlc.arg(to_at)
      AND EXISTS (SELECT 1 FROM slot_openings n WHERE n.chain_id = o.id AND n.shop_id = o.shop_id)
)
SELECT o.id, COALESCE(o.chain_id, o.id)::uuid AS chain_id, COALESCE(o.chain_position, 0)::int AS position,
    o.starts_at, o.service, o.status, o.price_cents,
    COALESCE(c.name, '')::text AS holder, m.starts_at AS left_at, mo.starts_at AS left_booking_at
FROM slot_openings o
LEFT JOIN customers c ON c.id = o.filled_by
LEFT JOIN appointments m ON m.moved_to = o.id AND m.status = 'moved'
-- A YES booking moved up to the link: the time its opening held (left_booking_at).
LEFT JOIN bookings nb ON nb.opening_id = o.id AND nb.status IN ('pending_payment', 'confirmed')
LEFT JOIN bookings mb ON mb.moved_to = nb.id AND mb.status = 'moved'
LEFT JOIN slot_openings mo ON mo.id = mb.opening_id
WHERE o.shop_id = sqlc.arg(shop_id)
  AND (o.chain_id IN (SELECT chain_id FROM chains) OR o.id IN (SELECT chain_id FROM chains))
ORDER BY 2, 3
LIMIT 500;

-- name: AppointmentMovesToCopy :many
-- Move-ups of appointments another system keeps whose new time is still ahead and
-- which the owner has not copied there yet, soonest first.
-- A move being written back through the vendor's API is not listed (the owner copying
-- it too would move it twice); one whose write-back failed for good is, with the
-- vendor's reason.
SELECT a.id, a.source, a.service, a.starts_at AS old_starts_at, o.starts_at AS new_starts_at,
    COALESCE(NULLIF(c.name, ''), a.customer_name, '')::text AS name,
    COALESCE(w.error, '')::text AS write_back_error
FROM appointments a
JOIN slot_openings o ON o.id = a.moved_to
LEFT JOIN customers c ON c.id = a.customer_id
LEFT JOIN appointment_write_backs w ON w.appointment_id = a.id
WHERE a.shop_id = sqlc.arg(shop_id) AND a.status = 'moved' AND a.copied_at IS NULL
  AND a.source IN ('calcom', 'square', 'ics') AND o.starts_at > sqlc.arg(now)
  AND (w.state IS NULL OR w.state = 'failed')
ORDER BY o.starts_at, a.id
LIMIT 100;

-- name: AppointmentMarkCopied :execrows
UPDATE appointments SET copied_at = sqlc.arg(now)
WHERE id = sqlc.arg(id) AND shop_id = sqlc.arg(shop_id) AND status = 'moved' AND copied_at IS NULL;
