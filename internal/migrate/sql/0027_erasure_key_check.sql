-- 0027_erasure_key_check: a check value of every erasure key that has made hashes, so
-- that a start whose ERASURE_KEY leaves one out is refused (internal/shops).
--
-- sms_suppressions keeps HMACs of numbers under ERASURE_KEY's newest key; every listed
-- key is tried when matching. A rotation that dropped a key still holding records (or
-- a rollback to a setting without the newest) would silently forget every STOP and
-- erasure recorded under it. Each row is HMAC-SHA256 of a fixed label under one key
-- that has been the newest at a start (never the key, and useless to test numbers
-- with); a start refuses unless every row matches one of the configured keys, until
-- `server erasure-key retire` gives up the records of the keys no longer listed.
CREATE TABLE erasure_key_checks (
    check_value bytea PRIMARY KEY CHECK (length(check_value) = 32),
    created_at  timestamptz NOT NULL
);
