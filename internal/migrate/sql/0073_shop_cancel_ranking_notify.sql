-- 0073: three shop settings and the alert number's confirmation.
-- customers_cancel_by_text: a booked customer's "can't make it" cancels the booking and
-- reopens its opening (on, the default), or goes to the owner's inbox (off) (issue 45).
-- ranking and skip_after_no_shows: who a wave texts first inside a priority tier, and
-- how many no-shows in 180 days keep a customer out of offers (NULL: never) (issue 47).
ALTER TABLE shops
    ADD COLUMN customers_cancel_by_text boolean NOT NULL DEFAULT true,
    ADD COLUMN ranking text NOT NULL DEFAULT 'priority' CHECK (ranking IN ('priority', 'fair', 'reliable', 'value')),
    ADD COLUMN skip_after_no_shows integer CHECK (skip_after_no_shows BETWEEN 1 AND 20);

-- The owner's alert number waits here, with a code texted to it, until the owner enters
-- the code: alerts go only to shops.notify_phone, a number that proved it is the owner's
-- (issue 49). One pending number a shop; the code is kept as a hash.
CREATE TABLE notify_phone_confirmations (
    shop_id    uuid PRIMARY KEY REFERENCES shops (id) ON DELETE CASCADE,
    phone      text NOT NULL,
    code_hash  bytea NOT NULL CHECK (length(code_hash) = 32),
    sent_at    timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    attempts   integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    -- Codes sent to this shop's pending numbers today, to bound what an owner's key can
    -- make us text.
    sends_day  date NOT NULL,
    sends      integer NOT NULL DEFAULT 1 CHECK (sends >= 0)
);
