-- 0006_key_version: a rotation of a shop's API key ends its dashboard sessions.

-- Counts the shop's API keys: every rotation adds one, in the same UPDATE that stores
-- the new key's hash. A dashboard session carries the version it was signed in under
-- and is refused once the shop's version has moved on, so the check costs nothing more
-- than the shop row each dashboard request reads anyway.
ALTER TABLE shops ADD COLUMN api_key_version integer NOT NULL DEFAULT 1 CHECK (api_key_version >= 1);
