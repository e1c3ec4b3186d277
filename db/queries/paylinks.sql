-- The short payment links' query (internal/paylink): it only reads.

-- name: PaylinkFind :one
-- The held booking one of a short link's candidate ids names (a link decodes to one
-- candidate per configured key; at most one is a booking), with what its page says.
SELECT b.id, b.status, COALESCE(b.payment_url, '')::text AS payment_url, b.checkout_expires_at,
    sh.name AS shop_name, COALESCE(c.language, sh.language)::text AS language
FROM bookings b
JOIN shops sh ON sh.id = b.shop_id
JOIN customers c ON c.id = b.customer_id
WHERE b.id = ANY(sqlc.arg(ids)::uuid[])
LIMIT 1;
