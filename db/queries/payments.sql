-- Payment outcomes: what Stripe's webhooks and the reconciliation job change.

-- name: BookingLock :one
SELECT * FROM bookings WHERE id = $1 FOR UPDATE;

-- name: BookingMarkConfirmed :one
-- Only a pending booking is confirmed here; a late payment on a failed one goes
-- through BookingMarkConfirmedLate.
UPDATE bookings
SET status = 'confirmed', confirmed_at = sqlc.arg(now)::timestamptz, updated_at = sqlc.arg(now)::timestamptz,
    stripe_payment_intent_id = COALESCE(sqlc.narg(payment_intent_id), stripe_payment_intent_id)
WHERE id = sqlc.arg(id) AND status = 'pending_payment'
RETURNING *;

-- name: BookingMarkConfirmedLate :one
-- A payment that succeeded after its booking failed, while the slot is still free. The
-- partial unique index refuses it if another booking went live meanwhile.
UPDATE bookings
SET status = 'confirmed', confirmed_at = sqlc.arg(now)::timestamptz, updated_at = sqlc.arg(now)::timestamptz,
    stripe_payment_intent_id = COALESCE(sqlc.narg(payment_intent_id), stripe_payment_intent_id)
WHERE id = sqlc.arg(id) AND status = 'payment_failed' AND refund_id IS NULL
RETURNING *;

-- name: BookingMarkFailed :one
-- Only a pending booking fails: a confirmed one never moves back, whatever arrives late.
UPDATE bookings SET status = 'payment_failed', updated_at = sqlc.arg(now)::timestamptz
WHERE id = sqlc.arg(id) AND status = 'pending_payment'
RETURNING *;

-- name: BookingSetRefund :one
-- Stores the refund once; a second run of the refund job finds it stored.
UPDATE bookings
SET refund_id = sqlc.arg(refund_id), updated_at = sqlc.arg(now)::timestamptz,
    stripe_payment_intent_id = COALESCE(stripe_payment_intent_id, sqlc.narg(payment_intent_id))
WHERE id = sqlc.arg(id) AND refund_id IS NULL
RETURNING *;

-- name: BookingListStale :many
-- Pending bookings whose checkout expired before `before` (expiry plus a grace period)
-- with no outcome recorded: a lost webhook must not hold a slot forever.
SELECT id FROM bookings
WHERE status = 'pending_payment' AND checkout_expires_at < sqlc.arg(before)::timestamptz
ORDER BY checkout_expires_at, id
LIMIT sqlc.arg(max_rows);

-- name: OfferMarkFailedForBooking :exec
-- The accepted offer behind a booking whose payment failed.
UPDATE slot_offers SET status = 'failed'
WHERE id = (SELECT b.offer_id FROM bookings b WHERE b.id = sqlc.arg(booking_id)) AND status = 'accepted';

-- name: OpeningMarkFilledLate :one
-- A late payer takes back a slot nobody else holds: reopened (open) or given up inside
-- the cutoff (expired).
UPDATE slot_openings
SET status = 'filled', filled_by = sqlc.arg(customer_id), filled_at = sqlc.arg(now)::timestamptz,
    updated_at = sqlc.arg(now)::timestamptz, version = version + 1
WHERE id = sqlc.arg(id) AND status IN ('open', 'expired') AND filled_by IS NULL
RETURNING *;
