-- 0037_sms_senders: each shop's own sender (a number and a Messaging Service the
-- platform set up through the API) and its US A2P 10DLC registration, walked by a
-- durable job that records every object it made before it moves on.
CREATE TABLE sms_senders (
    shop_id               uuid PRIMARY KEY REFERENCES shops (id) ON DELETE CASCADE,
    status                text NOT NULL CHECK (status IN ('provisioning', 'active')),
    number                text CHECK (number ~ '^\+[1-9][0-9]{7,14}$'),
    number_sid            text,
    bought                boolean NOT NULL DEFAULT false,
    us_local              boolean NOT NULL DEFAULT false,
    messaging_service_sid text,
    created_at            timestamptz NOT NULL,
    updated_at            timestamptz NOT NULL,
    CHECK (status = 'provisioning' OR (number IS NOT NULL AND messaging_service_sid IS NOT NULL))
);
CREATE UNIQUE INDEX sms_senders_number_idx ON sms_senders (number);

CREATE TABLE sms_registrations (
    shop_id         uuid PRIMARY KEY REFERENCES shops (id) ON DELETE CASCADE,
    details         jsonb NOT NULL,
    status          text NOT NULL CHECK (status IN ('submitted', 'brand_pending', 'campaign_pending', 'verified', 'failed')),
    brand_status    text,
    campaign_status text,
    failure_reason  text,
    steps           jsonb NOT NULL DEFAULT '{}',
    submission      integer NOT NULL DEFAULT 1,
    updated_at      timestamptz NOT NULL
);

CREATE TABLE sms_registration_transitions (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    shop_id         uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    submission      integer NOT NULL,
    at              timestamptz NOT NULL,
    status          text NOT NULL,
    brand_status    text,
    campaign_status text,
    failure_reason  text
);
CREATE INDEX sms_registration_transitions_shop_idx ON sms_registration_transitions (shop_id, id);
