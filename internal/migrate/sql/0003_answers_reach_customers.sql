-- 0003_answers_reach_customers: a booked customer always learns it, and no inbound
-- text is left without an answer.

-- When the customer was told of their booking (the YES answer written back to Twilio in
-- time, or the notice text). A booking still untold a little after it was made gets a
-- text with its outcome (bookings' notice job).
ALTER TABLE bookings ADD COLUMN customer_told_at timestamptz;

-- When a redelivery or the sweeper took over a text whose first handler died before it
-- stored an answer; a take-over is itself retried only once it is stale too.
ALTER TABLE inbound_messages ADD COLUMN taken_over_at timestamptz;
CREATE INDEX inbound_messages_unanswered_idx ON inbound_messages (received_at) WHERE outcome IS NULL;
