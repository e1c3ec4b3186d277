-- Outbound event webhooks: every attempt at a delivery, for the owner (internal/hooks).

-- name: WebhookAttemptInsert :exec
INSERT INTO webhook_attempts (delivery_id, attempted_at, manual, status_code, duration_ms, response_head, error)
VALUES (sqlc.arg(delivery_id), sqlc.arg(attempted_at)::timestamptz, sqlc.arg(manual), sqlc.narg(status_code),
    sqlc.arg(duration_ms), sqlc.arg(response_head), sqlc.narg(error));

-- name: WebhookAttemptList :many
SELECT * FROM webhook_attempts WHERE delivery_id = $1 ORDER BY attempted_at, id;
