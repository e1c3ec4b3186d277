-- 0067_move_up: move-up offers (issue 44). customers.move_up: the customer agreed to be
-- offered an earlier time for an appointment they hold (default false: nobody is asked
-- to move unless they said so). shops.move_up_days: how far ahead of an opening a
-- booked appointment may be to be offered it; shops.chain_max: how many moves one chain
-- of freed times may make.
ALTER TABLE customers ADD COLUMN move_up boolean NOT NULL DEFAULT false;
ALTER TABLE shops
    ADD COLUMN move_up_days integer NOT NULL DEFAULT 14 CHECK (move_up_days BETWEEN 0 AND 90),
    ADD COLUMN chain_max    integer NOT NULL DEFAULT 5 CHECK (chain_max BETWEEN 0 AND 20);
