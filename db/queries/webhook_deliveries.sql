-- Outbound event webhooks: one delivery per (event, endpoint), and its attempts
-- (internal/hooks).

-- name: WebhookDeliveriesCreate :many
-- Fans an event out to the shop's enabled endpoints subscribed to its type, at dispatch.
INSERT INTO webhook_deliveries (event_id, endpoint_id, shop_id, status, created_at, next_attempt_at)
SELECT sqlc.arg(event_id)::uuid, s.id, sqlc.arg(shop_id)::uuid, 'pending', sqlc.arg(now)::timestamptz, sqlc.arg(now)::timestamptz
FROM webhook_subscribers(sqlc.arg(shop_id)::uuid, ARRAY[sqlc.arg(type)::text]) AS s(id)
ON CONFLICT (event_id, endpoint_id) DO NOTHING
RETURNING id;

-- name: WebhookDeliveryForAttempt :one
-- What an attempt needs: the delivery, its endpoint and the event's body.
SELECT d.id, d.status, d.attempts, d.shop_id, d.event_id, ev.type AS event_type, ev.payload,
    ep.id AS endpoint_id, ep.url, ep.secret, ep.previous_secret, ep.previous_secret_expires_at, ep.disabled_at
FROM webhook_deliveries d
JOIN webhook_endpoints ep ON ep.id = d.endpoint_id
JOIN webhook_events ev ON ev.id = d.event_id
WHERE d.id = $1;

-- name: WebhookDeliveryLock :one
SELECT * FROM webhook_deliveries WHERE id = $1 FOR UPDATE;

-- name: WebhookDeliveryRecordResult :exec
-- An attempt's outcome, decided by the caller under the row lock.
UPDATE webhook_deliveries
SET status = sqlc.arg(status), attempts = sqlc.arg(attempts), next_attempt_at = sqlc.narg(next_attempt_at),
    last_attempt_at = sqlc.arg(attempted_at)::timestamptz, last_status_code = sqlc.narg(last_status_code),
    last_error = sqlc.narg(last_error), finished_at = sqlc.narg(finished_at)
WHERE id = sqlc.arg(id);

-- name: WebhookDeliveryFail :exec
-- A pending delivery that will not be attempted again (its endpoint was disabled).
UPDATE webhook_deliveries
SET status = 'failed', next_attempt_at = NULL, last_error = sqlc.arg(reason), finished_at = sqlc.arg(now)::timestamptz
WHERE id = sqlc.arg(id) AND status = 'pending';

-- name: WebhookDeliveryList :many
-- An endpoint's deliveries, newest first (the events' order), a page at a time (keyset
-- on seq).
SELECT d.id, d.seq, d.event_id, ev.type AS event_type, ev.created_at AS event_created_at, d.status, d.attempts,
    d.next_attempt_at, d.last_attempt_at, d.last_status_code, d.last_error, d.created_at, d.finished_at
FROM webhook_deliveries d
JOIN webhook_events ev ON ev.id = d.event_id
WHERE d.endpoint_id = sqlc.arg(endpoint_id) AND d.shop_id = sqlc.arg(shop_id)
  AND (sqlc.arg(status)::text = '' OR d.status = sqlc.arg(status)::text)
  AND d.seq < sqlc.arg(before_seq)::bigint
ORDER BY d.seq DESC
LIMIT sqlc.arg(max_rows);

-- name: WebhookDeliveryGet :one
SELECT d.id, d.event_id, ev.type AS event_type, ev.created_at AS event_created_at, d.status, d.attempts,
    d.next_attempt_at, d.last_attempt_at, d.last_status_code, d.last_error, d.created_at, d.finished_at,
    ev.payload
FROM webhook_deliveries d
JOIN webhook_events ev ON ev.id = d.event_id
WHERE d.id = sqlc.arg(id) AND d.endpoint_id = sqlc.arg(endpoint_id) AND d.shop_id = sqlc.arg(shop_id);

-- name: WebhookDeliveryCountsForEndpoint :one
SELECT count(*) FILTER (WHERE status = 'pending') AS pending,
    count(*) FILTER (WHERE status = 'succeeded') AS succeeded,
    count(*) FILTER (WHERE status = 'failed') AS failed
FROM webhook_deliveries WHERE endpoint_id = $1;

-- name: WebhookDeliveriesForgetEvents :execrows
-- An erasure (after WebhookEventsForgetCustomer): the deliveries of the forgotten events
-- lose their last error, which may quote the receiver's answer (a malformed one is
-- quoted in the error), and an answer may echo the body. Every one of them is updated,
-- error or not, so that the row lock orders this against an attempt being recorded:
-- one recorded first is seen by WebhookAttemptsForgetEvents, run next in a statement of
-- its own; one recorded after sees the event forgotten (WebhookEventForgotten).
UPDATE webhook_deliveries
SET last_error = CASE WHEN last_error IS NULL THEN NULL ELSE 'not kept: the customer was erased' END
WHERE event_id = ANY(sqlc.arg(event_ids)::uuid[]);

-- name: WebhookPermitTake :one
-- Takes the attempt permit named permit (hooks' permits: "webhook_shop:<id>:<n>" or
-- "webhook_endpoint:<id>:<n>") for the caller's session, which must be the instance's
-- own connection kept for them: a session-level advisory lock, so it holds across
-- instances and ends with the session if the instance dies. False: another instance
-- holds it.
SELECT pg_try_advisory_lock(hashtextextended(sqlc.arg(permit)::text, 0))::boolean AS taken;

-- name: WebhookPermitRelease :one
SELECT pg_advisory_unlock(hashtextextended(sqlc.arg(permit)::text, 0))::boolean AS released;

-- name: WebhookDeliveriesCreateUnsent :many
-- Fans out an event past its shop's hourly limit: its deliveries are made failed, with
-- the reason, and no job (the owner can send one again).
INSERT INTO webhook_deliveries (event_id, endpoint_id, shop_id, status, created_at, last_error, finished_at)
SELECT sqlc.arg(event_id)::uuid, s.id, sqlc.arg(shop_id)::uuid, 'failed', sqlc.arg(now)::timestamptz,
    sqlc.arg(reason)::text, sqlc.arg(now)::timestamptz
FROM webhook_subscribers(sqlc.arg(shop_id)::uuid, ARRAY[sqlc.arg(type)::text]) AS s(id)
ON CONFLICT (event_id, endpoint_id) DO NOTHING
RETURNING id;

-- name: WebhookResendLockShop :exec
-- Serialises a shop's "send again" requests, so that the cap on its resends waiting
-- holds when several arrive at once (a transaction-scoped advisory lock).
SELECT pg_advisory_xact_lock(hashtextextended('webhook_resends:' || sqlc.arg(shop_id)::uuid::text, 0));
