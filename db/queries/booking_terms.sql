-- name: BookingTermsFix :one
-- Fixes what a booking's payment page asks and shows, the first time a checkout is made
-- for it; a later attempt (the booking sweep's retry) gets the first terms back, so
-- that it asks the provider for the same checkout (the same amount under the same
-- idempotency key) whatever the shop changed meanwhile.
INSERT INTO booking_terms (booking_id, shop_id, mode, price_cents, charged_cents, keep_card, policy_version,
    policy_text, policy_sha256, late_cancel_hours, no_show_fee_cents, late_cancel_fee_cents, created_at)
VALUES (sqlc.arg(booking_id), sqlc.arg(shop_id), sqlc.arg(mode), sqlc.arg(price_cents), sqlc.arg(charged_cents),
    sqlc.arg(keep_card), sqlc.arg(policy_version), sqlc.arg(policy_text), sqlc.arg(policy_sha256),
    sqlc.arg(late_cancel_hours), sqlc.arg(no_show_fee_cents), sqlc.arg(late_cancel_fee_cents), sqlc.arg(now))
ON CONFLICT (booking_id) DO UPDATE SET booking_id = EXCLUDED.booking_id
RETURNING *;

-- name: BookingTermsGet :one
SELECT * FROM booking_terms WHERE booking_id = $1;

-- name: BookingTermsAccept :exec
-- The customer completed the payment page that showed the terms: accepted, once (the
-- first completion's time and checkout stay).
UPDATE booking_terms SET accepted_at = sqlc.arg(now)::timestamptz, checkout_session = sqlc.narg(checkout_session)
WHERE booking_id = sqlc.arg(booking_id) AND accepted_at IS NULL;

-- name: BookingTermsMove :exec
-- A moved booking's accepted terms follow its payment to the booking it became.
UPDATE booking_terms SET booking_id = sqlc.arg(to_id) WHERE booking_id = sqlc.arg(from_id);
