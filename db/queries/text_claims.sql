-- name: TextClaim :execrows
-- Claims a transactional text by its key; 0 rows: claimed before (sent, or maybe sent).
INSERT INTO text_claims (key, shop_id, claimed_at) VALUES (sqlc.arg(key), sqlc.arg(shop_id), sqlc.arg(now)::timestamptz)
ON CONFLICT (key) DO NOTHING;

-- name: TextUnclaim :exec
-- Gives a claim back when the text surely did not go out, so the retry may send it.
DELETE FROM text_claims WHERE key = $1;

-- name: TextClaimSent :exec
UPDATE text_claims SET message_sid = sqlc.arg(message_sid) WHERE key = sqlc.arg(key);

-- name: TextClaimPurge :execrows
-- Deletes up to max_rows claims made before `before`: the retention period, long past
-- any retry of the text's job.
DELETE FROM text_claims
WHERE key IN (
    SELECT key FROM text_claims WHERE claimed_at < sqlc.arg(before)::timestamptz
    LIMIT sqlc.arg(max_rows)
);
