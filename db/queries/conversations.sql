-- The owner's inbox: one conversation per shop and number (internal/inbox).

-- name: ConversationUpsert :one
-- The conversation of a text to or from the number, made on its first text. The
-- conflict's update (even when it changes nothing) locks the row until the caller's
-- transaction ends: the windows read here stay as read until the same transaction
-- takes them (ConversationMessageRecordIn), and concurrent texts of one conversation
-- take turns. A text that names the sender as a customer links them; one that does not
-- (the caller could not tell) keeps the link.
INSERT INTO conversations (shop_id, phone, customer_id, status, unread, last_activity_at, created_at)
VALUES (sqlc.arg(shop_id), sqlc.arg(phone), sqlc.narg(customer_id), 'closed', 0,
    sqlc.arg(at)::timestamptz, sqlc.arg(at)::timestamptz)
ON CONFLICT (shop_id, phone) DO UPDATE
SET customer_id = COALESCE(EXCLUDED.customer_id, conversations.customer_id)
RETURNING id, last_alert_at, last_ack_at;

-- name: ConversationList :many
-- A page of a shop's conversations in one status, newest activity first, after the
-- cursor (before_activity, before_id: the last row of the previous page), each with its
-- customer's name and its newest text (conversation_texts: replies such as YES count,
-- though only what the conversation recorded moves it up the list).
SELECT c.id, c.shop_id, c.phone, c.customer_id, c.status, c.unread, c.last_activity_at, c.created_at,
    COALESCE(cu.name, '')::text AS customer_name,
    (m.id IS NOT NULL)::boolean AS has_last,
    COALESCE(m.direction, '')::text AS last_direction,
    COALESCE(m.body, '')::text AS last_body,
    COALESCE(m.at, c.last_activity_at)::timestamptz AS last_at
FROM conversations c
LEFT JOIN customers cu ON cu.id = c.customer_id
LEFT JOIN LATERAL (
    SELECT lm.id, lm.direction, lm.body, lm.at FROM conversation_texts lm
    WHERE lm.conversation_id = c.id ORDER BY lm.at DESC, lm.ord DESC, lm.id DESC LIMIT 1
) m ON true
WHERE c.shop_id = sqlc.arg(shop_id) AND c.status = sqlc.arg(status)
  AND (c.last_activity_at, c.id) < (sqlc.arg(before_activity)::timestamptz, sqlc.arg(before_id)::uuid)
ORDER BY c.last_activity_at DESC, c.id DESC
LIMIT sqlc.arg(max_rows);

-- name: ConversationListAll :many
-- ConversationList in every status (its own statement: each has its index).
SELECT c.id, c.shop_id, c.phone, c.customer_id, c.status, c.unread, c.last_activity_at, c.created_at,
    COALESCE(cu.name, '')::text AS customer_name,
    (m.id IS NOT NULL)::boolean AS has_last,
    COALESCE(m.direction, '')::text AS last_direction,
    COALESCE(m.body, '')::text AS last_body,
    COALESCE(m.at, c.last_activity_at)::timestamptz AS last_at
FROM conversations c
LEFT JOIN customers cu ON cu.id = c.customer_id
LEFT JOIN LATERAL (
    SELECT lm.id, lm.direction, lm.body, lm.at FROM conversation_texts lm
    WHERE lm.conversation_id = c.id ORDER BY lm.at DESC, lm.ord DESC, lm.id DESC LIMIT 1
) m ON true
WHERE c.shop_id = sqlc.arg(shop_id)
  AND (c.last_activity_at, c.id) < (sqlc.arg(before_activity)::timestamptz, sqlc.arg(before_id)::uuid)
ORDER BY c.last_activity_at DESC, c.id DESC
LIMIT sqlc.arg(max_rows);

-- name: ConversationGet :one
-- One of the shop's conversations, as the list shows it (another shop's is no row).
SELECT c.id, c.shop_id, c.phone, c.customer_id, c.status, c.unread, c.last_activity_at, c.created_at,
    COALESCE(cu.name, '')::text AS customer_name,
    (m.id IS NOT NULL)::boolean AS has_last,
    COALESCE(m.direction, '')::text AS last_direction,
    COALESCE(m.body, '')::text AS last_body,
    COALESCE(m.at, c.last_activity_at)::timestamptz AS last_at
FROM conversations c
LEFT JOIN customers cu ON cu.id = c.customer_id
LEFT JOIN LATERAL (
    SELECT lm.id, lm.direction, lm.body, lm.at FROM conversation_texts lm
    WHERE lm.conversation_id = c.id ORDER BY lm.at DESC, lm.ord DESC, lm.id DESC LIMIT 1
) m ON true
WHERE c.id = sqlc.arg(id) AND c.shop_id = sqlc.arg(shop_id);

-- name: ConversationMarkRead :execrows
-- The owner read the conversation.
UPDATE conversations SET unread = 0 WHERE id = sqlc.arg(id) AND shop_id = sqlc.arg(shop_id);

-- name: ConversationSetStatus :execrows
-- The owner opens or closes the conversation.
UPDATE conversations SET status = sqlc.arg(status) WHERE id = sqlc.arg(id) AND shop_id = sqlc.arg(shop_id);

-- name: ConversationReplyTo :one
-- Where the owner's reply goes: the number, and the shop's number it is texted from;
-- and when the number last wrote (the epoch: never), for the quiet hours' rule.
SELECT c.phone, s.sms_number,
    COALESCE((SELECT max(m.at) FROM conversation_messages m WHERE m.conversation_id = c.id AND m.direction = 'in'),
             'epoch'::timestamptz)::timestamptz AS last_in_at
FROM conversations c JOIN shops s ON s.id = c.shop_id
WHERE c.id = sqlc.arg(id) AND c.shop_id = sqlc.arg(shop_id);

-- name: ConversationTouch :execrows
-- An owner's reply is activity: the conversation moves up the list. The row stays
-- locked until the reply's transaction ends (an erasure meanwhile waits for it).
UPDATE conversations SET last_activity_at = GREATEST(last_activity_at, sqlc.arg(at)::timestamptz)
WHERE id = sqlc.arg(id) AND shop_id = sqlc.arg(shop_id);

-- name: ConversationRepliesOf :many
-- An erasure: the owner's replies in the customer's conversations (by customer or by
-- number), whose ids their stored API answers carry.
SELECT m.id FROM conversation_messages m JOIN conversations c ON c.id = m.conversation_id
WHERE c.shop_id = sqlc.arg(shop_id) AND m.shop_id = sqlc.arg(shop_id) AND m.author = 'owner'
  AND ((sqlc.arg(phone)::text <> '' AND c.phone = sqlc.arg(phone)::text)
       OR c.customer_id = sqlc.narg(customer_id)::uuid);

-- name: ConversationsForget :many
-- An erasure: the customer's conversations, by customer or by number (their messages go
-- with them, ON DELETE CASCADE); their ids, for the copies kept elsewhere.
DELETE FROM conversations
WHERE shop_id = sqlc.arg(shop_id)
  AND ((sqlc.arg(phone)::text <> '' AND phone = sqlc.arg(phone)::text)
       OR customer_id = sqlc.narg(customer_id)::uuid)
RETURNING id;

-- name: ConversationsPurge :execrows
-- Deletes up to max_rows conversations idle since before `before` (the inbox's keep
-- period), with their messages.
DELETE FROM conversations
WHERE id IN (
    SELECT id FROM conversations WHERE last_activity_at < sqlc.arg(before)::timestamptz
    LIMIT sqlc.arg(max_rows)
);

-- name: ConversationUnreadCount :one
-- How many of the shop's open conversations have texts the owner has not read (the
-- dashboard's navigation badge): the open ones only, read through conversations_list_idx,
-- so the thousands of closed conversations the waves leave cost nothing.
SELECT count(*) FROM conversations
WHERE shop_id = sqlc.arg(shop_id) AND status = 'open' AND unread > 0;
