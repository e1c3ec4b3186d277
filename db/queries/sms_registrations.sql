-- A shop's US A2P 10DLC registration (internal/senders).

-- name: RegistrationGet :one
SELECT * FROM sms_registrations WHERE shop_id = $1;

-- name: RegistrationSubmit :one
-- A first submission, or a new one after a failure (steps: what the new one keeps of
-- the last). No row: one is under way or verified already.
INSERT INTO sms_registrations (shop_id, details, status, steps, submission, updated_at)
VALUES (sqlc.arg(shop_id), sqlc.arg(details), 'submitted', '{}', 1, sqlc.arg(now)::timestamptz)
ON CONFLICT (shop_id) DO UPDATE
SET details = EXCLUDED.details, status = 'submitted', brand_status = NULL, campaign_status = NULL,
    failure_reason = NULL, steps = sqlc.arg(kept_steps)::jsonb, submission = sms_registrations.submission + 1,
    updated_at = EXCLUDED.updated_at
WHERE sms_registrations.status = 'failed'
RETURNING *;

-- name: RegistrationSetStep :one
-- Records the SID a step made, before the flow moves on. No row: another submission
-- replaced this one.
UPDATE sms_registrations
SET steps = steps || jsonb_build_object(sqlc.arg(step)::text, sqlc.arg(sid)::text), updated_at = sqlc.arg(now)::timestamptz
WHERE shop_id = sqlc.arg(shop_id) AND submission = sqlc.arg(submission)
RETURNING *;

-- name: RegistrationSetStatus :one
-- A change of the statuses. No row: another submission replaced this one, or nothing
-- changed.
UPDATE sms_registrations
SET status = sqlc.arg(status), brand_status = sqlc.narg(brand_status), campaign_status = sqlc.narg(campaign_status),
    failure_reason = sqlc.narg(failure_reason), updated_at = sqlc.arg(now)::timestamptz
WHERE shop_id = sqlc.arg(shop_id) AND submission = sqlc.arg(submission)
  AND (status, brand_status, campaign_status, failure_reason) IS DISTINCT FROM
      (sqlc.arg(status), sqlc.narg(brand_status), sqlc.narg(campaign_status), sqlc.narg(failure_reason))
RETURNING *;
