-- name: DeliveryReportRecord :exec
-- Keeps the most final word on a text: a report never replaces a later stage (reports
-- arrive out of order: "sent" after "delivered").
INSERT INTO delivery_reports AS d (message_sid, status, reason, error_code, received_at)
VALUES (sqlc.arg(message_sid), sqlc.arg(status), sqlc.arg(reason), sqlc.narg(error_code), sqlc.arg(now)::timestamptz)
ON CONFLICT (message_sid) DO UPDATE
SET status = EXCLUDED.status, reason = EXCLUDED.reason, error_code = EXCLUDED.error_code, received_at = EXCLUDED.received_at
WHERE (CASE EXCLUDED.status WHEN 'delivered' THEN 3 WHEN 'read' THEN 3 WHEN 'undelivered' THEN 3 WHEN 'failed' THEN 3 WHEN 'canceled' THEN 3
                            WHEN 'sent' THEN 2 ELSE 1 END)
   >= (CASE d.status WHEN 'delivered' THEN 3 WHEN 'read' THEN 3 WHEN 'undelivered' THEN 3 WHEN 'failed' THEN 3 WHEN 'canceled' THEN 3
                     WHEN 'sent' THEN 2 ELSE 1 END)
  AND d.status NOT IN ('delivered', 'read', 'undelivered', 'failed', 'canceled');

-- name: OfferApplyDelivery :many
-- Applies the stored report of one message id to its offer (one row, so that the
-- statement never waits for one offer's lock while holding another's). An undelivered
-- or failed text fails a live offer (it no longer counts as offered); an offer already
-- taken, lost or declined only records the delivery. Returns the offer if its text
-- failed just now, for the customer's side of it.
UPDATE slot_offers o
SET delivery = r.status, delivery_at = r.received_at,
    status = CASE WHEN r.status IN ('undelivered', 'failed') AND o.status IN ('sending', 'sent') THEN 'failed' ELSE o.status END,
    error_code = CASE WHEN r.status IN ('undelivered', 'failed') THEN coalesce(r.error_code, o.error_code) ELSE o.error_code END
FROM delivery_reports r, (SELECT p.id, p.status AS was FROM slot_offers p WHERE p.twilio_sid = sqlc.arg(sid)::text) prev
WHERE r.message_sid = o.twilio_sid AND prev.id = o.id
  AND o.delivery IS DISTINCT FROM r.status
RETURNING o.id, o.customer_id, o.opening_id, o.shop_id,
    (prev.was IN ('sending', 'sent') AND r.status IN ('undelivered', 'failed'))::boolean AS failed_now, r.reason,
    coalesce(r.error_code, 0)::integer AS code;

-- name: OfferShortfall :many
-- The offers of a round whose text could not reach the customer (failed at the send or
-- undelivered later) and that no later wave has made up for yet, oldest first.
SELECT id FROM slot_offers
WHERE opening_id = sqlc.arg(opening_id) AND generation = sqlc.arg(generation) AND wave < sqlc.arg(wave)
  AND status = 'failed' AND replaced_at IS NULL
  AND (error_code IS NOT NULL OR delivery IN ('undelivered', 'failed'))
ORDER BY created_at, id;

-- name: OfferMarkReplaced :exec
UPDATE slot_offers SET replaced_at = sqlc.arg(now)::timestamptz WHERE id = ANY(sqlc.arg(ids)::uuid[]);

-- name: DeliveryReportPurge :execrows
-- Deletes up to max_rows reports received before `before`: the retention period, long
-- past the last change of their texts' offers.
DELETE FROM delivery_reports
WHERE message_sid IN (
    SELECT message_sid FROM delivery_reports WHERE received_at < sqlc.arg(before)::timestamptz
    LIMIT sqlc.arg(max_rows)
);

-- name: DeliveryReportsStored :many
-- Which of the given message ids have a stored report (a report can come before the wave
-- stores the id its send returned).
SELECT message_sid FROM delivery_reports WHERE message_sid = ANY(sqlc.arg(sids)::text[]);
