-- 0022_suppressions: every STOP is kept, per shop, whether or not the number is a
-- customer; erasure keeps a keyed hash of the number, never an unkeyed one.
--
-- A STOP from a number that was not a customer was forgotten: a later import or
-- POST /api/customers of the number opted it in. And what an erasure kept of the number
-- (so the person comes back opted out) was SHA-256 of shop id and phone, which anyone
-- holding the database reverses by trying every number of a region in seconds.
-- sms_suppressions keeps, for each number that said STOP (or that the carrier reports
-- opted out), and each number a shop erased, HMAC-SHA256 of "<shop id>:<phone>" under
-- the server's erasure key (ERASURE_KEY, newest first; every key is tried when
-- matching, so a rotation keeps old records matching). Adding or importing a suppressed
-- number keeps it opted out until the number's own START, which deletes the record.
-- The rows are kept for good: a STOP does not expire.
CREATE TABLE sms_suppressions (
    shop_id    uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    phone_hmac bytea NOT NULL CHECK (length(phone_hmac) = 32),
    -- stop: the number said STOP (or its carrier refused a text as opted out);
    -- erased: the shop erased the customer who had this number (an erasure outranks a
    -- STOP: a queued text to an erased number is never sent).
    reason     text NOT NULL CHECK (reason IN ('stop', 'erased')),
    created_at timestamptz NOT NULL,
    PRIMARY KEY (shop_id, phone_hmac)
);

-- The unkeyed hashes go: they cannot be converted (that would take the numbers), so
-- numbers erased before this migration are no longer recognised when added again.
DROP INDEX customers_erased_phone_idx;
ALTER TABLE customers DROP COLUMN erased_phone_sha256;

-- An erasure blanks the customer's texts by shop and number: an index, not a scan of
-- every stored text. (Built inside the migration's transaction: inserts into
-- inbound_messages wait for it, seconds for millions of rows.)
CREATE INDEX inbound_messages_shop_from_idx ON inbound_messages (shop_id, from_phone);
