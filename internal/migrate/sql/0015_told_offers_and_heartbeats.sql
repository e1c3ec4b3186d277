-- 0015_told_offers_and_heartbeats: a YES claims only an offer whose text went out, and
-- a wave whose process died is resumed within a minute.
--
-- The one claimable-offer rule. An offer can be taken by its customer's YES while its
-- text has been accepted by the SMS provider (status sent: the wave marks each offer sent
-- as its text is accepted), the opening is open, and the offer is of the opening's
-- current generation. An offer claimed for sending whose text has not gone out yet
-- (sending) is not claimable: its customer was never told of it. Every query that asks
-- what a YES may claim reads this view (bookings' BookingClaim, inbound's
-- InboundStoreMany, offers' OfferListClaimable and OfferNewestClaimable); Postgres
-- inlines it, so their plans are what the join written out gave.
CREATE VIEW slot_offers_claimable AS
SELECT o.id, o.opening_id, o.customer_id, o.shop_id, o.generation, o.created_at, s.starts_at
FROM slot_offers o
JOIN slot_openings s ON s.id = o.opening_id
WHERE o.status = 'sent' AND s.status = 'open' AND o.generation = s.generation;

-- Each server instance's River client records here, every few seconds, that it is
-- alive. A wave job still running under a client whose heartbeat stopped (its process
-- was killed or its host lost) is resumed by another instance within a minute, instead
-- of after River's rescue horizon: its offers claimed for sending are settled (each may
-- have gone out: never texted twice) and the job is made available again. A client that
-- never wrote a row (an instance of an earlier version) is left to River's rescue.
CREATE TABLE client_heartbeats (
    client_id text PRIMARY KEY,
    seen_at   timestamptz NOT NULL
);
