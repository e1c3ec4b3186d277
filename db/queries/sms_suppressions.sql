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

-- name: SuppressionOptedOut :one
-- Whether the shop must not text the number at the owner's word: its customer with the
-- number opted out, or the number is suppressed (a STOP, a carrier's opt-out, an
-- erasure), under any of its keyed hashes.
SELECT (
    EXISTS (
        SELECT 1 FROM sms_suppressions s
        WHERE s.shop_id = sqlc.arg(shop_id) AND s.phone_hmac = ANY(sqlc.arg(phone_hmacs)::bytea[])
    ) OR EXISTS (
        SELECT 1 FROM customers c
        WHERE c.shop_id = sqlc.arg(shop_id) AND c.phone = sqlc.arg(phone)::text AND c.opted_out_at IS NOT NULL
    )
)::boolean AS opted_out;
