-- name: CustomerExportStart :one
INSERT INTO customer_exports (shop_id, at, user_agent)
VALUES (sqlc.arg(shop_id), sqlc.arg(at), sqlc.arg(user_agent))
RETURNING id;

-- name: CustomerExportFinish :exec
UPDATE customer_exports SET customers = sqlc.arg(customers)
WHERE id = sqlc.arg(id) AND shop_id = sqlc.arg(shop_id);

-- name: CustomerExportList :many
-- The shop's newest exports first.
SELECT id, at, user_agent, customers FROM customer_exports
WHERE shop_id = sqlc.arg(shop_id)
ORDER BY at DESC, id
LIMIT sqlc.arg(max_rows);
