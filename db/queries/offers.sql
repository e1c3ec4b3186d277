-- name: OfferInsert :one
INSERT INTO slot_offers (opening_id, customer_id, shop_id, generation, wave, status, created_at)
VALUES ($1, $2, $3, $4, $5, 'queued', $6)
ON CONFLICT (opening_id, generation, customer_id) DO NOTHING
RETURNING *;

-- name: OfferListWave :many
SELECT o.id, o.customer_id, o.status, c.phone
FROM slot_offers o JOIN customers c ON c.id = o.customer_id
WHERE o.opening_id = $1 AND o.generation = $2 AND o.wave = $3
ORDER BY o.created_at, o.id;

-- name: OfferClaimForSending :one
-- Only one sender may text an offer: a retried job skips offers already claimed.
UPDATE slot_offers SET status = 'sending'
WHERE id = $1 AND status = 'queued'
RETURNING id;

-- name: OfferMarkSent :exec
UPDATE slot_offers SET status = 'sent', twilio_sid = sqlc.narg(twilio_sid), sent_at = sqlc.arg(now)::timestamptz
WHERE id = sqlc.arg(id) AND status = 'sending';

-- name: OfferUnclaim :exec
UPDATE slot_offers SET status = 'queued' WHERE id = $1 AND status = 'sending';

-- name: OfferMarkFailed :exec
UPDATE slot_offers SET status = 'failed', error_code = sqlc.narg(error_code)
WHERE id = sqlc.arg(id) AND status IN ('queued', 'sending', 'sent');

-- name: OfferNewestClaimable :one
-- The customer's newest offer that can still be taken: texted (or being texted), in the
-- opening's current generation, and the opening still open.
SELECT o.id AS offer_id, o.opening_id, o.generation, s.starts_at, s.shop_id
FROM slot_offers o JOIN slot_openings s ON s.id = o.opening_id
WHERE o.customer_id = $1
  AND o.status IN ('sending', 'sent')
  AND s.status = 'open'
  AND o.generation = s.generation
ORDER BY o.created_at DESC, o.id
LIMIT 1;

-- name: OfferNewestForCustomer :one
-- The customer's newest offer in any state, to tell a late YES ("taken") from a YES
-- that was never offered anything ("no_offer").
SELECT o.id, o.status FROM slot_offers o
WHERE o.customer_id = $1
ORDER BY o.created_at DESC, o.id
LIMIT 1;

-- name: OfferAccept :one
UPDATE slot_offers SET status = 'accepted'
WHERE id = $1 AND status IN ('sending', 'sent')
RETURNING *;

-- name: OfferMarkOthersLost :exec
UPDATE slot_offers SET status = 'lost'
WHERE opening_id = sqlc.arg(opening_id) AND id <> sqlc.arg(accepted_id)
  AND status IN ('queued', 'sending', 'sent');

-- name: OfferDecline :one
UPDATE slot_offers SET status = 'declined'
WHERE id = $1 AND status IN ('sending', 'sent')
RETURNING *;

-- name: OfferCountForOpening :one
SELECT count(*) FROM slot_offers WHERE opening_id = $1 AND sent_at IS NOT NULL;
