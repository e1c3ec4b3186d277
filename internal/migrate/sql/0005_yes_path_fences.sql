-- 0005_yes_path_fences: what the YES path's statements need.

-- The inbound log keeps shop_id without a foreign key. inbound_messages is the log of
-- Twilio's deliveries (dedupe by MessageSid, the stored answer); its shop_id says which
-- shop's number the text was sent to. The foreign key made every stored text take a KEY
-- SHARE row lock on its shop's row: a storm of replies to one shop created a MultiXact
-- per insert on that one row, the largest cost of storing a storm's texts. Shops are
-- never deleted, and nothing joins the log to a shop that must exist.
ALTER TABLE inbound_messages DROP CONSTRAINT inbound_messages_shop_id_fkey;

-- A customer's live bookings, for BookingClaim's one-chair-per-customer check.
CREATE INDEX bookings_customer_live_idx ON bookings (customer_id) WHERE status IN ('pending_payment', 'confirmed');
