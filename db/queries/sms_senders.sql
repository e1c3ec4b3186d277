-- A shop's own sender (internal/senders).

-- name: SenderLock :exec
-- The fence of a shop's sender, held until the transaction ends: a registration waits
-- for a set-up of the same shop under way (SenderLockSession), and the reverse.
SELECT pg_advisory_xact_lock(hashtextextended('sms_sender:' || sqlc.arg(shop_id)::text, 0));

-- name: SenderLockSession :exec
-- The same fence held by the connection until SenderUnlockSession (or until it
-- closes): a set-up holds it across its calls to the provider, whose steps are each
-- committed on that connection as they finish, so a second request for the shop waits,
-- then finds what the first recorded.
SELECT pg_advisory_lock(hashtextextended('sms_sender:' || sqlc.arg(shop_id)::text, 0));

-- name: SenderUnlockSession :one
SELECT pg_advisory_unlock(hashtextextended('sms_sender:' || sqlc.arg(shop_id)::text, 0));

-- name: SenderGet :one
SELECT * FROM sms_senders WHERE shop_id = $1;

-- name: SenderStart :one
-- The shop's sender, made 'provisioning' if it has none; an existing one is returned
-- as it is.
INSERT INTO sms_senders (shop_id, status, created_at, updated_at)
VALUES (sqlc.arg(shop_id), 'provisioning', sqlc.arg(now)::timestamptz, sqlc.arg(now)::timestamptz)
ON CONFLICT (shop_id) DO UPDATE SET updated_at = sms_senders.updated_at
RETURNING *;

-- name: SenderSetNumber :one
UPDATE sms_senders
SET number = sqlc.arg(number), number_sid = sqlc.arg(number_sid), bought = sqlc.arg(bought),
    us_local = sqlc.arg(us_local), updated_at = sqlc.arg(now)::timestamptz
WHERE shop_id = sqlc.arg(shop_id) AND status = 'provisioning'
RETURNING *;

-- name: SenderSetService :one
UPDATE sms_senders SET messaging_service_sid = sqlc.arg(service_sid), updated_at = sqlc.arg(now)::timestamptz
WHERE shop_id = sqlc.arg(shop_id) AND status = 'provisioning'
RETURNING *;

-- name: SenderActivate :one
UPDATE sms_senders SET status = 'active', updated_at = sqlc.arg(now)::timestamptz
WHERE shop_id = sqlc.arg(shop_id) AND status = 'provisioning'
RETURNING *;

-- name: SenderServiceByNumber :one
-- The Messaging Service a text from this number goes through.
SELECT messaging_service_sid::text FROM sms_senders
WHERE number = sqlc.arg(number) AND status = 'active';
