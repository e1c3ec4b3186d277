-- 0061_connectors: the booking systems that keep a shop's appointment book (internal/book).
-- A connector is one source of a shop's appointments: cal.com and Square post signed
-- webhooks to /webhooks/<kind>/<id>, a calendar feed is polled. secret is sealed under
-- SECRETS_KEY, bound to the shop and the connector (cal.com's webhook secret, which the
-- server makes; Square's subscription signature key, which the owner gives, NULL until
-- given; the feed's address, whose token is its credential). The last delivery and what
-- became of it are kept on the row for the owner to see; connector_deliveries remembers
-- the deliveries applied, by the vendor's event id (cal.com: trigger and booking uid), so
-- a redelivery is acknowledged without being applied again.
CREATE TABLE connectors (
    id                   uuid PRIMARY KEY,
    shop_id              uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    kind                 text NOT NULL CHECK (kind IN ('calcom', 'square', 'ics')),
    description          text NOT NULL DEFAULT '' CHECK (length(description) <= 200),
    secret               text CHECK (secret LIKE 'sealed1:%'),
    created_at           timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL,
    last_delivery_at     timestamptz,
    last_delivery_event  text NOT NULL DEFAULT '' CHECK (length(last_delivery_event) <= 100),
    last_delivery_result text NOT NULL DEFAULT '' CHECK (length(last_delivery_result) <= 40),
    CHECK (kind = 'square' OR secret IS NOT NULL)
);
CREATE INDEX connectors_shop_idx ON connectors (shop_id, created_at, id);

CREATE TABLE connector_deliveries (
    connector_id uuid NOT NULL REFERENCES connectors (id) ON DELETE CASCADE,
    delivery_id  text NOT NULL CHECK (length(delivery_id) BETWEEN 1 AND 400),
    shop_id      uuid NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
    event        text NOT NULL DEFAULT '' CHECK (length(event) <= 100),
    received_at  timestamptz NOT NULL,
    PRIMARY KEY (connector_id, delivery_id)
);
CREATE INDEX connector_deliveries_received_idx ON connector_deliveries (received_at);
