// Package book is the shop's appointment book: every appointment the shop's booking
// systems (cal.com, Square, a calendar feed) or its own programs (the owners' API) tell
// the server of, kept as one record each, and the rule that a cancelled future
// appointment declares its opening by itself.
//
// An appointment is named in its source by (source, external id). Its source describes
// it again and again (webhook deliveries, feed polls, API calls), in any order and any
// number of times; each description carries its order, (Version, UpdatedAt) compared in
// that order, and Upsert applies only a description newer than the stored one. Postgres
// is the fence: one conditional INSERT ... ON CONFLICT DO UPDATE ... WHERE, so a
// redelivery changes nothing and an older description arriving late never resurrects a
// cancelled appointment, however many deliveries race.
//
//	         Upsert (newer description), Cancel (owner)
//	booked ───────────────────────────────────────────► cancelled ─┐
//	  │  ▲                                                          │ release n:
//	  │  └──────────── Upsert (newer: booked again) ◄───────────────┤ claim (shop_id,
//	  │                                                             │ appointment, n)
//	  ├──── Upsert: moved (the source moved it elsewhere) ──► moved ┤ once, then
//	  │                                                             ▼ declare
//	  └──── Upsert: completed | no_show (it took place, or not)   opening (slots)
//
// Each entry into a status that frees the time (cancelled, moved) from one that holds it
// is a release, counted on the appointment. A release of a future appointment, in a
// shop with auto_declare on (the default), claims the declaration of its opening in the
// same transaction that records it: a row keyed by (shop, appointment, release), so of
// any number of deliveries of one cancellation one claims it and the rest find it
// claimed. The claim is then declared through slots.Service.Declare (same person,
// service, start and length) unless, at that moment, the start is inside the shop's
// cutoff, or the time is already open or booked again: the claim then ends skipped,
// with its reason. With auto_declare off no claim is made; Offer makes it when the owner
// asks.
//
//	claim: pending ──► declaring ──► declared (opening id)
//	                      │    └───► skipped (reason)
//	                      └─────────► pending again (a transient failure)
//
// An appointment booked again over the time its last release declared, while that
// opening is still open, withdraws it (slots.Service.Cancel): the customer took their
// time back, and offering it would book it twice. An opening filled meanwhile stays.
//
// slots.Declare runs its own transaction, so a claim is declared just after the
// transaction that made it commits. A process that dies between the two leaves the
// claim pending (or declaring), and DeclarePending, run periodically, takes it again
// after Config.StaleAfter; a retry after an opening was declared but not recorded finds
// the time already open and ends skipped, so the retry declares nothing twice.
//
// Customers are matched by phone, read in E.164 with the shop's own country by default
// (phone.Normalize). The book links a known customer and never creates one: an
// appointment without a known or consenting customer still frees its time, and nobody is
// opted in by having an appointment.
//
// The API the HTTP layer calls:
//
//	Upsert(ctx, shop, connectors.Appointment) (Result, error)  PUT /api/appointments/{source}/{external_id}, connectors
//	Cancel(ctx, shop, id) (Result, error)                      POST /api/appointments/{id}/cancel
//	Get(ctx, shopID, id) (Appointment, error)
//	List(ctx, shopID, Query) (Page, error)                     GET /api/appointments (cursor pages, phones masked)
//	Snapshot(ctx, shop, source, []connectors.Appointment, at)  a calendar feed's poll (gone events cancelled)
//	Offer(ctx, shop, id) (Declaration, error)                  the dashboard's "Offer it" (auto_declare off)
//	Declarations(ctx, shopID, id) ([]Declaration, error)       what each release declared
//	DeclarePending(ctx, limit) (int, error)                    a periodic job: claims left behind
//	Forget(ctx, tx, shopID, customerID, phone, at)             the customer's erasure
//
// Vendors' payloads are read by internal/connectors' adapters into
// connectors.Appointment; this package never sees a vendor's words.
package book
