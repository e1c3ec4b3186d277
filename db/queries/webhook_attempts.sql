-- Outbound event webhooks: every attempt at a delivery, for the owner (internal/hooks).

-- name: WebhookAttemptInsert :exec
INSERT INTO webhook_attempts (delivery_id, attempted_at, manual, status_code, duration_ms, response_head, error)
VALUES (sqlc.arg(delivery_id), sqlc.arg(attempted_at)::timestamptz, sqlc.arg(manual), sqlc.narg(status_code),
    sqlc.arg(duration_ms), sqlc.arg(response_head), sqlc.narg(error));

-- name: WebhookAttemptList :many
SELECT * FROM webhook_attempts WHERE delivery_id = $1 ORDER BY attempted_at, id;

-- name: WebhookAttemptsForgetEvents :execrows
-- An erasure (after WebhookDeliveriesForgetEvents, in a later statement so it sees the
-- attempts recorded until then): the attempts of the forgotten events' deliveries lose
-- the first bytes of the answer (a receiver that echoes the body echoes the customer's
-- name and number) and their error text (which may quote the answer).
UPDATE webhook_attempts a
SET response_head = '', error = CASE WHEN a.error IS NULL THEN NULL ELSE 'not kept: the customer was erased' END
FROM webhook_deliveries d
WHERE d.event_id = ANY(sqlc.arg(event_ids)::uuid[]) AND a.delivery_id = d.id;
