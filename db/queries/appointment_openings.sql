-- name: AppointmentOpeningClaim :one
-- Claims the declaration of the opening of the time an appointment's release frees,
-- pending (to declare now) or waiting (for the owner's offer). The primary key is the
-- fence: of any number of deliveries of one cancellation, one inserts and the others get
-- no row.
INSERT INTO appointment_openings (shop_id, appointment_id, release_no, starts_at, duration_minutes, staff_id,
    state, created_at, updated_at)
VALUES (sqlc.arg(shop_id), sqlc.arg(appointment_id), sqlc.arg(release_no), sqlc.arg(starts_at),
    sqlc.arg(duration_minutes), sqlc.narg(staff_id), sqlc.arg(state), sqlc.arg(now), sqlc.arg(now))
ON CONFLICT DO NOTHING
RETURNING *;

-- name: AppointmentOpeningOffer :one
-- The owner offers a waiting claim: pending, to declare now.
UPDATE appointment_openings SET state = 'pending', updated_at = sqlc.arg(now)
WHERE shop_id = sqlc.arg(shop_id) AND appointment_id = sqlc.arg(appointment_id) AND release_no = sqlc.arg(release_no)
  AND state = 'waiting'
RETURNING *;

-- name: AppointmentOpeningStart :one
-- Takes a claim to declare it now: a pending one, or one whose attempt began before
-- stale_before and never finished (its process died). No row: someone else has it, or
-- it is done.
UPDATE appointment_openings
SET state = 'declaring', attempted_at = sqlc.arg(now)::timestamptz, updated_at = sqlc.arg(now)::timestamptz
WHERE shop_id = sqlc.arg(shop_id) AND appointment_id = sqlc.arg(appointment_id) AND release_no = sqlc.arg(release_no)
  AND (state = 'pending' OR (state = 'declaring' AND attempted_at < sqlc.arg(stale_before)::timestamptz))
RETURNING *;

-- name: AppointmentOpeningFinish :one
-- Ends the attempt that began at attempted_at: declared (with its opening), skipped
-- (with the reason), or pending again (to retry). An attempt taken over since (stale)
-- changes nothing.
UPDATE appointment_openings
SET state = sqlc.arg(state), opening_id = sqlc.narg(opening_id), reason = sqlc.arg(reason), updated_at = sqlc.arg(now)
WHERE shop_id = sqlc.arg(shop_id) AND appointment_id = sqlc.arg(appointment_id) AND release_no = sqlc.arg(release_no)
  AND state = 'declaring' AND attempted_at = sqlc.arg(attempted_at)::timestamptz
RETURNING *;

-- name: AppointmentOpeningsDue :many
-- Claims to declare: pending ones, and attempts begun before stale_before that never
-- finished. Across shops: the sweep that retries them is one for the server.
SELECT * FROM appointment_openings
WHERE state = 'pending' OR (state = 'declaring' AND attempted_at < sqlc.arg(stale_before)::timestamptz)
ORDER BY attempted_at NULLS FIRST
LIMIT sqlc.arg(max_rows);

-- name: AppointmentOpeningsOf :many
SELECT * FROM appointment_openings
WHERE shop_id = sqlc.arg(shop_id) AND appointment_id = sqlc.arg(appointment_id)
ORDER BY release_no;


-- name: AppointmentOpeningsLatest :many
-- The claim of each of the shop's appointments ids made by its latest release (a page of
-- the owners' list): an earlier release's time is no longer the one the appointment
-- freed.
SELECT o.* FROM appointment_openings o
JOIN appointments a ON a.shop_id = o.shop_id AND a.id = o.appointment_id AND a.releases = o.release_no
WHERE o.shop_id = sqlc.arg(shop_id) AND o.appointment_id = ANY(sqlc.arg(ids)::uuid[]);
