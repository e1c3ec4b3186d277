-- 0021_stripe_connect: each shop's payments on its own connected Stripe account (direct
-- charges), when the server runs with STRIPE_CONNECT=on (issue 27).
--
-- The shop's connected account and its state as Stripe last told it (account.updated,
-- or a read after onboarding). stripe_status_at is the time of what was stored (the
-- event's creation), so an older event arriving late never undoes a newer state. An
-- account belongs to one shop: an account event finds its shop by it. A disconnected
-- (deauthorized) account stays on record, with when; the shop takes no new checkout
-- openings until it connects another.
ALTER TABLE shops ADD COLUMN stripe_account_id text UNIQUE;
ALTER TABLE shops ADD COLUMN stripe_charges_enabled boolean NOT NULL DEFAULT false;
ALTER TABLE shops ADD COLUMN stripe_payouts_enabled boolean NOT NULL DEFAULT false;
ALTER TABLE shops ADD COLUMN stripe_details_submitted boolean NOT NULL DEFAULT false;
ALTER TABLE shops ADD COLUMN stripe_requirements_due text[] NOT NULL DEFAULT '{}';
ALTER TABLE shops ADD COLUMN stripe_status_at timestamptz;
ALTER TABLE shops ADD COLUMN stripe_disconnected_at timestamptz;
-- The platform's fee on this shop's payments, in basis points; NULL takes the server's
-- PLATFORM_FEE_BPS. Only the admin sets it.
ALTER TABLE shops ADD COLUMN platform_fee_bps integer CHECK (platform_fee_bps BETWEEN 0 AND 5000);

-- Which account took a booking's payment, and the platform's fee on it, stored with the
-- payment link (the checkout is made on that account). NULL is the platform's own
-- account: bookings made before Connect was switched on keep it, so their late events
-- and refunds still go to the account that holds the money. A payment event acts on a
-- booking only when it comes from this account.
ALTER TABLE bookings ADD COLUMN stripe_account text;
ALTER TABLE bookings ADD COLUMN application_fee_cents bigint NOT NULL DEFAULT 0
    CHECK (application_fee_cents >= 0 AND application_fee_cents <= amount_cents);

-- The connected account an event came from (NULL: the platform's own), kept with it.
ALTER TABLE stripe_events ADD COLUMN account text;
