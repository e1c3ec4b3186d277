-- 0028_notify_phone: a shop may name a number (E.164) that is texted when a customer's
-- text waits in the owner's inbox (at most once per conversation per 15 minutes).
ALTER TABLE shops ADD COLUMN notify_phone text CHECK (notify_phone ~ '^\+[1-9][0-9]{7,14}$');
