// Package stripe talks to Stripe with stripe-go: it creates and expires the Checkout
// Sessions that collect payment for a booking, reads them back, refunds, and verifies
// and decodes Stripe's webhook events. It is the only package that imports stripe-go
// or names Stripe's event types and statuses: it answers in internal/payments's
// provider-neutral types (CheckoutRequest, Checkout, Session, Event), classifies each
// event into the ledger's payments.EventKind and each session read back into a
// payments.SessionState, and translates Stripe's errors into *payments.Error, deciding
// there, where the Stripe error is known, whether a retry can help
// (payments.Transient).
//
// For Stripe Connect it also creates shops' connected accounts and their onboarding
// links, reads accounts back, and makes every checkout call on a connected account
// (the Stripe-Account header) with the platform's application fee (ApplicationFee
// rounds it as Stripe requires) when asked to; events name the account they came from.
//
// For no-show protection (fees.go) a checkout can keep the customer's card on the shop's
// account (KeepCard: setup_future_usage off_session; CheckoutCardOnly: setup mode,
// nothing charged) with the shop's policy beside the button; KeptCard reads the kept
// card back, and ChargeFee charges a no-show or late-cancel fee to it off-session, once
// per booking and kind, a decline answered as FeeDeclined or FeeRequiresAction.
//
// Every Stripe object this package creates carries the booking id
// (client_reference_id, metadata.booking_id and the PaymentIntent's
// metadata.booking_id), so webhook handling finds the booking from the
// object itself. Writes use idempotency keys derived from the booking id, so a
// retried job returns the object the first attempt made instead of a second
// one.
//
// The package uses its own stripe-go client and backend per [Client]; it never
// touches stripe-go's global key or backends, and it does not log: errors are
// returned, wrapped, and payments.Transient tells a caller whether retrying can help.
//
// stripe-go's own package is also named stripe; this package imports it as stripego.
package stripe
