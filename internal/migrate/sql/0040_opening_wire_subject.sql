-- 0040_opening_wire_subject: an opening or booking event's subject is the opening in
-- the shape the API answers and the event sends (api.Opening), so one Go type reads
-- both. The subjects recorded before are rewritten into it.
CREATE OR REPLACE FUNCTION webhook_opening_subject(p_opening jsonb, p_booking jsonb) RETURNS jsonb
LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
BEGIN
    RETURN jsonb_build_object(
        'id', p_opening -> 'id',
        'shop_id', p_opening -> 'shop_id',
        'starts_at', p_opening -> 'starts_at',
        'duration_minutes', p_opening -> 'duration_minutes',
        'service', p_opening -> 'service',
        'price_cents', p_opening -> 'price_cents',
        'currency', (SELECT s.currency FROM shops s WHERE s.id = (p_opening ->> 'shop_id')::uuid),
        'status', p_opening -> 'status',
        'offers_sent', (SELECT count(*) FROM slot_offers o
                        WHERE o.opening_id = (p_opening ->> 'id')::uuid AND o.sent_at IS NOT NULL),
        'filled_by', (SELECT jsonb_build_object('customer_id', c.id, 'phone', c.phone, 'name', c.name)
                      FROM customers c WHERE c.id = (p_opening ->> 'filled_by')::uuid),
        'booking', CASE WHEN p_booking IS NULL OR jsonb_typeof(p_booking) = 'null' THEN NULL
                   ELSE jsonb_build_object(
                       'id', p_booking -> 'id',
                       'status', p_booking -> 'status',
                       'amount_cents', p_booking -> 'amount_cents',
                       'payment_url', p_booking -> 'payment_url',
                       'stripe_checkout_session_id', p_booking -> 'stripe_checkout_session_id',
                       'application_fee_cents', COALESCE(p_booking -> 'application_fee_cents', '0'::jsonb),
                       'service', COALESCE(NULLIF(p_booking -> 'service', 'null'::jsonb), p_opening -> 'service'),
                       'duration_minutes', COALESCE(NULLIF(p_booking -> 'duration_minutes', 'null'::jsonb), p_opening -> 'duration_minutes')) END,
        'generation', p_opening -> 'generation',
        'created_at', p_opening -> 'created_at',
        'filled_at', p_opening -> 'filled_at',
        'staff', (SELECT jsonb_build_object('id', st.id, 'name', st.name)
                  FROM staff st WHERE st.id = (p_opening ->> 'staff_id')::uuid),
        'parent_id', p_opening -> 'parent_id');
END
$$;

-- The subjects recorded in the former shape ({opening, booking, filler, offers_sent,
-- currency}), rewritten; an erased customer's subject ('{}') stays empty.
UPDATE webhook_events
SET subject = jsonb_build_object(
        'id', subject -> 'opening' -> 'id',
        'shop_id', subject -> 'opening' -> 'shop_id',
        'starts_at', subject -> 'opening' -> 'starts_at',
        'duration_minutes', subject -> 'opening' -> 'duration_minutes',
        'service', subject -> 'opening' -> 'service',
        'price_cents', subject -> 'opening' -> 'price_cents',
        'currency', subject -> 'currency',
        'status', subject -> 'opening' -> 'status',
        'offers_sent', subject -> 'offers_sent',
        'filled_by', CASE WHEN jsonb_typeof(subject -> 'filler') = 'object'
                     THEN jsonb_build_object('customer_id', subject -> 'filler' -> 'id',
                                             'phone', subject -> 'filler' -> 'phone',
                                             'name', subject -> 'filler' -> 'name') END,
        'booking', CASE WHEN jsonb_typeof(subject -> 'booking') = 'object'
                   THEN jsonb_build_object(
                       'id', subject -> 'booking' -> 'id',
                       'status', subject -> 'booking' -> 'status',
                       'amount_cents', subject -> 'booking' -> 'amount_cents',
                       'payment_url', subject -> 'booking' -> 'payment_url',
                       'stripe_checkout_session_id', subject -> 'booking' -> 'stripe_checkout_session_id',
                       'application_fee_cents', COALESCE(subject -> 'booking' -> 'application_fee_cents', '0'::jsonb),
                       'service', subject -> 'opening' -> 'service',
                       'duration_minutes', subject -> 'opening' -> 'duration_minutes') END,
        'generation', subject -> 'opening' -> 'generation',
        'created_at', subject -> 'opening' -> 'created_at',
        'filled_at', subject -> 'opening' -> 'filled_at')
WHERE (type LIKE 'opening.%' OR type LIKE 'booking.%') AND subject ? 'opening';
