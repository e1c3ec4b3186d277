-- name: BookingFeeClaim :one
-- The fence of a booking's one fee: the first claim inserts the row (pending) and is the
-- one that charges; no row means the booking has its fee already (BookingFeeGet).
INSERT INTO booking_fees (booking_id, shop_id, kind, state, amount_cents, currency, created_at, updated_at)
VALUES (sqlc.arg(booking_id), sqlc.arg(shop_id), sqlc.arg(kind), sqlc.arg(state), sqlc.arg(amount_cents),
    sqlc.arg(currency), sqlc.arg(now), sqlc.arg(now))
ON CONFLICT (booking_id) DO NOTHING
RETURNING *;

-- name: BookingFeeGet :one
SELECT * FROM booking_fees WHERE booking_id = $1;

-- name: BookingFeeAttempt :one
-- Takes the turn to charge a pending fee: one caller at a time (a click that comes while
-- a charge is under way sees it pending), and again after stale for one whose attempt
-- died (the provider's idempotency key makes a second attempt charge nothing twice).
UPDATE booking_fees SET attempt_at = sqlc.arg(now)::timestamptz, updated_at = sqlc.arg(now)::timestamptz
WHERE booking_id = sqlc.arg(booking_id) AND state = 'pending'
  AND (attempt_at IS NULL OR attempt_at < sqlc.arg(stale)::timestamptz)
RETURNING *;

-- name: BookingFeeSettle :one
-- The provider's answer to a pending fee.
UPDATE booking_fees SET state = sqlc.arg(state), payment_intent_id = sqlc.narg(payment_intent_id),
    decline_code = sqlc.arg(decline_code), message = sqlc.arg(message),
    application_fee_cents = sqlc.arg(application_fee_cents), updated_at = sqlc.arg(now)::timestamptz
WHERE booking_id = sqlc.arg(booking_id) AND state = 'pending'
RETURNING *;

-- name: BookingFeesOfShop :many
-- The fees of some of a shop's bookings, for the owner's list.
SELECT * FROM booking_fees WHERE shop_id = sqlc.arg(shop_id) AND booking_id = ANY(sqlc.arg(ids)::uuid[]);

-- name: BookingFeeSetPayURL :execrows
-- The page where the customer pays a fee their bank wanted them to confirm; once (0
-- rows: set before, or the fee is no longer waiting for them).
UPDATE booking_fees SET pay_url = sqlc.arg(pay_url), updated_at = sqlc.arg(now)::timestamptz
WHERE booking_id = sqlc.arg(booking_id) AND state = 'requires_action' AND pay_url IS NULL;

-- name: BookingFeePaid :one
-- The provider reports the fee's payment succeeded (the customer paid it themselves,
-- or an off-session charge settled): charged. No row: charged already, or no such fee.
UPDATE booking_fees SET state = 'charged', payment_intent_id = sqlc.arg(payment_intent_id),
    updated_at = sqlc.arg(now)::timestamptz
WHERE booking_id = sqlc.arg(booking_id) AND kind = sqlc.arg(kind) AND state IN ('pending', 'requires_action', 'declined')
RETURNING *;
