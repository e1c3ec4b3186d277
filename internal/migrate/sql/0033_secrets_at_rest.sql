-- 0033_secrets_at_rest: the calendar feed's token is no longer kept, only its hash.
--
-- A feed's address is derived: "cal_" and the hex of HMAC-SHA256 of the shop's id and
-- its calendar_generation under SECRETS_KEY's key calendar_key_id names (internal/shops,
-- internal/keyring). A copy of the database alone no longer gives anyone every shop's
-- calendar. A request still finds the shop by the token's SHA-256 (calendar_token_hash).
-- Rotating the address takes the next generation; re-keying it under a newer key
-- (`server secrets-key reencrypt`) keeps the previous address working as
-- calendar_legacy_token_hash until the owner rotates.
--
-- Existing shops keep their address: their token's hash stays as it is until the
-- server's first start with a key, which derives their new address (generation 1) and
-- keeps the old one's hash as the legacy one, so subscribed calendars go on working.
-- calendar_key_id NULL marks a shop not derived yet.
--
-- Webhook endpoints' signing secrets stay in their columns, sealed there (AES-256-GCM
-- under SECRETS_KEY, text "sealed1:<key id>:<base64>") by the server at start, where
-- they are still plain, and on every creation and rotation (internal/hooks).
ALTER TABLE shops ADD COLUMN calendar_generation integer NOT NULL DEFAULT 0 CHECK (calendar_generation >= 0);
ALTER TABLE shops ADD COLUMN calendar_key_id bytea CHECK (length(calendar_key_id) = 8);
ALTER TABLE shops ADD COLUMN calendar_legacy_token_hash bytea UNIQUE;
ALTER TABLE shops DROP COLUMN calendar_token;
