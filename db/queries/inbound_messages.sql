-- name: InboundInsert :one
-- answered_at is NULL: this server marks the answer once it is written back (the
-- column's default is for servers that do not).
INSERT INTO inbound_messages (message_sid, shop_id, from_phone, to_phone, body, received_at, answered_at)
VALUES ($1, $2, $3, $4, $5, $6, NULL)
ON CONFLICT (message_sid) DO NOTHING
RETURNING message_sid;

-- name: InboundGet :one
SELECT * FROM inbound_messages WHERE message_sid = $1;

-- name: InboundSetLinkAnswer :execrows
-- InboundSetOutcomes for a booked answer that carries a payment link, sent in the round
-- trip that stores the link (inbound's link): it changes nothing unless the booking
-- holds this very link, so an answer is never stored with a link that was not.
UPDATE inbound_messages
SET outcome = sqlc.arg(outcome), reply = sqlc.arg(reply), handled_at = sqlc.arg(handled_at)::timestamptz,
    booking_id = sqlc.arg(booking_id)
WHERE message_sid = sqlc.arg(message_sid) AND outcome IS NULL
  AND EXISTS (SELECT 1 FROM bookings b WHERE b.id = sqlc.arg(booking_id) AND b.payment_url = sqlc.arg(payment_url)::text);

-- name: InboundTakeOver :one
-- Claims a stored text whose handler died before answering (no outcome, received before
-- stale_before, and not taken over since then), for a redelivery or the sweeper to
-- finish. Exactly one claimant gets the row.
UPDATE inbound_messages
SET taken_over_at = sqlc.arg(now)::timestamptz
WHERE message_sid = sqlc.arg(message_sid) AND outcome IS NULL
  AND received_at < sqlc.arg(stale_before)::timestamptz
  AND (taken_over_at IS NULL OR taken_over_at < sqlc.arg(stale_before)::timestamptz)
RETURNING *;

-- name: InboundListUnanswered :many
-- Stored texts still without an answer, received before stale_before: their handler
-- died.
SELECT message_sid FROM inbound_messages
WHERE outcome IS NULL AND received_at < sqlc.arg(stale_before)::timestamptz
  AND (taken_over_at IS NULL OR taken_over_at < sqlc.arg(stale_before)::timestamptz)
ORDER BY received_at
LIMIT sqlc.arg(max_rows);

-- name: InboundSetOutcomes :exec
-- Stores the answers of texts that have none yet, in one statement: the answers of
-- concurrent replies are written together (inbound's writeAnswers).
-- booking_ids holds the nil UUID for an answer that tells of no booking.
UPDATE inbound_messages m
SET outcome = v.outcome, reply = v.reply, handled_at = sqlc.arg(handled_at)::timestamptz,
    booking_id = NULLIF(v.booking_id, '00000000-0000-0000-0000-000000000000'::uuid)
FROM (SELECT unnest(sqlc.arg(sids)::text[]) AS sid,
             unnest(sqlc.arg(outcomes)::text[]) AS outcome,
             unnest(sqlc.arg(replies)::text[]) AS reply,
             unnest(sqlc.arg(booking_ids)::uuid[]) AS booking_id) AS v
WHERE m.message_sid = v.sid AND m.outcome IS NULL;

-- name: InboundMarkAnswered :exec
-- Records that the answers of these texts were written back in time to reach their
-- customers (one statement for the answers of concurrent requests). Only a text whose
-- stored outcome is the one that was written back is marked: a redelivery answered
-- "try again" while its first delivery was still deciding did not tell the customer
-- the stored answer. An answer stored without its words (a late YES: InboundStoreMany)
-- gets the words it was told (replies; '' for the others, whose words are stored), so
-- that the owner's inbox shows it (conversation_texts).
UPDATE inbound_messages m
SET answered_at = sqlc.arg(answered_at)::timestamptz,
    reply = COALESCE(m.reply, NULLIF(v.reply, ''))
FROM (SELECT unnest(sqlc.arg(sids)::text[]) AS sid,
             unnest(sqlc.arg(outcomes)::text[]) AS outcome,
             unnest(sqlc.arg(replies)::text[]) AS reply) AS v
WHERE m.message_sid = v.sid AND m.outcome = v.outcome AND m.answered_at IS NULL;

-- name: InboundListUnheard :many
-- Stored answers that were never marked as written back nor texted since: their handler
-- died (or its connection broke) between storing the answer and writing it back. Only
-- those stored between not_before and heard_before (the newer ones may still be on
-- their way), with a reply to tell (NULL: the outcome's own words), a shop and a number
-- to text it to.
SELECT message_sid FROM inbound_messages
WHERE outcome IS NOT NULL AND answered_at IS NULL AND retold_at IS NULL
  AND handled_at < sqlc.arg(heard_before)::timestamptz
  AND handled_at >= sqlc.arg(not_before)::timestamptz
  AND shop_id IS NOT NULL AND reply IS DISTINCT FROM '' AND from_phone <> ''
ORDER BY handled_at
LIMIT sqlc.arg(max_rows);

-- name: InboundRetell :one
-- Claims a stored answer InboundListUnheard found, for the sweeper to text it: exactly
-- one claimant gets the row, and the claim commits with the queued text.
UPDATE inbound_messages SET retold_at = sqlc.arg(now)::timestamptz
WHERE message_sid = sqlc.arg(message_sid)
  AND outcome IS NOT NULL AND answered_at IS NULL AND retold_at IS NULL
  AND handled_at < sqlc.arg(heard_before)::timestamptz
  AND from_phone <> '' -- not erased meanwhile
RETURNING *;

-- name: InboundFillReply :exec
-- Stores the words of an answer stored without them (a late YES), once told: the
-- sweeper's retelling, in its transaction.
UPDATE inbound_messages SET reply = sqlc.arg(reply)
WHERE message_sid = sqlc.arg(message_sid) AND reply IS NULL;

-- name: InboundMarkRetold :exec
-- Records that the sweeper, having taken over a text nobody answered, tells the customer
-- its answer by text (or found nothing left to tell): InboundListUnheard skips it.
UPDATE inbound_messages SET retold_at = sqlc.arg(now)::timestamptz
WHERE message_sid = sqlc.arg(message_sid);

-- name: InboundStoreMany :many
-- Stores the texts of concurrent requests to shops' numbers (MessageSid is the key:
-- stored is false for a redelivery) and, in the same statement, reads what answering
-- each needs: the shop that owns the number it was sent to (as it is now), the sender as
-- a customer of the shop (with their language), their newest offer in any state (the nil UUID: none), and
-- their offers that can still be taken (slot_offers_claimable: texted, in the opening's
-- current generation, the opening open), newest first, one per row (none: one row whose offer_id is the nil
-- UUID). Each row carries its text's MessageSid; a MessageSid must appear once per call.
-- A text to a number no shop owns is neither stored nor returned (InboundInsert stores
-- it). One statement for a whole storm's texts instead of five per text. answered_at is
-- NULL, as in InboundInsert.
--
-- A late YES is answered as it is stored: a YES (yes, as the caller parsed it) from a
-- customer who is not opted out, holds no offer that can still be taken and whose newest
-- offer is in one of late_statuses (slots.LateStatuses: lost, or still out while its
-- opening was filled or went away) can only be told late_outcome ("taken"). That
-- outcome and handled_at are written with the text, and late is true: most of a storm's
-- replies come after the slot was filled, and each saved the answer's own write, a
-- non-HOT update of the row just inserted. The reply is left NULL: its words follow
-- from the outcome, and the caller composes them (inbound's answer words) whenever it
-- tells them, now or on a replay.
WITH input AS (
    SELECT unnest(sqlc.arg(message_sids)::text[]) AS message_sid,
           unnest(sqlc.arg(from_phones)::text[]) AS from_phone,
           unnest(sqlc.arg(to_phones)::text[]) AS to_phone,
           unnest(sqlc.arg(bodies)::text[]) AS body,
           unnest(sqlc.arg(yes)::boolean[]) AS yes
), addressed AS (
    -- Each shop by its unique number through the index (LIMIT keeps the planner from
    -- a hash join over every shop: it guesses ten texts per call).
    SELECT i.message_sid, i.from_phone, i.to_phone, i.body, i.yes, sh.id AS shop_id
    FROM input i CROSS JOIN LATERAL (SELECT x.id FROM shops x WHERE x.sms_number = i.to_phone LIMIT 1) sh
), hooked AS (
    -- The shops texted a YES that have an endpoint subscribed to a claim's webhook
    -- events: one probe of webhook_endpoints_live_idx per shop, however many texts.
    SELECT y.shop_id FROM (SELECT DISTINCT a.shop_id FROM addressed a WHERE a.yes) y
    WHERE EXISTS (SELECT FROM webhook_subscribers(y.shop_id, webhook_claim_types('confirmed')))
), found AS (
    SELECT a.message_sid, a.shop_id, a.yes, cust.id AS customer_id, cust.opted_out_at, cust.language AS customer_language,
           newest.id AS newest_offer_id, newest.status AS newest_offer_status,
           -- Year 1 (Go's zero time) when the lateral has no row: sqlc reads a lateral's
           -- columns as never NULL.
           COALESCE(kept.starts_at, '0001-01-01 00:00:00+00') AS newest_keeps_at,
           COALESCE(kept_booking.starts_at, '0001-01-01 00:00:00+00') AS newest_keeps_booking_at,
           live.offer_id, live.opening_id, live.generation, live.starts_at, live.move_from, live.claim_facts
    FROM addressed a
    LEFT JOIN customers cust ON cust.shop_id = a.shop_id AND cust.phone = a.from_phone AND cust.erased_at IS NULL
    -- The newest offer the customer may have read: one still queued, or whose text failed,
    -- never reached them, so a YES cannot answer it (a late YES to the offer before is
    -- "taken", not "no offer", while the next wave's offer waits to be texted).
    LEFT JOIN LATERAL (
        SELECT o.id, o.status, o.move_from, o.move_from_booking FROM slot_offers o
        WHERE o.customer_id = cust.id AND o.status NOT IN ('queued', 'failed')
        ORDER BY o.created_at DESC, o.id
        LIMIT 1
    ) AS newest ON true
    -- A move-up offer as the newest: the booking it would have moved, while it stands,
    -- for a late YES's answer ("taken; your ... stays"): an appointment or a YES booking.
    -- A plain offer has neither: nothing is read (each lookup is a subquery its LIMIT
    -- keeps whole, so its NULL test gates it: a plain joins's index probes with a NULL
    -- key cost every text of a storm).
    LEFT JOIN LATERAL (
        SELECT k.starts_at FROM appointments k
        WHERE newest.move_from IS NOT NULL AND k.id = newest.move_from AND k.status = 'booked'
        LIMIT 1
    ) AS kept ON true
    LEFT JOIN LATERAL (
        SELECT ks.starts_at FROM bookings kb JOIN slot_openings ks ON ks.id = kb.opening_id
        WHERE newest.move_from_booking IS NOT NULL AND kb.id = newest.move_from_booking
          AND kb.status IN ('pending_payment', 'confirmed')
        LIMIT 1
    ) AS kept_booking ON true
    LEFT JOIN LATERAL (
        SELECT v.id AS offer_id, v.opening_id, v.generation, v.starts_at, v.move_from,
               -- What this YES's claim adds to its opening's facts (claim_openings), only
               -- for a YES (the only text that claims) to a shop with an endpoint
               -- subscribed to the claim's events (hooked): NULL, and nothing read,
               -- otherwise.
               CASE WHEN a.yes AND a.shop_id IN (SELECT h.shop_id FROM hooked h)
                    THEN webhook_claim_facts(v.id, cust.id) END AS claim_facts
        FROM slot_offers_claimable v
        WHERE v.customer_id = cust.id AND v.shop_id = a.shop_id
        ORDER BY v.created_at DESC, v.id
        LIMIT 20
    ) AS live ON true
), claim_openings AS (
    -- The facts of the openings those YES may claim, once per opening however many
    -- YES of a storm this statement holds.
    SELECT o.opening_id, webhook_opening_facts(o.opening_id, NULL) AS facts
    FROM (SELECT DISTINCT f.opening_id FROM found f WHERE f.claim_facts IS NOT NULL) o
), late AS (
    -- Nothing to claim, so exactly one row of found.
    SELECT f.message_sid FROM found f
    WHERE f.yes AND f.customer_id IS NOT NULL AND f.opted_out_at IS NULL AND f.offer_id IS NULL
      AND f.newest_offer_status = ANY(sqlc.arg(late_statuses)::text[])
), stored AS (
    INSERT INTO inbound_messages (message_sid, shop_id, from_phone, to_phone, body, received_at, answered_at,
        outcome, handled_at)
    SELECT a.message_sid, a.shop_id, a.from_phone, a.to_phone, a.body, sqlc.arg(received_at)::timestamptz, NULL,
        CASE WHEN l.message_sid IS NOT NULL THEN sqlc.arg(late_outcome)::text END,
        CASE WHEN l.message_sid IS NOT NULL THEN sqlc.arg(received_at)::timestamptz END
    FROM addressed a LEFT JOIN late l ON l.message_sid = a.message_sid
    ORDER BY a.message_sid -- one lock order for concurrent batches
    ON CONFLICT (message_sid) DO NOTHING
    RETURNING message_sid, outcome
)
SELECT sqlc.embed(shops),
       f.message_sid::text AS message_sid,
       (st.message_sid IS NOT NULL)::boolean AS stored,
       (st.outcome IS NOT NULL)::boolean AS late,
       f.customer_id, f.opted_out_at, f.customer_language,
       COALESCE(f.newest_offer_id, '00000000-0000-0000-0000-000000000000'::uuid)::uuid AS newest_offer_id,
       COALESCE(f.newest_offer_status, '')::text AS newest_offer_status,
       f.newest_keeps_at,
       f.newest_keeps_booking_at,
       COALESCE(f.offer_id, '00000000-0000-0000-0000-000000000000'::uuid)::uuid AS offer_id,
       COALESCE(f.opening_id, '00000000-0000-0000-0000-000000000000'::uuid)::uuid AS opening_id,
       COALESCE(f.generation, 0)::integer AS generation,
       COALESCE(f.starts_at, 'epoch'::timestamptz)::timestamptz AS starts_at,
       f.move_from,
       -- What the claim's webhook events are rendered from, in Go before the claim
       -- (hooks.ClaimData); NULL when no event is to be recorded.
       (co.facts || f.claim_facts)::jsonb AS event_facts
FROM found f
CROSS JOIN LATERAL (SELECT * FROM shops x WHERE x.id = f.shop_id LIMIT 1) AS shops
LEFT JOIN stored st ON st.message_sid = f.message_sid
LEFT JOIN claim_openings co ON co.opening_id = f.opening_id;

-- name: InboundPurge :execrows
-- Deletes up to max_rows texts (their number and words) received before `before`: the
-- retention period, long past Twilio's redeliveries and the sweeper's window.
DELETE FROM inbound_messages
WHERE message_sid IN (
    SELECT message_sid FROM inbound_messages WHERE received_at < sqlc.arg(before)::timestamptz
    LIMIT sqlc.arg(max_rows)
);

-- name: InboundLastTextOffered :one
-- What a loose yes ("ok", 👍) answers, when the customer's newest offer is not the one
-- they can take (the YES path reads no more: see inbound's answersOffer): the newest
-- offer the customer was texted (the nil UUID: none), and the outcome of the newest
-- answer to one of their texts sent after it (empty: none), this text aside. The two
-- probes are slot_offers_customer_idx and inbound_messages_shop_from_idx.
WITH last_offer AS (
    SELECT o.id, COALESCE(o.sent_at, o.created_at) AS at FROM slot_offers o
    WHERE o.customer_id = sqlc.arg(customer_id) AND (o.sent_at IS NOT NULL OR o.status = 'sent')
    ORDER BY o.created_at DESC, o.id
    LIMIT 1
), last_answer AS (
    SELECT im.outcome, im.handled_at FROM inbound_messages im
    WHERE im.shop_id = sqlc.arg(shop_id) AND im.from_phone = sqlc.arg(from_phone)
      AND im.message_sid <> sqlc.arg(message_sid) AND im.outcome IS NOT NULL AND im.handled_at IS NOT NULL
    ORDER BY im.handled_at DESC
    LIMIT 1
)
SELECT COALESCE((SELECT lo.id FROM last_offer lo), '00000000-0000-0000-0000-000000000000'::uuid)::uuid AS offer_id,
       COALESCE((SELECT la.outcome FROM last_answer la
                 WHERE la.handled_at > COALESCE((SELECT lo.at FROM last_offer lo), '-infinity'::timestamptz)), '')::text AS answer_since;

-- name: InboundWroteBefore :one
-- Whether the number texted the shop before this text: one ambiguous word ("si", "va")
-- teaches a customer's language only on their first text (inbound's learn).
SELECT EXISTS (
    SELECT 1 FROM inbound_messages im
    WHERE im.shop_id = sqlc.arg(shop_id) AND im.from_phone = sqlc.arg(from_phone) AND im.message_sid <> sqlc.arg(message_sid)
)::boolean AS wrote;
