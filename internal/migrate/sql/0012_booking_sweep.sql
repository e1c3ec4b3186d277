-- 0012_booking_sweep: what a booking owes its customer when the YES path could not give
-- it (the payment link, or the news when the answer to the YES may not have reached
-- them) is found by a periodic sweep instead of two River jobs per booking, which cost
-- Postgres about a third of a YES's work. The sweep reads live bookings of the last
-- hours by when they were made; the index leaves out payment_url and customer_told_at,
-- so storing the link and marking the customer told stay eligible for HOT updates.
-- link_retry_at spaces the attempts at a link while the payment provider is down, and
-- keeps two sweeps from making the same link at once.
ALTER TABLE bookings ADD COLUMN link_retry_at timestamptz;
CREATE INDEX bookings_live_created_idx ON bookings (created_at) WHERE status IN ('pending_payment', 'confirmed');
-- The two retired job kinds (booking_checkout, booking_notice) have no worker any more:
-- their waiting jobs would only fail and retry for hours. The sweep covers their
-- bookings, so they go. (On a new database River's tables come after this migration.)
DO $$
BEGIN
    IF to_regclass('river_job') IS NOT NULL THEN
        DELETE FROM river_job
        WHERE kind IN ('booking_checkout', 'booking_notice')
          AND state IN ('available', 'pending', 'retryable', 'scheduled');
    END IF;
END
$$;
