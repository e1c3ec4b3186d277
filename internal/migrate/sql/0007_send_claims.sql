-- 0007_send_claims: a transactional text (jobs.Text) is claimed by its key before it is
-- sent, so that a job killed after the send, and run again by River's rescue, never
-- texts twice: the second run finds the claim and stops. A send that surely did not
-- happen (the provider refused for now, or could not be reached) gives the claim back
-- for the retry. Rows older than the retention period are purged with the inbound log.
CREATE TABLE text_claims (
    key         text PRIMARY KEY,
    shop_id     uuid NOT NULL,
    claimed_at  timestamptz NOT NULL,
    message_sid text
);
CREATE INDEX text_claims_claimed_idx ON text_claims (claimed_at);
-- When a wave's sender claimed an offer (queued→sending): an offer still sending long
-- after it (longer than a wave job may run) was claimed by a run that was killed.
ALTER TABLE slot_offers ADD COLUMN claimed_at timestamptz;
