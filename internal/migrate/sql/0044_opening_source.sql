-- Where an opening came from: NULL for one the owner declared (the API, the dashboard),
-- 'appointment' for the time a cancelled appointment of the shop's book freed, with the
-- appointment's id (internal/book declares it in the transaction that stores the
-- cancellation).
ALTER TABLE slot_openings ADD COLUMN source text, ADD COLUMN source_id uuid;
ALTER TABLE slot_openings ADD CONSTRAINT slot_openings_source_check
    CHECK (source IS NULL OR (source = 'appointment' AND source_id IS NOT NULL));
