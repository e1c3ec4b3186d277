SELECT c.id, c.phone, c.name, c.priority,
    COALESCE(fit.id, '00000000-0000-0000-0000-000000000000'::uuid)::uuid AS service_id,
    COALESCE(fit.name, '')::text AS fit_name, COALESCE(fit.duration_minutes, 0)::integer AS fit_minutes,
    COALESCE(fit.price_cents, 0)::bigint AS fit_price
FROM customers c
LEFT JOIN LATERAL (
    SELECT sv.id, sv.name, sv.duration_minutes, sv.price_cents
    FROM services sv
    LEFT JOIN unnest(c.pref_services) WITH ORDINALITY AS ps(name, n) ON lower(ps.name) = lower(sv.name)
    WHERE $1::boolean AND sv.shop_id = c.shop_id AND sv.active
      AND sv.duration_minutes <= $2::integer
      AND (cardinality(c.pref_window_starts) = 0 OR EXISTS (
          SELECT 1 FROM generate_subscripts(c.pref_window_starts, 1) AS k
          WHERE c.pref_window_starts[k] <= $3::integer
            AND $3::integer + sv.duration_minutes <= c.pref_window_ends[k]))
      AND (cardinality(sv.staff_ids) = 0 OR $4::uuid IS NULL OR $4::uuid = ANY(sv.staff_ids))
      AND CASE WHEN cardinality(c.pref_services) = 0 THEN lower(sv.name) = lower($5::text)
               ELSE ps.n IS NOT NULL END
    ORDER BY ps.n
    LIMIT 1
) fit ON true
WHERE c.shop_id = $6
  AND (cardinality(c.pref_staff_ids) = 0 OR $4::uuid = ANY(c.pref_staff_ids))
  AND (NOT $1::boolean OR fit.id IS NOT NULL)
  AND c.sms_opt_in
  AND c.opted_out_at IS NULL
  AND c.unreachable_at IS NULL
  AND c.erased_at IS NULL
  AND (cardinality(c.pref_days) = 0 OR $7::smallint = ANY(c.pref_days))
  AND ($1::boolean OR cardinality(c.pref_window_starts) = 0 OR EXISTS (
      SELECT 1 FROM generate_subscripts(c.pref_window_starts, 1) AS k
      WHERE c.pref_window_starts[k] <= $3::integer
        AND $8::integer <= c.pref_window_ends[k]))
  AND ($1::boolean OR cardinality(c.pref_services) = 0 OR EXISTS (
      SELECT 1 FROM unnest(c.pref_services) AS ps(name)
      WHERE lower(ps.name) = lower($5::text)))
  AND ($9::integer = 0 OR (
      SELECT count(*) FROM slot_offers d
      WHERE d.customer_id = c.id
        AND d.created_at >= $10::timestamptz AND d.created_at < $11::timestamptz
        AND (d.sent_at IS NOT NULL OR d.status IN ('queued', 'sending'))) < $9::integer)
  AND NOT EXISTS (
      SELECT 1 FROM slot_offers o
      WHERE o.opening_id = $12
        AND o.customer_id = c.id
        AND (o.generation = $13 OR o.status = 'declined'))
  AND NOT EXISTS (
      SELECT 1 FROM bookings b
      WHERE b.opening_id = $12 AND b.customer_id = c.id)
ORDER BY c.priority DESC, c.created_at, c.id
LIMIT $14;
