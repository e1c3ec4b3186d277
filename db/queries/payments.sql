-- Payment outcomes: what Stripe's webhooks, the reconciliation and the refund job change.

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
-- A payment that succeeded after its booking failed, while the slot is still free. Once
-- a refund is decided the booking never comes back; the partial unique index refuses it
-- if another booking went live meanwhile.
UPDATE bookings
SET status = 'confirmed', confirmed_at = sqlc.arg(now)::timestamptz, updated_at = sqlc.arg(now)::timestamptz,
    stripe_payment_intent_id = COALESCE(sqlc.narg(payment_intent_id), stripe_payment_intent_id)
WHERE id = sqlc.arg(id) AND status = 'payment_failed' AND refund_requested_at IS NULL AND refund_id IS NULL
RETURNING *;

-- name: BookingMarkFailed :one
-- Only a pending booking fails: a confirmed one never moves back, whatever arrives late.
UPDATE bookings SET status = 'payment_failed', updated_at = sqlc.arg(now)::timestamptz
WHERE id = sqlc.arg(id) AND status = 'pending_payment'
RETURNING *;

-- name: BookingMarkRefundRequested :exec
-- The booking's late payment will be refunded. Written in the transaction that enqueues
-- the refund job: from then on BookingMarkConfirmedLate refuses the booking.
UPDATE bookings SET refund_requested_at = sqlc.arg(now)::timestamptz, updated_at = sqlc.arg(now)::timestamptz
WHERE id = sqlc.arg(id) AND refund_requested_at IS NULL;

-- name: BookingSetRefund :one
-- Stores the refund of the booking's own (late) payment once; a second run of the refund
-- job finds it stored. A confirmed booking's payment is never recorded as refunded.
UPDATE bookings
SET refund_id = sqlc.arg(refund_id), updated_at = sqlc.arg(now)::timestamptz,
    stripe_payment_intent_id = COALESCE(stripe_payment_intent_id, sqlc.narg(payment_intent_id))
WHERE id = sqlc.arg(id) AND refund_id IS NULL AND status <> 'confirmed'
RETURNING *;

-- name: BookingListStale :many
-- Pending bookings whose checkout expired before `before` (expiry plus a grace period)
-- with no outcome recorded, and not deferred past `now` by an earlier run: a lost
-- webhook must not hold a slot forever, and a booking that stays pending must not hold
-- up the others. Deferred ones sort by when they are due again.
SELECT id, stripe_checkout_session_id, stripe_account, checkout_expires_at, reconcile_attempts FROM bookings
WHERE status = 'pending_payment' AND checkout_expires_at < sqlc.arg(before)::timestamptz
  AND (reconcile_after IS NULL OR reconcile_after <= sqlc.arg(now)::timestamptz)
ORDER BY COALESCE(reconcile_after, checkout_expires_at), id
LIMIT sqlc.arg(max_rows);

-- name: BookingDeferReconcile :exec
-- The reconciliation found the booking unresolved (still open at Stripe, or an error):
-- it is not read back again before `after`.
UPDATE bookings
SET reconcile_after = sqlc.arg(after)::timestamptz, reconcile_attempts = reconcile_attempts + 1
WHERE id = sqlc.arg(id) AND status = 'pending_payment';

-- name: OpeningMarkFilledLate :one
-- A late payer takes back a slot nobody else holds: reopened (open) or given up inside
-- the cutoff (expired).
UPDATE slot_openings
SET status = 'filled', filled_by = sqlc.arg(customer_id), filled_at = sqlc.arg(now)::timestamptz,
    updated_at = sqlc.arg(now)::timestamptz, version = version + 1
WHERE id = sqlc.arg(id) AND status IN ('open', 'expired') AND filled_by IS NULL
RETURNING *;

-- name: BookingSetRefundFailed :execrows
-- Records that a payment of the booking could not be refunded (Stripe refused for good,
-- or the refund job ran out of attempts): the owner must refund it by hand. The latest
-- failure is the one shown, even if the owner had dismissed an earlier one. 0 rows: the
-- booking is gone.
UPDATE bookings
SET refund_failed_at = sqlc.arg(now)::timestamptz, refund_failed_payment_intent = sqlc.arg(payment_intent_id),
    refund_error = sqlc.arg(reason), refund_failed_dismissed_at = NULL, updated_at = sqlc.arg(now)::timestamptz
WHERE id = sqlc.arg(id);

-- name: BookingClearRefundFailed :exec
-- A later refund of the payment that had failed succeeded: nothing is left to do by hand.
UPDATE bookings
SET refund_failed_at = NULL, refund_failed_payment_intent = NULL, refund_error = NULL, refund_failed_dismissed_at = NULL,
    updated_at = sqlc.arg(now)::timestamptz
WHERE id = sqlc.arg(id) AND refund_failed_payment_intent = sqlc.arg(payment_intent_id);

-- name: BookingDismissRefundFailed :execrows
-- The owner refunded the failed refund's payment by hand: it no longer needs their
-- attention. 0 rows: not this shop's booking, no failed refund on it, or dismissed
-- already.
UPDATE bookings
SET refund_failed_dismissed_at = sqlc.arg(now)::timestamptz, updated_at = sqlc.arg(now)::timestamptz
WHERE id = sqlc.arg(id) AND shop_id = sqlc.arg(shop_id)
  AND refund_failed_at IS NOT NULL AND refund_failed_dismissed_at IS NULL;

-- name: BookingMovePayment :one
-- A move-up of a confirmed YES booking (from_id, locked by the caller) to the booking
-- its customer's YES just made on the earlier opening (to_id, in the same transaction):
-- the new booking takes the old one's service and price and its payment (the
-- Stripe ids, the account and its fee, when it was confirmed), and is confirmed; the
-- old one becomes moved (moved_to) and keeps no payment, so that one payment is reached
-- from one live booking only (a refund or a fee acts once). Its account stays: a Stripe
-- event of the moved payment still names the old booking and must be read as its own.
-- No row: the old booking is no longer confirmed, or the new one no longer live.
WITH old AS (
    SELECT o.id AS old_id, o.amount_cents, o.currency, o.service, o.stripe_checkout_session_id,
        o.stripe_payment_intent_id, o.payment_url, o.stripe_account, o.application_fee_cents, o.confirmed_at
    FROM bookings o WHERE o.id = sqlc.arg(from_id) AND o.status = 'confirmed'
), moved AS (
    UPDATE bookings b
    SET status = 'moved', moved_to = sqlc.arg(to_id), updated_at = sqlc.arg(now)::timestamptz,
        stripe_checkout_session_id = NULL, stripe_payment_intent_id = NULL, payment_url = NULL,
        application_fee_cents = 0
    FROM old WHERE b.id = old.old_id
    RETURNING b.id
)
UPDATE bookings n
SET status = 'confirmed', amount_cents = old.amount_cents, currency = old.currency,
    service = COALESCE(old.service, n.service),
    stripe_checkout_session_id = old.stripe_checkout_session_id, stripe_payment_intent_id = old.stripe_payment_intent_id,
    payment_url = old.payment_url, stripe_account = old.stripe_account, application_fee_cents = old.application_fee_cents,
    confirmed_at = COALESCE(old.confirmed_at, sqlc.arg(now)::timestamptz), checkout_expires_at = NULL,
    updated_at = sqlc.arg(now)::timestamptz
FROM old
WHERE n.id = sqlc.arg(to_id) AND n.status IN ('pending_payment', 'confirmed') AND EXISTS (SELECT 1 FROM moved)
RETURNING n.*;

-- name: BookingMovedPayment :one
-- Where the payment of a moved booking is now: the booking it moved to, followed to the
-- last move (a booking moved up twice). The Stripe ids are those the payment took, and
-- its platform fee (a duplicate payment of the moved booking was charged one too).
WITH RECURSIVE hop AS (
    SELECT b.id, b.status, b.moved_to, 0 AS depth FROM bookings b WHERE b.id = sqlc.arg(id)
    UNION ALL
    SELECT n.id, n.status, n.moved_to, h.depth + 1 FROM bookings n JOIN hop h ON n.id = h.moved_to
    WHERE h.depth < 50
)
SELECT b.id, b.status, b.stripe_checkout_session_id, b.stripe_payment_intent_id, b.application_fee_cents
FROM hop h JOIN bookings b ON b.id = h.id
WHERE h.moved_to IS NULL;
