-- name: DashboardSessionEnd :exec
-- Records that a dashboard session signed out, until its cookie would have expired
-- anyway. The same statement purges up to 100 records whose cookies have expired (more
-- than a sign-out adds, so the table holds only the sign-outs of the last session
-- lifetime); SKIP LOCKED keeps concurrent sign-outs from waiting on each other's purge.
-- Signing out twice changes nothing; a shop that no longer exists records nothing.
WITH purged AS (
    DELETE FROM dashboard_session_ends
    WHERE session_id IN (
        SELECT old.session_id FROM dashboard_session_ends old
        WHERE old.expires_at < sqlc.arg(now)::timestamptz
        ORDER BY old.expires_at
        LIMIT 100
        FOR UPDATE SKIP LOCKED
    )
)
INSERT INTO dashboard_session_ends (session_id, shop_id, expires_at)
SELECT sqlc.arg(session_id)::text, shops.id, sqlc.arg(expires_at)::timestamptz
FROM shops WHERE shops.id = sqlc.arg(shop_id)::uuid
ON CONFLICT (session_id) DO NOTHING;

-- name: DashboardSessionShop :one
-- The shop a dashboard session belongs to, and whether the session signed out: one
-- statement, so checking the sign-out costs the signed-in pages no round trip.
SELECT sqlc.embed(shops),
    EXISTS (
        SELECT 1 FROM dashboard_session_ends e
        WHERE e.session_id = sqlc.arg(session_id)::text AND e.shop_id = shops.id
    ) AS ended
FROM shops
WHERE shops.id = sqlc.arg(shop_id)::uuid;
