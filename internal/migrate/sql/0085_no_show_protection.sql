-- 0085: no-show protection (issue 48): deposits, a card kept for a fee, and the policy
-- the customer accepted.
-- Two more payment modes: deposit (a part of the price at the YES) and card (nothing at
-- the YES, the card kept for a fee later).
ALTER TABLE shops DROP CONSTRAINT shops_payment_mode_check;
ALTER TABLE shops ADD CONSTRAINT shops_payment_mode_check
    CHECK (payment_mode IN ('checkout', 'deposit', 'card', 'none'));
-- The deposit: a fixed amount or a share of the price (one of them in deposit mode,
-- checked in Go); keep_card keeps the card of a checkout or deposit payment for a fee.
ALTER TABLE shops ADD COLUMN deposit_cents bigint CHECK (deposit_cents > 0);
ALTER TABLE shops ADD COLUMN deposit_percent integer CHECK (deposit_percent BETWEEN 1 AND 100);
ALTER TABLE shops ADD COLUMN keep_card boolean NOT NULL DEFAULT false;
-- The cancellation policy shown on the payment page, and its fees; policy_version
-- moves on with every change of them, so a booking's accepted version names one text.
ALTER TABLE shops ADD COLUMN cancellation_policy text NOT NULL DEFAULT ''
    CHECK (length(cancellation_policy) <= 500);
ALTER TABLE shops ADD COLUMN late_cancel_hours integer NOT NULL DEFAULT 24
    CHECK (late_cancel_hours BETWEEN 0 AND 720);
ALTER TABLE shops ADD COLUMN no_show_fee_cents bigint NOT NULL DEFAULT 0 CHECK (no_show_fee_cents >= 0);
ALTER TABLE shops ADD COLUMN late_cancel_fee_cents bigint NOT NULL DEFAULT 0 CHECK (late_cancel_fee_cents >= 0);
ALTER TABLE shops ADD COLUMN policy_version integer NOT NULL DEFAULT 0;
-- What a booking's payment page asked and showed, fixed when its first checkout is made
-- (a retry makes the same checkout from it), and the customer's acceptance once the
-- page is completed: the evidence for a dispute. It names no person, so an erasure of
-- the customer keeps it (the person gone, the proof kept).
CREATE TABLE booking_terms (
    booking_id            uuid PRIMARY KEY REFERENCES bookings (id) ON DELETE CASCADE,
    shop_id               uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    mode                  text NOT NULL CHECK (mode IN ('checkout', 'deposit', 'card')),
    price_cents           bigint NOT NULL,
    charged_cents         bigint NOT NULL CHECK (charged_cents >= 0),
    keep_card             boolean NOT NULL,
    policy_version        integer NOT NULL,
    policy_text           text NOT NULL,
    policy_sha256         text NOT NULL,
    late_cancel_hours     integer NOT NULL,
    no_show_fee_cents     bigint NOT NULL,
    late_cancel_fee_cents bigint NOT NULL,
    checkout_session      text,
    accepted_at           timestamptz,
    accepted_ip           text,
    accepted_user_agent   text,
    created_at            timestamptz NOT NULL
);
-- A fee charged to a booking's kept card: one row per booking, the fence that charges a
-- booking at most one fee however many clicks race (the provider's idempotency key is
-- the second fence). state pending while the charge is under way.
CREATE TABLE booking_fees (
    booking_id            uuid PRIMARY KEY REFERENCES bookings (id) ON DELETE CASCADE,
    shop_id               uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    kind                  text NOT NULL CHECK (kind IN ('no_show', 'late_cancel')),
    state                 text NOT NULL CHECK (state IN ('pending', 'charged', 'requires_action', 'declined', 'no_card')),
    amount_cents          bigint NOT NULL CHECK (amount_cents > 0),
    currency              text NOT NULL,
    payment_intent_id     text,
    decline_code          text NOT NULL DEFAULT '',
    message               text NOT NULL DEFAULT '' CHECK (length(message) <= 500),
    application_fee_cents bigint NOT NULL DEFAULT 0,
    -- requires_action: the page where the customer pays the fee themselves (texted).
    pay_url               text,
    attempt_at            timestamptz,
    created_at            timestamptz NOT NULL,
    updated_at            timestamptz NOT NULL
);
