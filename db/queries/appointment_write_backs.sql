-- Moves written back to the system that keeps the appointment (cal.com, Square), and the
-- connectors' API keys they are written with (internal/book, writeback.go).

-- name: WriteBackInsert :execrows
-- In the move's own transaction: the fence of the move's write-back (one per
-- appointment: an appointment is moved once).
INSERT INTO appointment_write_backs (appointment_id, shop_id, source, external_id, starts_at, state, created_at, updated_at)
VALUES (sqlc.arg(appointment_id), sqlc.arg(shop_id), sqlc.arg(source), sqlc.arg(external_id), sqlc.arg(starts_at)::timestamptz,
    'pending', sqlc.arg(now)::timestamptz, sqlc.arg(now)::timestamptz)
ON CONFLICT DO NOTHING;

-- name: WriteBackGet :one
SELECT * FROM appointment_write_backs WHERE appointment_id = sqlc.arg(appointment_id) AND shop_id = sqlc.arg(shop_id);

-- name: WriteBackAttempt :one
-- An attempt begins: counted, with the reason the last one failed for (if it did).
UPDATE appointment_write_backs
SET attempts = attempts + 1, error = sqlc.arg(error), updated_at = sqlc.arg(now)::timestamptz
WHERE appointment_id = sqlc.arg(appointment_id) AND state = 'pending'
RETURNING *;

-- name: WriteBackWritten :execrows
-- The vendor has the move: what it answered is kept (an echo that came first may have
-- told the new uid already: kept as it is).
UPDATE appointment_write_backs
SET state = 'written', error = '', updated_at = sqlc.arg(now)::timestamptz,
    new_external_id = COALESCE(new_external_id, sqlc.narg(new_external_id)),
    new_version = GREATEST(new_version, sqlc.narg(new_version))
WHERE appointment_id = sqlc.arg(appointment_id) AND state = 'pending';

-- name: WriteBackFailed :execrows
-- The vendor refused the move for good: the owner copies it, told why.
UPDATE appointment_write_backs
SET state = 'failed', error = sqlc.arg(error), updated_at = sqlc.arg(now)::timestamptz
WHERE appointment_id = sqlc.arg(appointment_id) AND state = 'pending';

-- name: WriteBackByExternal :one
-- The write-back of the shop's booking the vendor names so (before the move), whatever
-- its state: a failed one's move may reach the vendor all the same (the owner makes it
-- there by hand, or the last attempt's answer was lost), and it is the same move.
SELECT w.* FROM appointment_write_backs w
WHERE w.shop_id = sqlc.arg(shop_id) AND w.source = sqlc.arg(source) AND w.external_id = sqlc.arg(external_id);

-- name: WriteBackByNew :one
-- The write-back whose vendor answered with this booking (cal.com's new uid).
SELECT w.* FROM appointment_write_backs w
WHERE w.shop_id = sqlc.arg(shop_id) AND w.source = sqlc.arg(source) AND w.new_external_id = sqlc.arg(new_external_id);

-- name: WriteBackNoteEcho :exec
-- The vendor's webhook of our own write: the new booking's uid (cal.com) or version
-- (Square) it names, when the answer to the write has not told it yet.
UPDATE appointment_write_backs
SET new_external_id = COALESCE(new_external_id, sqlc.narg(new_external_id)),
    new_version = GREATEST(new_version, sqlc.narg(new_version))
WHERE appointment_id = sqlc.arg(appointment_id);

-- name: ConnectorAPIKeyFor :one
-- The shop's connector of kind holding an API key that writes the appointment's move
-- back: the connector that delivered the appointment, when it holds one; else the
-- oldest that does (an appointment from before 0090, or whose connector was removed or
-- holds no key).
SELECT c.id, c.shop_id, c.api_key::text AS api_key FROM connectors c
WHERE c.shop_id = sqlc.arg(shop_id) AND c.kind = sqlc.arg(kind) AND c.api_key IS NOT NULL
ORDER BY c.id IS NOT DISTINCT FROM (
        SELECT a.connector_id FROM appointments a WHERE a.id = sqlc.arg(appointment_id) AND a.shop_id = sqlc.arg(shop_id)
    ) DESC, c.created_at, c.id
LIMIT 1;

-- name: ConnectorSetAPIKey :one
UPDATE connectors SET api_key = sqlc.narg(api_key), updated_at = sqlc.arg(now)::timestamptz
WHERE id = sqlc.arg(id) AND shop_id = sqlc.arg(shop_id)
RETURNING *;

-- name: ConnectorAPIKeysToSeal :many
-- A batch of connectors whose API key is not sealed under the key keep names.
SELECT id, shop_id, api_key::text AS api_key FROM connectors
WHERE api_key IS NOT NULL AND api_key NOT LIKE sqlc.arg(keep)::text
ORDER BY id LIMIT 100;

-- name: ConnectorResealAPIKey :execrows
UPDATE connectors SET api_key = sqlc.arg(api_key)::text
WHERE id = sqlc.arg(id) AND api_key = sqlc.arg(old_api_key)::text;
