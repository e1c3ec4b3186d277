-- Read-only queries behind the shop owners' dashboard (internal/dashboard). Every query
-- is scoped by shop_id: a shop sees only its own rows.

-- name: DashboardFilledPage :many
-- Recovered openings (filled or completed), most recently filled first, with who holds
-- each, its latest booking and what it booked (booked_service '' when the booking
-- took the opening as declared), whose time it is (staff_name, '' for anyone's), and the
-- booking's attendance as the owner marked it.
SELECT s.id, s.starts_at, s.duration_minutes, s.service, s.price_cents, s.status, s.filled_at,
    COALESCE(c.name, '')::text AS customer_name, COALESCE(c.phone, '')::text AS customer_phone,
    (c.erased_at IS NOT NULL)::boolean AS customer_erased,
    COALESCE(b.status, '')::text AS booking_status,
    COALESCE(b.amount_cents, s.price_cents)::bigint AS amount_cents,
    COALESCE(b.application_fee_cents, 0)::bigint AS fee_cents,
    COALESCE(b.service, '')::text AS booked_service,
    COALESCE(b.duration_minutes, 0)::integer AS booked_minutes,
    COALESCE((SELECT st.name FROM staff st WHERE st.id = s.staff_id), '')::text AS staff_name,
    COALESCE(b.id::text, '')::text AS booking_id,
    b.attended_at AS attended_at, b.no_show_at AS no_show_at,
    -- What the booking was made under (issue 48): its terms' mode, or, without terms
    -- (a plain checkout, or no payment), whether it was held for a payment page.
    COALESCE(bt.mode, '')::text AS terms_mode,
    COALESCE(b.checkout_expires_at IS NOT NULL OR b.stripe_checkout_session_id IS NOT NULL, false)::boolean AS booking_checkout
FROM slot_openings s
LEFT JOIN customers c ON c.id = s.filled_by
LEFT JOIN LATERAL (
    SELECT bk.id, bk.status, bk.amount_cents, bk.application_fee_cents, bk.service, bk.duration_minutes,
        bk.attended_at, bk.no_show_at, bk.checkout_expires_at, bk.stripe_checkout_session_id FROM bookings bk
    WHERE bk.opening_id = s.id ORDER BY bk.created_at DESC, bk.id LIMIT 1
) b ON true
LEFT JOIN booking_terms bt ON bt.booking_id = b.id
WHERE s.shop_id = sqlc.arg(shop_id) AND s.status IN ('filled', 'completed')
ORDER BY s.filled_at DESC NULLS LAST, s.starts_at DESC, s.id
LIMIT sqlc.arg(max_rows) OFFSET sqlc.arg(skip_rows);

-- name: DashboardFilledExport :many
-- Recovered openings whose appointment starts in [starts_from, starts_until), in start
-- order, for the CSV export, with what was booked (as DashboardFilledPage).
SELECT s.id, s.starts_at, s.duration_minutes, s.service, s.price_cents, s.status, s.filled_at,
    COALESCE(c.name, '')::text AS customer_name, COALESCE(c.phone, '')::text AS customer_phone,
    (c.erased_at IS NOT NULL)::boolean AS customer_erased,
    COALESCE(b.id::text, '')::text AS booking_id,
    COALESCE(b.status, '')::text AS booking_status,
    COALESCE(b.amount_cents, s.price_cents)::bigint AS amount_cents,
    COALESCE(b.application_fee_cents, 0)::bigint AS fee_cents,
    COALESCE(b.service, '')::text AS booked_service,
    COALESCE(b.duration_minutes, 0)::integer AS booked_minutes,
    COALESCE(st.name, '')::text AS staff_name,
    -- No-show protection (issue 48): the booking's terms (what the page took, the policy
    -- accepted) and its fee, if any.
    COALESCE(bt.mode, '')::text AS terms_mode,
    COALESCE(bt.charged_cents, 0)::bigint AS charged_cents,
    COALESCE(bt.policy_version, 0)::integer AS policy_version,
    COALESCE(bt.policy_sha256, '')::text AS policy_sha256,
    bt.accepted_at AS policy_accepted_at,
    COALESCE(bf.kind, '')::text AS fee_kind,
    COALESCE(bf.state, '')::text AS fee_outcome,
    COALESCE(bf.amount_cents, 0)::bigint AS fee_amount_cents,
    COALESCE(b.checkout_expires_at IS NOT NULL OR b.stripe_checkout_session_id IS NOT NULL, false)::boolean AS booking_checkout
FROM slot_openings s
LEFT JOIN customers c ON c.id = s.filled_by
LEFT JOIN staff st ON st.id = s.staff_id
LEFT JOIN LATERAL (
    SELECT bk.id, bk.status, bk.amount_cents, bk.application_fee_cents, bk.service, bk.duration_minutes,
        bk.checkout_expires_at, bk.stripe_checkout_session_id FROM bookings bk
    WHERE bk.opening_id = s.id ORDER BY bk.created_at DESC, bk.id LIMIT 1
) b ON true
LEFT JOIN booking_terms bt ON bt.booking_id = b.id
LEFT JOIN booking_fees bf ON bf.booking_id = b.id
WHERE s.shop_id = sqlc.arg(shop_id) AND s.status IN ('filled', 'completed')
  AND s.starts_at >= sqlc.arg(starts_from)::timestamptz
  AND s.starts_at < sqlc.arg(starts_until)::timestamptz
ORDER BY s.starts_at, s.id
LIMIT sqlc.arg(max_rows);

-- name: DashboardOpenList :many
-- Open openings, soonest first, with the offers texted (whose text the provider
-- accepted, whatever became of the offer since: the count the API's offers_sent gives)
-- and the replies they got; whose time it is (staff_name, '' for anyone's) and whether
-- it is the rest of a gap a shorter booking left (is_rest).
SELECT s.id, s.starts_at, s.duration_minutes, s.service, s.price_cents, s.generation, s.created_at,
    COALESCE((SELECT st.name FROM staff st WHERE st.id = s.staff_id), '')::text AS staff_name,
    (s.parent_id IS NOT NULL)::boolean AS is_rest,
    (count(o.id) FILTER (WHERE o.sent_at IS NOT NULL))::int AS offers_sent,
    (count(o.id) FILTER (WHERE o.status = 'accepted'))::int AS replies_yes,
    (count(o.id) FILTER (WHERE o.status = 'declined'))::int AS replies_no
FROM slot_openings s
LEFT JOIN slot_offers o ON o.opening_id = s.id
WHERE s.shop_id = sqlc.arg(shop_id) AND s.status = 'open'
GROUP BY s.id
ORDER BY s.starts_at, s.id
LIMIT sqlc.arg(max_rows);

-- name: DashboardWaves :many
-- The waves of offers of some of a shop's openings: how many offers each wave holds,
-- how many were texted, how many the carriers say were delivered or not, and when the
-- first text went out (or, before any was, when the wave was recorded).
SELECT o.opening_id, o.generation, o.wave,
    count(*)::int AS offers,
    (count(*) FILTER (WHERE o.sent_at IS NOT NULL))::int AS texted,
    (count(*) FILTER (WHERE o.delivery IN ('delivered', 'read')))::int AS delivered,
    (count(*) FILTER (WHERE o.delivery IN ('undelivered', 'failed')))::int AS undelivered,
    COALESCE(min(o.sent_at), min(o.created_at))::timestamptz AS first_at
FROM slot_offers o
WHERE o.shop_id = sqlc.arg(shop_id) AND o.opening_id = ANY(sqlc.arg(opening_ids)::uuid[])
GROUP BY o.opening_id, o.generation, o.wave
ORDER BY o.opening_id, o.generation, o.wave;

-- name: DashboardTotals :one
-- Recovery figures of one shop for the period [since, until). Bookings count in the
-- period they were made; fill rate counts the openings declared in it, cancelled ones
-- aside. Money is what customers paid (gross) and the platform's fees on it (Stripe
-- Connect): the shop receives the difference.
WITH booked AS (
    SELECT
        COALESCE(sum(b.amount_cents) FILTER (WHERE b.status = 'confirmed'), 0)::bigint AS confirmed_cents,
        COALESCE(sum(b.application_fee_cents) FILTER (WHERE b.status = 'confirmed'), 0)::bigint AS confirmed_fee_cents,
        COALESCE(sum(b.amount_cents) FILTER (WHERE b.status = 'pending_payment'), 0)::bigint AS pending_cents,
        COALESCE(sum(b.application_fee_cents) FILTER (WHERE b.status = 'pending_payment'), 0)::bigint AS pending_fee_cents,
        (count(DISTINCT b.opening_id) FILTER (
            WHERE b.status = 'confirmed' AND s.status IN ('filled', 'completed')))::int AS slots_recovered,
        (count(*) FILTER (WHERE b.status = 'pending_payment'))::int AS pending_count,
        COALESCE(percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM b.created_at - s.created_at))
            FILTER (WHERE b.status = 'confirmed'), 0)::float8 AS median_seconds
    FROM bookings b
    JOIN slot_openings s ON s.id = b.opening_id
    WHERE b.shop_id = sqlc.arg(shop_id)
      AND b.created_at >= sqlc.arg(since)::timestamptz AND b.created_at < sqlc.arg(until)::timestamptz
), declared AS (
    SELECT
        (count(*) FILTER (WHERE s.status IN ('filled', 'completed')))::int AS openings_filled,
        (count(*) FILTER (WHERE s.status <> 'cancelled'))::int AS openings_declared
    FROM slot_openings s
    WHERE s.shop_id = sqlc.arg(shop_id)
      AND s.created_at >= sqlc.arg(since)::timestamptz AND s.created_at < sqlc.arg(until)::timestamptz
)
SELECT booked.confirmed_cents, booked.confirmed_fee_cents, booked.pending_cents, booked.pending_fee_cents,
    booked.slots_recovered, booked.pending_count,
    booked.median_seconds, declared.openings_filled, declared.openings_declared
FROM booked, declared;

-- name: DashboardWeekly :many
-- Confirmed money per week (weeks start on Monday in the shop's time zone) since a
-- moment, as the shop received it (less the platform's fees); weeks without bookings are
-- absent.
SELECT (date_trunc('week', b.created_at AT TIME ZONE sqlc.arg(tz)::text))::date AS week_start,
    sum(b.amount_cents - b.application_fee_cents)::bigint AS received_cents
FROM bookings b
WHERE b.shop_id = sqlc.arg(shop_id) AND b.status = 'confirmed'
  AND b.created_at >= sqlc.arg(since)::timestamptz
GROUP BY 1
ORDER BY 1;

-- name: DashboardRefundsFailed :many
-- The shop's bookings with a payment that could not be refunded, newest first: the owner
-- must refund them by hand in Stripe (until they say they did).
SELECT b.id, b.refund_failed_at::timestamptz AS refund_failed_at,
       COALESCE(b.refund_failed_payment_intent, '')::text AS payment_intent_id,
       COALESCE(b.refund_error, '')::text AS reason, b.amount_cents, b.currency,
       s.starts_at, s.service, c.name AS customer_name, c.phone AS customer_phone,
       (c.erased_at IS NOT NULL)::boolean AS customer_erased
FROM bookings b
JOIN slot_openings s ON s.id = b.opening_id
JOIN customers c ON c.id = b.customer_id
WHERE b.shop_id = sqlc.arg(shop_id) AND b.refund_failed_at IS NOT NULL AND b.refund_failed_dismissed_at IS NULL
ORDER BY b.refund_failed_at DESC, b.id
LIMIT sqlc.arg(max_rows);
