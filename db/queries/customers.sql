-- name: CustomerInsert :one
-- A number that said STOP, or that the shop erased before, comes back opted out: only
-- the number's own START opts it back in. phone_hmacs are the number's keyed hashes
-- (one per erasure key) that its suppression, if any, is kept under. A NULL language is
-- the shop's.
INSERT INTO customers (shop_id, phone, name, sms_opt_in, priority, created_at, opted_out_at, language,
    pref_days, pref_window_starts, pref_window_ends, pref_services, pref_staff_ids, move_up)
SELECT sqlc.arg(shop_id), sqlc.arg(phone), sqlc.arg(name), sqlc.arg(sms_opt_in)::boolean AND NOT x.suppressed,
    sqlc.arg(priority), sqlc.arg(created_at), CASE WHEN x.suppressed THEN sqlc.arg(created_at)::timestamptz END,
    sqlc.narg(language)::text,
    sqlc.arg(pref_days)::smallint[], sqlc.arg(pref_window_starts)::integer[], sqlc.arg(pref_window_ends)::integer[],
    sqlc.arg(pref_services)::text[], sqlc.arg(pref_staff_ids)::uuid[], sqlc.arg(move_up)::boolean
FROM (SELECT EXISTS (
    SELECT 1 FROM sms_suppressions s
    WHERE s.shop_id = sqlc.arg(shop_id) AND s.phone_hmac = ANY(sqlc.arg(phone_hmacs)::bytea[])
) AS suppressed) x
RETURNING *;

-- name: CustomerGet :one
SELECT * FROM customers WHERE id = $1;

-- name: CustomerGetByPhone :one
SELECT * FROM customers WHERE shop_id = $1 AND phone = $2 AND erased_at IS NULL;

-- name: CustomerOptOut :one
-- An earlier opt-out time is kept. was_opted_out says whether the customer had opted out
-- already (the row as locked before the change): only a change is an event.
WITH prev AS (SELECT p.id, p.opted_out_at FROM customers p WHERE p.id = sqlc.arg(id) FOR UPDATE)
UPDATE customers c SET opted_out_at = COALESCE(c.opted_out_at, sqlc.arg(now)::timestamptz)
FROM prev
WHERE c.id = prev.id
RETURNING c.*, (prev.opted_out_at IS NOT NULL)::boolean AS was_opted_out;

-- name: CustomerOptIn :one
-- was_opted_in says whether the customer was texted already before (opted in, not opted
-- out, reachable): only a change is an event.
WITH prev AS (
    SELECT p.id, p.sms_opt_in, p.opted_out_at, p.unreachable_at FROM customers p
    WHERE p.id = sqlc.arg(id) AND p.erased_at IS NULL FOR UPDATE
)
UPDATE customers c SET sms_opt_in = true, opted_out_at = NULL, unreachable_at = NULL, unreachable_code = NULL
FROM prev
WHERE c.id = prev.id
RETURNING c.*, (prev.sms_opt_in AND prev.opted_out_at IS NULL AND prev.unreachable_at IS NULL)::boolean AS was_opted_in;

-- name: CustomerMarkUnreachable :exec
UPDATE customers SET unreachable_at = sqlc.arg(now)::timestamptz, unreachable_code = sqlc.arg(code)::integer
WHERE id = sqlc.arg(id);

-- name: CustomerListEligible :many
-- Judges a shop's live customers for a wave, in one statement: each one the wave may
-- not text comes back with the first reason (skip) that leaves them out, and those it
-- may text (skip '') in the shop's ranking, at most max_rows of them, with their rank
-- (1: first) and the facts that ranked them. only_customer, when set, judges that one
-- customer alone (the explanation of an offer, now).
--
-- The reasons, in the order they are judged: no_consent (not opted in), opted_out
-- (said STOP, or the number cannot receive texts), paused (texted PAUSE, until a time
-- after now), already_offered (offered this
-- opening in this generation, declined it, or held it: a declined offer or a lapsed
-- hold in an earlier generation is never offered again), no_fit_staff (wants only other
-- people: pref_staff_ids), no_fit_window (not their day of the week, or no time window
-- that holds the whole appointment), no_fit_service (not a service they want; with
-- services, no service of theirs fits: active, done by the opening's person or anyone,
-- no longer than the opening, held by one of their windows from the opening's start),
-- daily_cap (had the shop's max_per_day offers texted in the local day [day_start,
-- day_end); 0: no cap), no_shows (skip_after_no_shows or more no-shows since
-- `since`, not counting those before the owner cleared them). Cooldowns are in Redis,
-- judged by the caller.
--
-- In a shop with services (with_services), each customer is offered the first of their
-- services (in their order) that fits; a customer without service preferences the
-- opening's own service when it names one that fits. The fit comes back as service_id
-- (the nil uuid without services), fit_name, fit_minutes and fit_price.
--
-- The ranking: waitlist priority first always, then by ranking: priority (the list's
-- order: created_at, id), fair (offered least recently first, then booked least
-- recently: never before ever; an offer counts from when a wave recorded it, even if
-- its text then failed: one probe of slot_offers_customer_idx a customer, no heap), reliable (fewest no-shows and lapsed holds since
-- `since` first, then fair), value (the highest price of the service each would be
-- offered first, then fair). Under priority the facts are not read (NULL and 0): the
-- list's own order needs none.
WITH judged AS (
    SELECT c.id, c.priority, c.created_at, c.no_shows_cleared_at,
        fit.id AS fit_id, fit.name AS fit_name, fit.duration_minutes AS fit_minutes, fit.price_cents AS fit_price,
        CASE
            WHEN NOT c.sms_opt_in THEN 'no_consent'
            WHEN c.opted_out_at IS NOT NULL OR c.unreachable_at IS NOT NULL THEN 'opted_out'
            -- PAUSE by text: no offers until paused_until (RESUME clears it).
            WHEN c.paused_until > sqlc.arg(now)::timestamptz THEN 'paused'
            WHEN EXISTS (
                SELECT 1 FROM slot_offers o
                WHERE o.opening_id = sqlc.arg(opening_id) AND o.customer_id = c.id
                  AND (o.generation = sqlc.arg(generation) OR o.status = 'declined'))
              OR EXISTS (
                SELECT 1 FROM bookings b
                WHERE b.opening_id = sqlc.arg(opening_id) AND b.customer_id = c.id) THEN 'already_offered'
            -- An opening that names no person is nobody's a customer wants only some people's
            -- (NULL = ANY(...) is NULL: COALESCE keeps it a reason).
            WHEN NOT COALESCE(cardinality(c.pref_staff_ids) = 0 OR sqlc.narg(staff_id)::uuid = ANY(c.pref_staff_ids), false) THEN 'no_fit_staff'
            WHEN NOT (cardinality(c.pref_days) = 0 OR sqlc.arg(local_dow)::smallint = ANY(c.pref_days)) THEN 'no_fit_window'
            WHEN NOT sqlc.arg(with_services)::boolean AND NOT (cardinality(c.pref_window_starts) = 0 OR EXISTS (
                SELECT 1 FROM generate_subscripts(c.pref_window_starts, 1) AS k
                WHERE c.pref_window_starts[k] <= sqlc.arg(start_minute)::integer
                  AND sqlc.arg(end_minute)::integer <= c.pref_window_ends[k])) THEN 'no_fit_window'
            WHEN sqlc.arg(with_services)::boolean AND NOT (cardinality(c.pref_window_starts) = 0 OR EXISTS (
                SELECT 1 FROM generate_subscripts(c.pref_window_starts, 1) AS k
                WHERE c.pref_window_starts[k] <= sqlc.arg(start_minute)::integer
                  AND sqlc.arg(start_minute)::integer < c.pref_window_ends[k])) THEN 'no_fit_window'
            WHEN NOT sqlc.arg(with_services)::boolean AND NOT (cardinality(c.pref_services) = 0 OR EXISTS (
                SELECT 1 FROM unnest(c.pref_services) AS ps(name)
                WHERE lower(ps.name) = lower(sqlc.arg(service)::text))) THEN 'no_fit_service'
            WHEN sqlc.arg(with_services)::boolean AND fit.id IS NULL THEN 'no_fit_service'
            WHEN sqlc.arg(max_per_day)::integer > 0 AND (
                SELECT count(*) FROM slot_offers d
                WHERE d.customer_id = c.id
                  AND d.created_at >= sqlc.arg(day_start)::timestamptz AND d.created_at < sqlc.arg(day_end)::timestamptz
                  AND (d.sent_at IS NOT NULL OR d.status IN ('queued', 'sending'))) >= sqlc.arg(max_per_day)::integer THEN 'daily_cap'
            WHEN sqlc.narg(skip_after_no_shows)::integer IS NOT NULL AND (
                SELECT count(*) FROM bookings b
                WHERE b.customer_id = c.id AND b.no_show_at >= sqlc.arg(since)::timestamptz
                  AND (c.no_shows_cleared_at IS NULL OR b.no_show_at > c.no_shows_cleared_at)) >= sqlc.narg(skip_after_no_shows)::integer THEN 'no_shows'
            ELSE ''
        END AS skip
    FROM customers c
    LEFT JOIN LATERAL (
        SELECT sv.id, sv.name, sv.duration_minutes, sv.price_cents
        FROM services sv
        LEFT JOIN unnest(c.pref_services) WITH ORDINALITY AS ps(name, n) ON lower(ps.name) = lower(sv.name)
        WHERE sqlc.arg(with_services)::boolean AND sv.shop_id = c.shop_id AND sv.active
          AND sv.duration_minutes <= sqlc.arg(opening_minutes)::integer
          AND (cardinality(c.pref_window_starts) = 0 OR EXISTS (
              SELECT 1 FROM generate_subscripts(c.pref_window_starts, 1) AS k
              WHERE c.pref_window_starts[k] <= sqlc.arg(start_minute)::integer
                AND sqlc.arg(start_minute)::integer + sv.duration_minutes <= c.pref_window_ends[k]))
          AND (cardinality(sv.staff_ids) = 0 OR sqlc.narg(staff_id)::uuid IS NULL OR sqlc.narg(staff_id)::uuid = ANY(sv.staff_ids))
          AND CASE WHEN cardinality(c.pref_services) = 0 THEN lower(sv.name) = lower(sqlc.arg(service)::text)
                   ELSE ps.n IS NOT NULL END
        ORDER BY ps.n
        LIMIT 1
    ) fit ON true
    WHERE c.shop_id = sqlc.arg(shop_id) AND c.erased_at IS NULL
      AND (sqlc.narg(only_customer)::uuid IS NULL OR c.id = sqlc.narg(only_customer)::uuid)
), ranked AS (
    SELECT j.*, row_number() OVER () AS rank
    FROM (
        -- The sort's keys come first, before the row's first text or NULL: Postgres reads
        -- each key after the first out of the row, walking the columns before it. The
        -- tier and the reliable ranking's count are one key (priority first, fewer
        -- no-shows and lapsed holds next; the count is far below 2^32), as its first key
        -- is compared cheaply.
        SELECT j.priority::bigint * 4294967296
                - CASE WHEN sqlc.arg(ranking)::text = 'reliable' THEN fb.no_shows + fb.lapsed_holds ELSE 0 END AS tier,
            j.created_at, j.id,
            CASE WHEN sqlc.arg(ranking)::text = 'value' THEN j.fit_price END AS value,
            fo.last_offered_at, fb.last_booked_at,
            j.priority, j.fit_id, j.fit_name, j.fit_minutes, j.fit_price, fb.no_shows, fb.lapsed_holds
        FROM judged j
        -- The facts in two index probes a customer (their offers, their bookings), and
        -- none under priority.
        LEFT JOIN LATERAL (
            SELECT max(o.created_at) AS last_offered_at
            FROM slot_offers o
            WHERE sqlc.arg(ranking)::text <> 'priority' AND o.customer_id = j.id
        ) fo ON true
        LEFT JOIN LATERAL (
            SELECT max(b.created_at) FILTER (WHERE b.status <> 'payment_failed') AS last_booked_at,
                count(*) FILTER (WHERE b.no_show_at >= sqlc.arg(since)::timestamptz
                    AND (j.no_shows_cleared_at IS NULL OR b.no_show_at > j.no_shows_cleared_at)) AS no_shows,
                count(*) FILTER (WHERE b.status = 'payment_failed' AND b.created_at >= sqlc.arg(since)::timestamptz) AS lapsed_holds
            FROM bookings b
            WHERE sqlc.arg(ranking)::text <> 'priority' AND b.customer_id = j.id
        ) fb ON true
        WHERE j.skip = ''
        ORDER BY tier DESC, value DESC NULLS LAST, last_offered_at NULLS FIRST, last_booked_at NULLS FIRST,
            created_at, id
        LIMIT sqlc.arg(max_rows)
    ) j
)
SELECT r.id, ''::text AS skip, r.rank::integer AS rank, r.priority,
    COALESCE(r.fit_id, '00000000-0000-0000-0000-000000000000'::uuid)::uuid AS service_id,
    COALESCE(r.fit_name, '')::text AS fit_name, COALESCE(r.fit_minutes, 0)::integer AS fit_minutes,
    COALESCE(r.fit_price, 0)::bigint AS fit_price,
    r.last_offered_at, r.last_booked_at,
    COALESCE(r.no_shows, 0)::integer AS no_shows, COALESCE(r.lapsed_holds, 0)::integer AS lapsed_holds
FROM ranked r
UNION ALL
SELECT j.id, j.skip, 0, j.priority, '00000000-0000-0000-0000-000000000000'::uuid, '', 0, 0, NULL, NULL, 0, 0
FROM judged j
WHERE j.skip <> '';

-- name: CustomerGetForShop :one
-- A shop's live (not erased) customer: another shop's id finds nothing.
SELECT * FROM customers WHERE id = sqlc.arg(id) AND shop_id = sqlc.arg(shop_id) AND erased_at IS NULL;

-- name: CustomerGetForShopForUpdate :one
SELECT * FROM customers WHERE id = sqlc.arg(id) AND shop_id = sqlc.arg(shop_id) AND erased_at IS NULL
FOR UPDATE;

-- name: CustomerList :many
-- A page of a shop's live customers in creation order, after the cursor (after_created,
-- after_id); search matches the name (name_pattern, ILIKE) or the phone (phone_pattern,
-- LIKE, '' for none); status is '', opted_in, opted_out, unreachable or not_opted_in,
-- matched as customers.Customer.Status reads it (an opt-out comes first, then an
-- unreachable number): each customer is listed under exactly one status.
SELECT * FROM customers c
WHERE c.shop_id = sqlc.arg(shop_id) AND c.erased_at IS NULL
  AND (c.created_at, c.id) > (sqlc.arg(after_created)::timestamptz, sqlc.arg(after_id)::uuid)
  AND (NOT sqlc.arg(searching)::boolean
       OR c.name ILIKE sqlc.arg(name_pattern)::text
       OR (sqlc.arg(phone_pattern)::text <> '' AND c.phone LIKE sqlc.arg(phone_pattern)::text))
  AND (CASE sqlc.arg(status)::text
         WHEN '' THEN true
         WHEN 'opted_in' THEN c.sms_opt_in AND c.opted_out_at IS NULL AND c.unreachable_at IS NULL
         WHEN 'opted_out' THEN c.opted_out_at IS NOT NULL
         WHEN 'unreachable' THEN c.unreachable_at IS NOT NULL AND c.opted_out_at IS NULL
         WHEN 'not_opted_in' THEN NOT c.sms_opt_in AND c.opted_out_at IS NULL AND c.unreachable_at IS NULL
         ELSE false END)
ORDER BY c.created_at, c.id
LIMIT sqlc.arg(max_rows);

-- name: CustomerUpdate :one
-- The owner's edit. It never touches opted_out_at: only the customer's START clears it.
-- A NULL language is the shop's.
UPDATE customers SET name = sqlc.arg(name), priority = sqlc.arg(priority), sms_opt_in = sqlc.arg(sms_opt_in),
    pref_days = sqlc.arg(pref_days)::smallint[], pref_window_starts = sqlc.arg(pref_window_starts)::integer[],
    pref_window_ends = sqlc.arg(pref_window_ends)::integer[], pref_services = sqlc.arg(pref_services)::text[],
    pref_staff_ids = sqlc.arg(pref_staff_ids)::uuid[], language = sqlc.narg(language)::text,
    move_up = sqlc.arg(move_up)::boolean
WHERE id = sqlc.arg(id) AND shop_id = sqlc.arg(shop_id) AND erased_at IS NULL
RETURNING *;

-- name: CustomerEraseMessages :exec
-- The texts a customer sent keep their outcome (a redelivery still gets its answer) but
-- lose the number and the words.
UPDATE inbound_messages SET from_phone = '', body = ''
WHERE shop_id = sqlc.arg(shop_id) AND from_phone = sqlc.arg(phone)::text AND sqlc.arg(phone)::text <> '';

-- name: CustomerErase :one
-- Erases a customer: name, phone, preferences and language gone, opted out for good; the row stays
-- so that offers and bookings (and the shop's totals) keep it. What is kept of the
-- number is the caller's: a keyed hash in sms_suppressions.
UPDATE customers SET name = '', phone = '', sms_opt_in = false,
    opted_out_at = COALESCE(opted_out_at, sqlc.arg(now)::timestamptz), erased_at = sqlc.arg(now)::timestamptz,
    pref_days = '{}', pref_window_starts = '{}', pref_window_ends = '{}', pref_services = '{}', pref_staff_ids = '{}',
    language = NULL, move_up = false
WHERE id = sqlc.arg(id) AND shop_id = sqlc.arg(shop_id) AND erased_at IS NULL
RETURNING id;

-- name: CustomerImportBatch :many
-- One batch of a CSV import, in one statement: rows is a JSON array of objects
-- {line, phone, hmacs, name?, priority?, sms_opt_in?, language?, move_up?, prefs?:{days, starts, ends, services, staff}}
-- where a missing key keeps the existing customer's value (a new one gets the default:
-- no name, priority 0, NOT opted in, the shop's language, no move-up offers) and hmacs are the phone's keyed hashes, in hex (see
-- CustomerInsert). A customer who opted out (STOP) keeps their sms_opt_in whatever the
-- file says; a new customer whose number is suppressed (it said STOP, or was erased)
-- comes in opted out, and suppression says why ('stop', 'erased' or ''). Rows are
-- matched by phone among live customers; each row's result is created, updated,
-- unchanged, or retry (a concurrent insert of the same phone won; the caller runs the
-- row again).
WITH input AS (
    SELECT (r->>'line')::integer AS line, r->>'phone' AS phone, r->>'name' AS name,
        (r->>'priority')::integer AS priority, (r->>'sms_opt_in')::boolean AS sms_opt_in,
        r->>'language' AS language, (r->>'move_up')::boolean AS move_up, r ? 'prefs' AS prefs_set, COALESCE(r->'hmacs', '[]') AS hmacs,
        ARRAY(SELECT jsonb_array_elements_text(COALESCE(r->'prefs'->'days', '[]')))::smallint[] AS days,
        ARRAY(SELECT jsonb_array_elements_text(COALESCE(r->'prefs'->'starts', '[]')))::integer[] AS starts,
        ARRAY(SELECT jsonb_array_elements_text(COALESCE(r->'prefs'->'ends', '[]')))::integer[] AS ends,
        ARRAY(SELECT jsonb_array_elements_text(COALESCE(r->'prefs'->'services', '[]')))::text[] AS services,
        ARRAY(SELECT jsonb_array_elements_text(COALESCE(r->'prefs'->'staff', '[]')))::uuid[] AS staff
    FROM jsonb_array_elements(sqlc.arg(rows)::jsonb) AS r
), merged AS (
    SELECT i.line, i.phone, e.id AS existing_id,
        COALESCE(i.name, e.name, '') AS name,
        COALESCE(i.priority, e.priority, 0) AS priority,
        COALESCE(i.language, e.language) AS language,
        COALESCE(i.move_up, e.move_up, false) AS move_up,
        CASE WHEN e.opted_out_at IS NOT NULL THEN e.sms_opt_in
             ELSE COALESCE(i.sms_opt_in, e.sms_opt_in, false) END AS sms_opt_in,
        COALESCE(e.sms_opt_in, false) AS was_opted_in,
        CASE WHEN i.prefs_set OR e.id IS NULL THEN i.days ELSE e.pref_days END AS days,
        CASE WHEN i.prefs_set OR e.id IS NULL THEN i.starts ELSE e.pref_window_starts END AS starts,
        CASE WHEN i.prefs_set OR e.id IS NULL THEN i.ends ELSE e.pref_window_ends END AS ends,
        CASE WHEN i.prefs_set OR e.id IS NULL THEN i.services ELSE e.pref_services END AS services,
        CASE WHEN i.prefs_set OR e.id IS NULL THEN i.staff ELSE e.pref_staff_ids END AS staff,
        (e.opted_out_at IS NOT NULL OR (e.id IS NULL AND sup.reason IS NOT NULL)) AS opted_out,
        CASE WHEN e.id IS NULL THEN COALESCE(sup.reason, '') ELSE '' END AS suppression
    FROM input i
    LEFT JOIN customers e ON e.shop_id = sqlc.arg(shop_id) AND e.phone = i.phone AND e.erased_at IS NULL
    -- A number that said STOP, or that the shop erased, comes in opted out (see
    -- CustomerInsert); an erasure is the reason given when both apply.
    LEFT JOIN LATERAL (
        SELECT s.reason FROM sms_suppressions s
        WHERE s.shop_id = sqlc.arg(shop_id)
          AND s.phone_hmac IN (SELECT decode(h, 'hex') FROM jsonb_array_elements_text(i.hmacs) AS h)
        ORDER BY s.reason = 'erased' DESC
        LIMIT 1
    ) sup ON true
), inserted AS (
    INSERT INTO customers (shop_id, phone, name, sms_opt_in, priority, pref_days, pref_window_starts,
        pref_window_ends, pref_services, pref_staff_ids, created_at, opted_out_at, language, move_up)
    SELECT sqlc.arg(shop_id), m.phone, m.name, m.sms_opt_in AND m.suppression = '', m.priority, m.days, m.starts, m.ends, m.services, m.staff,
        sqlc.arg(now)::timestamptz, CASE WHEN m.suppression <> '' THEN sqlc.arg(now)::timestamptz END, m.language, m.move_up
    FROM merged m WHERE m.existing_id IS NULL
    ORDER BY m.phone -- one lock order for concurrent imports
    ON CONFLICT (shop_id, phone) WHERE erased_at IS NULL DO NOTHING
    RETURNING id, phone
), updated AS (
    UPDATE customers c SET name = m.name, priority = m.priority, sms_opt_in = m.sms_opt_in,
        pref_days = m.days, pref_window_starts = m.starts, pref_window_ends = m.ends, pref_services = m.services,
        pref_staff_ids = m.staff, language = m.language, move_up = m.move_up
    FROM merged m
    WHERE c.id = m.existing_id AND c.erased_at IS NULL -- erased meanwhile: left alone (reported as retry)
      AND (c.name, c.priority, c.sms_opt_in, c.pref_days, c.pref_window_starts, c.pref_window_ends, c.pref_services, c.pref_staff_ids, c.language, c.move_up)
          IS DISTINCT FROM (m.name, m.priority, m.sms_opt_in, m.days, m.starts, m.ends, m.services, m.staff, m.language, m.move_up)
    RETURNING c.id
)
SELECT m.line::integer AS line,
    COALESCE(ins.id, m.existing_id, '00000000-0000-0000-0000-000000000000'::uuid)::uuid AS id,
    (CASE WHEN ins.id IS NOT NULL THEN 'created'
          WHEN upd.id IS NOT NULL THEN 'updated'
          WHEN m.existing_id IS NOT NULL THEN 'unchanged'
          ELSE 'retry' END)::text AS result,
    m.opted_out::boolean AS opted_out,
    m.suppression::text AS suppression,
    -- What the row did to the customer's consent, for the consent record: was_opted_in
    -- before, opted_in after (a created or updated row; otherwise both as before).
    (m.was_opted_in AND ins.id IS NULL)::boolean AS was_opted_in,
    (CASE WHEN ins.id IS NOT NULL THEN m.sms_opt_in AND m.suppression = ''
          WHEN upd.id IS NOT NULL THEN m.sms_opt_in
          ELSE m.was_opted_in AND m.existing_id IS NOT NULL END)::boolean AS opted_in,
    COALESCE(m.language, '')::text AS language
FROM merged m
LEFT JOIN inserted ins ON ins.phone = m.phone
LEFT JOIN updated upd ON upd.id = m.existing_id
ORDER BY m.line;

-- name: CustomerPause :one
-- A customer's PAUSE by text: no offers before until (a wave skips them, reason paused).
-- A later PAUSE moves it; an erased customer is not found.
UPDATE customers SET paused_until = sqlc.arg(until)::timestamptz
WHERE id = sqlc.arg(id) AND erased_at IS NULL
RETURNING paused_until;

-- name: CustomerResume :one
-- A customer's RESUME by text: offers again. was_paused says whether a pause was still
-- running at now (an ended one is cleared all the same).
WITH prev AS (
    SELECT p.id, p.paused_until FROM customers p
    WHERE p.id = sqlc.arg(id) AND p.erased_at IS NULL FOR UPDATE
)
UPDATE customers c SET paused_until = NULL
FROM prev
WHERE c.id = prev.id
RETURNING COALESCE(prev.paused_until > sqlc.arg(now)::timestamptz, false)::boolean AS was_paused;

-- name: CustomerLearnLanguage :execrows
-- Records the language a customer's own reply was written in, when none is set (an
-- owner's choice is never overwritten); 0 rows: one was set, or the customer is gone.
UPDATE customers SET language = sqlc.arg(language)::text
WHERE id = sqlc.arg(id) AND language IS NULL AND erased_at IS NULL;

-- name: CustomerMarkPossiblyReassigned :execrows
-- A "wrong number" from the shop's customer with this phone: the number may have changed
-- hands. An earlier mark's time is kept; an erased customer has no phone to match.
UPDATE customers SET possibly_reassigned_at = COALESCE(possibly_reassigned_at, sqlc.arg(now)::timestamptz)
WHERE shop_id = sqlc.arg(shop_id) AND phone = sqlc.arg(phone)::text AND erased_at IS NULL;

-- name: CustomerClearPossiblyReassigned :one
-- The owner checked the number: the mark goes.
UPDATE customers SET possibly_reassigned_at = NULL
WHERE id = sqlc.arg(id) AND shop_id = sqlc.arg(shop_id)
RETURNING *;

-- name: CustomerClearNoShows :execrows
-- The owner clears a live customer's no-shows: those recorded before now no longer
-- count toward the shop's skip_after_no_shows (or the reliable ranking).
UPDATE customers SET no_shows_cleared_at = sqlc.arg(now)::timestamptz
WHERE id = sqlc.arg(id) AND shop_id = sqlc.arg(shop_id) AND erased_at IS NULL;

-- name: CustomerStats :many
-- What the records say of some of a shop's live customers: offers texted and bookings
-- made (not lapsed holds) since `since`, bookings attended and missed (no-shows), holds
-- that lapsed unpaid, and the last offer texted and booking made (NULL: never).
SELECT c.id,
    COALESCE(o.offers, 0)::integer AS offers, o.last_offered_at,
    COALESCE(b.bookings, 0)::integer AS bookings, COALESCE(b.attended, 0)::integer AS attended,
    COALESCE(b.no_shows, 0)::integer AS no_shows, COALESCE(b.lapsed_holds, 0)::integer AS lapsed_holds,
    b.last_booked_at
FROM customers c
LEFT JOIN LATERAL (
    SELECT count(*) FILTER (WHERE so.sent_at >= sqlc.arg(since)::timestamptz) AS offers, max(so.sent_at) AS last_offered_at
    FROM slot_offers so WHERE so.customer_id = c.id
) o ON true
LEFT JOIN LATERAL (
    SELECT count(*) FILTER (WHERE bk.created_at >= sqlc.arg(since)::timestamptz
            AND bk.status NOT IN ('payment_failed', 'moved')) AS bookings,
        count(*) FILTER (WHERE bk.attended_at IS NOT NULL) AS attended,
        count(*) FILTER (WHERE bk.no_show_at IS NOT NULL) AS no_shows,
        count(*) FILTER (WHERE bk.status = 'payment_failed') AS lapsed_holds,
        max(bk.created_at) FILTER (WHERE bk.status <> 'payment_failed') AS last_booked_at
    FROM bookings bk WHERE bk.customer_id = c.id
) b ON true
WHERE c.shop_id = sqlc.arg(shop_id) AND c.id = ANY(sqlc.arg(ids)::uuid[]) AND c.erased_at IS NULL;
