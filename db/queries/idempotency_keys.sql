-- Idempotency-Key on the creating POSTs (internal/idempotency).

-- name: IdempotencyKeyTake :one
-- Takes the key for a new request: a new key, or one whose 24 hours are over (its row
-- is replaced). No row: the key is held, by a request still running or by a stored
-- answer; the caller reads it (IdempotencyKeyGet).
INSERT INTO idempotency_keys (shop_id, key, request_hash, created_at, holder, locked_at)
VALUES (sqlc.arg(shop_id), sqlc.arg(key), sqlc.arg(request_hash), sqlc.arg(now)::timestamptz, sqlc.arg(holder),
    sqlc.arg(now)::timestamptz)
ON CONFLICT (shop_id, key) DO UPDATE
SET request_hash = EXCLUDED.request_hash, created_at = EXCLUDED.created_at, holder = EXCLUDED.holder,
    locked_at = EXCLUDED.locked_at,
    status = NULL, content_type = NULL, location = NULL, cache_control = NULL, body = NULL
WHERE idempotency_keys.created_at < sqlc.arg(expired_before)::timestamptz
RETURNING created_at;

-- name: IdempotencyKeyGet :one
SELECT * FROM idempotency_keys WHERE shop_id = sqlc.arg(shop_id) AND key = sqlc.arg(key);

-- name: IdempotencyKeyTakeOver :execrows
-- Takes over a key whose request died without an answer (it started before
-- stale_before, longer ago than any request may run): the retry runs it afresh.
UPDATE idempotency_keys SET holder = sqlc.arg(holder), locked_at = sqlc.arg(now)::timestamptz
WHERE shop_id = sqlc.arg(shop_id) AND key = sqlc.arg(key) AND request_hash = sqlc.arg(request_hash)
  AND status IS NULL AND locked_at < sqlc.arg(stale_before)::timestamptz;

-- name: IdempotencyKeyStore :execrows
-- The answer of the request holding the key (still its holder: not taken over).
UPDATE idempotency_keys
SET status = sqlc.arg(status), content_type = sqlc.arg(content_type), location = sqlc.arg(location),
    cache_control = sqlc.arg(cache_control), body = sqlc.arg(body)
WHERE shop_id = sqlc.arg(shop_id) AND key = sqlc.arg(key) AND holder = sqlc.arg(holder)
  AND status IS NULL;

-- name: IdempotencyKeyRelease :exec
-- The request ended without an answer worth keeping (5xx, a panic): the key is free,
-- and a retry runs the request again.
DELETE FROM idempotency_keys
WHERE shop_id = sqlc.arg(shop_id) AND key = sqlc.arg(key) AND holder = sqlc.arg(holder)
  AND status IS NULL;

-- name: IdempotencyKeyPurge :execrows
DELETE FROM idempotency_keys
WHERE (shop_id, key) IN (SELECT shop_id, key FROM idempotency_keys WHERE created_at < sqlc.arg(before)::timestamptz LIMIT sqlc.arg(max_rows));

-- name: IdempotencyKeyForgetText :execrows
-- An erasure: the stored answers that hold the customer's number go (a retry of such a
-- request runs again instead of replaying it).
DELETE FROM idempotency_keys
WHERE shop_id = sqlc.arg(shop_id) AND body IS NOT NULL
  AND position(convert_to(sqlc.arg(text)::text, 'UTF8') IN body) > 0;
