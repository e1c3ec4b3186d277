// Package hooks sends a shop's events to the endpoints it registers (outbound webhooks),
// by the Standard Webhooks convention (https://www.standardwebhooks.com): a JSON body
// {id, type, created_at, timestamp, data}, signed in the webhook-id, webhook-timestamp
// and webhook-signature headers.
//
// It owns the tables webhook_endpoints, webhook_events, webhook_deliveries and
// webhook_attempts. The flow:
//
//	owner's change ──(same transaction or statement)──▶ webhook_events   (the outbox)
//	       Record / RecordOpening / webhook_record_opening   only if a subscribed endpoint exists
//	dispatcher (every instance, SKIP LOCKED) ──▶ payload rendered once (Renderer),
//	       one webhook_deliveries row per subscribed endpoint, one River job each
//	       (past MaxEventsPerHour of its shop: the deliveries are made failed, unsent)
//	River (queue "webhooks") ──▶ DeliveryWorker: POST, 10 s, any 2xx; every attempt logged;
//	       at most PerShop (4) attempts in flight per shop and PerEndpoint (2) per
//	       endpoint, across the instances (Postgres advisory locks, slots.go): a job over
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
// Record takes a subject the caller makes (customer events: the customers.Customer after
// the change). RecordOpening records opening.* and booking.* events from Go code: the
// subject is the opening and booking rows as they stand in the transaction
// (webhook_opening_subject). The YES's claim (slots' BookingClaim, one statement, no
// transaction of its own) records from its own RETURNING rows by calling this package's
// SQL function in its final SELECT, guarded so a shop without endpoints never reaches it
// (f: the filled opening, RETURNING s.*; b: the inserted booking):
//
//	CASE WHEN EXISTS (SELECT FROM webhook_subscribers(b.shop_id, webhook_claim_types(b.status)))
//	     THEN webhook_record_opening(b.shop_id, webhook_claim_types(b.status), b.created_at,
//	                                 to_jsonb(f), to_jsonb(b))
//	     ELSE 0 END AS events_recorded
//
// A data-modifying CTE would open webhook_events and its indexes on every claim,
// endpoints or not.
//
// # The payload: one rendering, the state at the event
//
// The event's data is the object as the API shows it. That rendering lives in one place
// (internal/shopapi); this package cannot import it (shopapi imports this package), and
// a statement in SQL cannot call it. So an event records its subject — the rows as they
// stood at the event, taken from the change's own RETURNING rows or from its
// transaction — and the dispatcher, within about a second, asks the Renderer (shopapi's)
// to render it, then stores the body, which every attempt of every delivery sends as is.
// The state is the event's, whenever the rendering happens.
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
