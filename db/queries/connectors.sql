-- The booking systems that keep a shop's appointment book, and the deliveries they made
-- (internal/book).

-- name: ConnectorInsert :one
INSERT INTO connectors (id, shop_id, kind, description, secret, created_at, updated_at)
VALUES (sqlc.arg(id), sqlc.arg(shop_id), sqlc.arg(kind), sqlc.arg(description), sqlc.narg(secret),
    sqlc.arg(now)::timestamptz, sqlc.arg(now)::timestamptz)
RETURNING *;

-- name: ConnectorCountForShop :one
SELECT count(*) FROM connectors WHERE shop_id = $1;

-- name: ConnectorLockShop :exec
-- Serialises the creations of one shop's connectors, so the cap on their number holds
-- under concurrent requests.
SELECT pg_advisory_xact_lock(hashtextextended('connectors:' || sqlc.arg(shop_id)::uuid::text, 0));

-- name: ConnectorList :many
SELECT * FROM connectors WHERE shop_id = $1 ORDER BY created_at, id;

-- name: ConnectorGet :one
SELECT * FROM connectors WHERE id = sqlc.arg(id) AND shop_id = sqlc.arg(shop_id);

-- name: ConnectorGetByID :one
-- A connector found by the id in its webhook's path: the delivery names no shop, the
-- connector's row does.
SELECT * FROM connectors WHERE id = sqlc.arg(id) AND kind = sqlc.arg(kind);

-- name: ConnectorSetSecret :one
UPDATE connectors SET secret = sqlc.arg(secret), updated_at = sqlc.arg(now)::timestamptz
WHERE id = sqlc.arg(id) AND shop_id = sqlc.arg(shop_id)
RETURNING *;

-- name: ConnectorSetDescription :one
UPDATE connectors SET description = sqlc.arg(description), updated_at = sqlc.arg(now)::timestamptz
WHERE id = sqlc.arg(id) AND shop_id = sqlc.arg(shop_id)
RETURNING *;

-- name: ConnectorDelete :execrows
-- Its remembered deliveries go with it (ON DELETE CASCADE); its appointments stay in
-- the book.
DELETE FROM connectors WHERE id = sqlc.arg(id) AND shop_id = sqlc.arg(shop_id);

-- name: ConnectorRecordResult :exec
-- The last delivery and what became of it. A delivery that finished earlier than the
-- one recorded (concurrent deliveries) does not overwrite it.
UPDATE connectors
SET last_delivery_at = sqlc.arg(at)::timestamptz, last_delivery_event = sqlc.arg(event),
    last_delivery_result = sqlc.arg(result)
WHERE id = sqlc.arg(id) AND (last_delivery_at IS NULL OR last_delivery_at <= sqlc.arg(at)::timestamptz);

-- name: ConnectorDeliverySeen :one
SELECT EXISTS (SELECT FROM connector_deliveries
               WHERE connector_id = sqlc.arg(connector_id) AND delivery_id = sqlc.arg(delivery_id));

-- name: ConnectorDeliveryInsert :execrows
-- Remembers a delivery applied; 0 rows: a concurrent delivery of it was remembered first.
INSERT INTO connector_deliveries (connector_id, delivery_id, shop_id, event, received_at)
VALUES (sqlc.arg(connector_id), sqlc.arg(delivery_id), sqlc.arg(shop_id), sqlc.arg(event), sqlc.arg(at)::timestamptz)
ON CONFLICT DO NOTHING;

-- name: ConnectorDeliveryPurge :execrows
-- Forgets deliveries older than before, a batch at a time (vendors redeliver for a day or
-- two; the book's order makes an older redelivery change nothing anyway).
DELETE FROM connector_deliveries
WHERE ctid = ANY (ARRAY(SELECT d.ctid FROM connector_deliveries d
                        WHERE d.received_at < sqlc.arg(before)::timestamptz LIMIT sqlc.arg(max_rows)::int));

-- name: ConnectorSecretKeyIDs :many
-- The ids of the keys the connectors' secrets are sealed under.
-- (and their API keys).
SELECT DISTINCT split_part(secret, ':', 2)::text AS key_id FROM connectors WHERE secret IS NOT NULL
UNION
SELECT DISTINCT split_part(api_key, ':', 2)::text FROM connectors WHERE api_key IS NOT NULL;

-- name: ConnectorSecretsToSeal :many
-- A batch of connectors whose secret is not sealed under the key keep names
-- ('sealed1:<newest key id>:%'), for a rotation of SECRETS_KEY.
SELECT id, shop_id, secret::text AS secret FROM connectors
WHERE secret IS NOT NULL AND secret NOT LIKE sqlc.arg(keep)::text
ORDER BY id LIMIT 100;

-- name: ConnectorReseal :execrows
-- Replaces a secret with the same one sealed anew, if it is still the one read.
UPDATE connectors SET secret = sqlc.arg(secret)::text
WHERE id = sqlc.arg(id) AND secret = sqlc.arg(old_secret)::text;

-- name: ConnectorFeedsDue :many
-- The calendar feeds not polled since before, longest waiting first.
SELECT * FROM connectors
WHERE kind = 'ics' AND (polled_at IS NULL OR polled_at <= sqlc.arg(before)::timestamptz)
ORDER BY polled_at NULLS FIRST, id
LIMIT sqlc.arg(max_rows)::int;

-- name: ConnectorFeedPolled :exec
-- A poll's outcome: the validators for the next conditional GET (kept when the feed
-- answered none: a 304 or a failure), and the poll as the last delivery.
UPDATE connectors
SET polled_at = sqlc.arg(at)::timestamptz,
    feed_etag = CASE WHEN sqlc.arg(keep_validators)::bool THEN feed_etag ELSE sqlc.arg(etag)::text END,
    feed_last_modified = CASE WHEN sqlc.arg(keep_validators)::bool THEN feed_last_modified ELSE sqlc.arg(last_modified)::text END,
    last_delivery_at = sqlc.arg(at)::timestamptz, last_delivery_event = sqlc.arg(event),
    last_delivery_result = sqlc.arg(result)
WHERE id = sqlc.arg(id);

-- name: ConnectorCountKindForShop :one
SELECT count(*) FROM connectors WHERE shop_id = sqlc.arg(shop_id) AND kind = sqlc.arg(kind);
