-- 0025_replayed_secrets: the answers kept for Idempotency-Key retries of
-- POST /api/webhook_endpoints lose the signing secret they held.
--
-- Until this release the kept answer was the one sent, secret included, and a retry got
-- the secret again for 24 hours (after a rotation or the endpoint's deletion too). The
-- server now keeps it without the secret and says so (secret_shown_once); the answers
-- kept before are made the same here rather than deleted, so that a retry still gets
-- the first answer instead of creating a second endpoint.
UPDATE idempotency_keys
SET body = convert_to(((convert_from(body, 'UTF8')::jsonb - 'secret')
    || '{"secret_shown_once": true}'::jsonb)::text, 'UTF8')
WHERE status = 201 AND location LIKE '/api/webhook_endpoints/%'
  AND position(convert_to('"secret":', 'UTF8') IN body) > 0;
