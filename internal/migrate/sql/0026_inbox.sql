-- 0026_inbox: the owner's inbox (issue 33). Each shop keeps one conversation per number
-- it texts with, holding every text the number sent and the texts the shop sent it
-- (offers, answers, confirmations, the owner's own replies), so the owner reads a text
-- that needs a person in context. internal/inbox owns both tables.
--
-- A conversation is open while a text in it waits for the owner; unread counts those
-- texts since the owner last read it. last_activity_at orders the owner's list (newest
-- first). last_alert_at and last_ack_at are the windows of the owner's alert (at most one
-- per conversation per 15 minutes) and of the automatic acknowledgement (at most one a
-- day): taken under the conversation's row lock by the transaction that records the
-- text, so concurrent instances never take one twice.
CREATE TABLE conversations (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    shop_id          uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    phone            text NOT NULL CHECK (phone <> ''),
    customer_id      uuid REFERENCES customers (id) ON DELETE SET NULL,
    status           text NOT NULL CHECK (status IN ('open', 'closed')),
    unread           integer NOT NULL DEFAULT 0 CHECK (unread >= 0),
    last_activity_at timestamptz NOT NULL,
    last_ack_at      timestamptz,
    last_alert_at    timestamptz,
    created_at       timestamptz NOT NULL,
    UNIQUE (shop_id, phone)
);
-- The owner's list, by status or all, newest activity first (the cursor is the last
-- row's (last_activity_at, id)).
CREATE INDEX conversations_list_idx ON conversations (shop_id, status, last_activity_at DESC, id DESC);
CREATE INDEX conversations_all_idx ON conversations (shop_id, last_activity_at DESC, id DESC);
-- An erasure finds a customer's conversations by customer too (a number may have been
-- changed since).
CREATE INDEX conversations_customer_idx ON conversations (customer_id) WHERE customer_id IS NOT NULL;
-- The retention purge: conversations idle since before the keep period.
CREATE INDEX conversations_activity_idx ON conversations (last_activity_at);

-- The texts of a conversation. An inbound text is kept once per MessageSid (a webhook
-- redelivery or the sweeper records it again: nothing changes); an outbound one once
-- per its sender's key (a retried job records it once). provider_sid is the provider's
-- id of an outbound text once sent, which its delivery reports name.
CREATE TABLE conversation_messages (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    conversation_id uuid NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    shop_id         uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    direction       text NOT NULL CHECK (direction IN ('in', 'out')),
    author          text NOT NULL CHECK (author IN ('customer', 'owner', 'system')),
    body            text NOT NULL,
    at              timestamptz NOT NULL,
    status          text NOT NULL CHECK (status IN ('received', 'queued', 'sent', 'delivered', 'failed')),
    message_sid     text,
    send_key        text,
    provider_sid    text,
    CHECK ((direction = 'in') = (author = 'customer')),
    CHECK ((direction = 'in') = (status = 'received')),
    CHECK (direction = 'out' OR message_sid IS NOT NULL),
    CHECK (direction = 'in' OR send_key IS NOT NULL),
    UNIQUE (shop_id, message_sid),
    UNIQUE (shop_id, send_key)
);
-- A thread, oldest first (ids are UUIDv7, made by internal/inbox: texts of one instant
-- keep the order they were recorded in).
CREATE INDEX conversation_messages_thread_idx ON conversation_messages (conversation_id, at, id);
-- Delivery reports name the provider's id.
CREATE INDEX conversation_messages_provider_sid_idx ON conversation_messages (provider_sid) WHERE provider_sid IS NOT NULL;
-- The retention purge: messages older than the keep period.
CREATE INDEX conversation_messages_at_idx ON conversation_messages (at);
