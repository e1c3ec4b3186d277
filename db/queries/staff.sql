-- A shop's people (internal/catalog).

-- name: StaffInsert :one
INSERT INTO staff (shop_id, name, created_at, updated_at)
VALUES (sqlc.arg(shop_id), sqlc.arg(name), sqlc.arg(now), sqlc.arg(now))
RETURNING *;

-- name: StaffList :many
SELECT * FROM staff WHERE shop_id = $1 ORDER BY created_at, id;

-- name: StaffGet :one
SELECT * FROM staff WHERE id = sqlc.arg(id) AND shop_id = sqlc.arg(shop_id);

-- name: StaffUpdate :one
-- Changes what is given (NULL: kept).
UPDATE staff
SET name = COALESCE(sqlc.narg(name), name), active = COALESCE(sqlc.narg(active), active), updated_at = sqlc.arg(now)
WHERE id = sqlc.arg(id) AND shop_id = sqlc.arg(shop_id)
RETURNING *;

-- name: StaffUnknown :many
-- Which of ids are not the shop's people.
SELECT i.id::uuid AS id FROM unnest(sqlc.arg(ids)::uuid[]) AS i(id)
WHERE NOT EXISTS (SELECT 1 FROM staff s WHERE s.id = i.id AND s.shop_id = sqlc.arg(shop_id));

-- name: StaffCount :one
SELECT count(*) FROM staff WHERE shop_id = $1;

-- name: CatalogLockShop :exec
-- Takes the shop's row before a person or a service is added, so that two adds at the
-- cap count each other (the count runs in the next statement, after the lock).
SELECT 1 FROM shops WHERE id = $1 FOR NO KEY UPDATE;
