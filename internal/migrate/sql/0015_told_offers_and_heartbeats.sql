-- 0015_told_offers_and_heartbeats: a YES claims only an offer whose text went out.
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
