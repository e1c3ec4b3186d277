-- Outbound event webhooks: the outbox of events (internal/hooks). Other packages record
-- through hooks.Record and hooks.RecordOpening inside their own transactions, with the
-- event's data rendered in Go; the YES's claim records the data it was given in its own
-- statement (see internal/hooks/doc.go).

-- name: WebhookEventRecord :execrows
-- Records an event whose data (rendered in Go) is subject, only when the shop has an
-- enabled endpoint subscribed to its type (0 rows otherwise: nothing to send).
INSERT INTO webhook_events (shop_id, type, created_at, subject, rendered)
SELECT sqlc.arg(shop_id)::uuid, sqlc.arg(type)::text, sqlc.arg(created_at)::timestamptz, sqlc.arg(subject)::jsonb, true
WHERE EXISTS (SELECT FROM webhook_subscribers(sqlc.arg(shop_id)::uuid, ARRAY[sqlc.arg(type)::text]));

-- name: WebhookOpeningFacts :one
-- The facts an opening or booking event of the shop's opening is rendered from
-- (webhook_opening_facts: the opening and the booking, booking_id or the latest, as they
-- stand in the caller's transaction), only when the shop has an enabled endpoint
-- subscribed to the type: no row otherwise, or when the opening is not the shop's.
SELECT webhook_opening_facts(s.id, sqlc.narg(booking_id)::uuid)::jsonb AS facts
FROM slot_openings s
WHERE s.id = sqlc.arg(opening_id) AND s.shop_id = sqlc.arg(shop_id)
  AND EXISTS (SELECT FROM webhook_subscribers(s.shop_id, ARRAY[sqlc.arg(type)::text]));

-- name: WebhookEventsToDispatch :many
-- The oldest events not yet fanned out, each taken by one dispatcher (others skip it).
SELECT id, seq, shop_id, type, created_at, subject, rendered FROM webhook_events
WHERE dispatched_at IS NULL
ORDER BY seq
LIMIT sqlc.arg(max_rows)
FOR UPDATE SKIP LOCKED;

-- name: WebhookEventMarkDispatched :exec
UPDATE webhook_events
SET payload = sqlc.narg(payload), dispatched_at = sqlc.arg(now)::timestamptz, dispatch_error = sqlc.narg(dispatch_error)
WHERE id = sqlc.arg(id);

-- name: WebhookEventPurge :execrows
-- Events older than the retention, with their deliveries and attempts (ON DELETE
-- CASCADE), a batch at a time.
DELETE FROM webhook_events
WHERE id IN (SELECT id FROM webhook_events WHERE created_at < sqlc.arg(before)::timestamptz LIMIT sqlc.arg(max_rows));

-- name: WebhookEventsForShop :many
-- A shop's events in the order they were recorded (tests and the full story's checks).
SELECT id, seq, type, created_at, subject, payload, dispatched_at FROM webhook_events
WHERE shop_id = $1
ORDER BY seq;

-- name: WebhookEventsForgetCustomer :many
-- An erasure: the events whose subject names the customer (an opening they held, the
-- customer themself, a text of theirs in the owner's inbox, or an appointment of the
-- book with them, by customer or by the number they had) lose their subject and body,
-- and are not sent any more; a subject
-- recorded before 0050 names a customer event's customer under "ID". Returns
-- their ids: their deliveries' and attempts' logs are scrubbed next
-- (WebhookDeliveriesForgetEvents, WebhookAttemptsForgetEvents).
UPDATE webhook_events
SET subject = '{}'::jsonb, payload = NULL, dispatched_at = COALESCE(dispatched_at, sqlc.arg(now)::timestamptz),
    dispatch_error = 'the customer was erased'
WHERE shop_id = sqlc.arg(shop_id)
  AND (subject -> 'filled_by' ->> 'customer_id' = sqlc.arg(customer_id)::uuid::text OR subject ->> 'ID' = sqlc.arg(customer_id)::uuid::text
       OR (type LIKE 'customer.%' AND subject ->> 'id' = sqlc.arg(customer_id)::uuid::text)
       OR subject ->> 'customer_id' = sqlc.arg(customer_id)::uuid::text
       OR (type LIKE 'appointment.%' AND subject -> 'customer' ->> 'id' = sqlc.arg(customer_id)::uuid::text)
       OR (sqlc.arg(phone)::text <> '' AND (type LIKE 'message.%' OR type LIKE 'appointment.%')
           AND subject ->> 'phone' = sqlc.arg(phone)::text))
RETURNING id;

-- name: WebhookEventForgotten :one
-- Whether an event lost its body to an erasure (a dispatched event keeps its payload
-- otherwise): an attempt that was in flight then does not keep the answer it got.
SELECT (payload IS NULL)::boolean AS forgotten FROM webhook_events WHERE id = $1;

-- name: WebhookEventsSentSince :one
-- How many of a shop's events recorded before before_seq, from since on, were sent (not
-- held back by the hourly limit), counting up to max_rows: the dispatcher's measure of
-- the limit. The window starts at the first event recorded since then (any shop's, by
-- webhook_events_created_idx), so the scan covers the shop's events of the window only.
-- messages picks the budget counted: the message.received events (which strangers'
-- texts raise) have their own, and the shop's other events the other.
SELECT count(*)::integer AS sent FROM (
    SELECT 1 FROM webhook_events w
    WHERE w.shop_id = sqlc.arg(shop_id)::uuid
      AND w.seq >= COALESCE((SELECT e.seq FROM webhook_events e WHERE e.created_at >= sqlc.arg(since)::timestamptz
                             ORDER BY e.created_at LIMIT 1), 9223372036854775807)
      AND w.seq < sqlc.arg(before_seq)::bigint
      AND w.dispatch_error IS NULL
      AND (w.type = 'message.received') = sqlc.arg(messages)::boolean
    LIMIT sqlc.arg(max_rows)
) x;
