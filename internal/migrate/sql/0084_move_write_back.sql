-- 0084: a move-up of a cal.com or Square appointment is written back through the
-- vendor's API when the shop's connector holds an API key (issue 44).
-- The vendor's API key (cal.com's cal_live_/cal_test_ key, Square's access token),
-- sealed under SECRETS_KEY like the connector's secret; NULL: none, moves are listed
-- for the owner to copy.
ALTER TABLE connectors ADD COLUMN api_key text CHECK (api_key LIKE 'sealed1:%');
-- One row per move written back: the fence that makes it written once, what the vendor
-- answered (cal.com's new booking uid, Square's version after the update: how the echo
-- of our own write among the vendor's webhooks is known) and, once it failed for good,
-- the vendor's reason for the owner.
CREATE TABLE appointment_write_backs (
    appointment_id  uuid PRIMARY KEY REFERENCES appointments (id) ON DELETE CASCADE,
    shop_id         uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    source          text NOT NULL CHECK (source IN ('calcom', 'square')),
    external_id     text NOT NULL,
    starts_at       timestamptz NOT NULL,
    state           text NOT NULL CHECK (state IN ('pending', 'written', 'failed')),
    new_external_id text,
    new_version     bigint,
    error           text NOT NULL DEFAULT '' CHECK (length(error) <= 500),
    attempts        integer NOT NULL DEFAULT 0,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL
);
CREATE INDEX appointment_write_backs_external_idx ON appointment_write_backs (shop_id, source, external_id);
CREATE INDEX appointment_write_backs_new_idx ON appointment_write_backs (shop_id, source, new_external_id)
    WHERE new_external_id IS NOT NULL;
