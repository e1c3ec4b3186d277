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
//	  │  ▲                                                          │ release n frees
//	  │  └──────────── Upsert (newer: booked again) ◄───────────────┤ the time held:
//	  ├──── Upsert: moved (the source moved it elsewhere) ──► moved ┤ claim (shop_id,
//	  ├──── Upsert: booked at another time, length or person ───────┤ appointment, n)
//	  │                                                             ▼ once, then declare
//	  └──── Upsert: completed | no_show (it took place, or not)   opening (slots)
//
// Each change that frees the time the appointment held is a release, counted on the
// appointment: it is cancelled or moved from a status that holds the time, or booked at
// another time, length or person (a Square booking's new start_at, an edited feed
// event). The time freed is the one the book held (read from the stored row, locked,
// before the upsert), or the description's own for an appointment first heard of as
// cancelled. A release of a future time claims the declaration of its opening in the
// same transaction that records it: a row keyed by (shop, appointment, release) with the
// time freed, so of any number of deliveries of one cancellation one claims it and the
// rest find it claimed. In a shop with auto_declare on (the default) the claim is then
// declared through slots.Service.DeclareTx (same person, start and length; the service
// and price the shop declares; the appointment as its source) unless, at that moment, the start is inside the shop's
// cutoff, the time is already open or booked again (by any appointment, this one
// included), or a later release of the appointment frees the same time: the claim then
// ends skipped, with its reason. With auto_declare off the claim waits for Offer.
//
//	claim: waiting ──Offer──► pending ──► declared (opening id)
//	                             ▲   │ └──► skipped (reason)
//	                             └───┘ a failure a retry may cure (DeclarePending)
//
// An appointment booked again over a time one of its releases declared, while that
// opening is still open, withdraws it (slots.CancelTx): the customer took their time
// back, and offering it would book it twice. An opening filled meanwhile stays.
//
// The change, its claim, the checks, the opening and the claim's record (or the
// withdrawal) are one transaction, holding the appointment's row lock from the change
// on: a crash loses all of it (the source delivers the change again), and every other
// change of the appointment waits, so its releases are declared one after the other,
// each seeing what the one before committed. The declaration runs in a savepoint: a
// failure a retry may cure takes its opening back and leaves the claim pending, the
// change commits, and DeclarePending (DeclarePendingWorker, run every minute) declares
// it later.
//
// The change records its webhook event in the same transaction (wire.go, changeEvent):
// appointment.created for an appointment first heard of booked, appointment.cancelled
// for one that becomes (or is first heard of) cancelled, appointment.moved for one that
// becomes moved or stays booked at another time, length or person, with the time it
// held before. A description that changes nothing rolls back and records nothing, and
// the first deliveries of an appointment not stored yet take turns
// (AppointmentLockName), so that exactly one of them first hears of it.
//
// A booking a YES made is an appointment of the book too, source slotrecovery, read (Get,
// List) from the ledger's own row through the view book_appointments, never copied: the
// YES's claim writes its booking and nothing more. It is booked while held or paid and
// cancelled once it lapsed, failed or was cancelled; that cancellation is not a release
// of the book and declares nothing (the ledger reopens the opening itself), and the
// book does not cancel it (ErrBooking).
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
//	Get(ctx, shopID, id) (Appointment, error)                  a source's appointment or a YES's booking
//	List(ctx, shopID, Query) (Page, error)                     GET /api/appointments (cursor pages, phones masked; YES bookings too)
//	Snapshot(ctx, shop, source, []connectors.Appointment, at)  a calendar feed's poll (gone events cancelled)
//	Offer(ctx, shop, id) (Declaration, error)                  the dashboard's "Offer it" (auto_declare off: claims wait)
//	Declarations(ctx, shopID, id) ([]Declaration, error)       what each release declared
//	DeclarePending(ctx, limit) (int, error)                    a periodic job (DeclarePendingWorker): claims left pending
//	Forget(ctx, tx, shopID, customerID, phone, at)             the customer's erasure
//	SetAPIKey / ClearAPIKey(ctx, shopID, connectorID[, key])   PUT/DELETE /api/connectors/{id}/api_key
//	WriteBack(ctx, shopID, appointmentID, last)                a move written back (WriteBackWorker)
//	WriteBackOf(ctx, shopID, appointmentID) (WriteBack, error) how a move's write-back stands
//
// A move-up of a cal.com or Square appointment, when the shop's connector holds the
// vendor's API key, is written back through the vendor's API (writeback.go):
//
//	pending ──vendor took it (or its echo came)──▶ written   (copied by "cal.com API" / "Square API")
//	   │
//	   └──refused for good, or the last attempt failed──▶ failed   (listed to copy, with the reason)
//
// The vendor's webhook of that write (the echo) is known by the write-back and records
// nothing: the move is in the book already.
//
// Vendors' payloads are read by internal/connectors' adapters into
// connectors.Appointment; this package never sees a vendor's words.
package book
