-- 0008_refund_failures: a refund that cannot be made is recorded on its booking, never
-- dropped. When Stripe refuses a refund for good, or its job's last attempt fails, the
-- refund job stores when, which payment and why; the owner's dashboard lists these
-- bookings as needing attention (refund by hand in Stripe) until a later refund of the
-- same payment succeeds.
ALTER TABLE bookings ADD COLUMN refund_failed_at timestamptz;
ALTER TABLE bookings ADD COLUMN refund_failed_payment_intent text;
ALTER TABLE bookings ADD COLUMN refund_error text;
CREATE INDEX bookings_refund_failed_idx ON bookings (shop_id, refund_failed_at) WHERE refund_failed_at IS NOT NULL;
