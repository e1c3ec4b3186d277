// Package slots owns slot openings and the claim on them: the state machine, declaring
// and cancelling an opening, booking it for the first customer who says YES (Book), and
// what owners read back. What happens to a booking's payment afterwards (its link, the
// provider's events, refunds, the reconciliation and the booking sweep) is the payment
// ledger's, internal/ledger, which changes openings through transitions.go; a new
// booking's payment link is the caller's to ask the ledger for (Claim.Booking): slots
// never sees a payment.
//
// An opening moves like this:
//
//	open ──YES wins──▶ filled ──payment confirmed, slot passes──▶ completed
//	 │  ▲                 │
//	 │  └──payment failed─┘  (new offer generation; expired instead if inside the cutoff)
//	 ├──owner cancels──▶ cancelled
//	 └──start passes the lead-time cutoff unfilled──▶ expired
//
// A payment that succeeds after its booking failed takes the opening back (open or
// expired → filled) if nobody else holds it and it has not started; otherwise it is
// refunded (internal/ledger decides it).
//
// A booking is pending_payment → confirmed | payment_failed | cancelled; at most one
// booking per opening is pending_payment or confirmed, which a partial unique index
// enforces. The Redis lock in Book only spares Postgres the losing attempts: the row lock
// on the opening, its conditional UPDATE and that index are what make a double booking
// impossible.
package slots
