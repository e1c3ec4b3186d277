-- name: OfferInsertMany :exec
-- Records a wave's offers, one statement for all its customers, each with the service
-- it offers them (service_ids[i], services[i], durations[i], prices[i]; the nil uuid, ''
-- and 0: the opening's own) and, for a move-up offer, the appointment it would move
-- (move_froms[i]) or the YES booking (move_from_bookings[i]; the nil uuid in both: a
-- plain offer), its rank in the wave (i) and the facts
-- that ranked it (reasons: a JSON array, element i-1 for customer i); an offer that
-- exists already (a retried wave) is kept.
INSERT INTO slot_offers (opening_id, customer_id, shop_id, generation, wave, status, created_at,
    service_id, service, duration_minutes, price_cents, move_from, move_from_booking, rank, reason)
SELECT sqlc.arg(opening_id), (sqlc.arg(customer_ids)::uuid[])[i], sqlc.arg(shop_id), sqlc.arg(generation), sqlc.arg(wave),
    'queued', sqlc.arg(created_at),
    NULLIF((sqlc.arg(service_ids)::uuid[])[i], '00000000-0000-0000-0000-000000000000'::uuid),
    NULLIF((sqlc.arg(services)::text[])[i], ''), NULLIF((sqlc.arg(durations)::integer[])[i], 0),
    NULLIF((sqlc.arg(prices)::bigint[])[i], 0),
    NULLIF((sqlc.arg(move_froms)::uuid[])[i], '00000000-0000-0000-0000-000000000000'::uuid),
    NULLIF((sqlc.arg(move_from_bookings)::uuid[])[i], '00000000-0000-0000-0000-000000000000'::uuid),
    i, sqlc.arg(reasons)::jsonb -> (i - 1)
FROM generate_subscripts(sqlc.arg(customer_ids)::uuid[], 1) AS i
ORDER BY i
ON CONFLICT (opening_id, generation, customer_id) DO NOTHING;

-- name: OfferListWave :many
-- A wave's offers with the customer's number and language (NULL: the shop's), and the
-- service each offers ('' and 0: the opening's).
-- A move-up offer also carries the start of the appointment or YES booking it would
-- move (move_from_at, move_from_booking_at).
SELECT o.id, o.customer_id, o.status, c.phone, c.language,
    COALESCE(o.service, '')::text AS service, COALESCE(o.price_cents, 0)::bigint AS price_cents,
    ap.starts_at AS move_from_at, bo.starts_at AS move_from_booking_at
FROM slot_offers o JOIN customers c ON c.id = o.customer_id
LEFT JOIN appointments ap ON ap.id = o.move_from
LEFT JOIN bookings bk ON bk.id = o.move_from_booking
LEFT JOIN slot_openings bo ON bo.id = bk.opening_id
WHERE o.opening_id = $1 AND o.generation = $2 AND o.wave = $3
ORDER BY o.created_at, o.id;

-- name: OfferClaimManyForSending :many
-- Only one sender may text an offer: a retried job skips offers already claimed. The
-- claim also rechecks, at the moment of sending, that the customer has not opted out or
-- become unreachable and that the opening is still open in the offer's generation: a
-- STOP or a cancel between recording a wave and texting it must win. One statement
-- claims a chunk of a wave's offers and returns those this sender got.
--
-- It never waits for a lock (SKIP LOCKED): a statement that waits while holding some of
-- an opening's offers can deadlock with another that locks them in another order (a
-- YES losing the others). The sender claims a skipped offer that is still claimable
-- with OfferClaimForSending, holding nothing else (see OfferListStillQueued).
WITH claimable AS (
    SELECT o.id FROM slot_offers o
    JOIN customers c ON c.id = o.customer_id
    JOIN slot_openings s ON s.id = o.opening_id
    WHERE o.id = ANY(sqlc.arg(ids)::uuid[]) AND o.status = 'queued'
      AND c.opted_out_at IS NULL AND c.unreachable_at IS NULL AND c.sms_opt_in AND c.erased_at IS NULL
      AND s.status = 'open' AND s.generation = o.generation
    FOR UPDATE OF o SKIP LOCKED
)
UPDATE slot_offers o SET status = 'sending', claimed_at = sqlc.arg(now)::timestamptz
FROM claimable
WHERE o.id = claimable.id
RETURNING o.id;

-- name: OfferListStillQueued :many
-- Which of the given offers could still be claimed for sending (read without locking):
-- those a claim skipped because another statement held them at that moment.
SELECT o.id FROM slot_offers o
JOIN customers c ON c.id = o.customer_id
JOIN slot_openings s ON s.id = o.opening_id
WHERE o.id = ANY(sqlc.arg(ids)::uuid[]) AND o.status = 'queued'
  AND c.opted_out_at IS NULL AND c.unreachable_at IS NULL AND c.sms_opt_in AND c.erased_at IS NULL
  AND s.status = 'open' AND s.generation = o.generation
ORDER BY o.id;

-- name: OfferClaimForSending :execrows
-- OfferClaimManyForSending for one offer, waiting for its lock: it holds no other row,
-- so its wait cannot be part of a deadlock.
UPDATE slot_offers o SET status = 'sending', claimed_at = sqlc.arg(now)::timestamptz
FROM customers c, slot_openings s
WHERE o.id = sqlc.arg(id) AND o.status = 'queued'
  AND c.id = o.customer_id AND c.opted_out_at IS NULL AND c.unreachable_at IS NULL AND c.sms_opt_in AND c.erased_at IS NULL
  AND s.id = o.opening_id AND s.status = 'open' AND s.generation = o.generation;

-- name: OfferSettleOrphans :execrows
-- Offers of a wave claimed for sending before stale_before by a run that never marked
-- them (it was killed mid-send): each may have gone out, so they are settled as sent
-- with no message id, like a send whose outcome is unknown. An offer another statement
-- holds is skipped rather than waited for (see OfferClaimManyForSending); whoever holds
-- it changes it, or the next run settles it.
WITH orphan AS (
    SELECT p.id FROM slot_offers p
    WHERE p.opening_id = sqlc.arg(opening_id) AND p.generation = sqlc.arg(generation) AND p.wave = sqlc.arg(wave)
      AND p.status = 'sending' AND p.claimed_at < sqlc.arg(stale_before)::timestamptz
    FOR UPDATE SKIP LOCKED
)
UPDATE slot_offers o SET status = 'sent', sent_at = o.claimed_at
FROM orphan
WHERE o.id = orphan.id;

-- name: OfferMarkManySent :many
-- Records that the provider accepted the texts of claimed offers, with their message
-- SIDs ('' when the outcome was unknown), and returns those it marked. An offer still
-- sending becomes sent, so from now on its customer's YES may claim it; one a YES lost
-- (or a settlement marked sent) while its text was on its way keeps its status and
-- gets its id and send time, so that it counts as texted and its delivery reports
-- apply. Each row says whether a report for its text is stored already (one that came
-- before the id was): the caller applies those. Like the claim it never waits for a
-- lock: an offer another statement holds (a YES losing it) is left to OfferMarkSent.
WITH mine AS (
    SELECT p.id FROM slot_offers p
    WHERE p.id = ANY(sqlc.arg(ids)::uuid[])
      AND (p.status = 'sending' OR (p.status IN ('sent', 'lost') AND (p.sent_at IS NULL OR p.twilio_sid IS NULL)))
    FOR UPDATE SKIP LOCKED
)
UPDATE slot_offers o
SET status = CASE WHEN o.status = 'sending' THEN 'sent' ELSE o.status END,
    twilio_sid = COALESCE(NULLIF(v.sid, ''), o.twilio_sid), sent_at = COALESCE(o.sent_at, sqlc.arg(now)::timestamptz)
FROM mine, (SELECT unnest(sqlc.arg(ids)::uuid[]) AS id, unnest(sqlc.arg(sids)::text[]) AS sid) AS v
WHERE o.id = mine.id AND v.id = o.id
RETURNING o.id, EXISTS (SELECT 1 FROM delivery_reports r WHERE r.message_sid = o.twilio_sid)::boolean AS reported;

-- name: OfferListSending :many
-- Which of the given offers the wave texted are not marked yet (read without locking).
SELECT id FROM slot_offers
WHERE id = ANY(sqlc.arg(ids)::uuid[]) AND sent_at IS NULL AND status IN ('sending', 'lost')
ORDER BY id;

-- name: OfferMarkSent :exec
-- OfferMarkManySent for one offer, waiting for its lock: it holds no other row, so its
-- wait cannot be part of a deadlock.
UPDATE slot_offers
SET status = CASE WHEN status = 'sending' THEN 'sent' ELSE status END,
    twilio_sid = COALESCE(NULLIF(sqlc.arg(sid)::text, ''), twilio_sid), sent_at = COALESCE(sent_at, sqlc.arg(now)::timestamptz)
WHERE id = sqlc.arg(id) AND (status = 'sending' OR (status IN ('sent', 'lost') AND (sent_at IS NULL OR twilio_sid IS NULL)));

-- name: OfferMarkQueuedLost :exec
-- Offers of an opening that closed (cancelled, expired) that were never texted.
UPDATE slot_offers SET status = 'lost'
WHERE opening_id = $1 AND status = 'queued';

-- name: OfferAcceptedBooking :one
-- The live booking behind a customer's accepted offer, so a winner who says YES again
-- gets the same answer.
SELECT b.id, (b.status = 'confirmed') AS confirmed, b.payment_url, s.starts_at, COALESCE(b.service, s.service)::text AS service,
    s.id AS opening_id, COALESCE((SELECT st.name FROM staff st WHERE st.id = s.staff_id), '')::text AS staff_name
FROM slot_offers o
JOIN bookings b ON b.offer_id = o.id
JOIN slot_openings s ON s.id = o.opening_id
WHERE o.id = $1 AND o.status = 'accepted' AND b.status IN ('pending_payment', 'confirmed');

-- name: OfferUnclaim :exec
UPDATE slot_offers SET status = 'queued' WHERE id = $1 AND status = 'sending';

-- name: OfferMarkFailed :exec
UPDATE slot_offers SET status = 'failed', error_code = sqlc.narg(error_code)
WHERE id = sqlc.arg(id) AND status IN ('queued', 'sending', 'sent');

-- name: OfferNewestClaimable :one
-- The customer's newest offer that can still be taken (slot_offers_claimable: texted,
-- in the opening's current generation, the opening still open).
SELECT v.id AS offer_id, v.opening_id, v.generation, v.starts_at, v.shop_id
FROM slot_offers_claimable v
WHERE v.customer_id = $1
ORDER BY v.created_at DESC, v.id
LIMIT 1;

-- name: OfferNewestForCustomer :one
-- The customer's newest offer that may have reached them (not queued, not failed), to
-- tell a late YES ("taken") from a YES that was never offered anything ("no_offer").
SELECT o.id, o.status FROM slot_offers o
WHERE o.customer_id = $1 AND o.status NOT IN ('queued', 'failed')
ORDER BY o.created_at DESC, o.id
LIMIT 1;

-- name: OfferListClaimable :many
-- The customer's offers from this shop that can still be taken (slot_offers_claimable:
-- texted, in the opening's current generation, the opening open), newest first: a YES
-- claims the newest whose slot is still free. event_facts: what the claim's webhook
-- events are rendered from (hooks.ClaimData), only when the shop has an endpoint
-- subscribed to them.
SELECT v.id AS offer_id, v.opening_id, v.generation, v.starts_at, v.move_from,
    (CASE WHEN EXISTS (SELECT FROM webhook_subscribers(v.shop_id, webhook_claim_types('confirmed')))
          THEN webhook_opening_facts(v.opening_id, NULL) || webhook_claim_facts(v.id, v.customer_id) END)::jsonb AS event_facts
FROM slot_offers_claimable v
WHERE v.customer_id = sqlc.arg(customer_id) AND v.shop_id = sqlc.arg(shop_id)
ORDER BY v.created_at DESC, v.id
LIMIT 20;

-- name: OfferMarkOthersLost :exec
UPDATE slot_offers SET status = 'lost'
WHERE opening_id = sqlc.arg(opening_id) AND id <> sqlc.arg(accepted_id)
  AND status IN ('queued', 'sending', 'sent');

-- name: OfferDecline :one
UPDATE slot_offers SET status = 'declined'
WHERE id = $1 AND status IN ('sending', 'sent')
RETURNING *;

-- name: OfferLockShopWaves :exec
-- Serialises the recording of one shop's waves (held to the end of the transaction), so
-- that two openings' waves cannot both give a customer their last offer of the day.
SELECT pg_advisory_xact_lock(hashtextextended('offer_waves:' || sqlc.arg(shop_id)::uuid::text, 0));

-- name: OfferMarkPaymentFailed :exec
-- The accepted offer behind a booking whose payment failed.
UPDATE slot_offers SET status = 'failed'
WHERE id = sqlc.arg(id) AND status = 'accepted';

-- name: OfferMoveUpCandidates :many
-- The customers a first wave offers an opening to move up to, ahead of the waitlist:
-- each one's earliest booking that the opening can hold and that starts later than it,
-- within the shop's move_up_days: an appointment of the book that is booked, or a YES
-- booking that is confirmed (paid, or the shop takes no payment; one pending payment
-- is not offered: its payment is in flight), read through the filled openings of the
-- window (slot_openings_shop_status_idx, then bookings_one_live_per_opening). The same
-- service, as long or shorter, with the opening's person (or the customer accepts
-- anyone, or that person, or the opening names none). They asked for it (move_up) and
-- can be texted; they were not offered this opening in this generation and did not
-- decline it; and they were not moved already in the opening's chain (a chain never
-- moves a customer twice: a moved appointment or a moved YES booking), which has made
-- fewer than the shop's chain_max moves. Waitlist priority first. from_booking: held_id
-- is a YES booking (else an appointment).
SELECT DISTINCT ON (c.priority, c.created_at, c.id) c.id AS customer_id, h.held_id, h.from_booking, h.starts_at
FROM slot_openings op
JOIN shops sh ON sh.id = op.shop_id
CROSS JOIN LATERAL (
    SELECT a.id AS held_id, false AS from_booking, a.customer_id, a.starts_at, a.service, a.duration_minutes, a.staff_id
    FROM appointments a
    WHERE a.shop_id = op.shop_id AND a.status = 'booked'
      AND a.starts_at > op.starts_at
      AND a.starts_at <= op.starts_at + make_interval(days => sh.move_up_days)
    UNION ALL
    SELECT b.id, true, b.customer_id, s.starts_at, COALESCE(b.service, s.service),
        COALESCE(b.duration_minutes, s.duration_minutes), COALESCE(b.staff_id, s.staff_id)
    FROM slot_openings s JOIN bookings b ON b.opening_id = s.id AND b.status = 'confirmed'
    WHERE s.shop_id = op.shop_id AND s.status = 'filled'
      AND s.starts_at > op.starts_at
      AND s.starts_at <= op.starts_at + make_interval(days => sh.move_up_days)
) h
JOIN customers c ON c.id = h.customer_id
WHERE op.id = sqlc.arg(opening_id)
  AND COALESCE(op.chain_position, 0) < sh.chain_max
  AND h.customer_id IS NOT NULL
  AND lower(h.service) = lower(op.service)
  AND h.duration_minutes <= op.duration_minutes
  AND (op.staff_id IS NULL OR h.staff_id = op.staff_id OR cardinality(c.pref_staff_ids) = 0
       OR op.staff_id = ANY(c.pref_staff_ids))
  AND c.move_up AND c.sms_opt_in AND c.opted_out_at IS NULL AND c.unreachable_at IS NULL AND c.erased_at IS NULL
  AND NOT EXISTS (
      SELECT 1 FROM slot_offers o
      WHERE o.opening_id = op.id AND o.customer_id = c.id
        AND (o.generation = op.generation OR o.status = 'declined'))
  AND NOT EXISTS (
      SELECT 1 FROM appointments m JOIN slot_openings mo ON mo.id = m.moved_to
      WHERE op.chain_id IS NOT NULL AND m.shop_id = op.shop_id AND m.customer_id = c.id AND m.status = 'moved'
        AND (mo.id = op.chain_id OR mo.chain_id = op.chain_id))
  AND NOT EXISTS (
      SELECT 1 FROM bookings m JOIN bookings nb ON nb.id = m.moved_to JOIN slot_openings mo ON mo.id = nb.opening_id
      WHERE op.chain_id IS NOT NULL AND m.customer_id = c.id AND m.status = 'moved'
        AND (mo.id = op.chain_id OR mo.chain_id = op.chain_id))
ORDER BY c.priority DESC, c.created_at, c.id, h.starts_at
LIMIT sqlc.arg(max_rows);

-- name: OfferWithdrawMoves :exec
-- A move-up taken: the appointment's other move-up offers, texted or not, are lost (the
-- booking they would move is moved already), so no wave texts them and no YES claims them.
-- One another transaction holds is skipped, not waited for: that is another opening's
-- claim marking it lost already (BookingClaim), which may wait for an offer this move
-- holds (two movers, each with offers of both openings, taking one each: a deadlock
-- aborted one YES). A skipped offer left sent finds the appointment moved if claimed.
UPDATE slot_offers SET status = 'lost'
WHERE id IN (
    SELECT o.id FROM slot_offers o
    WHERE o.move_from = sqlc.arg(appointment_id) AND o.id <> sqlc.arg(taken_id)
      AND o.status IN ('queued', 'sending', 'sent')
    FOR NO KEY UPDATE SKIP LOCKED);

-- name: OfferWithdrawBookingMoves :exec
-- OfferWithdrawMoves for a YES booking's move-up offers: the booking moved (or ended),
-- so no wave texts them and no YES claims them. One another transaction holds is
-- skipped, not waited for, as OfferWithdrawMoves skips it (another opening's claim
-- marking it lost already, which may wait for an offer this move holds: two movers
-- crossing deadlocked). A skipped offer left sent finds the booking moved if claimed.
UPDATE slot_offers SET status = 'lost'
WHERE id IN (
    SELECT o.id FROM slot_offers o
    WHERE o.move_from_booking = sqlc.arg(booking_id) AND o.id <> sqlc.arg(taken_id)
      AND o.status IN ('queued', 'sending', 'sent')
    FOR NO KEY UPDATE SKIP LOCKED);

-- name: OfferWaveRecord :exec
-- Keeps what a wave judged when it recorded its offers: the ranking, and who it left
-- out for each reason (skipped: counts; skipped_ids: the customers, by reason). A wave
-- recorded again (it found nobody before and runs again) keeps the newest judgement.
INSERT INTO offer_waves (opening_id, generation, wave, shop_id, at, ranking, skipped, skipped_ids)
VALUES (sqlc.arg(opening_id), sqlc.arg(generation), sqlc.arg(wave), sqlc.arg(shop_id), sqlc.arg(at),
    sqlc.arg(ranking), sqlc.arg(skipped), sqlc.arg(skipped_ids))
ON CONFLICT (opening_id, generation, wave) DO UPDATE
SET at = EXCLUDED.at, ranking = EXCLUDED.ranking, skipped = EXCLUDED.skipped, skipped_ids = EXCLUDED.skipped_ids;

-- name: OfferWaveList :many
-- An opening's recorded waves, every generation, in order.
SELECT generation, wave, at, ranking, skipped, skipped_ids
FROM offer_waves
WHERE opening_id = sqlc.arg(opening_id)
ORDER BY generation, wave;

-- name: OfferListForRecord :many
-- An opening's offers that were texted or are going out, with their customer's name
-- (erased customers: ''), rank and reason, in wave and rank order.
SELECT o.id, o.customer_id, c.name, o.generation, o.wave, o.status, o.created_at, o.sent_at,
    COALESCE(o.rank, 0)::integer AS rank, o.reason
FROM slot_offers o JOIN customers c ON c.id = o.customer_id
WHERE o.opening_id = sqlc.arg(opening_id)
  AND (o.sent_at IS NOT NULL OR o.status IN ('queued', 'sending'))
ORDER BY o.generation, o.wave, o.rank NULLS LAST, o.created_at, o.id;

-- name: OfferListReplies :many
-- The replies to an opening's offers: each text from a customer it was texted to,
-- received after that offer went out and before any later offer to them went out (a
-- reply answers the customer's newest offer, as a YES or a NO does), with the outcome
-- the reply was given.
SELECT o.customer_id, c.name, im.received_at, COALESCE(im.outcome, '')::text AS outcome
FROM slot_offers o
JOIN customers c ON c.id = o.customer_id
JOIN inbound_messages im ON im.shop_id = o.shop_id AND im.from_phone = c.phone AND im.received_at >= o.sent_at
WHERE o.opening_id = sqlc.arg(opening_id) AND o.sent_at IS NOT NULL AND c.erased_at IS NULL
  AND NOT EXISTS (
      SELECT 1 FROM slot_offers n
      WHERE n.customer_id = o.customer_id AND n.sent_at > o.sent_at AND n.sent_at <= im.received_at)
ORDER BY im.received_at, im.message_sid;

-- name: OfferForCustomer :one
-- A customer's newest offer of an opening (its newest generation).
SELECT o.generation, o.wave, o.status, o.created_at, o.sent_at, COALESCE(o.rank, 0)::integer AS rank, o.reason
FROM slot_offers o
WHERE o.opening_id = sqlc.arg(opening_id) AND o.customer_id = sqlc.arg(customer_id)
ORDER BY o.generation DESC
LIMIT 1;

-- name: OfferHistory :many
-- A shop's customer's offers, newest first, with the opening each was for, a page at
-- a time (before: the created_at of the last offer of the previous page; max_rows).
SELECT o.id, o.opening_id, s.starts_at, COALESCE(o.service, s.service)::text AS service, o.generation, o.wave,
    o.status, o.created_at, o.sent_at, o.delivery,
    (s.filled_by = o.customer_id AND s.status IN ('filled', 'completed'))::boolean AS booked
FROM slot_offers o JOIN slot_openings s ON s.id = o.opening_id
WHERE o.customer_id = sqlc.arg(customer_id) AND o.shop_id = sqlc.arg(shop_id)
  AND o.created_at < sqlc.arg(before)::timestamptz
ORDER BY o.created_at DESC, o.id
LIMIT sqlc.arg(max_rows);
