-- 0001_init: shops, customers, openings, offers, bookings and the webhook ledgers.

CREATE TABLE shops (
    id                    uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name                  text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    timezone              text NOT NULL,
    sms_number            text NOT NULL UNIQUE,
    currency              text NOT NULL CHECK (currency ~ '^[a-z]{3}$'),
    payment_mode          text NOT NULL CHECK (payment_mode IN ('checkout', 'none')),
    wave_size             integer NOT NULL CHECK (wave_size BETWEEN 1 AND 1000),
    wave_interval_seconds integer NOT NULL CHECK (wave_interval_seconds BETWEEN 10 AND 86400),
    min_lead_minutes      integer NOT NULL CHECK (min_lead_minutes BETWEEN 0 AND 10080),
    -- Quiet hours as minutes after local midnight; both NULL when the shop has none.
    quiet_start_minute    integer CHECK (quiet_start_minute BETWEEN 0 AND 1439),
    quiet_end_minute      integer CHECK (quiet_end_minute BETWEEN 0 AND 1439),
    cooldown_seconds      integer NOT NULL CHECK (cooldown_seconds BETWEEN 0 AND 2592000),
    api_key_hash          bytea NOT NULL UNIQUE,
    created_at            timestamptz NOT NULL,
    CHECK ((quiet_start_minute IS NULL) = (quiet_end_minute IS NULL))
);

CREATE TABLE customers (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    shop_id          uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    phone            text NOT NULL,
    name             text NOT NULL,
    sms_opt_in       boolean NOT NULL,
    opted_out_at     timestamptz,
    -- Set when Twilio says the number cannot receive texts (21610, 21211, ...).
    unreachable_at   timestamptz,
    unreachable_code integer,
    priority         integer NOT NULL DEFAULT 0,
    created_at       timestamptz NOT NULL,
    UNIQUE (shop_id, phone)
);

CREATE TABLE slot_openings (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    shop_id          uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    starts_at        timestamptz NOT NULL,
    duration_minutes integer NOT NULL CHECK (duration_minutes BETWEEN 1 AND 1440),
    service          text NOT NULL CHECK (length(service) BETWEEN 1 AND 100),
    price_cents      bigint NOT NULL CHECK (price_cents > 0),
    status           text NOT NULL CHECK (status IN ('open', 'filled', 'completed', 'cancelled', 'expired')),
    filled_by        uuid REFERENCES customers (id),
    -- A reopened opening starts a new offer generation.
    generation       integer NOT NULL DEFAULT 1,
    version          integer NOT NULL DEFAULT 1,
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL,
    filled_at        timestamptz,
    CHECK (status <> 'filled' OR filled_by IS NOT NULL)
);
CREATE INDEX slot_openings_shop_status_idx ON slot_openings (shop_id, status, starts_at);

CREATE TABLE slot_offers (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    opening_id  uuid NOT NULL REFERENCES slot_openings (id) ON DELETE CASCADE,
    customer_id uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
    shop_id     uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    generation  integer NOT NULL,
    wave        integer NOT NULL,
    -- queued: recorded, not yet texted; sending: claimed by one sender, so a retried
    -- job never texts twice; sent: texted (claimable while the opening is open).
    status      text NOT NULL CHECK (status IN ('queued', 'sending', 'sent', 'accepted', 'declined', 'lost', 'failed')),
    twilio_sid  text,
    error_code  integer,
    created_at  timestamptz NOT NULL,
    sent_at     timestamptz,
    UNIQUE (opening_id, generation, customer_id)
);
CREATE INDEX slot_offers_customer_idx ON slot_offers (customer_id, created_at DESC);
CREATE INDEX slot_offers_wave_idx ON slot_offers (opening_id, generation, wave);

CREATE TABLE bookings (
    id                         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    opening_id                 uuid NOT NULL REFERENCES slot_openings (id) ON DELETE CASCADE,
    customer_id                uuid NOT NULL REFERENCES customers (id),
    offer_id                   uuid REFERENCES slot_offers (id),
    shop_id                    uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    status                     text NOT NULL CHECK (status IN ('pending_payment', 'confirmed', 'payment_failed', 'cancelled')),
    amount_cents               bigint NOT NULL,
    currency                   text NOT NULL,
    stripe_checkout_session_id text,
    stripe_payment_intent_id   text,
    payment_url                text,
    checkout_expires_at        timestamptz,
    refund_id                  text,
    created_at                 timestamptz NOT NULL,
    updated_at                 timestamptz NOT NULL,
    confirmed_at               timestamptz
);
-- The last fence against a double booking, whatever happens to the Redis lock.
CREATE UNIQUE INDEX bookings_one_live_per_opening
    ON bookings (opening_id) WHERE status IN ('pending_payment', 'confirmed');
CREATE INDEX bookings_opening_idx ON bookings (opening_id, created_at DESC);
CREATE INDEX bookings_pending_idx ON bookings (checkout_expires_at) WHERE status = 'pending_payment';

CREATE TABLE inbound_messages (
    message_sid text PRIMARY KEY,
    shop_id     uuid REFERENCES shops (id) ON DELETE CASCADE,
    from_phone  text NOT NULL,
    to_phone    text NOT NULL,
    body        text NOT NULL,
    received_at timestamptz NOT NULL,
    outcome     text,
    reply       text,
    handled_at  timestamptz
);

CREATE TABLE stripe_events (
    event_id    text PRIMARY KEY,
    type        text NOT NULL,
    booking_id  uuid,
    payload     jsonb NOT NULL,
    received_at timestamptz NOT NULL,
    result      text,
    handled_at  timestamptz
);

-- 0002_payment_recovery
-- When the reconciliation may read a pending booking back again, and how often it has
-- found it unresolved (still open at Stripe, or an error).
ALTER TABLE bookings ADD COLUMN reconcile_after timestamptz;
ALTER TABLE bookings ADD COLUMN reconcile_attempts integer NOT NULL DEFAULT 0;
-- Set in the transaction that enqueues the refund of the booking's late payment: from
-- then on the booking never takes its slot back.
ALTER TABLE bookings ADD COLUMN refund_requested_at timestamptz;

-- 0003_answers_reach_customers
-- When the customer was told of their booking (the YES answer written back to Twilio in
-- time, or the notice text).
ALTER TABLE bookings ADD COLUMN customer_told_at timestamptz;
-- When a redelivery or the sweeper took over a text whose first handler died before it
-- stored an answer.
ALTER TABLE inbound_messages ADD COLUMN taken_over_at timestamptz;
CREATE INDEX inbound_messages_unanswered_idx ON inbound_messages (received_at) WHERE outcome IS NULL;

-- 0004_owner_list_and_rules

-- At most this many offers texted to one customer per day (the shop's local day),
-- across openings; NULL means no cap.
ALTER TABLE shops ADD COLUMN max_offers_per_day integer CHECK (max_offers_per_day BETWEEN 1 AND 1000);
-- How long after an opening is declared its first wave waits, so a mistaken declaration
-- can be cancelled before anyone is texted.
ALTER TABLE shops ADD COLUMN first_wave_delay_seconds integer NOT NULL DEFAULT 0
    CHECK (first_wave_delay_seconds BETWEEN 0 AND 86400);

-- A customer's time preferences, in the shop's time zone: ISO days of the week (1 =
-- Monday ... 7 = Sunday) and windows as minutes after local midnight (start inclusive,
-- end exclusive, parallel arrays); optionally the services they want. Empty means "any".
ALTER TABLE customers ADD COLUMN pref_days smallint[] NOT NULL DEFAULT '{}'
    CHECK (cardinality(pref_days) <= 7 AND pref_days <@ '{1,2,3,4,5,6,7}'::smallint[]);
ALTER TABLE customers ADD COLUMN pref_window_starts integer[] NOT NULL DEFAULT '{}';
ALTER TABLE customers ADD COLUMN pref_window_ends integer[] NOT NULL DEFAULT '{}';
ALTER TABLE customers ADD COLUMN pref_services text[] NOT NULL DEFAULT '{}'
    CHECK (cardinality(pref_services) <= 20);
ALTER TABLE customers ADD CONSTRAINT customers_pref_windows_check
    CHECK (cardinality(pref_window_starts) = cardinality(pref_window_ends) AND cardinality(pref_window_starts) <= 4);

-- Erasure: the row stays (bookings and offers keep their foreign keys, so the shop's
-- totals stay right), but the name and phone are gone and the customer is opted out for
-- good. (0022 dropped the unkeyed erased_phone_sha256 this added: sms_suppressions
-- keeps a keyed hash of the number instead.)
ALTER TABLE customers ADD COLUMN erased_at timestamptz;
-- A phone is unique among a shop's live customers only: every erased row has an empty
-- phone, and the person may later come back as a new customer.
ALTER TABLE customers DROP CONSTRAINT customers_shop_id_phone_key;
CREATE UNIQUE INDEX customers_shop_phone_live ON customers (shop_id, phone) WHERE erased_at IS NULL;
-- The owners' list pages by creation order.
CREATE INDEX customers_shop_created_idx ON customers (shop_id, created_at, id);

-- 0006_key_version

-- Counts the shop's API keys: every rotation adds one, in the same UPDATE that stores
-- the new key's hash. A dashboard session carries the version it was signed in under
-- and is refused once the shop's version has moved on, so the check costs nothing more
-- than the shop row each dashboard request reads anyway.
ALTER TABLE shops ADD COLUMN api_key_version integer NOT NULL DEFAULT 1 CHECK (api_key_version >= 1);

-- 0005_yes_path_fences
-- The inbound log keeps shop_id without a foreign key: the key's check locked the shop's
-- row for every stored text (see the migration).
ALTER TABLE inbound_messages DROP CONSTRAINT inbound_messages_shop_id_fkey;
CREATE INDEX bookings_customer_live_idx ON bookings (customer_id) WHERE status IN ('pending_payment', 'confirmed');

-- 0007_send_claims
-- A transactional text is claimed by its key before it is sent: at most once, even when
-- a job is killed after the send and run again (see the migration). No foreign key to
-- shops: the claim must not lock the shop's row, and a purge removes old rows.
CREATE TABLE text_claims (
    key         text PRIMARY KEY,
    shop_id     uuid NOT NULL,
    claimed_at  timestamptz NOT NULL,
    message_sid text
);
CREATE INDEX text_claims_claimed_idx ON text_claims (claimed_at);
-- When a wave's sender claimed an offer (queued→sending): an offer still sending long
-- after it (longer than a wave job may run) was claimed by a run that was killed.
ALTER TABLE slot_offers ADD COLUMN claimed_at timestamptz;

-- 0008_refund_failures
-- A refund Stripe refused for good, or whose job's last attempt failed: the owner
-- refunds it by hand (the dashboard lists it).
ALTER TABLE bookings ADD COLUMN refund_failed_at timestamptz;
ALTER TABLE bookings ADD COLUMN refund_failed_payment_intent text;
ALTER TABLE bookings ADD COLUMN refund_error text;
CREATE INDEX bookings_refund_failed_idx ON bookings (shop_id, refund_failed_at) WHERE refund_failed_at IS NOT NULL;

-- 0009_delivery_reports
-- What the carrier said of each text, kept by message id (it may arrive before the
-- offer has stored the id) and applied to the offer: an undelivered offer is failed and
-- replaced by the next wave (see the migration).
CREATE TABLE delivery_reports (
    message_sid text PRIMARY KEY,
    status      text NOT NULL,
    reason      text NOT NULL,
    error_code  integer,
    received_at timestamptz NOT NULL
);
CREATE INDEX delivery_reports_received_idx ON delivery_reports (received_at);
ALTER TABLE slot_offers ADD COLUMN delivery text;
ALTER TABLE slot_offers ADD COLUMN delivery_at timestamptz;
ALTER TABLE slot_offers ADD COLUMN replaced_at timestamptz;
CREATE INDEX slot_offers_sid_idx ON slot_offers (twilio_sid) WHERE twilio_sid IS NOT NULL;

-- 0010_send_rate
-- Texts a second the shop's number may send; waves are paced to it.
ALTER TABLE shops ADD COLUMN send_rate integer NOT NULL DEFAULT 1 CHECK (send_rate BETWEEN 1 AND 1000);

-- 0011_sms_problems
-- The last text that failed because of the shop's own number or account, for the
-- owner's banner (see the migration).
ALTER TABLE shops ADD COLUMN sms_problem_code integer;
ALTER TABLE shops ADD COLUMN sms_problem_at timestamptz;
ALTER TABLE shops ADD COLUMN sms_problem_count integer NOT NULL DEFAULT 0;

-- 0012_booking_sweep
-- The booking sweep's index (live bookings by age) and its spacing of link attempts
-- (see the migration).
ALTER TABLE bookings ADD COLUMN link_retry_at timestamptz;
CREATE INDEX bookings_live_created_idx ON bookings (created_at) WHERE status IN ('pending_payment', 'confirmed');

-- 0013_answers_heard
-- When the answer was written back in time to reach the customer (the epoch: stored by a
-- server that did not mark answers; see the migration), when the sweeper took over
-- telling it by text, and the booking a booked answer tells of.
ALTER TABLE inbound_messages ADD COLUMN answered_at timestamptz DEFAULT 'epoch';
ALTER TABLE inbound_messages ADD COLUMN retold_at timestamptz;
ALTER TABLE inbound_messages ADD COLUMN booking_id uuid;

-- 0014_refund_failed_dismissed
ALTER TABLE bookings ADD COLUMN refund_failed_dismissed_at timestamptz;

-- 0015_told_offers_and_heartbeats
-- The one claimable-offer rule (texted, the opening open, its current generation), and
-- the River clients' heartbeats that let a killed wave resume within a minute (see the
-- migration).
CREATE VIEW slot_offers_claimable AS
SELECT o.id, o.opening_id, o.customer_id, o.shop_id, o.generation, o.created_at, s.starts_at
FROM slot_offers o
JOIN slot_openings s ON s.id = o.opening_id
WHERE o.status = 'sent' AND s.status = 'open' AND o.generation = s.generation;
CREATE TABLE client_heartbeats (
    client_id text PRIMARY KEY,
    seen_at   timestamptz NOT NULL
);

-- 0016_webhook_endpoints
CREATE TABLE webhook_endpoints (
    id                         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    shop_id                    uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    url                        text NOT NULL CHECK (length(url) BETWEEN 1 AND 2048),
    description                text NOT NULL DEFAULT '' CHECK (length(description) <= 500),
    -- Event types, or '{*}' for all of them.
    enabled_events             text[] NOT NULL CHECK (cardinality(enabled_events) BETWEEN 1 AND 50),
    -- whsec_<base64>, sealed under SECRETS_KEY (0033: "sealed1:<key id>:<base64>"),
    -- because signing needs it back; shown to the owner only when made. After a rotation
    -- the previous secret signs too, until it expires (24 h).
    secret                     text NOT NULL,
    previous_secret            text,
    previous_secret_expires_at timestamptz,
    -- Disabled by the owner, or by the server after failing for days (the reason says).
    disabled_at                timestamptz,
    disabled_reason            text,
    -- Since when every attempt has failed (NULL: the last one succeeded).
    failing_since              timestamptz,
    created_at                 timestamptz NOT NULL,
    updated_at                 timestamptz NOT NULL,
    CHECK ((previous_secret IS NULL) = (previous_secret_expires_at IS NULL))
);
CREATE INDEX webhook_endpoints_shop_idx ON webhook_endpoints (shop_id, created_at);
-- What webhook_subscribed probes on every recorded change (the YES too).
CREATE INDEX webhook_endpoints_live_idx ON webhook_endpoints (shop_id) WHERE disabled_at IS NULL;

-- The outbox. No foreign key to shops: recording is part of other packages' hot
-- statements (the YES's claim), and a key check would lock the shop's row there (see
-- 0005); the purge removes old rows.
CREATE TABLE webhook_events (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    -- Orders a shop's events: two recorded by one statement share created_at.
    seq            bigint GENERATED ALWAYS AS IDENTITY,
    shop_id        uuid NOT NULL,
    type           text NOT NULL,
    created_at     timestamptz NOT NULL,
    -- The event's data, rendered in Go when the event was recorded (0050: see
    -- rendered) from the object as it stood then.
    subject        jsonb NOT NULL,
    -- The body every attempt sends, rendered once at dispatch.
    payload        bytea,
    dispatched_at  timestamptz,
    dispatch_error text
);
CREATE INDEX webhook_events_undispatched_idx ON webhook_events (seq) WHERE dispatched_at IS NULL;
CREATE INDEX webhook_events_created_idx ON webhook_events (created_at);
-- A shop's events (an erasure scrubs the customer's).
CREATE INDEX webhook_events_shop_idx ON webhook_events (shop_id, seq);

CREATE TABLE webhook_deliveries (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    -- The order the dispatcher made them in, which is their events' order: the owner's
    -- list pages by it, newest first.
    seq              bigint GENERATED ALWAYS AS IDENTITY,
    event_id         uuid NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
    endpoint_id      uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    shop_id          uuid NOT NULL,
    status           text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    -- Scheduled attempts made (an owner's "send again" is logged but not counted).
    attempts         integer NOT NULL DEFAULT 0,
    next_attempt_at  timestamptz,
    last_attempt_at  timestamptz,
    last_status_code integer,
    last_error       text,
    created_at       timestamptz NOT NULL,
    finished_at      timestamptz,
    UNIQUE (event_id, endpoint_id)
);
CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, seq DESC);
CREATE INDEX webhook_deliveries_created_idx ON webhook_deliveries (created_at);

CREATE TABLE webhook_attempts (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    delivery_id   uuid NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    attempted_at  timestamptz NOT NULL,
    manual        boolean NOT NULL DEFAULT false,
    status_code   integer,
    duration_ms   integer NOT NULL,
    -- The first bytes of the answer, as text.
    response_head text NOT NULL DEFAULT '',
    error         text
);
CREATE INDEX webhook_attempts_delivery_idx ON webhook_attempts (delivery_id, attempted_at);

-- The shop's enabled endpoints subscribed to any of the event types: the guard of
-- every recording ("WHERE EXISTS (SELECT FROM webhook_subscribers(shop, types))") and
-- the dispatcher's fan-out. A set-returning SQL function of one SELECT, so the planner
-- inlines it into the caller's statement: for a shop without endpoints, the guard costs
-- one probe of webhook_endpoints_live_idx. (A scalar function holding EXISTS would not
-- be inlined, and would be planned again on every call.)
CREATE FUNCTION webhook_subscribers(p_shop uuid, p_types text[]) RETURNS SETOF uuid
LANGUAGE sql STABLE PARALLEL SAFE ROWS 1
AS $$
    SELECT e.id FROM webhook_endpoints e
    WHERE e.shop_id = p_shop AND e.disabled_at IS NULL
      AND e.enabled_events && (p_types || '*'::text)
$$;

-- The events a YES's claim makes: opening.filled, and booking.confirmed too when the
-- booking is confirmed at once (a shop without payments), in that order.
CREATE FUNCTION webhook_claim_types(p_booking_status text) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE WHEN p_booking_status = 'confirmed' THEN ARRAY['opening.filled', 'booking.confirmed']
                ELSE ARRAY['opening.filled'] END
$$;

-- 0017_idempotency_keys
CREATE TABLE idempotency_keys (
    shop_id        uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    key            text NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
    -- SHA-256 of the method, path and body: the same key with another request is refused.
    request_hash   bytea NOT NULL,
    created_at     timestamptz NOT NULL,
    -- The request holding the key (a random id) and when it started: a request that
    -- died holding it is taken over once that is longer ago than a request may run.
    holder         uuid NOT NULL,
    locked_at      timestamptz NOT NULL,
    -- The stored answer; NULL while the first request is running.
    status         integer,
    content_type   text,
    location       text,
    cache_control  text,
    body           bytea,
    PRIMARY KEY (shop_id, key)
);
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);

-- 0018_calendar_feed
-- The shop's secret calendar feed token, and its SHA-256 by which a request finds the
-- shop (see the migration); full names and numbers in the feed only when the owner
-- asks.
ALTER TABLE shops ADD COLUMN calendar_token text NOT NULL;
ALTER TABLE shops ADD COLUMN calendar_token_hash bytea NOT NULL;
ALTER TABLE shops ADD CONSTRAINT shops_calendar_token_hash_key UNIQUE (calendar_token_hash);
ALTER TABLE shops ADD COLUMN calendar_full_details boolean NOT NULL DEFAULT false;

-- 0020_dashboard_session_ends
-- The dashboard sessions that signed out, until their cookies would have expired anyway
-- (see the migration).
CREATE TABLE dashboard_session_ends (
    session_id text PRIMARY KEY CHECK (length(session_id) <= 64),
    shop_id uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    expires_at timestamptz NOT NULL
);
CREATE INDEX dashboard_session_ends_expires_idx ON dashboard_session_ends (expires_at);

-- 0021_stripe_connect
-- A shop's connected Stripe account and its state as Stripe last told it (see the
-- migration); the platform's fee override for the shop (NULL: PLATFORM_FEE_BPS).
ALTER TABLE shops ADD COLUMN stripe_account_id text UNIQUE;
ALTER TABLE shops ADD COLUMN stripe_charges_enabled boolean NOT NULL DEFAULT false;
ALTER TABLE shops ADD COLUMN stripe_payouts_enabled boolean NOT NULL DEFAULT false;
ALTER TABLE shops ADD COLUMN stripe_details_submitted boolean NOT NULL DEFAULT false;
ALTER TABLE shops ADD COLUMN stripe_requirements_due text[] NOT NULL DEFAULT '{}';
ALTER TABLE shops ADD COLUMN stripe_status_at timestamptz;
ALTER TABLE shops ADD COLUMN stripe_disconnected_at timestamptz;
ALTER TABLE shops ADD COLUMN platform_fee_bps integer CHECK (platform_fee_bps BETWEEN 0 AND 5000);
-- The account that took a booking's payment (NULL: the platform's) and the platform's
-- fee on it, stored with the payment link.
ALTER TABLE bookings ADD COLUMN stripe_account text;
ALTER TABLE bookings ADD COLUMN application_fee_cents bigint NOT NULL DEFAULT 0
    CHECK (application_fee_cents >= 0 AND application_fee_cents <= amount_cents);
-- The connected account an event came from (NULL: the platform's).
ALTER TABLE stripe_events ADD COLUMN account text;

-- 0022_suppressions
-- Every STOP (and carrier opt-out) and every erased number, per shop, as HMAC-SHA256 of
-- "<shop id>:<phone>" under the server's erasure key: an added or imported number stays
-- opted out until its own START (see the migration).
CREATE TABLE sms_suppressions (
    shop_id    uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    phone_hmac bytea NOT NULL CHECK (length(phone_hmac) = 32),
    reason     text NOT NULL CHECK (reason IN ('stop', 'erased')),
    created_at timestamptz NOT NULL,
    PRIMARY KEY (shop_id, phone_hmac)
);
-- An erasure finds the customer's texts by shop and number.
CREATE INDEX inbound_messages_shop_from_idx ON inbound_messages (shop_id, from_phone);

-- 0023_languages
-- The language a shop texts in, and a customer's own (NULL: the shop's).
ALTER TABLE shops ADD COLUMN language text NOT NULL DEFAULT 'en' CHECK (language IN ('en', 'es', 'fr'));
ALTER TABLE customers ADD COLUMN language text CHECK (language IN ('en', 'es', 'fr'));

-- 0024_calendar_events
-- What each calendar feed event last said (a hash), per opening and view, with the
-- SEQUENCE and LAST-MODIFIED it was shown with: both move on when it changes.
CREATE TABLE calendar_events (
    opening_id   uuid NOT NULL REFERENCES slot_openings (id) ON DELETE CASCADE,
    include_open boolean NOT NULL,
    content_hash bytea NOT NULL CHECK (length(content_hash) = 32),
    sequence     integer NOT NULL CHECK (sequence >= 0),
    modified_at  timestamptz NOT NULL,
    PRIMARY KEY (opening_id, include_open)
);

-- 0026_inbox
-- The owner's inbox (internal/inbox): one conversation per shop and number, with every
-- text either way (see the migration).
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
-- The retention purge: conversations idle since before the keep period (BRIN: it gives
-- no order, so a shop's list never walks it; 0042).
CREATE INDEX conversations_purge_idx ON conversations USING brin (last_activity_at);

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

-- 0027_erasure_key_check
-- A check value (HMAC-SHA256 of a fixed label) of every erasure key that has been the
-- newest at a start: a start whose ERASURE_KEY leaves one out is refused.
CREATE TABLE erasure_key_checks (
    check_value bytea PRIMARY KEY CHECK (length(check_value) = 32),
    created_at  timestamptz NOT NULL
);

-- 0028_notify_phone
-- The owner's alert number for texts waiting in the inbox (NULL: no alerts).
ALTER TABLE shops ADD COLUMN notify_phone text CHECK (notify_phone ~ '^\+[1-9][0-9]{7,14}$');

-- 0029_conversation_texts
-- A conversation's texts as the owner reads them: those recorded in conversation_messages
-- (offers, the shop's transactional texts, texts that needed the owner and their
-- answers, the owner's replies) and every other text the number sent the shop with the
-- answer it got, read from inbound_messages (YES, NO, STOP, HELP...), which the reply
-- path already stores: keeping them here costs the YES path no write. A text recorded in
-- both (by MessageSid) is read from conversation_messages. Inbound texts and their
-- answers have ids made from their MessageSid, so a text keeps its id from read to read.
-- A stored answer without its words yet (a late YES, filled when its answer is heard)
-- is left out until they are there.
CREATE VIEW conversation_texts AS
SELECT m.id, m.conversation_id, m.direction, m.author, m.body, m.at, m.status
FROM conversation_messages m
UNION ALL
SELECT md5('in:' || im.message_sid)::uuid, c.id, 'in', 'customer', im.body, im.received_at, 'received'
FROM conversations c
JOIN inbound_messages im ON im.shop_id = c.shop_id AND im.from_phone = c.phone
WHERE NOT EXISTS (SELECT 1 FROM conversation_messages cm WHERE cm.shop_id = im.shop_id AND cm.message_sid = im.message_sid)
UNION ALL
SELECT md5('answer:' || im.message_sid)::uuid, c.id, 'out', 'system', im.reply, im.handled_at, 'sent'
FROM conversations c
JOIN inbound_messages im ON im.shop_id = c.shop_id AND im.from_phone = c.phone
WHERE im.handled_at IS NOT NULL AND im.reply <> ''
  AND NOT EXISTS (SELECT 1 FROM conversation_messages cm WHERE cm.shop_id = im.shop_id AND cm.message_sid = im.message_sid);

-- 0030_conversation_texts_order
-- A text and its answer can share an instant (a late YES is answered as it is stored):
-- ord puts a text before its answer where their times tie (0 for every recorded text,
-- whose UUIDv7 ids keep their order, and for an inbound one; 1 for its answer).
CREATE OR REPLACE VIEW conversation_texts AS
SELECT m.id, m.conversation_id, m.direction, m.author, m.body, m.at, m.status, 0::smallint AS ord
FROM conversation_messages m
UNION ALL
SELECT md5('in:' || im.message_sid)::uuid, c.id, 'in', 'customer', im.body, im.received_at, 'received', 0::smallint
FROM conversations c
JOIN inbound_messages im ON im.shop_id = c.shop_id AND im.from_phone = c.phone
WHERE NOT EXISTS (SELECT 1 FROM conversation_messages cm WHERE cm.shop_id = im.shop_id AND cm.message_sid = im.message_sid)
UNION ALL
SELECT md5('answer:' || im.message_sid)::uuid, c.id, 'out', 'system', im.reply, im.handled_at, 'sent', 1::smallint
FROM conversations c
JOIN inbound_messages im ON im.shop_id = c.shop_id AND im.from_phone = c.phone
WHERE im.handled_at IS NOT NULL AND im.reply <> ''
  AND NOT EXISTS (SELECT 1 FROM conversation_messages cm WHERE cm.shop_id = im.shop_id AND cm.message_sid = im.message_sid);

-- 0033_secrets_at_rest
-- The calendar feed's address is derived (HMAC of the shop's id and its generation under
-- SECRETS_KEY's key calendar_key_id; NULL: not derived yet), kept only as its hash; a
-- re-keyed feed's previous address keeps working as the legacy hash until the owner
-- rotates (see the migration). Webhook secrets are sealed in their columns.
ALTER TABLE shops ADD COLUMN calendar_generation integer NOT NULL DEFAULT 0 CHECK (calendar_generation >= 0);
ALTER TABLE shops ADD COLUMN calendar_key_id bytea CHECK (length(calendar_key_id) = 8);
ALTER TABLE shops ADD COLUMN calendar_legacy_token_hash bytea UNIQUE;
ALTER TABLE shops DROP COLUMN calendar_token;

-- 0037_sms_senders
-- A shop's own sender: the number and the Messaging Service the platform set up for it
-- (POST /api/shops/{id}/sms/number). 'provisioning' while the steps run (each made
-- object's SID is recorded before the next step, so a retry makes nothing twice).
CREATE TABLE sms_senders (
    shop_id               uuid PRIMARY KEY REFERENCES shops (id) ON DELETE CASCADE,
    status                text NOT NULL CHECK (status IN ('provisioning', 'active')),
    number                text CHECK (number ~ '^\+[1-9][0-9]{7,14}$'),
    number_sid            text,
    bought                boolean NOT NULL DEFAULT false,
    us_local              boolean NOT NULL DEFAULT false,
    messaging_service_sid text,
    created_at            timestamptz NOT NULL,
    updated_at            timestamptz NOT NULL,
    CHECK (status = 'provisioning' OR (number IS NOT NULL AND messaging_service_sid IS NOT NULL))
);
-- Texts from a number find its Messaging Service.
CREATE UNIQUE INDEX sms_senders_number_idx ON sms_senders (number);

-- A shop's US A2P 10DLC registration: the business's details as submitted, where the
-- flow stands, Twilio's brand and campaign statuses and reason, and the SID of every
-- object made so far by step name (steps), for the submission it belongs to.
CREATE TABLE sms_registrations (
    shop_id         uuid PRIMARY KEY REFERENCES shops (id) ON DELETE CASCADE,
    details         jsonb NOT NULL,
    status          text NOT NULL CHECK (status IN ('submitted', 'brand_pending', 'campaign_pending', 'verified', 'failed')),
    brand_status    text,
    campaign_status text,
    failure_reason  text,
    steps           jsonb NOT NULL DEFAULT '{}',
    submission      integer NOT NULL DEFAULT 1,
    updated_at      timestamptz NOT NULL
);

-- Every change of a registration's statuses, in order.
CREATE TABLE sms_registration_transitions (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    shop_id         uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    submission      integer NOT NULL,
    at              timestamptz NOT NULL,
    status          text NOT NULL,
    brand_status    text,
    campaign_status text,
    failure_reason  text
);
CREATE INDEX sms_registration_transitions_shop_idx ON sms_registration_transitions (shop_id, id);

-- 0041_staff_services: a shop's people (staff) and what they do (services, with a
-- duration and a price); an opening may be one person's freed time, each offer names
-- the service it offers the customer at its price, and a booking records what was
-- booked. The database refuses two live bookings of one person that overlap.
CREATE EXTENSION IF NOT EXISTS btree_gist;

CREATE TABLE staff (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    shop_id    uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    name       text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    active     boolean NOT NULL DEFAULT true,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX staff_shop_name_idx ON staff (shop_id, lower(name));

-- staff_ids empty: anyone can do it.
CREATE TABLE services (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    shop_id          uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    name             text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    duration_minutes integer NOT NULL CHECK (duration_minutes BETWEEN 5 AND 480),
    price_cents      bigint NOT NULL CHECK (price_cents > 0 AND price_cents <= 99999999),
    staff_ids        uuid[] NOT NULL DEFAULT '{}',
    active           boolean NOT NULL DEFAULT true,
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL
);
CREATE UNIQUE INDEX services_shop_name_idx ON services (shop_id, lower(name));

-- Only these people (empty: anyone).
ALTER TABLE customers ADD COLUMN pref_staff_ids uuid[] NOT NULL DEFAULT '{}';

-- An opening is a person's freed time (staff_id, NULL: anyone's) and may be the rest of
-- another's after a shorter booking (parent_id). With services, it need not name one.
ALTER TABLE slot_openings
    ADD COLUMN staff_id  uuid REFERENCES staff (id),
    ADD COLUMN parent_id uuid REFERENCES slot_openings (id);
ALTER TABLE slot_openings DROP CONSTRAINT slot_openings_service_check;
ALTER TABLE slot_openings ADD CONSTRAINT slot_openings_service_check CHECK (length(service) <= 100);
ALTER TABLE slot_openings DROP CONSTRAINT slot_openings_price_cents_check;
ALTER TABLE slot_openings ADD CONSTRAINT slot_openings_price_cents_check CHECK (price_cents >= 0);

-- What the offer offers this customer: NULL, the opening's own service and price.
ALTER TABLE slot_offers
    ADD COLUMN service_id       uuid REFERENCES services (id),
    ADD COLUMN service          text,
    ADD COLUMN duration_minutes integer,
    ADD COLUMN price_cents      bigint;

-- What was booked, by whom and when: [starts_at, ends_at) of staff_id's time.
ALTER TABLE bookings
    ADD COLUMN service          text,
    ADD COLUMN duration_minutes integer,
    ADD COLUMN staff_id         uuid REFERENCES staff (id),
    ADD COLUMN starts_at        timestamptz,
    ADD COLUMN ends_at          timestamptz,
    ADD CONSTRAINT bookings_time_check CHECK (ends_at IS NULL OR ends_at > starts_at),
    ADD CONSTRAINT bookings_staff_no_overlap EXCLUDE USING gist (staff_id WITH =, tstzrange(starts_at, ends_at) WITH &&)
        WHERE (staff_id IS NOT NULL AND status IN ('pending_payment', 'confirmed'));

-- 0043_inbound_heard_hot: the mark of a heard answer is a heap-only update (no index
-- names answered_at; pages keep room for the new row version).
ALTER TABLE inbound_messages SET (fillfactor = 70);
CREATE INDEX inbound_messages_unheard_idx ON inbound_messages (handled_at)
    WHERE outcome IS NOT NULL AND retold_at IS NULL;

-- 0044_opening_source: where an opening came from (NULL: the owner; 'appointment': a
-- cancelled appointment of the book, source_id its id).
ALTER TABLE slot_openings ADD COLUMN source text, ADD COLUMN source_id uuid;
ALTER TABLE slot_openings ADD CONSTRAINT slot_openings_source_check
    CHECK (source IS NULL OR (source = 'appointment' AND source_id IS NOT NULL));

-- 0060_appointment_book: the shop's appointment book (internal/book). An appointment is
-- named in its source by (source, external_id); (source_version, source_updated_at)
-- orders the source's descriptions of it, so an older one changes nothing. releases
-- counts the times it freed the time it held (cancelled, moved, or booked at another
-- time): each release may declare one opening, exactly once, fenced by
-- appointment_openings' primary key.
ALTER TABLE shops ADD COLUMN auto_declare boolean NOT NULL DEFAULT true;

CREATE TABLE appointments (
    id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    shop_id           uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    source            text NOT NULL CHECK (source IN ('api', 'calcom', 'square', 'ics', 'slotrecovery')),
    -- NULL for the book's own records (a booking made by a YES).
    external_id       text CHECK (length(external_id) BETWEEN 1 AND 300),
    customer_id       uuid REFERENCES customers (id),
    phone             text CHECK (phone ~ '^\+[1-9][0-9]{7,14}$'),
    customer_name     text NOT NULL DEFAULT '' CHECK (length(customer_name) <= 200),
    staff_id          uuid REFERENCES staff (id),
    external_staff    text NOT NULL DEFAULT '' CHECK (length(external_staff) <= 300),
    service           text NOT NULL DEFAULT '' CHECK (length(service) <= 200),
    price_cents       bigint NOT NULL DEFAULT 0 CHECK (price_cents >= 0),
    starts_at         timestamptz NOT NULL,
    duration_minutes  integer NOT NULL CHECK (duration_minutes BETWEEN 1 AND 1440),
    status            text NOT NULL CHECK (status IN ('booked', 'cancelled', 'moved', 'completed', 'no_show')),
    source_version    bigint NOT NULL DEFAULT 0,
    source_updated_at timestamptz NOT NULL,
    releases          integer NOT NULL DEFAULT 0 CHECK (releases >= 0),
    created_at        timestamptz NOT NULL,
    changed_at        timestamptz NOT NULL,
    CONSTRAINT appointments_external_key UNIQUE (shop_id, source, external_id)
);
CREATE INDEX appointments_shop_start_idx ON appointments (shop_id, starts_at, id);
CREATE INDEX appointments_booked_idx ON appointments (shop_id, staff_id, starts_at) WHERE status = 'booked';

-- The opening each release of an appointment declares, for the time it freed (the time
-- the book held: a cancelled appointment's, or a moved one's former time): waiting (the
-- shop does not declare by itself: the owner offers it), pending (claimed, not tried
-- yet), declaring (being declared since attempted_at), declared (opening_id), skipped
-- (reason: past the cutoff, the time already open or booked again, ...).
CREATE TABLE appointment_openings (
    shop_id          uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    appointment_id   uuid NOT NULL REFERENCES appointments (id) ON DELETE CASCADE,
    release_no       integer NOT NULL CHECK (release_no >= 1),
    starts_at        timestamptz NOT NULL,
    duration_minutes integer NOT NULL CHECK (duration_minutes BETWEEN 1 AND 1440),
    staff_id         uuid REFERENCES staff (id),
    state            text NOT NULL CHECK (state IN ('waiting', 'pending', 'declaring', 'declared', 'skipped')),
    opening_id     uuid REFERENCES slot_openings (id) ON DELETE SET NULL,
    reason         text NOT NULL DEFAULT '',
    attempted_at   timestamptz,
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL,
    PRIMARY KEY (shop_id, appointment_id, release_no)
);
CREATE INDEX appointment_openings_due_idx ON appointment_openings (attempted_at NULLS FIRST)
    WHERE state IN ('pending', 'declaring');

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
-- legacy.go). (Dropped here: webhook_opening_subject and webhook_record_opening, the
-- rendering in PL/pgSQL.)
ALTER TABLE webhook_events ADD COLUMN rendered boolean NOT NULL DEFAULT false;

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

-- 0056_customer_exports: every export of the customer list with whole phone numbers,
-- which the owner confirms with the shop's key and can read back on the customers
-- page (when, from which browser, how many customers; NULL: the download did not
-- finish). No customer's data is in it.
CREATE TABLE customer_exports (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    shop_id     uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    at          timestamptz NOT NULL,
    user_agent  text NOT NULL DEFAULT '' CHECK (length(user_agent) <= 200),
    customers   integer CHECK (customers >= 0)
);
CREATE INDEX customer_exports_shop_idx ON customer_exports (shop_id, at DESC);

-- 0061_connectors: the booking systems that keep a shop's appointment book (internal/book).
-- A connector is one source of a shop's appointments: cal.com and Square post signed
-- webhooks to /webhooks/<kind>/<id>, a calendar feed is polled. secret is sealed under
-- SECRETS_KEY, bound to the shop and the connector (cal.com's webhook secret, which the
-- server makes; Square's subscription signature key, which the owner gives, NULL until
-- given; the feed's address, whose token is its credential). The last delivery and what
-- became of it are kept on the row for the owner to see; connector_deliveries remembers
-- the deliveries applied, by the vendor's event id (cal.com: trigger and booking uid), so
-- a redelivery is acknowledged without being applied again.
CREATE TABLE connectors (
    id                   uuid PRIMARY KEY,
    shop_id              uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    kind                 text NOT NULL CHECK (kind IN ('calcom', 'square', 'ics')),
    description          text NOT NULL DEFAULT '' CHECK (length(description) <= 200),
    secret               text CHECK (secret LIKE 'sealed1:%'),
    created_at           timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL,
    last_delivery_at     timestamptz,
    last_delivery_event  text NOT NULL DEFAULT '' CHECK (length(last_delivery_event) <= 100),
    last_delivery_result text NOT NULL DEFAULT '' CHECK (length(last_delivery_result) <= 40),
    CHECK (kind = 'square' OR secret IS NOT NULL)
);
CREATE INDEX connectors_shop_idx ON connectors (shop_id, created_at, id);

CREATE TABLE connector_deliveries (
    connector_id uuid NOT NULL REFERENCES connectors (id) ON DELETE CASCADE,
    delivery_id  text NOT NULL CHECK (length(delivery_id) BETWEEN 1 AND 400),
    shop_id      uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    event        text NOT NULL DEFAULT '' CHECK (length(event) <= 100),
    received_at  timestamptz NOT NULL,
    PRIMARY KEY (connector_id, delivery_id)
);
CREATE INDEX connector_deliveries_received_idx ON connector_deliveries (received_at);

-- 0062_connector_feeds: what a calendar feed (an ics connector) last answered, for the
-- next poll's conditional GET (If-None-Match, If-Modified-Since), and when it was last
-- polled.
ALTER TABLE connectors
    ADD COLUMN feed_etag          text NOT NULL DEFAULT '' CHECK (length(feed_etag) <= 500),
    ADD COLUMN feed_last_modified text NOT NULL DEFAULT '' CHECK (length(feed_last_modified) <= 100),
    ADD COLUMN polled_at          timestamptz;
CREATE INDEX connectors_feeds_due_idx ON connectors (polled_at NULLS FIRST, id) WHERE kind = 'ics';

-- 0057_calendar_legacy_until: how long a kept previous feed address works (shops).
ALTER TABLE shops ADD COLUMN calendar_legacy_until timestamptz;

-- 0064_book_appointments: the shop's book as the owners read it (internal/book's Get and
-- List): the appointments its sources and the owners' API described, and the bookings a
-- YES made (source slotrecovery), read from the ledger's own rows rather than copied: a
-- YES writes its booking and nothing more. A booking held or paid is booked; one that
-- lapsed, failed or was cancelled is cancelled (the ledger reopens its opening itself:
-- it is not a release of the book and declares nothing). Its shop is its opening's, so
-- a shop's page is read through slot_openings_shop_status_idx, not a scan of bookings.
CREATE VIEW book_appointments AS
SELECT a.id, a.shop_id, a.source, a.external_id, a.customer_id, a.phone, a.customer_name, a.staff_id,
    a.external_staff, a.service, a.price_cents, a.starts_at, a.duration_minutes, a.status,
    a.source_version, a.source_updated_at, a.releases, a.created_at, a.changed_at
FROM appointments a
UNION ALL
SELECT b.id, s.shop_id, 'slotrecovery'::text, NULL::text, b.customer_id, NULLIF(c.phone, ''), c.name,
    COALESCE(b.staff_id, s.staff_id), ''::text, COALESCE(b.service, s.service), b.amount_cents, s.starts_at,
    COALESCE(b.duration_minutes, s.duration_minutes),
    CASE WHEN b.status IN ('pending_payment', 'confirmed') THEN 'booked' ELSE 'cancelled' END,
    0::bigint, b.updated_at, 0, b.created_at, b.updated_at
FROM bookings b
JOIN slot_openings s ON s.id = b.opening_id
JOIN customers c ON c.id = b.customer_id;

-- 0066_customer_possibly_reassigned: when the customer's number answered "wrong number"
-- (it may have changed hands); the owner clears it.
ALTER TABLE customers ADD COLUMN possibly_reassigned_at timestamptz;

-- 0063_shop_wording: how a shop's texts are worded (internal/texts). formality: how they
-- address customers, NULL for the language's default (informal tú in Spanish, formal vous
-- in French). gsm7: prefer folds accents outside GSM-7 where that saves a segment, exact
-- keeps them. help_contact: how customers reach the shop, given in the HELP answer; NULL
-- gives the shop's SMS number.
ALTER TABLE shops
    ADD COLUMN formality    text CHECK (formality IN ('informal', 'formal')),
    ADD COLUMN gsm7         text NOT NULL DEFAULT 'prefer' CHECK (gsm7 IN ('prefer', 'exact')),
    ADD COLUMN help_contact text CHECK (length(help_contact) BETWEEN 1 AND 100);

-- 0067_move_up: move-up offers (issue 44). customers.move_up: the customer agreed to be
-- offered an earlier time for an appointment they hold. shops.move_up_days: how far ahead
-- of an opening a booked appointment may be to be offered it; shops.chain_max: how many
-- moves one chain of freed times may make.
ALTER TABLE customers ADD COLUMN move_up boolean NOT NULL DEFAULT false;
ALTER TABLE shops
    ADD COLUMN move_up_days integer NOT NULL DEFAULT 14 CHECK (move_up_days BETWEEN 0 AND 90),
    ADD COLUMN chain_max    integer NOT NULL DEFAULT 5 CHECK (chain_max BETWEEN 0 AND 20);

-- 0068_move_up_offers: move-up offers and chains (issue 44).
-- slot_offers.move_from: a move-up offer's appointment, the later booking of the
-- customer that taking the opening would move (NULL: a plain offer). It is read with the
-- offer by the claim (slot_offers_claimable), so a plain YES reads nothing more.
-- appointments.moved_to: the opening a move-up moved the appointment to (status moved).
-- slot_openings.chain_*: an opening freed by a move-up: the chain's id (its first
-- opening), how many moves made it (1 for the first) and the appointment moved away.
ALTER TABLE slot_offers ADD COLUMN move_from uuid REFERENCES appointments (id) ON DELETE CASCADE;
CREATE INDEX slot_offers_move_from_idx ON slot_offers (move_from) WHERE move_from IS NOT NULL;
ALTER TABLE appointments ADD COLUMN moved_to uuid REFERENCES slot_openings (id);
ALTER TABLE slot_openings
    ADD COLUMN chain_id         uuid,
    ADD COLUMN chain_position   integer CHECK (chain_position >= 1),
    ADD COLUMN chain_moved_from uuid,
    ADD CONSTRAINT slot_openings_chain_whole CHECK ((chain_id IS NULL) = (chain_position IS NULL)
        AND (chain_id IS NULL) = (chain_moved_from IS NULL));
CREATE OR REPLACE VIEW slot_offers_claimable AS
SELECT o.id, o.opening_id, o.customer_id, o.shop_id, o.generation, o.created_at, s.starts_at, o.move_from
FROM slot_offers o
JOIN slot_openings s ON s.id = o.opening_id
WHERE o.status = 'sent' AND s.status = 'open' AND o.generation = s.generation;
-- book_appointments (0064) carries appointments.moved_to, so that a row of the view is
-- an appointment row (a YES booking moved nowhere: NULL).
CREATE OR REPLACE VIEW book_appointments AS
SELECT a.id, a.shop_id, a.source, a.external_id, a.customer_id, a.phone, a.customer_name, a.staff_id,
    a.external_staff, a.service, a.price_cents, a.starts_at, a.duration_minutes, a.status,
    a.source_version, a.source_updated_at, a.releases, a.created_at, a.changed_at, a.moved_to
FROM appointments a
UNION ALL
SELECT b.id, s.shop_id, 'slotrecovery'::text, NULL::text, b.customer_id, NULLIF(c.phone, ''), c.name,
    COALESCE(b.staff_id, s.staff_id), ''::text, COALESCE(b.service, s.service), b.amount_cents, s.starts_at,
    COALESCE(b.duration_minutes, s.duration_minutes),
    CASE WHEN b.status IN ('pending_payment', 'confirmed') THEN 'booked' ELSE 'cancelled' END,
    0::bigint, b.updated_at, 0, b.created_at, b.updated_at, NULL::uuid
FROM bookings b
JOIN slot_openings s ON s.id = b.opening_id
JOIN customers c ON c.id = b.customer_id;

-- ==== joining and consent (issue 46; internal/join, internal/shops) ====

-- 0070_shop_slug: the shop's public name in its join page's address (/join/<slug>),
-- unique across shops, and the privacy policy its consent disclosure links to.
ALTER TABLE shops
    ADD COLUMN slug        text NOT NULL DEFAULT ('shop-' || left(replace(gen_random_uuid()::text, '-', ''), 12))
        CHECK (length(slug) BETWEEN 3 AND 40 AND slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$'),
    ADD COLUMN privacy_url text CHECK (length(privacy_url) BETWEEN 9 AND 300 AND privacy_url ~ '^https://[^\s]+$');
CREATE UNIQUE INDEX shops_slug_key ON shops (slug);

-- 0071_join_requests: a request to join a shop's list (internal/join), from its join page
-- or by texting its join keyword (method), waiting for the number's reply YES to the
-- confirmation text. It is not a customer: an
-- unconfirmed request expires (expires_at, 24 h after it was made) and leaves none, and
-- its name, number and address are purged with it. disclosure_* is the consent wording
-- the visitor ticked, kept verbatim for the consent record; confirmation_body is the text
-- sent. confirmed_at and customer_id are set once, by the reply that confirms it.
CREATE TABLE join_requests (
    id                 uuid PRIMARY KEY,
    shop_id            uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    phone              text NOT NULL CHECK (phone ~ '^\+[1-9][0-9]{7,14}$'),
    name               text NOT NULL CHECK (length(name) <= 100),
    language           text NOT NULL CHECK (language IN ('en', 'es', 'fr')),
    method             text NOT NULL DEFAULT 'page' CHECK (method IN ('page', 'keyword')),
    ip                 inet,
    user_agent         text NOT NULL CHECK (length(user_agent) <= 300),
    disclosure_version text NOT NULL,
    disclosure_text    text NOT NULL CHECK (length(disclosure_text) BETWEEN 1 AND 2000),
    confirmation_body  text NOT NULL,
    created_at         timestamptz NOT NULL,
    expires_at         timestamptz NOT NULL,
    confirmed_at       timestamptz,
    customer_id        uuid REFERENCES customers (id) ON DELETE SET NULL
);
-- A reply finds the number's newest live request of the shop.
CREATE INDEX join_requests_live_idx ON join_requests (shop_id, phone, created_at DESC);
-- The purge of expired requests.
CREATE INDEX join_requests_expires_idx ON join_requests (expires_at);

-- 0072_consent_events: the consent record (internal/join): every opt-in and opt-out of a
-- customer, with how it was given (method), when, from where (ip and user_agent, for the
-- join page only), in which language, to which words (disclosure_*: the version, the
-- SHA-256 of the text and the text itself), the reply that confirmed it (confirmation_*:
-- the customer's message's provider id, its words and when; NULL when none was asked),
-- whether the owner asserted it (an import, the API, the dashboard) and by whom, and the
-- customer's own words for an opt-out (revocation_text). Rows are never changed: an
-- erasure of the customer blanks the customer, the record keeps the proof.
CREATE TABLE consent_events (
    id                 uuid PRIMARY KEY,
    shop_id            uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    customer_id        uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
    kind               text NOT NULL CHECK (kind IN ('opt_in', 'opt_out')),
    method             text NOT NULL CHECK (method IN ('page', 'keyword', 'import', 'api', 'dashboard', 'reply')),
    at                 timestamptz NOT NULL,
    ip                 inet,
    user_agent         text CHECK (length(user_agent) <= 300),
    language           text NOT NULL CHECK (language IN ('en', 'es', 'fr')),
    disclosure_version text,
    disclosure_sha256  bytea CHECK (length(disclosure_sha256) = 32),
    disclosure_text    text,
    confirmation_sid   text,
    confirmation_body  text,
    confirmation_at    timestamptz,
    asserted_by_owner  boolean NOT NULL DEFAULT false,
    asserted_by        text,
    revocation_text    text CHECK (length(revocation_text) <= 1600),
    -- The join request a page opt-in confirmed: it is recorded once.
    join_request_id    uuid UNIQUE,
    CHECK (method = 'page' OR (ip IS NULL AND user_agent IS NULL)),
    CHECK ((disclosure_text IS NULL) = (disclosure_sha256 IS NULL)),
    CHECK (confirmation_at IS NOT NULL OR (confirmation_sid IS NULL AND confirmation_body IS NULL))
);
-- The export reads a shop's events by time.
CREATE INDEX consent_events_shop_at_idx ON consent_events (shop_id, at, id);
CREATE INDEX consent_events_customer_idx ON consent_events (customer_id, at);

-- 0073
-- customers_cancel_by_text: a booked customer's "can't make it" cancels the booking and
-- reopens its opening (on, the default), or goes to the owner's inbox (off) (issue 45).
-- ranking and skip_after_no_shows: who a wave texts first inside a priority tier, and
-- how many no-shows in 180 days keep a customer out of offers (NULL: never) (issue 47).
ALTER TABLE shops
    ADD COLUMN customers_cancel_by_text boolean NOT NULL DEFAULT true,
    ADD COLUMN ranking text NOT NULL DEFAULT 'priority' CHECK (ranking IN ('priority', 'fair', 'reliable', 'value')),
    ADD COLUMN skip_after_no_shows integer CHECK (skip_after_no_shows BETWEEN 1 AND 20);

-- The owner's alert number waits here, with a code texted to it, until the owner enters
-- the code: alerts go only to shops.notify_phone, a number that proved it is the owner's
-- (issue 49). One pending number a shop; the code is kept as a hash.
CREATE TABLE notify_phone_confirmations (
    shop_id    uuid PRIMARY KEY REFERENCES shops (id) ON DELETE CASCADE,
    phone      text NOT NULL,
    code_hash  bytea NOT NULL CHECK (length(code_hash) = 32),
    sent_at    timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    attempts   integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    -- Codes sent to this shop's pending numbers today, to bound what an owner's key can
    -- make us text.
    sends_day  date NOT NULL,
    sends      integer NOT NULL DEFAULT 1 CHECK (sends >= 0)
);

-- 0075_offer_record: every offer on the record with its reason (internal/offers), and
-- what the ranking and the stats read.
-- Attendance of a booking (written by internal/ledger): at most one of the two is set.
ALTER TABLE bookings ADD COLUMN attended_at timestamptz;
ALTER TABLE bookings ADD COLUMN no_show_at timestamptz;
ALTER TABLE bookings ADD CONSTRAINT bookings_attendance_check CHECK (attended_at IS NULL OR no_show_at IS NULL);
-- A customer's bookings by time, with what the ranking reads of them (an index-only
-- scan a customer: the ranking's last booking, no-shows and lapsed holds), the stats.
CREATE INDEX bookings_customer_created_idx ON bookings (customer_id, created_at DESC) INCLUDE (status, no_show_at);
-- The owner cleared the customer's no-shows: those before this moment no longer keep
-- them from being offered (shops' skip_after_no_shows).
ALTER TABLE customers ADD COLUMN no_shows_cleared_at timestamptz;
-- An offer's rank in its wave (1: texted first) and the facts that put it there
-- (offers.Reason, rendered in words in Go). NULL for offers recorded before 0075.
ALTER TABLE slot_offers ADD COLUMN rank integer;
ALTER TABLE slot_offers ADD COLUMN reason jsonb;
-- Each recorded wave: when, under which ranking, and who was left out for each reason
-- (skipped: counts by reason; skipped_ids: the customers by reason, except
-- already_offered, which the offers themselves record).
CREATE TABLE offer_waves (
    opening_id  uuid NOT NULL REFERENCES slot_openings (id) ON DELETE CASCADE,
    generation  integer NOT NULL,
    wave        integer NOT NULL,
    shop_id     uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    at          timestamptz NOT NULL,
    ranking     text NOT NULL,
    skipped     jsonb NOT NULL,
    skipped_ids jsonb NOT NULL,
    PRIMARY KEY (opening_id, generation, wave)
);

-- 0079
-- join_allowed_countries: the calling codes a shop's join page and join keyword accept
-- besides the shop's own (its SMS number's), which is always allowed.
CREATE TABLE join_allowed_countries (
    shop_id      uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    calling_code text NOT NULL CHECK (calling_code ~ '^[1-9][0-9]{0,2}$'),
    PRIMARY KEY (shop_id, calling_code)
);

-- join_refusals: how many join requests a shop refused each day (UTC), by reason, for
-- the dashboard: one upsert a refusal. No number, no address: counts only.
CREATE TABLE join_refusals (
    shop_id uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    day     date NOT NULL,
    reason  text NOT NULL CHECK (reason IN ('honeypot', 'country', 'shape', 'own_number', 'ip', 'number', 'shop_budget', 'unavailable')),
    count   integer NOT NULL CHECK (count > 0),
    last_at timestamptz NOT NULL,
    PRIMARY KEY (shop_id, day, reason)
);
CREATE INDEX join_refusals_day_idx ON join_refusals (day);

-- join_budget_spent: the hours (UTC, truncated) in which a shop's hourly budget of
-- confirmation texts was spent. The primary key makes the owner's alert once an hour:
-- only the insert that creates the row queues it.
CREATE TABLE join_budget_spent (
    shop_id uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    hour    timestamptz NOT NULL,
    at      timestamptz NOT NULL,
    PRIMARY KEY (shop_id, hour)
);
CREATE INDEX join_budget_spent_hour_idx ON join_budget_spent (hour);

-- What a joining customer wants (days, times, services, people), kept with the request
-- and saved on the customer by their YES; NULL: nothing asked for (any opening).
ALTER TABLE join_requests ADD COLUMN preferences jsonb;
-- 0080
-- feed) is listed on the dashboard for the owner to copy into that system, until the
-- owner says it is copied (issue 44).
ALTER TABLE appointments ADD COLUMN copied_at timestamptz;
CREATE INDEX appointments_moves_to_copy_idx ON appointments (shop_id)
    WHERE status = 'moved' AND copied_at IS NULL AND source IN ('calcom', 'square', 'ics');
-- book_appointments (0064, 0068) carries appointments.copied_at, so that a row of the
-- view is still an appointment row (a YES booking is never copied anywhere: NULL).
CREATE OR REPLACE VIEW book_appointments AS
SELECT a.id, a.shop_id, a.source, a.external_id, a.customer_id, a.phone, a.customer_name, a.staff_id,
    a.external_staff, a.service, a.price_cents, a.starts_at, a.duration_minutes, a.status,
    a.source_version, a.source_updated_at, a.releases, a.created_at, a.changed_at, a.moved_to, a.copied_at
FROM appointments a
UNION ALL
SELECT b.id, s.shop_id, 'slotrecovery'::text, NULL::text, b.customer_id, NULLIF(c.phone, ''), c.name,
    COALESCE(b.staff_id, s.staff_id), ''::text, COALESCE(b.service, s.service), b.amount_cents, s.starts_at,
    COALESCE(b.duration_minutes, s.duration_minutes),
    CASE WHEN b.status IN ('pending_payment', 'confirmed') THEN 'booked' ELSE 'cancelled' END,
    0::bigint, b.updated_at, 0, b.created_at, b.updated_at, NULL::uuid, NULL::timestamptz
FROM bookings b
JOIN slot_openings s ON s.id = b.opening_id
JOIN customers c ON c.id = b.customer_id;
-- 0081
-- paused_until: a customer who texted PAUSE gets no offers before it (a wave counts them
-- as skipped, reason paused); RESUME clears it. NULL: not paused.
ALTER TABLE customers ADD COLUMN paused_until timestamptz;
-- join_keywords: the words (upper case, 2 to 20 letters or digits, at most 5) a text may
-- be to ask to join the shop's list, besides the defaults JOIN, UNIRME and INSCRIRE
-- (internal/join, internal/shops).
ALTER TABLE shops ADD COLUMN join_keywords text[] NOT NULL DEFAULT '{}'
    CHECK (cardinality(join_keywords) <= 5);

-- 0084
-- The vendor's API key (cal.com's cal_live_/cal_test_ key, Square's access token),
-- sealed under SECRETS_KEY like the connector's secret; NULL: none, moves are listed
-- for the owner to copy.
ALTER TABLE connectors ADD COLUMN api_key text CHECK (api_key LIKE 'sealed1:%');
-- One row per move written back: the fence that makes it written once, what the vendor
-- answered (cal.com's new booking uid, Square's version after the update: how the echo
-- of our own write among the vendor's webhooks is known) and, once it failed for good,
-- the vendor's reason for the owner.
CREATE TABLE appointment_write_backs (
    appointment_id  uuid PRIMARY KEY REFERENCES appointments (id) ON DELETE CASCADE,
    shop_id         uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    source          text NOT NULL CHECK (source IN ('calcom', 'square')),
    external_id     text NOT NULL,
    starts_at       timestamptz NOT NULL,
    state           text NOT NULL CHECK (state IN ('pending', 'written', 'failed')),
    new_external_id text,
    new_version     bigint,
    error           text NOT NULL DEFAULT '' CHECK (length(error) <= 500),
    attempts        integer NOT NULL DEFAULT 0,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL
);
CREATE INDEX appointment_write_backs_external_idx ON appointment_write_backs (shop_id, source, external_id);
CREATE INDEX appointment_write_backs_new_idx ON appointment_write_backs (shop_id, source, new_external_id)
    WHERE new_external_id IS NOT NULL;

-- 0085
-- Two more payment modes: deposit (a part of the price at the YES) and card (nothing at
-- the YES, the card kept for a fee later).
ALTER TABLE shops DROP CONSTRAINT shops_payment_mode_check;
ALTER TABLE shops ADD CONSTRAINT shops_payment_mode_check
    CHECK (payment_mode IN ('checkout', 'deposit', 'card', 'none'));
-- The deposit: a fixed amount or a share of the price (one of them in deposit mode,
-- checked in Go); keep_card keeps the card of a checkout or deposit payment for a fee.
ALTER TABLE shops ADD COLUMN deposit_cents bigint CHECK (deposit_cents > 0);
ALTER TABLE shops ADD COLUMN deposit_percent integer CHECK (deposit_percent BETWEEN 1 AND 100);
ALTER TABLE shops ADD COLUMN keep_card boolean NOT NULL DEFAULT false;
-- The cancellation policy shown on the payment page, and its fees; policy_version
-- moves on with every change of them, so a booking's accepted version names one text.
ALTER TABLE shops ADD COLUMN cancellation_policy text NOT NULL DEFAULT ''
    CHECK (length(cancellation_policy) <= 500);
ALTER TABLE shops ADD COLUMN late_cancel_hours integer NOT NULL DEFAULT 24
    CHECK (late_cancel_hours BETWEEN 0 AND 720);
ALTER TABLE shops ADD COLUMN no_show_fee_cents bigint NOT NULL DEFAULT 0 CHECK (no_show_fee_cents >= 0);
ALTER TABLE shops ADD COLUMN late_cancel_fee_cents bigint NOT NULL DEFAULT 0 CHECK (late_cancel_fee_cents >= 0);
ALTER TABLE shops ADD COLUMN policy_version integer NOT NULL DEFAULT 0;
-- What a booking's payment page asked and showed, fixed when its first checkout is made
-- (a retry makes the same checkout from it), and the customer's acceptance once the
-- page is completed: the evidence for a dispute. It names no person, so an erasure of
-- the customer keeps it (the person gone, the proof kept).
CREATE TABLE booking_terms (
    booking_id            uuid PRIMARY KEY REFERENCES bookings (id) ON DELETE CASCADE,
    shop_id               uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    mode                  text NOT NULL CHECK (mode IN ('checkout', 'deposit', 'card')),
    price_cents           bigint NOT NULL,
    charged_cents         bigint NOT NULL CHECK (charged_cents >= 0),
    keep_card             boolean NOT NULL,
    policy_version        integer NOT NULL,
    policy_text           text NOT NULL,
    policy_sha256         text NOT NULL,
    late_cancel_hours     integer NOT NULL,
    no_show_fee_cents     bigint NOT NULL,
    late_cancel_fee_cents bigint NOT NULL,
    checkout_session      text,
    accepted_at           timestamptz,
    accepted_ip           text,
    accepted_user_agent   text,
    created_at            timestamptz NOT NULL
);
-- A fee charged to a booking's kept card: one row per booking, the fence that charges a
-- booking at most one fee however many clicks race (the provider's idempotency key is
-- the second fence). state pending while the charge is under way.
CREATE TABLE booking_fees (
    booking_id            uuid PRIMARY KEY REFERENCES bookings (id) ON DELETE CASCADE,
    shop_id               uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    kind                  text NOT NULL CHECK (kind IN ('no_show', 'late_cancel')),
    state                 text NOT NULL CHECK (state IN ('pending', 'charged', 'requires_action', 'declined', 'no_card')),
    amount_cents          bigint NOT NULL CHECK (amount_cents > 0),
    currency              text NOT NULL,
    payment_intent_id     text,
    decline_code          text NOT NULL DEFAULT '',
    message               text NOT NULL DEFAULT '' CHECK (length(message) <= 500),
    application_fee_cents bigint NOT NULL DEFAULT 0,
    -- requires_action: the page where the customer pays the fee themselves (texted).
    pay_url               text,
    attempt_at            timestamptz,
    created_at            timestamptz NOT NULL,
    updated_at            timestamptz NOT NULL
);
-- 0090
-- appointments.connector_id: the connector that delivered it (issue 44): a shop may
-- have two connectors of one kind (two Square accounts, two cal.com webhooks), and a
-- move is written back with the API key of the connector that keeps the booking.
-- NULL: not delivered by a connector (the owners' API, a YES), delivered before 0090, or
-- its connector removed since (the appointment stays in the book).
ALTER TABLE appointments ADD COLUMN connector_id uuid REFERENCES connectors (id) ON DELETE SET NULL;
-- Removing a connector sets its appointments' connector_id NULL: found by this index.
CREATE INDEX appointments_connector_idx ON appointments (connector_id) WHERE connector_id IS NOT NULL;
-- book_appointments (0064, 0068, 0080) carries appointments.connector_id, so that a row
-- of the view is still an appointment row (a YES booking has no connector: NULL).
CREATE OR REPLACE VIEW book_appointments AS
SELECT a.id, a.shop_id, a.source, a.external_id, a.customer_id, a.phone, a.customer_name, a.staff_id,
    a.external_staff, a.service, a.price_cents, a.starts_at, a.duration_minutes, a.status,
    a.source_version, a.source_updated_at, a.releases, a.created_at, a.changed_at, a.moved_to, a.copied_at,
    a.connector_id
FROM appointments a
UNION ALL
SELECT b.id, s.shop_id, 'slotrecovery'::text, NULL::text, b.customer_id, NULLIF(c.phone, ''), c.name,
    COALESCE(b.staff_id, s.staff_id), ''::text, COALESCE(b.service, s.service), b.amount_cents, s.starts_at,
    COALESCE(b.duration_minutes, s.duration_minutes),
    CASE WHEN b.status IN ('pending_payment', 'confirmed') THEN 'booked' ELSE 'cancelled' END,
    0::bigint, b.updated_at, 0, b.created_at, b.updated_at, NULL::uuid, NULL::timestamptz, NULL::uuid
FROM bookings b
JOIN slot_openings s ON s.id = b.opening_id
JOIN customers c ON c.id = b.customer_id;
-- 0091
-- Move-up offers for bookings made by a YES (issue 44). A confirmed YES booking
-- moved up to an earlier opening becomes moved: its payment (amount, Stripe ids,
-- account, fee, terms) went with it to the booking it became (moved_to), which is the
-- only live booking that can reach it. moved is not live: the partial indexes and the
-- exclusion constraint on bookings name pending_payment and confirmed only.
ALTER TABLE bookings DROP CONSTRAINT bookings_status_check;
ALTER TABLE bookings ADD CONSTRAINT bookings_status_check
    CHECK (status IN ('pending_payment', 'confirmed', 'payment_failed', 'cancelled', 'moved'));
ALTER TABLE bookings ADD COLUMN moved_to uuid REFERENCES bookings (id);
ALTER TABLE bookings ADD CONSTRAINT bookings_moved_check CHECK ((status = 'moved') = (moved_to IS NOT NULL));
-- slot_offers.move_from_booking: a move-up offer's YES booking (move_from names an
-- appointment of the book; at most one of them). slot_offers_claimable shows either as
-- move_from, so the claim reads a move-up of either kind as it did.
ALTER TABLE slot_offers ADD COLUMN move_from_booking uuid REFERENCES bookings (id) ON DELETE CASCADE;
ALTER TABLE slot_offers ADD CONSTRAINT slot_offers_move_from_one CHECK (move_from IS NULL OR move_from_booking IS NULL);
CREATE INDEX slot_offers_move_from_booking_idx ON slot_offers (move_from_booking) WHERE move_from_booking IS NOT NULL;
CREATE OR REPLACE VIEW slot_offers_claimable AS
SELECT o.id, o.opening_id, o.customer_id, o.shop_id, o.generation, o.created_at, s.starts_at,
    COALESCE(o.move_from, o.move_from_booking) AS move_from
FROM slot_offers o
JOIN slot_openings s ON s.id = o.opening_id
WHERE o.status = 'sent' AND s.status = 'open' AND o.generation = s.generation;
-- A moved booking's opening's chain is read by the next wave's candidates (a chain
-- never moves a customer twice): a customer's moved bookings.
CREATE INDEX bookings_customer_moved_idx ON bookings (customer_id) WHERE status = 'moved';
-- And a customer's moved appointments, for the same check: without it the check read
-- every appointment of the table once per candidate (a first wave over 2,000 booked
-- appointments took 180 ms, nearly all of it there).
CREATE INDEX appointments_customer_moved_idx ON appointments (customer_id) WHERE status = 'moved';
-- The booking a moved one became, for the chains' line (BookChains: who left which time).
CREATE INDEX bookings_moved_to_idx ON bookings (moved_to) WHERE moved_to IS NOT NULL;
-- book_appointments (0064, 0068, 0080, 0090): a moved YES booking is moved, moved_to the
-- opening its new booking holds (as appointments.moved_to names an opening).
CREATE OR REPLACE VIEW book_appointments AS
SELECT a.id, a.shop_id, a.source, a.external_id, a.customer_id, a.phone, a.customer_name, a.staff_id,
    a.external_staff, a.service, a.price_cents, a.starts_at, a.duration_minutes, a.status,
    a.source_version, a.source_updated_at, a.releases, a.created_at, a.changed_at, a.moved_to, a.copied_at,
    a.connector_id
FROM appointments a
UNION ALL
SELECT b.id, s.shop_id, 'slotrecovery'::text, NULL::text, b.customer_id, NULLIF(c.phone, ''), c.name,
    COALESCE(b.staff_id, s.staff_id), ''::text, COALESCE(b.service, s.service), b.amount_cents, s.starts_at,
    COALESCE(b.duration_minutes, s.duration_minutes),
    CASE WHEN b.status IN ('pending_payment', 'confirmed') THEN 'booked' WHEN b.status = 'moved' THEN 'moved'
         ELSE 'cancelled' END,
    0::bigint, b.updated_at, 0, b.created_at, b.updated_at,
    (SELECT nb.opening_id FROM bookings nb WHERE nb.id = b.moved_to), NULL::timestamptz, NULL::uuid
FROM bookings b
JOIN slot_openings s ON s.id = b.opening_id
JOIN customers c ON c.id = b.customer_id;
