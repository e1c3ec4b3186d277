-- name: JoinAllowedCountries :many
-- The calling codes a shop accepts joins from besides its own.
SELECT calling_code FROM join_allowed_countries WHERE shop_id = sqlc.arg(shop_id) ORDER BY calling_code;

-- name: JoinAllowedCountriesClear :exec
DELETE FROM join_allowed_countries WHERE shop_id = sqlc.arg(shop_id);

-- name: JoinAllowedCountryAdd :exec
INSERT INTO join_allowed_countries (shop_id, calling_code) VALUES (sqlc.arg(shop_id), sqlc.arg(calling_code))
ON CONFLICT DO NOTHING;

-- name: JoinAllowedCountryExists :one
SELECT EXISTS (SELECT 1 FROM join_allowed_countries WHERE shop_id = sqlc.arg(shop_id) AND calling_code = sqlc.arg(calling_code));

-- name: JoinRefusalCount :exec
-- Counts one refusal of the shop's on its day.
INSERT INTO join_refusals (shop_id, day, reason, count, last_at)
VALUES (sqlc.arg(shop_id), sqlc.arg(day), sqlc.arg(reason), 1, sqlc.arg(at))
ON CONFLICT (shop_id, day, reason) DO UPDATE SET count = join_refusals.count + 1,
    last_at = GREATEST(join_refusals.last_at, EXCLUDED.last_at);

-- name: JoinRefusalsSince :many
-- A shop's refusals by reason on the days from since on.
SELECT reason, sum(count)::bigint AS count FROM join_refusals
WHERE shop_id = sqlc.arg(shop_id) AND day >= sqlc.arg(since)
GROUP BY reason ORDER BY reason;

-- name: JoinBudgetSpentMark :execrows
-- Marks the shop's budget spent in this hour: one row the first time, none after.
INSERT INTO join_budget_spent (shop_id, hour, at) VALUES (sqlc.arg(shop_id), sqlc.arg(hour), sqlc.arg(at))
ON CONFLICT DO NOTHING;

-- name: JoinBudgetSpentLast :one
-- When the shop's budget was last spent (the first refusal of its newest hour).
SELECT at FROM join_budget_spent WHERE shop_id = sqlc.arg(shop_id) ORDER BY hour DESC LIMIT 1;

-- name: JoinRefusalsPurge :execrows
-- Forgets the day counts before before.
DELETE FROM join_refusals
WHERE (shop_id, day, reason) IN (SELECT r.shop_id, r.day, r.reason FROM join_refusals r WHERE r.day < sqlc.arg(before) LIMIT sqlc.arg(max_rows));

-- name: JoinBudgetSpentPurge :execrows
-- Forgets the spent hours before before.
DELETE FROM join_budget_spent
WHERE (shop_id, hour) IN (SELECT b.shop_id, b.hour FROM join_budget_spent b WHERE b.hour < sqlc.arg(before) LIMIT sqlc.arg(max_rows));
