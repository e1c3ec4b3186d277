-- 0011_sms_problems: the last time the shop's texts failed because of its own SMS number
-- or account (Twilio's 21408: region not enabled; 21612: this From cannot reach that
-- To), and how many such failures there were in the week before it. The dashboard shows
-- the owner a banner; the customers are not marked, since it was not their doing.
ALTER TABLE shops ADD COLUMN sms_problem_code integer;
ALTER TABLE shops ADD COLUMN sms_problem_at timestamptz;
ALTER TABLE shops ADD COLUMN sms_problem_count integer NOT NULL DEFAULT 0;
