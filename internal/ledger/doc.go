// Package ledger is the payment ledger of bookings: everything that happens to a
// booking's payment once a YES has claimed its slot (internal/slots owns openings and
// the claim).
//
//	ledger.go       Service, its configuration, the provider it calls and the Result of
//	                a transition
//	checkout.go     the payment link: made on the YES path (Checkout; internal/inbound
//	                stores it with its answer, StoreLink) or by the booking sweep
//	                (EnsureCheckout)
//	events.go       the provider's webhook events: stored once by id, applied once
//	transitions.go  paid and failed, under the opening's and the booking's row locks
//	reconcile.go    reading stale pending bookings back from the provider
//	refund.go       refunding late and duplicate payments, and refunds that failed
//	sweep.go        the booking sweep: links the YES path could not make, and news
//	                that may not have reached the customer
//	notice.go       telling a booked customer once (TellOnce, MarkTold, Notify)
//	texts.go        what the customer is told (BookedText; wording in internal/texts)
//	accounts.go     shops' connected accounts (Stripe Connect): onboarding (Onboard,
//	                RefreshAccount) and the account events kept on the shop
//	move.go         a YES booking's move-up, in internal/book's transaction
//	                (LockForMove, MoveTx): its payment and terms go to the new booking,
//	                the old one is moved, its opening reopens as the chain's next link
//
// With Connect (Config.Connect) a new checkout is made on the shop's connected account
// with the platform's fee; the account and the fee are stored with the link, and every
// later call about that payment (expire, read back, refund) goes to that account. A
// payment event acts only on a booking whose payment its account took; any other is
// stored as ResultWrongAccount and changes nothing.
//
// The ledger owns the bookings and the stored webhook events (tables bookings and
// stripe_events); the claim's one statement that books (slots' BookingClaim) is the
// exception. It changes openings only through slots' transitions (Reopen, ReopenInChain,
// ExpireFilled, FillLate), inside its own transactions or (a move-up) book's, and offers
// through offers' ledger functions.
// It writes shops' connected-account columns only through shops' functions. It speaks
// internal/payments' neutral types: the provider package classifies its own
// events (payments.EventKind) and checkouts (payments.SessionState).
package ledger
