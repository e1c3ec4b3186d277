-- name: ShopInsert :one
INSERT INTO shops (id, name, timezone, sms_number, currency, payment_mode, wave_size,
    wave_interval_seconds, min_lead_minutes, quiet_start_minute, quiet_end_minute,
    cooldown_seconds, api_key_hash, created_at, max_offers_per_day, first_wave_delay_seconds, send_rate,
    calendar_generation, calendar_key_id, calendar_token_hash, language, notify_phone, formality, gsm7, help_contact, slug, privacy_url,
    deposit_cents, deposit_percent, keep_card, cancellation_policy, late_cancel_hours, no_show_fee_cents,
    late_cancel_fee_cents, policy_version)
VALUES (sqlc.arg(id), $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, sqlc.narg(max_offers_per_day), sqlc.arg(first_wave_delay_seconds), sqlc.arg(send_rate),
    1, sqlc.arg(calendar_key_id), sqlc.arg(calendar_token_hash), sqlc.arg(language), sqlc.narg(notify_phone),
    sqlc.narg(formality), sqlc.arg(gsm7), sqlc.narg(help_contact), sqlc.arg(slug), sqlc.narg(privacy_url),
    sqlc.narg(deposit_cents), sqlc.narg(deposit_percent), sqlc.arg(keep_card), sqlc.arg(cancellation_policy),
    sqlc.arg(late_cancel_hours), sqlc.arg(no_show_fee_cents), sqlc.arg(late_cancel_fee_cents), sqlc.arg(policy_version))
RETURNING *;

-- name: ShopGet :one
SELECT * FROM shops WHERE id = $1;

-- name: ShopGetByKeyHash :one
SELECT * FROM shops WHERE api_key_hash = $1;

-- name: ShopGetForUpdate :one
SELECT * FROM shops WHERE id = $1 FOR UPDATE;

-- name: ShopGetForShare :one
-- The shop as it is now, held until the transaction ends: a declaration checks its
-- opening against it, and a payment transition decides whether a lapsed hold reopens,
-- while a change of the settings they read (Update's currency and payment mode, a Stripe
-- account's state) waits, and each waits itself for one under way.
-- FOR SHARE, not FOR UPDATE: declarations of one shop do not wait for each other, and
-- a booking's foreign keys (FOR KEY SHARE) never wait for it.
SELECT * FROM shops WHERE id = $1 FOR SHARE;

-- name: ShopUpdate :one
-- The owner's settings; the SMS number and the key are not among them.
UPDATE shops SET name = sqlc.arg(name), timezone = sqlc.arg(timezone), currency = sqlc.arg(currency),
    payment_mode = sqlc.arg(payment_mode), wave_size = sqlc.arg(wave_size),
    wave_interval_seconds = sqlc.arg(wave_interval_seconds), min_lead_minutes = sqlc.arg(min_lead_minutes),
    quiet_start_minute = sqlc.narg(quiet_start_minute), quiet_end_minute = sqlc.narg(quiet_end_minute),
    cooldown_seconds = sqlc.arg(cooldown_seconds), max_offers_per_day = sqlc.narg(max_offers_per_day),
    first_wave_delay_seconds = sqlc.arg(first_wave_delay_seconds), send_rate = sqlc.arg(send_rate),
    calendar_full_details = sqlc.arg(calendar_full_details), language = sqlc.arg(language),
    notify_phone = sqlc.narg(notify_phone), auto_declare = sqlc.arg(auto_declare),
    formality = sqlc.narg(formality), gsm7 = sqlc.arg(gsm7), help_contact = sqlc.narg(help_contact),
    slug = sqlc.arg(slug), privacy_url = sqlc.narg(privacy_url),
    move_up_days = sqlc.arg(move_up_days), chain_max = sqlc.arg(chain_max),
    customers_cancel_by_text = sqlc.arg(customers_cancel_by_text), ranking = sqlc.arg(ranking),
    skip_after_no_shows = sqlc.narg(skip_after_no_shows), join_keywords = sqlc.arg(join_keywords)::text[]
WHERE id = sqlc.arg(id)
RETURNING *;

-- name: ShopRotateKey :one
-- A new key hash replaces the old one: the old key stops working with this commit
-- (Authenticate reads the hash from Postgres on every request, never from a cache).
-- The key's version moves on in the same statement, which ends every dashboard session
-- signed in under the old key.
UPDATE shops SET api_key_hash = sqlc.arg(api_key_hash), api_key_version = api_key_version + 1
WHERE id = sqlc.arg(id)
RETURNING *;

-- name: ShopRecordSMSProblem :exec
-- A text failed because of the shop's own number or account: the banner counts the
-- failures of the past week.
UPDATE shops SET sms_problem_code = sqlc.arg(code)::integer, sms_problem_at = sqlc.arg(now)::timestamptz,
    sms_problem_count = CASE WHEN sms_problem_at > sqlc.arg(now)::timestamptz - interval '7 days' THEN sms_problem_count + 1 ELSE 1 END
WHERE id = sqlc.arg(id);

-- name: ShopGetByCalendarTokenHash :one
-- The shop whose calendar feed a request asks for, found by the token's hash (read on
-- every request: a rotated token is dead on every instance from its commit on), or by
-- the hash of its address before a re-key.
SELECT * FROM shops WHERE calendar_token_hash = sqlc.arg(hash) OR calendar_legacy_token_hash = sqlc.arg(hash);

-- name: ShopSetCalendarToken :one
-- A feed address for the next generation (generation: the current one + 1, or nothing
-- is changed: a concurrent change won). keep_old keeps the address it replaces working
-- until legacy_until (a re-key, or a shop's first derived address); the owner's rotation
-- does not.
UPDATE shops SET calendar_generation = sqlc.arg(generation)::integer, calendar_key_id = sqlc.arg(key_id),
    calendar_token_hash = sqlc.arg(token_hash),
    calendar_legacy_token_hash = CASE WHEN sqlc.arg(keep_old)::boolean THEN calendar_token_hash END,
    calendar_legacy_until = CASE WHEN sqlc.arg(keep_old)::boolean THEN sqlc.arg(legacy_until)::timestamptz END
WHERE id = sqlc.arg(id) AND calendar_generation = sqlc.arg(generation)::integer - 1
RETURNING *;

-- name: ShopCalendarKeyIDs :many
-- The keys the shops' feed addresses are derived under (the start's check).
SELECT DISTINCT calendar_key_id::bytea AS key_id FROM shops WHERE calendar_key_id IS NOT NULL;

-- name: ShopCalendarToRekey :many
-- Shops whose feed address is not derived yet (calendar_key_id NULL) or, unless
-- only_underived, is derived under a key other than key_id; a batch at a time.
SELECT id, calendar_generation FROM shops
WHERE calendar_key_id IS NULL OR (NOT sqlc.arg(only_underived)::boolean AND calendar_key_id <> sqlc.arg(key_id))
ORDER BY id
LIMIT 500;

-- name: ShopSetPlatformFee :one
-- The admin's platform fee for the shop, in basis points; NULL returns it to the
-- server's default.
UPDATE shops SET platform_fee_bps = sqlc.narg(platform_fee_bps) WHERE id = sqlc.arg(id)
RETURNING *;

-- name: ShopLockOnboarding :exec
-- The fence of a shop's Stripe onboarding, held until the transaction ends: a second
-- onboarding of the shop waits, then finds the account the first stored. An advisory
-- lock rather than the shop's row: a row lock strong enough would also hold up every
-- booking and text of the shop (their foreign keys take a share lock on it) for as long
-- as Stripe takes to answer.
SELECT pg_advisory_xact_lock(1936029812, hashtext(sqlc.arg(shop_id)::uuid::text));

-- name: ShopSetStripeAccount :one
-- A shop's new connected account (its first, or one replacing a disconnected one).
UPDATE shops
SET stripe_account_id = sqlc.arg(account), stripe_charges_enabled = sqlc.arg(charges_enabled),
    stripe_payouts_enabled = sqlc.arg(payouts_enabled), stripe_details_submitted = sqlc.arg(details_submitted),
    stripe_requirements_due = sqlc.arg(requirements_due)::text[], stripe_status_at = sqlc.arg(at)::timestamptz,
    stripe_disconnected_at = NULL
WHERE id = sqlc.arg(id)
RETURNING *;

-- name: ShopUpdateStripeStatus :one
-- A connected account's state as of `at`, on the shop that holds it. No row: no shop
-- holds the account, it was disconnected, or a newer state is stored already (events
-- arrive out of order).
UPDATE shops
SET stripe_charges_enabled = sqlc.arg(charges_enabled), stripe_payouts_enabled = sqlc.arg(payouts_enabled),
    stripe_details_submitted = sqlc.arg(details_submitted), stripe_requirements_due = sqlc.arg(requirements_due)::text[],
    stripe_status_at = sqlc.arg(at)::timestamptz
WHERE stripe_account_id = sqlc.arg(account) AND stripe_disconnected_at IS NULL
  AND (stripe_status_at IS NULL OR stripe_status_at <= sqlc.arg(at)::timestamptz)
RETURNING id;

-- name: ShopDisconnectStripe :one
-- The owner disconnected the account from the platform: it can take no more payments
-- through it. No row: no shop holds the account, or it was recorded already.
UPDATE shops
SET stripe_disconnected_at = sqlc.arg(at)::timestamptz, stripe_charges_enabled = false, stripe_payouts_enabled = false,
    stripe_status_at = GREATEST(stripe_status_at, sqlc.arg(at)::timestamptz)
WHERE stripe_account_id = sqlc.arg(account) AND stripe_disconnected_at IS NULL
RETURNING id;

-- name: ShopOpeningsBelowCharge :many
-- The shop's open openings priced below a minimum charge, and its held ones (filled, the
-- booking awaiting payment: a lapsed hold reopens them), earliest first, and how many
-- there are (total): a change of currency or payment mode must not leave them taking
-- payments the provider refuses. A read of slots' and the ledger's tables
-- (slot_openings_shop_status_idx).
SELECT o.id, o.starts_at, o.service, o.price_cents, count(*) OVER () AS total
FROM slot_openings o
WHERE o.shop_id = sqlc.arg(shop_id) AND o.price_cents < sqlc.arg(minimum)::bigint
  AND (o.status = 'open' OR (o.status = 'filled' AND EXISTS (
        SELECT 1 FROM bookings b WHERE b.opening_id = o.id AND b.status = 'pending_payment')))
ORDER BY o.starts_at, o.id
LIMIT sqlc.arg(max_rows);

-- name: ShopIDByNumber :one
-- The shop whose number a text was sent from (a delivery report names it).
SELECT id FROM shops WHERE sms_number = $1;

-- name: ShopSetSMSNumber :one
-- The shop's number becomes the one its own sender set up (internal/senders).
UPDATE shops SET sms_number = sqlc.arg(sms_number) WHERE id = sqlc.arg(id)
RETURNING *;

-- name: ShopSlugNumbering :one
-- Whether base is taken, and the highest n of the slugs base-<n> (1: none): a new shop's
-- default slug is base, else base-<highest + 1>. One row, however many shops share the
-- name (their slugs were read whole, one query a creation: quadratic in same-named shops).
SELECT EXISTS (SELECT 1 FROM shops b WHERE b.slug = sqlc.arg(base)::text) AS base_taken,
    COALESCE(max(substring(s.slug FROM length(sqlc.arg(base)::text) + 2)::bigint), 1)::bigint AS highest
FROM shops s
WHERE s.slug LIKE sqlc.arg(base)::text || '-%'
  AND substring(s.slug FROM length(sqlc.arg(base)::text) + 2) ~ '^[0-9]{1,12}$';

-- name: ShopGetBySlug :one
SELECT * FROM shops WHERE slug = $1;

-- name: NotifyPhonePendingGet :one
SELECT * FROM notify_phone_confirmations WHERE shop_id = $1;

-- name: NotifyPhonePendingPut :one
-- A new code for the shop's pending alert number: a new number or a resend. The day's
-- count of sends goes on, or starts again on a new day (in UTC).
INSERT INTO notify_phone_confirmations (shop_id, phone, code_hash, sent_at, expires_at, attempts, sends_day, sends)
VALUES (sqlc.arg(shop_id), sqlc.arg(phone), sqlc.arg(code_hash), sqlc.arg(sent_at), sqlc.arg(expires_at), 0,
    (sqlc.arg(sent_at)::timestamptz AT TIME ZONE 'UTC')::date, 1)
ON CONFLICT (shop_id) DO UPDATE SET phone = EXCLUDED.phone, code_hash = EXCLUDED.code_hash,
    sent_at = EXCLUDED.sent_at, expires_at = EXCLUDED.expires_at, attempts = 0,
    sends_day = EXCLUDED.sends_day,
    sends = CASE WHEN notify_phone_confirmations.sends_day = EXCLUDED.sends_day
        THEN notify_phone_confirmations.sends + 1 ELSE 1 END
RETURNING *;

-- name: NotifyPhonePendingLock :one
SELECT * FROM notify_phone_confirmations WHERE shop_id = $1 FOR UPDATE;

-- name: NotifyPhonePendingAttempt :exec
UPDATE notify_phone_confirmations SET attempts = attempts + 1 WHERE shop_id = $1;

-- name: NotifyPhonePendingDelete :exec
DELETE FROM notify_phone_confirmations WHERE shop_id = $1;

-- name: ShopSetNotifyPhone :one
-- The confirmed alert number, or none.
UPDATE shops SET notify_phone = sqlc.narg(notify_phone) WHERE id = sqlc.arg(id)
RETURNING *;

-- name: ShopSetProtection :one
-- The shop's no-show protection (issue 48): the deposit, whether a card is kept, and the
-- cancellation policy with its fees at policy_version (Go moves it on when they change).
-- Run in Update's transaction, after ShopUpdate.
UPDATE shops SET deposit_cents = sqlc.narg(deposit_cents), deposit_percent = sqlc.narg(deposit_percent),
    keep_card = sqlc.arg(keep_card), cancellation_policy = sqlc.arg(cancellation_policy),
    late_cancel_hours = sqlc.arg(late_cancel_hours), no_show_fee_cents = sqlc.arg(no_show_fee_cents),
    late_cancel_fee_cents = sqlc.arg(late_cancel_fee_cents), policy_version = sqlc.arg(policy_version)
WHERE id = sqlc.arg(id)
RETURNING *;
