-- name: HeartbeatRecord :exec
-- Records that a River client (one server instance) was alive at seen_at.
INSERT INTO client_heartbeats (client_id, seen_at) VALUES (sqlc.arg(client_id), sqlc.arg(seen_at)::timestamptz)
ON CONFLICT (client_id) DO UPDATE SET seen_at = EXCLUDED.seen_at;

-- name: HeartbeatListDead :many
-- Which of the given clients have beaten before but not since stale_before: their
-- process is gone. A client with no row never beat (an instance of an earlier version)
-- and is not listed.
SELECT client_id FROM client_heartbeats
WHERE client_id = ANY(sqlc.arg(client_ids)::text[]) AND seen_at < sqlc.arg(stale_before)::timestamptz;

-- name: HeartbeatPurge :execrows
-- Forgets the clients gone before `before` (long after any job of theirs was resumed).
DELETE FROM client_heartbeats WHERE seen_at < sqlc.arg(before)::timestamptz;
