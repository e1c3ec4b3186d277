-- The texts of the owner's conversations (internal/inbox).

-- name: ConversationMessageRecordIn :one
-- Records a text the number sent, once per MessageSid, and with it (only when it is new)
-- the conversation's activity; a text that needs the owner opens the conversation, counts
-- as unread and takes the windows the caller decided were free (take_alert, take_ack),
-- under the row lock ConversationUpsert took in the same transaction. No row: the
-- MessageSid was recorded before, and nothing changed.
WITH ins AS (
    INSERT INTO conversation_messages (id, conversation_id, shop_id, direction, author, body, at, status, message_sid)
    VALUES (sqlc.arg(id), sqlc.arg(conversation_id), sqlc.arg(shop_id), 'in', 'customer', sqlc.arg(body),
        sqlc.arg(at)::timestamptz, 'received', sqlc.arg(message_sid))
    ON CONFLICT (shop_id, message_sid) DO NOTHING
    RETURNING id
), upd AS (
    UPDATE conversations c
    SET last_activity_at = GREATEST(c.last_activity_at, sqlc.arg(at)::timestamptz),
        status = CASE WHEN sqlc.arg(needs_owner)::boolean THEN 'open' ELSE c.status END,
        unread = c.unread + CASE WHEN sqlc.arg(needs_owner)::boolean THEN 1 ELSE 0 END,
        last_alert_at = CASE WHEN sqlc.arg(take_alert)::boolean THEN sqlc.arg(at)::timestamptz ELSE c.last_alert_at END,
        last_ack_at = CASE WHEN sqlc.arg(take_ack)::boolean THEN sqlc.arg(at)::timestamptz ELSE c.last_ack_at END
    WHERE c.id = sqlc.arg(conversation_id) AND EXISTS (SELECT 1 FROM ins)
)
SELECT id FROM ins;

-- name: ConversationMessageRecordOut :one
-- Records a text the shop sent (or queued) to the number, once per its sender's key,
-- and with it (only when it is new) the conversation's activity. No row: the key was
-- recorded before (a retried job), and nothing changed.
WITH ins AS (
    INSERT INTO conversation_messages (id, conversation_id, shop_id, direction, author, body, at, status, send_key, provider_sid)
    VALUES (sqlc.arg(id), sqlc.arg(conversation_id), sqlc.arg(shop_id), 'out', sqlc.arg(author), sqlc.arg(body),
        sqlc.arg(at)::timestamptz, sqlc.arg(status), sqlc.arg(send_key), sqlc.narg(provider_sid))
    ON CONFLICT (shop_id, send_key) DO NOTHING
    RETURNING id
), upd AS (
    UPDATE conversations c
    SET last_activity_at = GREATEST(c.last_activity_at, sqlc.arg(at)::timestamptz)
    WHERE c.id = sqlc.arg(conversation_id) AND EXISTS (SELECT 1 FROM ins)
)
SELECT id FROM ins;

-- name: ConversationMessageBySid :one
-- The conversation and message an inbound MessageSid was recorded as.
SELECT id, conversation_id FROM conversation_messages
WHERE shop_id = sqlc.arg(shop_id) AND message_sid = sqlc.arg(message_sid);

-- name: ConversationMessageByKey :one
-- The conversation and message an outbound text's key was recorded as.
SELECT id, conversation_id FROM conversation_messages
WHERE shop_id = sqlc.arg(shop_id) AND send_key = sqlc.arg(send_key);

-- name: ConversationTextPage :many
-- A page of a conversation's texts (conversation_texts: the recorded ones and the
-- number's other replies with their answers), newest first, before the text (at, ord,
-- id): the owner reads a long thread a page at a time. Texts of one instant are in the
-- order they were recorded (recorded ids are UUIDv7, made by internal/inbox:
-- time-ordered), a reply before its answer (ord).
SELECT * FROM conversation_texts
WHERE conversation_id = sqlc.arg(conversation_id)
  AND (at, ord, id) < (sqlc.arg(before_at)::timestamptz, sqlc.arg(before_ord)::smallint, sqlc.arg(before_id)::uuid)
ORDER BY at DESC, ord DESC, id DESC
LIMIT sqlc.arg(max_rows);

-- name: ConversationMessageInsertReply :one
-- The owner's reply, queued: its text job is enqueued in the same transaction.
INSERT INTO conversation_messages (id, conversation_id, shop_id, direction, author, body, at, status, send_key)
VALUES (sqlc.arg(id), sqlc.arg(conversation_id), sqlc.arg(shop_id), 'out', 'owner', sqlc.arg(body),
    sqlc.arg(at)::timestamptz, 'queued', sqlc.arg(send_key))
RETURNING *;

-- name: ConversationMessageMarkSent :execrows
-- The provider took the text (its id, which its delivery reports name). A text already
-- reported delivered or failed keeps that.
UPDATE conversation_messages
SET status = 'sent', provider_sid = sqlc.arg(provider_sid)
WHERE shop_id = sqlc.arg(shop_id) AND send_key = sqlc.arg(send_key) AND status = 'queued';

-- name: ConversationMessageMarkUnsent :execrows
-- The text was not sent and will not be (refused, or dropped: the number opted out).
UPDATE conversation_messages
SET status = 'failed'
WHERE shop_id = sqlc.arg(shop_id) AND send_key = sqlc.arg(send_key) AND status = 'queued';

-- name: ConversationMessageMarkDelivery :execrows
-- A delivery report for a sent text: delivered or failed, once (a late report of another
-- kind changes nothing).
UPDATE conversation_messages
SET status = sqlc.arg(status)
WHERE provider_sid = sqlc.arg(provider_sid) AND direction = 'out' AND status IN ('queued', 'sent');

-- name: ConversationMessagesPurge :execrows
-- Deletes up to max_rows texts older than `before` (the inbox's keep period).
DELETE FROM conversation_messages
WHERE id IN (
    SELECT id FROM conversation_messages WHERE at < sqlc.arg(before)::timestamptz
    LIMIT sqlc.arg(max_rows)
);

-- name: ConversationRecordOutMany :many
-- ConversationUpsert and ConversationMessageRecordOut for several texts in one
-- statement (a chunk of a wave's offers: two round trips a text held the next chunk
-- back). The conversations are made or locked in (shop_id, phone) order, bytewise, the
-- order inbox's lockOrder gives every caller, so that two batches never deadlock. A
-- conversation's activity moves to its newest new text; a text whose key was recorded
-- before changes nothing and is returned with its earlier record (duplicate). A row
-- without an id: the key was recorded by a transaction that committed meanwhile (the
-- caller reads it by its key). A customer id of all zeros is none.
WITH input AS (
    SELECT unnest(sqlc.arg(ids)::uuid[]) AS id, unnest(sqlc.arg(shop_ids)::uuid[]) AS shop_id,
        unnest(sqlc.arg(phones)::text[]) AS phone,
        NULLIF(unnest(sqlc.arg(customer_ids)::uuid[]), '00000000-0000-0000-0000-000000000000'::uuid) AS customer_id,
        unnest(sqlc.arg(authors)::text[]) AS author, unnest(sqlc.arg(bodies)::text[]) AS body,
        unnest(sqlc.arg(ats)::timestamptz[]) AS at, unnest(sqlc.arg(statuses)::text[]) AS status,
        unnest(sqlc.arg(send_keys)::text[]) AS send_key, unnest(sqlc.arg(provider_sids)::text[]) AS provider_sid,
        generate_subscripts(sqlc.arg(ids)::uuid[], 1) AS ord
), known AS (
    SELECT m.id, m.conversation_id, m.shop_id, m.send_key
    FROM conversation_messages m JOIN input i ON m.shop_id = i.shop_id AND m.send_key = i.send_key
), convs AS (
    INSERT INTO conversations (shop_id, phone, customer_id, status, unread, last_activity_at, created_at)
    SELECT i.shop_id, i.phone,
        (array_agg(i.customer_id ORDER BY i.ord DESC) FILTER (WHERE i.customer_id IS NOT NULL))[1],
        'closed', 0,
        COALESCE(max(i.at) FILTER (WHERE k.id IS NULL), '-infinity'::timestamptz),
        min(i.at)
    FROM input i LEFT JOIN known k ON k.shop_id = i.shop_id AND k.send_key = i.send_key
    GROUP BY i.shop_id, i.phone
    ORDER BY i.shop_id, i.phone COLLATE "C"
    ON CONFLICT (shop_id, phone) DO UPDATE
    SET customer_id = COALESCE(EXCLUDED.customer_id, conversations.customer_id),
        last_activity_at = GREATEST(conversations.last_activity_at, EXCLUDED.last_activity_at)
    RETURNING id, shop_id, phone
), ins AS (
    INSERT INTO conversation_messages (id, conversation_id, shop_id, direction, author, body, at, status, send_key, provider_sid)
    SELECT i.id, c.id, i.shop_id, 'out', i.author, i.body, i.at, i.status, i.send_key, NULLIF(i.provider_sid, '')
    FROM input i JOIN convs c ON c.shop_id = i.shop_id AND c.phone = i.phone
    WHERE NOT EXISTS (SELECT 1 FROM known k WHERE k.shop_id = i.shop_id AND k.send_key = i.send_key)
    ORDER BY i.ord
    ON CONFLICT (shop_id, send_key) DO NOTHING
    RETURNING id, conversation_id, shop_id, send_key
)
SELECT i.ord::int AS ord,
    COALESCE(n.id, k.id, '00000000-0000-0000-0000-000000000000'::uuid)::uuid AS id,
    COALESCE(n.conversation_id, k.conversation_id, '00000000-0000-0000-0000-000000000000'::uuid)::uuid AS conversation_id,
    (n.id IS NULL)::boolean AS duplicate,
    (n.id IS NULL AND k.id IS NULL)::boolean AS unknown
FROM input i
LEFT JOIN ins n ON n.shop_id = i.shop_id AND n.send_key = i.send_key
LEFT JOIN known k ON k.shop_id = i.shop_id AND k.send_key = i.send_key
ORDER BY i.ord;

-- name: ConversationTextsInSince :one
-- How many texts the conversation received at or after since (the thread's index).
SELECT count(*) FROM conversation_messages
WHERE conversation_id = sqlc.arg(conversation_id) AND direction = 'in' AND at >= sqlc.arg(since)::timestamptz;
