-- name: JoinRequestInsert :one
INSERT INTO join_requests (id, shop_id, phone, name, language, method, ip, user_agent, disclosure_version,
    disclosure_text, confirmation_body, created_at, expires_at, preferences)
VALUES (sqlc.arg(id), sqlc.arg(shop_id), sqlc.arg(phone), sqlc.arg(name), sqlc.arg(language), sqlc.arg(method), sqlc.narg(ip),
    sqlc.arg(user_agent), sqlc.arg(disclosure_version), sqlc.arg(disclosure_text), sqlc.arg(confirmation_body),
    sqlc.arg(created_at), sqlc.arg(expires_at), sqlc.narg(preferences))
RETURNING *;

-- name: JoinRequestLive :one
-- The number's newest request of the shop that is neither confirmed nor expired at now.
SELECT * FROM join_requests
WHERE shop_id = sqlc.arg(shop_id) AND phone = sqlc.arg(phone) AND confirmed_at IS NULL AND expires_at > sqlc.arg(now)
ORDER BY created_at DESC
LIMIT 1;

-- name: JoinRequestConfirm :one
-- Marks the request confirmed by the reply that joined the customer; no row when another
-- reply confirmed it first.
UPDATE join_requests SET confirmed_at = sqlc.arg(now), customer_id = sqlc.arg(customer_id)
WHERE id = sqlc.arg(id) AND confirmed_at IS NULL
RETURNING *;

-- name: JoinRequestPurge :execrows
-- Forgets the requests that expired before before, confirmed or not (a confirmed one's
-- proof is in consent_events).
DELETE FROM join_requests
WHERE id IN (SELECT j.id FROM join_requests j WHERE j.expires_at < sqlc.arg(before) LIMIT sqlc.arg(max_rows));

-- name: ConsentEventInsert :one
INSERT INTO consent_events (id, shop_id, customer_id, kind, method, at, ip, user_agent, language,
    disclosure_version, disclosure_sha256, disclosure_text, confirmation_sid, confirmation_body, confirmation_at,
    asserted_by_owner, asserted_by, revocation_text, join_request_id)
VALUES (sqlc.arg(id), sqlc.arg(shop_id), sqlc.arg(customer_id), sqlc.arg(kind), sqlc.arg(method), sqlc.arg(at),
    sqlc.narg(ip), sqlc.narg(user_agent), sqlc.arg(language), sqlc.narg(disclosure_version), sqlc.narg(disclosure_sha256),
    sqlc.narg(disclosure_text), sqlc.narg(confirmation_sid), sqlc.narg(confirmation_body), sqlc.narg(confirmation_at),
    sqlc.arg(asserted_by_owner), sqlc.narg(asserted_by), sqlc.narg(revocation_text), sqlc.narg(join_request_id))
ON CONFLICT (join_request_id) DO NOTHING
RETURNING *;

-- name: ConsentEventsBetween :many
-- A shop's consent events in [from, to), oldest first, after the cursor (at, id), with
-- the customer's number and name as they are now (blank once erased).
SELECT e.*, c.phone, c.name AS customer_name, c.erased_at
FROM consent_events e
JOIN customers c ON c.id = e.customer_id AND c.shop_id = e.shop_id
WHERE e.shop_id = sqlc.arg(shop_id) AND e.at >= sqlc.arg(from_at) AND e.at < sqlc.arg(to_at)
    AND (e.at, e.id) > (sqlc.arg(after_at)::timestamptz, sqlc.arg(after_id)::uuid)
ORDER BY e.at, e.id
LIMIT sqlc.arg(max_rows);

-- name: ConsentEventsOfCustomer :many
SELECT * FROM consent_events
WHERE shop_id = sqlc.arg(shop_id) AND customer_id = sqlc.arg(customer_id)
ORDER BY at, id;

-- name: ConsentEventsForget :execrows
-- An erasure keeps the customer's consent record, the proof, and drops what it held of the
-- person: the address and the browser of a page opt-in.
UPDATE consent_events SET ip = NULL, user_agent = NULL
WHERE shop_id = sqlc.arg(shop_id) AND customer_id = sqlc.arg(customer_id) AND (ip IS NOT NULL OR user_agent IS NOT NULL);

-- name: JoinRequestsForget :execrows
-- An erasure drops the number's join requests with the shop, confirmed or not.
DELETE FROM join_requests
WHERE shop_id = sqlc.arg(shop_id) AND (customer_id = sqlc.arg(customer_id) OR phone = sqlc.arg(phone));

-- name: ConsentEventsRecordOwner :exec
-- The owner's opt-ins and opt-outs of shop_id's customers (the API, the dashboard, a CSV
-- import), in the transaction that made them: asserted by the owner, by whom. events is
-- a JSON array of {id, customer_id, kind, method, language, asserted_by}; a language ''
-- is the shop's.
INSERT INTO consent_events (id, shop_id, customer_id, kind, method, at, language, asserted_by_owner, asserted_by)
SELECT e.id, s.id, e.customer_id, e.kind, e.method, sqlc.arg(at)::timestamptz,
    COALESCE(NULLIF(e.language, ''), s.language), true, NULLIF(e.asserted_by, '')
FROM jsonb_to_recordset(sqlc.arg(events)::jsonb)
    AS e(id uuid, customer_id uuid, kind text, method text, language text, asserted_by text)
JOIN shops s ON s.id = sqlc.arg(shop_id);

-- name: ConsentEventRecordReplyOptIn :exec
-- A customer's own opt-in by text (START): method reply, the text as its confirmation;
-- the id is derived from the text's MessageSid, so handled again it records nothing.
INSERT INTO consent_events (id, shop_id, customer_id, kind, method, at, language, confirmation_sid,
    confirmation_body, confirmation_at)
VALUES (sqlc.arg(id), sqlc.arg(shop_id), sqlc.arg(customer_id), 'opt_in', 'reply', sqlc.arg(at)::timestamptz,
    sqlc.arg(language), sqlc.narg(confirmation_sid), sqlc.narg(confirmation_body), sqlc.arg(at)::timestamptz)
ON CONFLICT (id) DO NOTHING;

-- name: ConsentEventRecord :exec
-- An opt-in or opt-out outside a join request (a customer's STOP by text), whose id is
-- derived from what made it (the text's MessageSid): made again, it records nothing.
INSERT INTO consent_events (id, shop_id, customer_id, kind, method, at, language, revocation_text)
VALUES (sqlc.arg(id), sqlc.arg(shop_id), sqlc.arg(customer_id), sqlc.arg(kind), sqlc.arg(method), sqlc.arg(at),
    sqlc.arg(language), sqlc.narg(revocation_text))
ON CONFLICT (id) DO NOTHING;
