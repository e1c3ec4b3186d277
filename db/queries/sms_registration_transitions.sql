-- Every change of a registration's statuses (internal/senders).

-- name: RegistrationTransitionInsert :exec
INSERT INTO sms_registration_transitions (shop_id, submission, at, status, brand_status, campaign_status, failure_reason)
VALUES (sqlc.arg(shop_id), sqlc.arg(submission), sqlc.arg(at)::timestamptz, sqlc.arg(status),
    sqlc.narg(brand_status), sqlc.narg(campaign_status), sqlc.narg(failure_reason));

-- name: RegistrationTransitionList :many
SELECT * FROM sms_registration_transitions WHERE shop_id = $1 ORDER BY id;
