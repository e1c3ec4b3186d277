-- Read-only queries behind a shop's recovery figures (internal/stats, GET /api/stats).
-- Each reads one record of the openings whose appointment starts in [starts_from,
-- starts_until), cancelled ones aside; stats sums them per group in Go, where one
-- opening may count in several groups (its waves).

-- name: StatsOpenings :many
-- The period's openings, each with what the filled-slots list says of it (the amount
-- and service of its latest booking, as DashboardFilledExport), whose time it is (the
-- booking's person, else the opening's), how long it took to fill and the wave of the
-- offer that booked it (0: none).
SELECT s.id, s.starts_at,
    (s.status IN ('filled', 'completed'))::boolean AS filled,
    -- Seconds from its declaration to its latest fill (0 when it was never filled).
    COALESCE(round(extract(epoch FROM COALESCE(s.filled_at, b.created_at) - s.created_at)), 0)::bigint AS fill_seconds,
    COALESCE(NULLIF(b.service, ''), s.service)::text AS service,
    COALESCE(b.staff_id, s.staff_id) AS staff_id,
    COALESCE(st.name, '')::text AS staff_name,
    COALESCE(b.amount_cents, s.price_cents)::bigint AS amount_cents,
    COALESCE(b.wave, 0)::integer AS fill_wave
FROM slot_openings s
LEFT JOIN LATERAL (
    SELECT bk.created_at, bk.service, bk.staff_id, bk.amount_cents, o.wave FROM bookings bk
    LEFT JOIN slot_offers o ON o.id = bk.offer_id
    WHERE bk.opening_id = s.id ORDER BY bk.created_at DESC, bk.id LIMIT 1
) b ON true
LEFT JOIN staff st ON st.id = COALESCE(b.staff_id, s.staff_id)
WHERE s.shop_id = sqlc.arg(shop_id) AND s.status <> 'cancelled'
  AND s.starts_at >= sqlc.arg(starts_from)::timestamptz AND s.starts_at < sqlc.arg(starts_until)::timestamptz
ORDER BY s.starts_at, s.id;

-- name: StatsOffers :many
-- The period's openings' texted offers, counted per opening and wave by status (sent:
-- no reply yet; accepted: booked; declined; lost: missed; failed).
SELECT o.opening_id, o.wave, o.status, count(*)::integer AS offers
FROM slot_offers o
JOIN slot_openings s ON s.id = o.opening_id
WHERE s.shop_id = sqlc.arg(shop_id) AND s.status <> 'cancelled'
  AND s.starts_at >= sqlc.arg(starts_from)::timestamptz AND s.starts_at < sqlc.arg(starts_until)::timestamptz
  AND o.sent_at IS NOT NULL
GROUP BY o.opening_id, o.wave, o.status
ORDER BY o.opening_id, o.wave, o.status;

-- name: StatsBookings :many
-- The period's openings' bookings (holds that lapsed unpaid aside, and YES bookings
-- moved up: their booking counts where it moved to, as a move-up): whether each was
-- paid through its link, its attendance, and the wave of its offer (0: none) and
-- whether that offer was a move-up.
SELECT b.opening_id, b.amount_cents,
    (b.status = 'confirmed' AND b.stripe_checkout_session_id IS NOT NULL)::boolean AS paid,
    (b.attended_at IS NOT NULL)::boolean AS attended,
    (b.no_show_at IS NOT NULL)::boolean AS no_show,
    COALESCE(o.wave, 0)::integer AS wave,
    (o.move_from IS NOT NULL OR o.move_from_booking IS NOT NULL)::boolean AS move_up
FROM bookings b
JOIN slot_openings s ON s.id = b.opening_id
LEFT JOIN slot_offers o ON o.id = b.offer_id
WHERE s.shop_id = sqlc.arg(shop_id) AND s.status <> 'cancelled'
  AND s.starts_at >= sqlc.arg(starts_from)::timestamptz AND s.starts_at < sqlc.arg(starts_until)::timestamptz
  AND b.status NOT IN ('payment_failed', 'moved')
ORDER BY b.opening_id, b.created_at, b.id;
