-- name: CustomerInsert :one
INSERT INTO customers (shop_id, phone, name, sms_opt_in, priority, created_at)
VALUES ($1, $2, $3, $4, $5, $6)
RETURNING *;

-- name: CustomerGet :one
SELECT * FROM customers WHERE id = $1;

-- name: CustomerGetByPhone :one
SELECT * FROM customers WHERE shop_id = $1 AND phone = $2;

-- name: CustomerOptOut :one
UPDATE customers SET opted_out_at = COALESCE(opted_out_at, sqlc.arg(now)::timestamptz)
WHERE id = sqlc.arg(id)
RETURNING *;

-- name: CustomerOptIn :one
UPDATE customers SET sms_opt_in = true, opted_out_at = NULL, unreachable_at = NULL, unreachable_code = NULL
WHERE id = $1
RETURNING *;

-- name: CustomerMarkUnreachable :exec
UPDATE customers SET unreachable_at = sqlc.arg(now)::timestamptz, unreachable_code = sqlc.arg(code)::integer
WHERE id = sqlc.arg(id);

-- name: CustomerListEligible :many
-- Customers a wave may text: opted in, not opted out, reachable, not offered this
-- opening in this generation, and not someone who declined it or whose hold on it
-- lapsed in an earlier generation; waitlist priority first.
SELECT c.id, c.phone, c.name, c.priority
FROM customers c
WHERE c.shop_id = sqlc.arg(shop_id)
  AND c.sms_opt_in
  AND c.opted_out_at IS NULL
  AND c.unreachable_at IS NULL
  AND NOT EXISTS (
      SELECT 1 FROM slot_offers o
      WHERE o.opening_id = sqlc.arg(opening_id)
        AND o.customer_id = c.id
        AND (o.generation = sqlc.arg(generation) OR o.status = 'declined'))
  AND NOT EXISTS (
      SELECT 1 FROM bookings b
      WHERE b.opening_id = sqlc.arg(opening_id) AND b.customer_id = c.id)
ORDER BY c.priority DESC, c.created_at, c.id
LIMIT sqlc.arg(max_rows);
