-- 0030_conversation_texts_order
-- A text and its answer can share an instant (a late YES is answered as it is stored):
-- ord puts a text before its answer where their times tie (0 for every recorded text,
-- whose UUIDv7 ids keep their order, and for an inbound one; 1 for its answer).
CREATE OR REPLACE VIEW conversation_texts AS
SELECT m.id, m.conversation_id, m.direction, m.author, m.body, m.at, m.status, 0::smallint AS ord
FROM conversation_messages m
UNION ALL
SELECT md5('in:' || im.message_sid)::uuid, c.id, 'in', 'customer', im.body, im.received_at, 'received', 0::smallint
FROM conversations c
JOIN inbound_messages im ON im.shop_id = c.shop_id AND im.from_phone = c.phone
WHERE NOT EXISTS (SELECT 1 FROM conversation_messages cm WHERE cm.shop_id = im.shop_id AND cm.message_sid = im.message_sid)
UNION ALL
SELECT md5('answer:' || im.message_sid)::uuid, c.id, 'out', 'system', im.reply, im.handled_at, 'sent', 1::smallint
FROM conversations c
JOIN inbound_messages im ON im.shop_id = c.shop_id AND im.from_phone = c.phone
WHERE im.handled_at IS NOT NULL AND im.reply <> ''
  AND NOT EXISTS (SELECT 1 FROM conversation_messages cm WHERE cm.shop_id = im.shop_id AND cm.message_sid = im.message_sid);
