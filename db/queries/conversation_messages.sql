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

-- name: ConversationTextList :many
-- A conversation's texts, oldest first (conversation_texts: the recorded ones and the
-- number's other replies with their answers); texts of one instant in the order they
-- were recorded (recorded ids are UUIDv7, made by internal/inbox: time-ordered), a
-- reply before its answer (ord).
SELECT * FROM conversation_texts
WHERE conversation_id = sqlc.arg(conversation_id)
ORDER BY at, ord, id;

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
