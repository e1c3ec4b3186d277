-- Outbound event webhooks: the shops' endpoints (internal/hooks).

-- name: WebhookEndpointInsert :one
INSERT INTO webhook_endpoints (shop_id, url, description, enabled_events, secret, disabled_at, disabled_reason,
    created_at, updated_at)
VALUES (sqlc.arg(shop_id), sqlc.arg(url), sqlc.arg(description), sqlc.arg(enabled_events)::text[], sqlc.arg(secret),
    sqlc.narg(disabled_at), sqlc.narg(disabled_reason), sqlc.arg(now)::timestamptz, sqlc.arg(now)::timestamptz)
RETURNING *;

-- name: WebhookEndpointCountForShop :one
SELECT count(*) FROM webhook_endpoints WHERE shop_id = $1;

-- name: WebhookEndpointLockShop :exec
-- Serialises the creations of one shop's endpoints, so the cap on their number holds
-- under concurrent requests (a transaction-scoped advisory lock: no row of another
-- package's table is locked).
SELECT pg_advisory_xact_lock(hashtextextended('webhook_endpoints:' || sqlc.arg(shop_id)::uuid::text, 0));

-- name: WebhookEndpointList :many
SELECT * FROM webhook_endpoints WHERE shop_id = $1 ORDER BY created_at, id;

-- name: WebhookEndpointGet :one
SELECT * FROM webhook_endpoints WHERE id = sqlc.arg(id) AND shop_id = sqlc.arg(shop_id);

-- name: WebhookEndpointGetForUpdate :one
SELECT * FROM webhook_endpoints WHERE id = sqlc.arg(id) AND shop_id = sqlc.arg(shop_id) FOR UPDATE;

-- name: WebhookEndpointUpdate :one
-- The owner's change. Enabling an endpoint forgets the failures that disabled it.
UPDATE webhook_endpoints
SET url = sqlc.arg(url), description = sqlc.arg(description), enabled_events = sqlc.arg(enabled_events)::text[],
    disabled_at = sqlc.narg(disabled_at), disabled_reason = sqlc.narg(disabled_reason),
    failing_since = CASE WHEN sqlc.narg(disabled_at)::timestamptz IS NULL THEN NULL ELSE failing_since END,
    updated_at = sqlc.arg(now)::timestamptz
WHERE id = sqlc.arg(id) AND shop_id = sqlc.arg(shop_id)
RETURNING *;

-- name: WebhookEndpointDelete :execrows
-- Its deliveries and their attempts go with it (ON DELETE CASCADE); a delivery job
-- still waiting finds nothing and stops.
DELETE FROM webhook_endpoints WHERE id = sqlc.arg(id) AND shop_id = sqlc.arg(shop_id);

-- name: WebhookEndpointRotateSecret :one
-- The new secret signs from now on; the one it replaces signs too until expires_at.
UPDATE webhook_endpoints
SET previous_secret = secret, previous_secret_expires_at = sqlc.arg(expires_at)::timestamptz,
    secret = sqlc.arg(secret), updated_at = sqlc.arg(now)::timestamptz
WHERE id = sqlc.arg(id) AND shop_id = sqlc.arg(shop_id)
RETURNING *;

-- name: WebhookEndpointRecordSuccess :exec
UPDATE webhook_endpoints SET failing_since = NULL
WHERE id = sqlc.arg(id) AND failing_since IS NOT NULL;

-- name: WebhookEndpointRecordFailure :one
-- Counts a failed attempt: the endpoint has been failing since its first failure after
-- its last success. One failing for disable_after straight is disabled, with the reason
-- the owner reads. Returns whether this failure disabled it.
UPDATE webhook_endpoints
SET failing_since = COALESCE(failing_since, sqlc.arg(now)::timestamptz),
    disabled_at = CASE WHEN disabled_at IS NULL AND failing_since <= sqlc.arg(disable_before)::timestamptz
        THEN sqlc.arg(now)::timestamptz ELSE disabled_at END,
    disabled_reason = CASE WHEN disabled_at IS NULL AND failing_since <= sqlc.arg(disable_before)::timestamptz
        THEN sqlc.arg(reason)::text ELSE disabled_reason END,
    updated_at = CASE WHEN disabled_at IS NULL AND failing_since <= sqlc.arg(disable_before)::timestamptz
        THEN sqlc.arg(now)::timestamptz ELSE updated_at END
WHERE id = sqlc.arg(id)
RETURNING COALESCE(disabled_at = sqlc.arg(now)::timestamptz AND disabled_reason = sqlc.arg(reason)::text, false)::boolean AS disabled_now,
    failing_since;

-- name: WebhookEndpointsForgetEvents :execrows
-- An erasure (with WebhookDeliveriesForgetEvents): an endpoint that a delivery of the
-- forgotten events went to, and that was disabled automatically, keeps its reason without
-- the last error it quotes (which may quote the receiver's answer, and an answer may echo
-- the body). The owner's own reason is not touched.
UPDATE webhook_endpoints e
SET disabled_reason = regexp_replace(e.disabled_reason, '\(the last: .*\); fix the endpoint',
        '(the last: not kept: a customer was erased); fix the endpoint')
WHERE e.disabled_reason LIKE 'disabled automatically:%(the last: %'
  AND e.disabled_reason NOT LIKE '%(the last: not kept: a customer was erased)%'
  AND e.id IN (SELECT d.endpoint_id FROM webhook_deliveries d WHERE d.event_id = ANY(sqlc.arg(event_ids)::uuid[]));

-- name: WebhookEndpointSecretsToSeal :many
-- Endpoints whose secret or previous secret does not start with keep (a LIKE pattern:
-- 'sealed1:%' for the plain ones, 'sealed1:<key id>:%' for those not under that key),
-- a batch at a time.
SELECT id, shop_id, secret, previous_secret FROM webhook_endpoints
WHERE secret NOT LIKE sqlc.arg(keep)::text OR previous_secret NOT LIKE sqlc.arg(keep)::text
ORDER BY id
LIMIT 500;

-- name: WebhookEndpointSetSecrets :execrows
-- The same secrets sealed anew; nothing changes when a rotation came first.
UPDATE webhook_endpoints SET secret = sqlc.arg(secret), previous_secret = sqlc.narg(previous_secret)
WHERE id = sqlc.arg(id) AND secret = sqlc.arg(old_secret)
  AND previous_secret IS NOT DISTINCT FROM sqlc.narg(old_previous_secret);

-- name: WebhookEndpointSecretKeyIDs :many
-- The keys (hex ids) the kept secrets are sealed under (the start's check).
SELECT DISTINCT split_part(s, ':', 2)::text AS key_id
FROM webhook_endpoints, unnest(ARRAY[secret, previous_secret]) AS s
WHERE s LIKE 'sealed1:%';
