-- 0005_inbound_log_without_shop_fk: inbound_messages is the log of Twilio's deliveries
-- (dedupe by MessageSid, the stored answer); its shop_id says which shop's number the
-- text was sent to. The foreign key to shops made every stored text take a KEY SHARE
-- row lock on its shop's row: a storm of replies to one shop created a MultiXact per
-- insert on the same row, the largest cost of storing a storm's texts. Shops are never
-- deleted, and nothing joins the log to a shop that must exist.
ALTER TABLE inbound_messages DROP CONSTRAINT inbound_messages_shop_id_fkey;
