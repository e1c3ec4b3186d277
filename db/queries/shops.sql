-- name: ShopInsert :one
INSERT INTO shops (name, timezone, sms_number, currency, payment_mode, wave_size,
    wave_interval_seconds, min_lead_minutes, quiet_start_minute, quiet_end_minute,
    cooldown_seconds, api_key_hash, created_at, max_offers_per_day, first_wave_delay_seconds, send_rate,
    calendar_token, calendar_token_hash)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, sqlc.narg(max_offers_per_day), sqlc.arg(first_wave_delay_seconds), sqlc.arg(send_rate),
    sqlc.arg(calendar_token), sqlc.arg(calendar_token_hash))
RETURNING *;

-- name: ShopGet :one
SELECT * FROM shops WHERE id = $1;

-- name: ShopGetByKeyHash :one
SELECT * FROM shops WHERE api_key_hash = $1;

-- name: ShopGetForUpdate :one
SELECT * FROM shops WHERE id = $1 FOR UPDATE;

-- name: ShopUpdate :one
-- The owner's settings; the SMS number and the key are not among them.
UPDATE shops SET name = sqlc.arg(name), timezone = sqlc.arg(timezone), currency = sqlc.arg(currency),
    payment_mode = sqlc.arg(payment_mode), wave_size = sqlc.arg(wave_size),
    wave_interval_seconds = sqlc.arg(wave_interval_seconds), min_lead_minutes = sqlc.arg(min_lead_minutes),
    quiet_start_minute = sqlc.narg(quiet_start_minute), quiet_end_minute = sqlc.narg(quiet_end_minute),
    cooldown_seconds = sqlc.arg(cooldown_seconds), max_offers_per_day = sqlc.narg(max_offers_per_day),
    first_wave_delay_seconds = sqlc.arg(first_wave_delay_seconds), send_rate = sqlc.arg(send_rate),
    calendar_full_details = sqlc.arg(calendar_full_details)
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
-- every request: a rotated token is dead on every instance from its commit on).
SELECT * FROM shops WHERE calendar_token_hash = $1;

-- name: ShopRotateCalendarToken :one
-- A new feed address replaces the old one, which stops working with this commit.
UPDATE shops SET calendar_token = sqlc.arg(calendar_token), calendar_token_hash = sqlc.arg(calendar_token_hash)
WHERE id = sqlc.arg(id)
RETURNING *;
