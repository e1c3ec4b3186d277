package payments

import "time"

// CheckoutRequest describes the payment for one booking.
type CheckoutRequest struct {
	// BookingID identifies the booking. The provider stores it on the checkout and
	// its payment, so that events and read-backs name the booking, and derives the
	// idempotency key from it (with ExpiresAt).
	BookingID string
	// AmountCents is the price in the currency's smallest unit; positive.
	AmountCents int64
	// Currency is an ISO 4217 code in lower case, e.g. "usd".
	Currency string
	// Description names the line item the customer sees, e.g.
	// "Haircut at Joe's, Sat 22 Nov 15:00".
	Description string
	// Locale is the language of the payment page, as BCP 47 ("en", "es", "fr"): the
	// customer's. Empty lets the provider choose (the browser's).
	Locale string
	// ExpiresAt is when the checkout stops accepting payment, within the provider's
	// window (see the provider package). A retry must send the same value, so store
	// it with the booking: it is part of the idempotency key.
	ExpiresAt time.Time
	// SuccessURL is where the payment page sends the customer after paying.
	// Required.
	SuccessURL string
	// CancelURL is where the payment page's back button leads; optional.
	CancelURL string
	// Account is the connected account the checkout is made on, whose payment it is (a
	// direct charge); "" for the platform's own account. It is part of the idempotency
	// key.
	Account string
	// FeeBPS is the platform's application fee on the payment, in basis points of
	// AmountCents (0 to 10,000); only with Account. The provider rounds it as its
	// currency requires and reports it in Checkout.ApplicationFeeCents.
	FeeBPS int
	// Mode is what the checkout takes: the amount now (CheckoutPay, the zero value), or
	// only a card kept for a fee later (CheckoutCardOnly: nothing charged, AmountCents
	// zero).
	Mode CheckoutMode
	// KeepCard keeps the card the customer pays with, on Account, for a fee charged
	// later without them (a no-show): the provider asks the customer's consent to that
	// on the page. Always true in CheckoutCardOnly.
	KeepCard bool
	// Policy is the shop's cancellation policy, shown beside the pay button (at most
	// MaxPolicyLen characters): what the customer accepts by paying.
	Policy string
	// Fee makes the checkout a booking's fee of that kind, for the customer to pay
	// themselves (their bank wanted them to confirm the off-session charge): the
	// checkout and its payment carry metadata fee, so their events are the fee's
	// (EventFeeCharged), never the booking's own payment; its idempotency key is the
	// fee's. "" for the booking's own checkout.
	Fee FeeKind
}

// MaxPolicyLen is the longest cancellation policy a checkout shows (the provider's
// limit on the text beside its button).
const MaxPolicyLen = 1200

// CheckoutMode is what a checkout takes.
type CheckoutMode string

// Checkout modes.
const (
	// CheckoutPay takes the amount now.
	CheckoutPay CheckoutMode = ""
	// CheckoutCardOnly charges nothing and keeps the customer's card for a fee later.
	CheckoutCardOnly CheckoutMode = "card_only"
)

// KeptCard is the card a completed checkout kept: what a fee is charged to later.
type KeptCard struct {
	// Customer is the provider's customer on the shop's account that holds the card.
	Customer string
	// PaymentMethod is the provider's id of the card.
	PaymentMethod string
}

// FeeKind is why a fee is charged; a booking is charged each kind at most once.
type FeeKind string

// Fee kinds.
const (
	FeeNoShow     FeeKind = "no_show"
	FeeLateCancel FeeKind = "late_cancel"
)

// FeeRequest asks for a fee charged to a kept card, without the customer present.
type FeeRequest struct {
	// BookingID and Kind make the idempotency key: a retry, or two owners clicking at
	// once, charge the booking's fee of that kind once.
	BookingID string
	Kind      FeeKind
	// Account is the shop's connected account, which kept the card; required.
	Account string
	// Card is the kept card.
	Card KeptCard
	// AmountCents and Currency are the fee.
	AmountCents int64
	Currency    string
	// FeeBPS is the platform's application fee on it, in basis points (0 to 10,000).
	FeeBPS int
	// Description is what the customer's statement and the shop's dashboard show.
	Description string
}

// FeeOutcome is how a fee charge ended.
type FeeOutcome string

// Fee outcomes.
const (
	// FeeCharged: the fee is paid.
	FeeCharged FeeOutcome = "charged"
	// FeeRequiresAction: the card's bank wants the customer to confirm (3-D Secure);
	// send them FeeCharge's payment to complete themselves.
	FeeRequiresAction FeeOutcome = "requires_action"
	// FeeDeclined: the card was declined; FeeCharge says why.
	FeeDeclined FeeOutcome = "declined"
)

// FeeCharge is the answer to a FeeRequest.
type FeeCharge struct {
	Outcome FeeOutcome
	// PaymentIntentID is the provider's id of the fee's payment (also when it needs the
	// customer, or was declined).
	PaymentIntentID string
	// DeclineCode and Message are the provider's reason for a decline
	// ("insufficient_funds"), for the owner.
	DeclineCode, Message string
	// ApplicationFeeCents is the platform's share of a charged fee.
	ApplicationFeeCents int64
}

// Checkout is a created checkout: the payment link of one booking.
type Checkout struct {
	// SessionID is the provider's id of the checkout.
	SessionID string
	// URL is the payment page to send to the customer.
	URL string
	// PaymentIntentID is the provider's id of the payment, usually empty until the
	// customer pays (events carry it then).
	PaymentIntentID string
	// ExpiresAt is when the checkout expires, as the provider reports it.
	ExpiresAt time.Time
	// Account is the connected account the checkout was made on ("" for the
	// platform's own): the account that takes its payment.
	Account string
	// ApplicationFeeCents is the platform's fee the checkout's payment carries, in the
	// currency's smallest unit (0 for none): what the platform keeps of it.
	ApplicationFeeCents int64
}

// RefundRequest asks for one payment of a booking back, in full.
type RefundRequest struct {
	// BookingID is the booking the payment was for; with PaymentIntentID (and Account)
	// it makes the idempotency key.
	BookingID string
	// PaymentIntentID is the provider's id of the payment.
	PaymentIntentID string
	// Account is the connected account that took the payment; "" for the platform's own.
	Account string
	// RefundApplicationFee gives the platform's fee on the payment back as well (a
	// payment on a connected account with a fee): the customer gets everything back, and
	// the shop is not charged the platform's fee for money it returned.
	RefundApplicationFee bool
}

// Account is the state of a shop's connected account at the provider.
type Account struct {
	// ID is the provider's id of the account.
	ID string
	// ChargesEnabled: the account can take payments.
	ChargesEnabled bool
	// PayoutsEnabled: the provider can pay the account's balance out to its bank.
	PayoutsEnabled bool
	// DetailsSubmitted: the owner has finished the provider's onboarding form.
	DetailsSubmitted bool
	// RequirementsDue lists what the provider still needs from the owner now (its own
	// names, e.g. "external_account"); empty when nothing is due.
	RequirementsDue []string
	// Disconnected: the owner disconnected the account from the platform, which can no
	// longer act on it.
	Disconnected bool
}

// AccountRequest asks for a new connected account for a shop.
type AccountRequest struct {
	// ShopID is the shop the account is for; the provider stores it on the account and
	// derives the idempotency key from it (with Replaces), so two concurrent requests
	// for one shop make one account.
	ShopID string
	// Type is the kind of account: "standard", "express" or "custom".
	Type string
	// Replaces is the shop's earlier account that was disconnected, if any: the new
	// account needs its own idempotency key.
	Replaces string
}

// AccountLinkRequest asks for a link to the provider's onboarding of a connected account.
type AccountLinkRequest struct {
	// Account is the connected account to onboard.
	Account string
	// RefreshURL is where the provider sends an owner whose link expired or was used
	// already: it must make a new link and send them on.
	RefreshURL string
	// ReturnURL is where the owner lands after leaving the onboarding (finished or not).
	ReturnURL string
}

// AccountLink is a one-time link to the provider's onboarding.
type AccountLink struct {
	URL       string
	ExpiresAt time.Time
}

// Session is a checkout read back from the provider.
type Session struct {
	// ID is the provider's id of the checkout.
	ID string
	// State is where the checkout stands.
	State SessionState
	// PaymentIntentID is the provider's id of the payment, empty until the customer
	// pays.
	PaymentIntentID string
	// BookingID is the booking the checkout was made for.
	BookingID string
	// URL is the payment page; empty once the checkout is over.
	URL string
	// ExpiresAt is when the checkout expires.
	ExpiresAt time.Time
	// AmountTotal is the total in the currency's smallest unit.
	AmountTotal int64
	// Currency is the ISO 4217 code in lower case.
	Currency string
}

// SessionState is where a checkout read back stands, in the ledger's words; the
// provider package translates its own statuses into these.
type SessionState string

// The states of a checkout.
const (
	// SessionOpen: the checkout can still be paid.
	SessionOpen SessionState = "open"
	// SessionPending: the customer finished the checkout with a payment method that
	// settles later; its outcome is not known yet.
	SessionPending SessionState = "pending"
	// SessionPaid: the checkout is paid (or nothing was due).
	SessionPaid SessionState = "paid"
	// SessionExpired: the checkout ended unpaid.
	SessionExpired SessionState = "expired"
)

// EventKind is what a verified webhook event means to the ledger. The provider
// package classifies its own event types into these; nothing outside it decides on the
// provider's event type strings.
type EventKind string

// The kinds of events.
const (
	// EventPaid: a booking's checkout is paid (or nothing was due).
	EventPaid EventKind = "paid"
	// EventPending: the customer finished the checkout with a payment method that
	// settles later; a later event tells the outcome.
	EventPending EventKind = "pending"
	// EventFailed: a payment attempt failed. The checkout may still be open for
	// another attempt, so it must be ended before the slot goes to someone else.
	EventFailed EventKind = "failed"
	// EventExpired: the checkout ended unpaid.
	EventExpired EventKind = "expired"
	// EventAccountChanged: the state of a connected account changed (its charges,
	// its connection to the platform); Event.AccountState says how it is now.
	EventAccountChanged EventKind = "account_changed"
	// EventFeeCharged: a fee charged to a kept card (Event.Fee says which) is paid;
	// EventFeeFailed: it failed. Neither is about the booking's checkout: a fee's
	// failure never ends the booking's hold or payment.
	EventFeeCharged EventKind = "fee_charged"
	EventFeeFailed  EventKind = "fee_failed"
	// EventOther: an event the ledger does not act on. The zero EventKind means the
	// same.
	EventOther EventKind = "other"
)

// Event is a verified webhook event with the fields the ledger reads.
type Event struct {
	// ID is the provider's event id, the key for deduplication.
	ID string
	// Kind is what the event means to the ledger.
	Kind EventKind
	// Type is the provider's own name for the event type: stored with the event and
	// used as a metrics label, never decided on (Kind is).
	Type string
	// Created is when the provider created the event.
	Created time.Time
	// APIVersion is the provider's API version the event was rendered with.
	APIVersion string
	// Livemode is false for test-mode events.
	Livemode bool
	// Account is the connected account the event happened on, as the provider's signed
	// event names it; "" for an event of the platform's own account. A payment event
	// acts only on a booking whose payment that account took.
	Account string
	// AccountState is the connected account's new state, for EventAccountChanged only
	// (nil otherwise).
	AccountState *Account
	// Connect is true for an event delivered to the Connect endpoint, which receives
	// connected accounts' events and verifies them with its own secret: such an event
	// names its Account, and one delivered to the platform's endpoint names none.
	Connect bool

	// BookingID is the booking the event's checkout or payment was made for ("" for
	// events about neither).
	BookingID string
	// SessionID is the id of the checkout the event is about; "" for an event about a
	// payment attempt rather than a checkout.
	SessionID string
	// PaymentIntentID is the provider's id of the payment (possibly empty for a
	// checkout that was never paid).
	PaymentIntentID string
	// AmountTotal is the checkout's or the payment's amount.
	AmountTotal int64
	// Currency is the ISO 4217 code in lower case.
	Currency string
	// Fee is the kind of fee the event's payment charged ("" for a booking's own
	// payment): see ChargeFee's metadata.
	Fee FeeKind

	// Payload is the event's body as received, kept with the stored event, less the
	// customer's personal details (name, email, phone, address), which nothing reads
	// and an erasure could not find there.
	Payload []byte
}
