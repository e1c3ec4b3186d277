-- name: ShopInsert :one
INSERT INTO shops (name, timezone, sms_number, currency, payment_mode, wave_size,
    wave_interval_seconds, min_lead_minutes, quiet_start_minute, quiet_end_minute,
    cooldown_seconds, api_key_hash, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
RETURNING *;

-- name: ShopGet :one
SELECT * FROM shops WHERE id = $1;

-- name: ShopGetByKeyHash :one
SELECT * FROM shops WHERE api_key_hash = $1;

-- name: ShopGetBySMSNumber :one
SELECT * FROM shops WHERE sms_number = $1;
