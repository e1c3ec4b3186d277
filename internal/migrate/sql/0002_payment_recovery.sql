-- 0002_payment_recovery: the reconciliation's backoff and the refund decision live on
-- the booking.

-- When the reconciliation may read a pending booking back again, and how often it has
-- found it unresolved (still open at Stripe, or an error). A booking that stays pending
-- waits longer each time instead of holding up newer ones.
ALTER TABLE bookings ADD COLUMN reconcile_after timestamptz;
ALTER TABLE bookings ADD COLUMN reconcile_attempts integer NOT NULL DEFAULT 0;
-- Set in the transaction that enqueues the refund of the booking's late payment: from
-- then on the booking never takes its slot back.
ALTER TABLE bookings ADD COLUMN refund_requested_at timestamptz;

-- Data, not shape (db/schema.sql has no counterpart): refunds decided before the column
-- existed were known only from the event ledger's results or a stored refund.
UPDATE bookings b SET refund_requested_at = b.updated_at
WHERE b.refund_requested_at IS NULL
  AND (b.refund_id IS NOT NULL
       OR EXISTS (SELECT 1 FROM stripe_events e WHERE e.booking_id = b.id AND e.result = 'refunded'));
