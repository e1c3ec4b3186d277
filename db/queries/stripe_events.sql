-- name: StripeEventInsert :one
-- Every verified event is stored before it is acted on. A redelivery finds its row
-- (no row returned) and is not stored again.
INSERT INTO stripe_events (event_id, type, booking_id, payload, received_at, account)
VALUES (sqlc.arg(event_id), sqlc.arg(type), sqlc.narg(booking_id), sqlc.arg(payload), sqlc.arg(received_at)::timestamptz,
    sqlc.narg(account))
ON CONFLICT (event_id) DO NOTHING
RETURNING event_id;

-- name: StripeEventGet :one
SELECT * FROM stripe_events WHERE event_id = $1;

-- name: StripeEventLock :one
-- Held while an event's transition runs, so two deliveries of one event never act
-- twice: the second waits, then finds the result.
SELECT * FROM stripe_events WHERE event_id = $1 FOR UPDATE;

-- name: StripeEventSetResult :one
-- Stores an event's result once. No row means another delivery stored one first: read
-- it back (StripeEventGet) and answer with that.
UPDATE stripe_events SET result = sqlc.arg(result), handled_at = sqlc.arg(now)::timestamptz
WHERE event_id = sqlc.arg(event_id) AND result IS NULL
RETURNING result;

-- name: StripeEventPurge :execrows
-- Deletes up to max_rows events received before `before` (the retention period; it is
-- longer than Stripe's 3 days of retries, so a redelivery still finds its event).
DELETE FROM stripe_events
WHERE event_id IN (
    SELECT event_id FROM stripe_events WHERE received_at < sqlc.arg(before)::timestamptz
    LIMIT sqlc.arg(max_rows)
);
