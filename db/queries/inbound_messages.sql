-- name: InboundInsert :one
INSERT INTO inbound_messages (message_sid, shop_id, from_phone, to_phone, body, received_at)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (message_sid) DO NOTHING
RETURNING message_sid;

-- name: InboundGet :one
SELECT * FROM inbound_messages WHERE message_sid = $1;

-- name: InboundSetOutcome :exec
UPDATE inbound_messages SET outcome = $2, reply = $3, handled_at = $4
WHERE message_sid = $1 AND outcome IS NULL;
