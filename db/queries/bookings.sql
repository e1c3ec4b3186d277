-- name: BookingInsert :one
INSERT INTO bookings (opening_id, customer_id, offer_id, shop_id, status, amount_cents, currency,
    created_at, updated_at, confirmed_at, checkout_expires_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, sqlc.narg(confirmed_at), sqlc.narg(checkout_expires_at))
RETURNING *;

-- name: BookingGet :one
SELECT * FROM bookings WHERE id = $1;

-- name: BookingLatestForOpening :one
SELECT * FROM bookings WHERE opening_id = $1 ORDER BY created_at DESC, id LIMIT 1;

-- name: BookingSetCheckout :one
-- Stores the checkout link once; whoever stores it first is the one who delivers it.
UPDATE bookings
SET stripe_checkout_session_id = sqlc.arg(session_id), payment_url = sqlc.arg(payment_url),
    stripe_payment_intent_id = sqlc.narg(payment_intent_id),
    checkout_expires_at = sqlc.arg(expires_at)::timestamptz, updated_at = sqlc.arg(now)::timestamptz
WHERE id = sqlc.arg(id) AND payment_url IS NULL AND status = 'pending_payment'
RETURNING *;

-- name: BookingSetCheckoutExpiry :one
-- Moves the expiry of a pending booking whose link was never stored. No row means the
-- link was stored or the booking ended meanwhile: nothing is left to extend.
UPDATE bookings SET checkout_expires_at = sqlc.arg(expires_at)::timestamptz, updated_at = sqlc.arg(now)::timestamptz
WHERE id = sqlc.arg(id) AND payment_url IS NULL AND status = 'pending_payment'
RETURNING *;
