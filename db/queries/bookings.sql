-- name: BookingGet :one
SELECT * FROM bookings WHERE id = $1;

-- name: BookingStoreLink :execrows
-- Stores the checkout link once; whoever stores it first is the one who delivers it: 0
-- rows means a link was stored first (the YES path's, which answered with it, or the
-- booking sweep's, which texts it) or the booking ended. The YES path queues it with the
-- answer that carries the link (pgbatch); the sweep runs it with the link's text. The
-- account the checkout was made on (NULL: the platform's) and its fee are stored with it:
-- that account takes the payment, and only its events act on the booking.
UPDATE bookings
SET stripe_checkout_session_id = sqlc.arg(session_id), payment_url = sqlc.arg(payment_url),
    stripe_payment_intent_id = sqlc.narg(payment_intent_id),
    stripe_account = sqlc.narg(account), application_fee_cents = sqlc.arg(application_fee_cents),
    checkout_expires_at = sqlc.arg(expires_at)::timestamptz, updated_at = sqlc.arg(now)::timestamptz
WHERE id = sqlc.arg(id) AND payment_url IS NULL AND status = 'pending_payment';

-- name: BookingSetCheckoutExpiry :one
-- Moves the expiry of a pending booking whose link was never stored. No row means the
-- link was stored or the booking ended meanwhile: nothing is left to extend.
UPDATE bookings SET checkout_expires_at = sqlc.arg(expires_at)::timestamptz, updated_at = sqlc.arg(now)::timestamptz
WHERE id = sqlc.arg(id) AND payment_url IS NULL AND status = 'pending_payment'
RETURNING *;

-- name: BookingMarkTold :execrows
-- Records that the customer has learnt of their booking; 0 rows means someone (the
-- answer or the notice) told them already.
UPDATE bookings SET customer_told_at = sqlc.arg(now)::timestamptz
WHERE id = sqlc.arg(id) AND customer_told_at IS NULL;

-- name: BookingsMarkTold :exec
-- BookingMarkTold for the bookings of several answers written back together (inbound
-- queues it with their marks, in one round trip).
UPDATE bookings SET customer_told_at = sqlc.arg(now)::timestamptz
WHERE id = ANY(sqlc.arg(ids)::uuid[]) AND customer_told_at IS NULL;

-- name: BookingClaim :one
-- A YES's booking in one statement (the booking transaction's round trips were the
-- throughput limit): the offer is locked and must be claimable (slot_offers_claimable:
-- its text went out, the opening is open, in the offer's generation) and its customer
-- not opted out; the opening is filled only if it is still open, in the claim's
-- generation and starts after starts_after (now + the shop's lead time); then the offer
-- is accepted, the opening's other offers lost and the booking inserted. No row: nothing was changed
-- (the caller reads the opening to tell "taken" from "no offer" and from a customer who
-- already holds a chair at that time). The conditional UPDATE and the partial unique
-- index stay the fences against a double booking.
--
-- Lock order: the opening row first, then the offer, then the opening's other offers
-- (lost). Every claim on one opening takes them in that order, so claims that reach
-- Postgres without the Redis lock (its wait ran out, its TTL lapsed) queue on the
-- opening row instead of deadlocking (offer -> opening against opening -> offer).
--
-- A customer is one person: one who already holds a live booking at this shop at this
-- start (a second YES while holding offers for several chairs at 15:00) does not take
-- another chair. Claims at one start share the Redis lock key, so this is checked after
-- the previous claim committed.
--
-- The outbound webhook events of the YES (opening.filled, and booking.confirmed for a
-- booking confirmed at once) are recorded by the same statement through internal/hooks'
-- SQL function webhook_record: no booking without its events, no events without the
-- booking. Their data was rendered in Go before the claim (hooks.ClaimData, from the
-- facts read with the customer's claimable offers) and is event_data, for the booking
-- booking_id that Go chose; both are NULL when the shop had no subscribed endpoint then,
-- and the booking gets an id of its own. The guard keeps a shop without a subscribed
-- endpoint from reaching the function (one probe of webhook_endpoints_live_idx;
-- webhook_events is never touched): events_recorded is 0 then.
WITH opening AS (
    SELECT s.id, s.shop_id, s.starts_at FROM slot_openings s WHERE s.id = sqlc.arg(opening_id) FOR UPDATE
), offer AS (
    -- Locking the view's rows locks the offer (and the opening, held already): a claim
    -- that waited for either rechecks the rule on the rows as they are now.
    SELECT v.id, so.service, so.duration_minutes, so.price_cents
    FROM slot_offers_claimable v JOIN customers c ON c.id = v.customer_id JOIN slot_offers so ON so.id = v.id
    WHERE v.id = sqlc.arg(offer_id) AND v.customer_id = sqlc.arg(customer_id)
      AND c.opted_out_at IS NULL
      AND EXISTS (SELECT 1 FROM opening)
      AND NOT EXISTS (
          SELECT 1 FROM bookings b JOIN slot_openings s2 ON s2.id = b.opening_id, opening op
          WHERE b.customer_id = sqlc.arg(customer_id) AND b.status IN ('pending_payment', 'confirmed')
            AND s2.shop_id = op.shop_id AND s2.starts_at = op.starts_at)
    FOR UPDATE OF v
), filled AS (
    UPDATE slot_openings s
    SET status = 'filled', filled_by = sqlc.arg(customer_id), filled_at = sqlc.arg(now)::timestamptz,
        updated_at = sqlc.arg(now)::timestamptz, version = version + 1
    WHERE s.id = sqlc.arg(opening_id) AND s.status = 'open' AND s.generation = sqlc.arg(generation)
      AND s.starts_at > sqlc.arg(starts_after)::timestamptz
      AND EXISTS (SELECT 1 FROM offer)
    RETURNING s.*
), accepted AS (
    UPDATE slot_offers SET status = 'accepted'
    WHERE id IN (SELECT id FROM offer) AND EXISTS (SELECT 1 FROM filled)
    RETURNING id, service, duration_minutes, price_cents
), lost AS (
    UPDATE slot_offers SET status = 'lost'
    WHERE opening_id IN (SELECT id FROM filled) AND id <> sqlc.arg(offer_id)
      AND status IN ('queued', 'sending', 'sent')
), booking AS (
    -- What the offer offered this customer (a shop with services), else the opening's
    -- own: its price is what they pay. The person's time it takes is refused by the
    -- database if it overlaps another live booking of theirs (bookings_staff_no_overlap).
    INSERT INTO bookings (id, opening_id, customer_id, offer_id, shop_id, status, amount_cents, currency,
        created_at, updated_at, confirmed_at, checkout_expires_at,
        service, duration_minutes, staff_id, starts_at, ends_at)
    SELECT COALESCE(sqlc.narg(booking_id)::uuid, gen_random_uuid()), f.id, sqlc.arg(customer_id), a.id, sqlc.arg(shop_id),
        -- Confirmed at once (a shop that takes no payment) or held for payment.
        CASE WHEN sqlc.narg(confirmed_at)::timestamptz IS NULL THEN 'pending_payment' ELSE 'confirmed' END,
        COALESCE(a.price_cents, f.price_cents),
        sqlc.arg(currency), sqlc.arg(now)::timestamptz, sqlc.arg(now)::timestamptz, sqlc.narg(confirmed_at),
        sqlc.narg(checkout_expires_at),
        COALESCE(a.service, f.service), COALESCE(a.duration_minutes, f.duration_minutes), f.staff_id, f.starts_at,
        f.starts_at + make_interval(mins => COALESCE(a.duration_minutes, f.duration_minutes))
    FROM filled f, accepted a
    RETURNING *
)
SELECT sqlc.embed(b), b.service::text AS service, f.starts_at, b.amount_cents AS price_cents,
    f.duration_minutes AS opening_minutes, f.staff_id AS opening_staff_id,
    -- The person the booked answer names ("Cut with Ana").
    COALESCE((SELECT st.name FROM staff st WHERE st.id = f.staff_id), '')::text AS staff_name,
    (CASE WHEN sqlc.narg(event_data)::jsonb IS NOT NULL
               AND EXISTS (SELECT FROM webhook_subscribers(b.shop_id, webhook_claim_types(b.status)))
          THEN webhook_record(b.shop_id, webhook_claim_types(b.status), b.created_at, sqlc.narg(event_data)::jsonb)
          ELSE 0 END)::integer AS events_recorded
FROM booking b JOIN filled f ON f.id = b.opening_id;

-- name: BookingLiveForCustomerAt :one
-- The customer's live booking at the shop for an opening starting when the given one
-- does (a repeated YES from someone who holds a chair then gets the same answer).
SELECT b.id, (b.status = 'confirmed') AS confirmed, b.payment_url, s.starts_at, COALESCE(b.service, s.service)::text AS service,
    s.id AS opening_id, COALESCE((SELECT st.name FROM staff st WHERE st.id = s.staff_id), '')::text AS staff_name
FROM bookings b
JOIN slot_openings s ON s.id = b.opening_id
JOIN slot_openings same ON same.id = sqlc.arg(opening_id) AND same.shop_id = s.shop_id AND same.starts_at = s.starts_at
WHERE b.customer_id = sqlc.arg(customer_id) AND b.status IN ('pending_payment', 'confirmed')
ORDER BY b.created_at DESC
LIMIT 1;

-- name: BookingsOwedLink :many
-- Live bookings still without a payment link, made between not_before and booked_before
-- and due for an attempt: the YES path's own attempt failed or timed out, or its
-- process died before storing the link. (bookings_live_created_idx serves both sweep
-- queries.)
SELECT id, created_at FROM bookings
WHERE status = 'pending_payment' AND payment_url IS NULL
  AND created_at >= sqlc.arg(not_before)::timestamptz AND created_at <= sqlc.arg(booked_before)::timestamptz
  AND (link_retry_at IS NULL OR link_retry_at <= sqlc.arg(now)::timestamptz)
ORDER BY created_at
LIMIT sqlc.arg(max_rows);

-- name: BookingTakeLinkAttempt :execrows
-- Claims the next attempt at a booking's link until retry_at: 0 rows means the link was
-- stored, the booking ended, or another sweep holds the attempt.
UPDATE bookings SET link_retry_at = sqlc.arg(retry_at)::timestamptz
WHERE id = sqlc.arg(id) AND status = 'pending_payment' AND payment_url IS NULL
  AND (link_retry_at IS NULL OR link_retry_at <= sqlc.arg(now)::timestamptz);

-- name: BookingsOwedNotice :many
-- Live bookings made between not_before and booked_before whose customer may not know:
-- no answer was recorded as delivered and no text told them, although there is news
-- (the link, or the confirmation of a booking that needs no payment).
SELECT id FROM bookings
WHERE status IN ('pending_payment', 'confirmed') AND customer_told_at IS NULL
  AND ((status = 'pending_payment' AND payment_url IS NOT NULL)
       OR (status = 'confirmed' AND stripe_checkout_session_id IS NULL))
  AND created_at >= sqlc.arg(not_before)::timestamptz AND created_at <= sqlc.arg(booked_before)::timestamptz
ORDER BY created_at
LIMIT sqlc.arg(max_rows);

-- name: BookingsLiveForCustomer :many
-- The customer's live bookings at the shop (pending payment or confirmed) whose opening
-- starts after now, soonest first, at most two: what a booked customer's "can't make it"
-- cancels (one), or leaves to the owner (two: which one is meant is for a person to ask).
SELECT b.id, b.status, s.starts_at, COALESCE(b.service, s.service)::text AS service
FROM bookings b
JOIN slot_openings s ON s.id = b.opening_id
WHERE b.customer_id = sqlc.arg(customer_id) AND b.shop_id = sqlc.arg(shop_id)
  AND b.status IN ('pending_payment', 'confirmed') AND s.starts_at > sqlc.arg(now)::timestamptz
ORDER BY s.starts_at
LIMIT 2;

-- name: BookingMarkCancelled :one
-- The customer cancelled a live booking. No row: it is live no more (cancelled already,
-- failed): the caller, holding the row lock, read it live, so this is a fence only.
UPDATE bookings SET status = 'cancelled', updated_at = sqlc.arg(now)::timestamptz
WHERE id = sqlc.arg(id) AND status IN ('pending_payment', 'confirmed')
RETURNING *;

-- name: BookingAttendanceLock :one
-- A shop's booking, with its opening's start, held while its attendance is marked.
SELECT b.id, b.status, b.attended_at, b.no_show_at, s.starts_at, s.service, b.customer_id,
    b.stripe_account, b.stripe_checkout_session_id, b.currency
FROM bookings b JOIN slot_openings s ON s.id = b.opening_id
WHERE b.id = sqlc.arg(id) AND b.shop_id = sqlc.arg(shop_id)
FOR UPDATE OF b;

-- name: BookingSetAttendance :exec
UPDATE bookings SET attended_at = sqlc.narg(attended_at), no_show_at = sqlc.narg(no_show_at), updated_at = sqlc.arg(now)
WHERE id = sqlc.arg(id);
