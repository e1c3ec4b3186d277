-- Suppressed numbers, per shop, by keyed hash (internal/shops): every STOP and carrier
-- opt-out, and every erased number.

-- name: SuppressionAdd :exec
-- Records a number's suppression under its newest keyed hash. An erasure outranks a
-- STOP: the reason becomes 'erased' and stays so.
INSERT INTO sms_suppressions (shop_id, phone_hmac, reason, created_at)
VALUES (sqlc.arg(shop_id), sqlc.arg(phone_hmac), sqlc.arg(reason), sqlc.arg(now)::timestamptz)
ON CONFLICT (shop_id, phone_hmac) DO UPDATE
SET reason = CASE WHEN EXCLUDED.reason = 'erased' THEN 'erased' ELSE sms_suppressions.reason END;

-- name: SuppressionClear :execrows
-- The number's own START: its suppression goes, under every key it may be kept under.
DELETE FROM sms_suppressions
WHERE shop_id = sqlc.arg(shop_id) AND phone_hmac = ANY(sqlc.arg(phone_hmacs)::bytea[]);

-- name: SuppressionErased :one
-- Whether the number belonged to one of the shop's erased customers.
SELECT EXISTS (
    SELECT 1 FROM sms_suppressions
    WHERE shop_id = sqlc.arg(shop_id) AND reason = 'erased' AND phone_hmac = ANY(sqlc.arg(phone_hmacs)::bytea[])
)::boolean AS erased;
