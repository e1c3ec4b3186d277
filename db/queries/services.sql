-- A shop's services (internal/catalog).

-- name: ServiceInsert :one
INSERT INTO services (shop_id, name, duration_minutes, price_cents, staff_ids, created_at, updated_at)
VALUES (sqlc.arg(shop_id), sqlc.arg(name), sqlc.arg(duration_minutes), sqlc.arg(price_cents), sqlc.arg(staff_ids)::uuid[],
        sqlc.arg(now), sqlc.arg(now))
RETURNING *;

-- name: ServiceList :many
SELECT * FROM services WHERE shop_id = $1 ORDER BY created_at, id;

-- name: ServiceUpdate :one
-- Changes what is given (NULL: kept).
UPDATE services
SET name = COALESCE(sqlc.narg(name), name),
    duration_minutes = COALESCE(sqlc.narg(duration_minutes), duration_minutes),
    price_cents = COALESCE(sqlc.narg(price_cents), price_cents),
    staff_ids = COALESCE(sqlc.narg(staff_ids)::uuid[], staff_ids),
    active = COALESCE(sqlc.narg(active), active),
    updated_at = sqlc.arg(now)
WHERE id = sqlc.arg(id) AND shop_id = sqlc.arg(shop_id)
RETURNING *;

-- name: ServiceShopHas :one
-- Whether the shop has services (active or not): it then books by them.
SELECT EXISTS (SELECT 1 FROM services WHERE shop_id = $1) AS has;

-- name: ServiceGetByName :one
-- The shop's active service of that name (names are unique per shop, case aside).
SELECT * FROM services WHERE shop_id = sqlc.arg(shop_id) AND lower(name) = lower(sqlc.arg(name)) AND active;

-- name: ServiceUnknownNames :many
-- Which of names are none of the shop's services.
SELECT n.name::text AS name FROM unnest(sqlc.arg(names)::text[]) AS n(name)
WHERE NOT EXISTS (SELECT 1 FROM services s WHERE s.shop_id = sqlc.arg(shop_id) AND lower(s.name) = lower(n.name));

-- name: ServiceShortestFor :one
-- The shortest active service a person does (staff_id; NULL: anyone), 0 when none:
-- the least a remainder of their time must last to be offered.
SELECT COALESCE(min(duration_minutes), 0)::integer AS minutes FROM services
WHERE shop_id = sqlc.arg(shop_id) AND active
  AND (cardinality(staff_ids) = 0 OR sqlc.narg(staff_id)::uuid IS NULL OR sqlc.narg(staff_id)::uuid = ANY(staff_ids));

-- name: ServiceCount :one
SELECT count(*) FROM services WHERE shop_id = $1;
