-- Check values of the erasure keys hashes were made under (internal/shops).

-- name: ErasureKeyCheckList :many
SELECT check_value FROM erasure_key_checks ORDER BY created_at, check_value;

-- name: ErasureKeyCheckAdd :exec
-- Records that hashes are made under the key of this check value from now on (several
-- instances starting at once record it once).
INSERT INTO erasure_key_checks (check_value, created_at)
VALUES (sqlc.arg(check_value), sqlc.arg(now)::timestamptz)
ON CONFLICT (check_value) DO NOTHING;

-- name: ErasureKeyCheckRetireExcept :execrows
-- Gives up the keys whose check value is none of kept: their records are no longer
-- matched (server erasure-key retire).
DELETE FROM erasure_key_checks WHERE NOT (check_value = ANY(sqlc.arg(kept)::bytea[]));

-- name: ErasureKeyCheckLock :exec
-- Serialises the starts' checks, so that two instances starting at once with different
-- settings cannot both find the table empty and each record a different key.
SELECT pg_advisory_xact_lock(hashtextextended('erasure_key_checks', 0));
