-- 0014_refund_failed_dismissed: the owner can say a failed refund was made by hand.
--
-- A refund the server could not make stays on the owner's dashboard as needing attention
-- (0008) until a later refund of the same payment succeeds. An owner who refunded it by
-- hand in Stripe had no way to take it off: the banner stayed for good. Now they mark it
-- done; the failure itself stays on record, and a new failure on the booking shows again.
ALTER TABLE bookings ADD COLUMN refund_failed_dismissed_at timestamptz;
