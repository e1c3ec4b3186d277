-- 0029_conversation_texts
-- A conversation's texts as the owner reads them: those recorded in conversation_messages
-- (offers, the shop's transactional texts, texts that needed the owner and their
-- answers, the owner's replies) and every other text the number sent the shop with the
-- answer it got, read from inbound_messages (YES, NO, STOP, HELP...), which the reply
-- path already stores: keeping them here costs the YES path no write. A text recorded in
-- both (by MessageSid) is read from conversation_messages. Inbound texts and their
-- answers have ids made from their MessageSid, so a text keeps its id from read to read.
-- A stored answer without its words yet (a late YES, filled when its answer is heard)
-- is left out until they are there.
CREATE VIEW conversation_texts AS
SELECT m.id, m.conversation_id, m.direction, m.author, m.body, m.at, m.status
FROM conversation_messages m
UNION ALL
SELECT md5('in:' || im.message_sid)::uuid, c.id, 'in', 'customer', im.body, im.received_at, 'received'
FROM conversations c
JOIN inbound_messages im ON im.shop_id = c.shop_id AND im.from_phone = c.phone
WHERE NOT EXISTS (SELECT 1 FROM conversation_messages cm WHERE cm.shop_id = im.shop_id AND cm.message_sid = im.message_sid)
UNION ALL
SELECT md5('answer:' || im.message_sid)::uuid, c.id, 'out', 'system', im.reply, im.handled_at, 'sent'
FROM conversations c
JOIN inbound_messages im ON im.shop_id = c.shop_id AND im.from_phone = c.phone
WHERE im.handled_at IS NOT NULL AND im.reply <> ''
  AND NOT EXISTS (SELECT 1 FROM conversation_messages cm WHERE cm.shop_id = im.shop_id AND cm.message_sid = im.message_sid);
