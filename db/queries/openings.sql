-- name: OpeningInsert :one
INSERT INTO slot_openings (shop_id, starts_at, duration_minutes, service, price_cents, status,
    created_at, updated_at, staff_id, parent_id, source, source_id, chain_id, chain_position, chain_moved_from)
VALUES (sqlc.arg(shop_id), sqlc.arg(starts_at), sqlc.arg(duration_minutes), sqlc.arg(service), sqlc.arg(price_cents), 'open',
    sqlc.arg(created_at), sqlc.arg(created_at), sqlc.narg(staff_id), sqlc.narg(parent_id), sqlc.narg(source), sqlc.narg(source_id),
    sqlc.narg(chain_id), sqlc.narg(chain_position), sqlc.narg(chain_moved_from))
RETURNING *;

-- name: OpeningGet :one
SELECT * FROM slot_openings WHERE id = $1;

-- name: OpeningForWave :one
-- What an offer wave needs of an opening (internal/offers reads it; slots owns the
-- table): whether it still takes offers, its round, and what the offer text says.
SELECT s.id, s.shop_id, s.generation, s.status = 'open' AS open, s.starts_at, s.duration_minutes, s.service, s.price_cents,
    s.created_at, s.staff_id, COALESCE(st.name, '')::text AS staff_name
FROM slot_openings s LEFT JOIN staff st ON st.id = s.staff_id WHERE s.id = $1;

-- name: OpeningForWaveLocked :one
-- OpeningForWave's open and generation, the row locked until the transaction ends, so
-- that a YES or a cancel cannot interleave with the recording of a wave.
SELECT status = 'open' AS open, generation FROM slot_openings WHERE id = $1 FOR UPDATE;

-- name: OpeningLockForBooking :one
-- A booking's opening, row-locked, found through the booking in the same statement: a
-- payment transition's first lock (opening, then booking: the order a claim takes
-- them in). No row: there is no such booking.
SELECT * FROM slot_openings
WHERE id = (SELECT opening_id FROM bookings WHERE bookings.id = sqlc.arg(booking_id))
FOR UPDATE;

-- name: OpeningCancel :one
UPDATE slot_openings
SET status = 'cancelled', updated_at = sqlc.arg(now)::timestamptz, version = version + 1
WHERE id = sqlc.arg(id) AND shop_id = sqlc.arg(shop_id) AND status = 'open'
RETURNING *;

-- name: OpeningListOpenForShop :many
-- A shop's open openings (slots.CancelOpen cancels them one by one).
SELECT id FROM slot_openings WHERE shop_id = $1 AND status = 'open' ORDER BY id;

-- name: OpeningExpire :one
UPDATE slot_openings
SET status = 'expired', updated_at = sqlc.arg(now)::timestamptz, version = version + 1
WHERE id = sqlc.arg(id) AND status = 'open'
RETURNING *;

-- name: OpeningReopen :one
-- A reopened opening starts a new offer generation.
UPDATE slot_openings
SET status = 'open', filled_by = NULL, filled_at = NULL, generation = generation + 1,
    updated_at = sqlc.arg(now)::timestamptz, version = version + 1
WHERE id = sqlc.arg(id) AND status = 'filled'
RETURNING *;

-- name: OpeningReopenInChain :one
-- OpeningReopen for the opening of a YES booking moved up: the time it frees is the
-- next link of the chain of the opening the customer moved to (its chain_* replaced:
-- the round it starts belongs to that chain).
UPDATE slot_openings
SET status = 'open', filled_by = NULL, filled_at = NULL, generation = generation + 1,
    chain_id = sqlc.arg(chain_id), chain_position = sqlc.arg(chain_position), chain_moved_from = sqlc.arg(chain_moved_from),
    updated_at = sqlc.arg(now)::timestamptz, version = version + 1
WHERE id = sqlc.arg(id) AND status = 'filled'
RETURNING *;

-- name: OpeningExpireFilled :one
-- A filled opening whose hold lapsed inside the cutoff: nobody holds it any more.
UPDATE slot_openings
SET status = 'expired', filled_by = NULL, filled_at = NULL, updated_at = sqlc.arg(now)::timestamptz, version = version + 1
WHERE id = sqlc.arg(id) AND status = 'filled'
RETURNING *;

-- name: OpeningListDetailed :many
-- Openings as owners see them: who filled each, its latest booking, offers texted (whose
-- text the provider accepted: the wave records sent_at as it does, whatever becomes of
-- the offer since).
SELECT s.id, s.shop_id, s.starts_at, s.duration_minutes, s.service, s.price_cents, s.status,
    s.generation, s.created_at, s.filled_at,
    s.filled_by AS filled_by_id,
    COALESCE(c.phone, '')::text AS filled_phone, COALESCE(c.name, '')::text AS filled_name,
    COALESCE(b.id::text, '')::text AS booking_id, COALESCE(b.status, '')::text AS booking_status,
    COALESCE(b.amount_cents, 0)::bigint AS booking_amount_cents,
    COALESCE(b.payment_url, '')::text AS booking_payment_url,
    COALESCE(b.stripe_checkout_session_id, '')::text AS booking_session_id,
    COALESCE(b.application_fee_cents, 0)::bigint AS booking_application_fee_cents,
    COALESCE(b.service, s.service)::text AS booking_service,
    COALESCE(b.duration_minutes, s.duration_minutes)::integer AS booking_duration_minutes,
    (SELECT count(*) FROM slot_offers o WHERE o.opening_id = s.id AND o.sent_at IS NOT NULL) AS offers_sent,
    s.staff_id, COALESCE(st.name, '')::text AS staff_name, s.parent_id, s.source, s.source_id,
    s.chain_id, s.chain_position, s.chain_moved_from
FROM slot_openings s
LEFT JOIN customers c ON c.id = s.filled_by
LEFT JOIN staff st ON st.id = s.staff_id
LEFT JOIN LATERAL (
    SELECT * FROM bookings bk WHERE bk.opening_id = s.id ORDER BY bk.created_at DESC, bk.id LIMIT 1
) b ON true
WHERE s.shop_id = sqlc.arg(shop_id)
  AND (sqlc.narg(id)::uuid IS NULL OR s.id = sqlc.narg(id)::uuid)
  AND (sqlc.narg(status)::text IS NULL OR s.status = sqlc.narg(status)::text)
ORDER BY s.starts_at DESC, s.id
LIMIT sqlc.arg(max_rows);

-- name: OpeningCompletePast :execrows
-- A filled opening whose appointment has ended, with a confirmed booking, is completed.
UPDATE slot_openings s
SET status = 'completed', updated_at = sqlc.arg(now)::timestamptz, version = version + 1
WHERE s.status = 'filled'
  AND s.starts_at + make_interval(mins => s.duration_minutes) <= sqlc.arg(now)::timestamptz
  AND EXISTS (SELECT 1 FROM bookings b WHERE b.opening_id = s.id AND b.status = 'confirmed');

-- name: OpeningSplit :execrows
-- A filled opening becomes its booked part (booked minutes from its start) when the rest
-- is declared as an opening of its own; only once, and only while it is filled and as
-- long as it was (0 rows: split already, or no longer filled).
UPDATE slot_openings
SET duration_minutes = sqlc.arg(booked)::integer, updated_at = sqlc.arg(now)::timestamptz, version = version + 1
WHERE id = sqlc.arg(id) AND status = 'filled' AND duration_minutes = sqlc.arg(whole)::integer
  AND sqlc.arg(booked)::integer < sqlc.arg(whole)::integer;
