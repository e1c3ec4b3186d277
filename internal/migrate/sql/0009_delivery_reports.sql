-- 0009_delivery_reports: what the carrier said of each text (Twilio's status callbacks).
--
-- Every report is kept by message id first (delivery_reports), because it may arrive
-- before the wave has stored the id its send returned; it is then applied to the offer
-- with that id, now or when the id is stored. An offer whose text was undelivered or
-- failed no longer counts as offered (status failed), and the next wave replaces it
-- with another customer (replaced_at marks the failed offers already made up for).
CREATE TABLE delivery_reports (
    message_sid text PRIMARY KEY,
    status      text NOT NULL,
    reason      text NOT NULL,
    error_code  integer,
    received_at timestamptz NOT NULL
);
CREATE INDEX delivery_reports_received_idx ON delivery_reports (received_at);
ALTER TABLE slot_offers ADD COLUMN delivery text;
ALTER TABLE slot_offers ADD COLUMN delivery_at timestamptz;
ALTER TABLE slot_offers ADD COLUMN replaced_at timestamptz;
CREATE INDEX slot_offers_sid_idx ON slot_offers (twilio_sid) WHERE twilio_sid IS NOT NULL;
