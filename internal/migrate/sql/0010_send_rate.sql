-- 0010_send_rate: how many texts a second the shop's number may send (a long code 1, a
-- toll-free number 3, a short code 100). Waves are paced to it, so no offer waits in the
-- provider's queue until after its slot is gone.
ALTER TABLE shops ADD COLUMN send_rate integer NOT NULL DEFAULT 1 CHECK (send_rate BETWEEN 1 AND 1000);
