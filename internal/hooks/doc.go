// Package hooks sends a shop's events to the endpoints it registers (outbound webhooks),
// by the Standard Webhooks convention (https://www.standardwebhooks.com): a JSON body
// {id, type, created_at, timestamp, data}, signed in the webhook-id, webhook-timestamp
// and webhook-signature headers.
//
// It owns the tables webhook_endpoints, webhook_events, webhook_deliveries and
// webhook_attempts. The flow:
//
//	owner's change ──(same transaction or statement)──▶ webhook_events   (the outbox)
//	       Record / RecordOpening / webhook_record   only if a subscribed endpoint exists;
//	       the event's data rendered in Go then (the api types), stored as it is sent
//	dispatcher (every instance, SKIP LOCKED) ──▶ the body: the envelope around the data,
//	       one webhook_deliveries row per subscribed endpoint, one River job each
//	       (past MaxEventsPerHour of its shop: the deliveries are made failed, unsent;
//	       message.received has a budget of its own, MaxMessageEventsPerHour, so that
//	       strangers' texts never spend the shop's other events')
//	River (queue "webhooks") ──▶ DeliveryWorker: POST, 10 s, any 2xx; every attempt logged;
//	       at most PerShop (4) attempts in flight per shop and PerEndpoint (2) per
//	       endpoint, across the instances (Postgres advisory locks, permits.go): a job over
//	       either snoozes without attempting, so no shop starves another's deliveries;
//	       a failure snoozes the job until the next attempt of the schedule
//	       (immediately, 5 s, 5 min, 30 min, 2 h, 5 h, then 10 h steps: about three
//	       days, DefaultSchedule), then the delivery fails;
//	       an endpoint failing for 5 days straight is disabled with the reason
//
// # Recording
//
// An event is recorded by the package that makes the change, in the change's own
// transaction, so there is no change without its event and no event without its change.
// Recording costs a shop without a subscribed endpoint one index probe
// (webhook_subscribers, inlined by the planner) and writes nothing; RecordOpening and
// the claim do not even open webhook_events then.
//
// # The data: one shape per object, rendered in Go when the event is recorded
//
// An event's data is the object as the owners' API shows it, in the api package's type
// for it (api.Opening, api.Customer, api.MessageReceived, api.SMSSenderUpdated): one
// type, and one rendering, for the API and the events. It is rendered when the event is
// recorded, from the object as the change left it, and stored rendered (the subject
// column); the dispatcher wraps it in the envelope and every attempt sends that body.
// The state is the event's, whenever it is sent.
//
// Record takes the api object from its caller (customers: Customer.API after the
// change; the inbox: Recorded.Event; senders: Sender.Event), checked against the
// event's type. RecordOpening renders opening.* and booking.* events of Go code: it
// reads the facts (webhook_opening_facts: the opening, the booking, who holds it, the
// person, the offers texted, the currency, as they stand in the transaction) and renders
// api.Opening from them (facts.go), as shopapi renders GET /api/openings/{id}.
//
// The YES's claim (slots' BookingClaim) is one statement with no transaction of its own,
// and Go cannot render between its change and its insert. So it renders before: the
// customer's claimable offers are read (inbound's InboundStoreMany, slots'
// OfferListClaimable) with the facts of the claim's events — only for a YES to a shop
// with an endpoint subscribed to them (one probe per shop in the statement); otherwise
// nothing is read. The opening's facts are gathered once per opening in the statement
// (a storm's YES share them: webhook_opening_facts), the claimant's and the offer's per
// YES (webhook_claim_facts, two primary-key reads). The claim attempt that has facts
// renders the opening as the claim will leave it (ClaimData: filled now by the
// claimant, with a booking whose id Go chose, of the offer's service at its price) and
// passes the data to the statement, which inserts it, only if it books, with this
// package's SQL function in its final SELECT (f: the filled opening; b: the inserted
// booking):
//
//	CASE WHEN sqlc.narg(event_data)::jsonb IS NOT NULL
//	      AND EXISTS (SELECT FROM webhook_subscribers(b.shop_id, webhook_claim_types(b.status)))
//	     THEN webhook_record(b.shop_id, webhook_claim_types(b.status), b.created_at, sqlc.narg(event_data)::jsonb)
//	     ELSE 0 END AS events_recorded
//
// A data-modifying CTE would open webhook_events and its indexes on every claim,
// endpoints or not. The offers texted are those counted when the YES was read (the
// claim itself sends none). An endpoint created between that read and the claim misses
// that claim's events, as it would miss those of a change a moment older.
//
// Events recorded before migration 0050 hold a subject in their object's stored form
// (rendered is false): the dispatcher renders those once, into the same JSON as before
// (legacy.go).
//
// # Safety
//
// URLs must be https (http too in development); at every connection the resolved
// address is checked (in the dialer, so DNS rebinding cannot slip past) and loopback,
// private, link-local, CGNAT, unspecified, multicast and cloud metadata addresses are
// refused unless AllowPrivate; redirects are not followed; answers are read up to 64 KiB;
// proxies from the environment are not used. A shop sees only its own endpoints and
// deliveries: every call takes the shop id.
package hooks
