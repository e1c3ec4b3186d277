-- 0057_calendar_legacy_until: a feed address kept working after a re-key or from before
-- hashed tokens (calendar_legacy_token_hash) works until this time (shops'
-- OldCalendarAddressLasts after it was kept), and the dashboard says so; the ones kept
-- already get the same time from now.
ALTER TABLE shops ADD COLUMN calendar_legacy_until timestamptz;
UPDATE shops SET calendar_legacy_until = now() + interval '90 days' WHERE calendar_legacy_token_hash IS NOT NULL;
