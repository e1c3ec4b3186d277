-- 0050_events_rendered_in_go: an event's data is rendered in Go when the event is
-- recorded (the api package's types, as the owners' API answers them) and stored as it
-- is sent; Postgres no longer renders an opening (webhook_opening_subject goes). What
-- SQL still does for an opening event is gather the facts Go renders from
-- (webhook_opening_facts) and, for the YES's claim, insert the data Go rendered before
-- the claim (webhook_record).
--
-- Events recorded before keep their subject in the form it was stored in (an opening in
-- the former Postgres shape, a customer under customers.Customer's frozen field names);
-- rendered is false for them and the dispatcher renders them as it did (internal/hooks,
-- legacy.go). An instance of the previous version must be stopped before this runs: its
-- claim calls webhook_record_opening, dropped here.
ALTER TABLE webhook_events ADD COLUMN rendered boolean NOT NULL DEFAULT false;

DROP FUNCTION webhook_record_opening(uuid, text[], timestamptz, jsonb, jsonb);
DROP FUNCTION webhook_opening_subject(jsonb, jsonb);

-- The facts an opening or booking event is rendered from (internal/hooks, facts.go), as
-- they stand in the caller's statement: the opening's row, the booking's (p_booking, or
-- the latest), who holds the opening, the person whose time it is, the offers texted and
-- the shop's currency. Facts, not a rendering: the keys are the tables' columns, and the
-- wire's names are Go's alone.
CREATE FUNCTION webhook_opening_facts(p_opening uuid, p_booking uuid) RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT jsonb_build_object(
        'opening', to_jsonb(s),
        'currency', sh.currency,
        'offers_sent', (SELECT count(*) FROM slot_offers o WHERE o.opening_id = s.id AND o.sent_at IS NOT NULL),
        'holder', (SELECT jsonb_build_object('id', c.id, 'phone', c.phone, 'name', c.name)
                   FROM customers c WHERE c.id = s.filled_by),
        'staff', (SELECT jsonb_build_object('id', st.id, 'name', st.name) FROM staff st WHERE st.id = s.staff_id),
        'booking', (SELECT to_jsonb(b) FROM bookings b
                    WHERE b.opening_id = s.id AND (p_booking IS NULL OR b.id = p_booking)
                    ORDER BY b.created_at DESC, b.id LIMIT 1))
    FROM slot_openings s JOIN shops sh ON sh.id = s.shop_id
    WHERE s.id = p_opening
$$;

-- What a YES about to claim the offer p_offer adds to its opening's facts
-- (webhook_opening_facts(opening, NULL) || this): the claimant as the holder, no booking
-- yet, and the offer's service (null fields: the opening's own). Go renders the opening
-- as the claim will leave it (hooks.ClaimData). The opening's part is the same for every
-- YES to it: a statement that reads a storm's YES computes it once per opening.
CREATE FUNCTION webhook_claim_facts(p_offer uuid, p_customer uuid) RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT jsonb_build_object(
        'holder', (SELECT jsonb_build_object('id', c.id, 'phone', c.phone, 'name', c.name)
                   FROM customers c WHERE c.id = p_customer),
        'booking', NULL,
        'offer', (SELECT jsonb_build_object('service', so.service, 'duration_minutes', so.duration_minutes,
                                            'price_cents', so.price_cents)
                  FROM slot_offers so WHERE so.id = p_offer))
$$;

-- Records, for each of the types the shop has an endpoint subscribed to (in the order
-- given), an event whose data (rendered in Go) is p_data, and returns how many it
-- recorded. The YES's claim calls it in its final SELECT with the data it was given,
-- guarded so that a shop without endpoints never reaches it (and never touches
-- webhook_events); see internal/hooks.
CREATE FUNCTION webhook_record(p_shop uuid, p_types text[], p_at timestamptz, p_data jsonb)
RETURNS integer
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    n integer := 0;
    t text;
BEGIN
    FOREACH t IN ARRAY p_types LOOP
        IF EXISTS (SELECT FROM webhook_subscribers(p_shop, ARRAY[t])) THEN
            INSERT INTO webhook_events (shop_id, type, created_at, subject, rendered) VALUES (p_shop, t, p_at, p_data, true);
            n := n + 1;
        END IF;
    END LOOP;
    RETURN n;
END
$$;
