package ledger

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/metrics"
	"github.com/slotrecovery/slotrecovery/internal/payments"
)

// PaymentProvider takes payment for bookings: payment links (checkouts) that expire
// with the hold, reading them back, and refunds, on the platform's own account or on a
// shop's connected account (account "" is the platform's); and the shops' connected
// accounts themselves. It speaks internal/payments' types; *stripe.Client
// (internal/payments/stripe) implements it.
type PaymentProvider interface {
	// CreateCheckout makes a payment link for one booking, on r.Account, idempotently
	// per (booking, expiry, account). An error for which payments.Transient is false
	// means retrying cannot help.
	CreateCheckout(ctx context.Context, r payments.CheckoutRequest) (payments.Checkout, error)
	// ExpireCheckout ends an open checkout made on account so it can no longer be paid;
	// it returns payments.ErrAlreadyCompleted when the customer has paid.
	ExpireCheckout(ctx context.Context, account, sessionID string) error
	// GetCheckout reads a checkout made on account back; an error matching
	// payments.ErrNotFound means the provider has no such checkout there.
	GetCheckout(ctx context.Context, account, sessionID string) (payments.Session, error)
	// Refund refunds one payment of a booking in full, on the account that took it,
	// idempotently per (booking, payment, account); a payment refunded already counts as
	// success.
	Refund(ctx context.Context, r payments.RefundRequest) (refundID string, err error)
	// CreateAccount makes a shop's connected account, once per shop (and per
	// disconnected predecessor) however often it is asked.
	CreateAccount(ctx context.Context, r payments.AccountRequest) (payments.Account, error)
	// GetAccount reads a connected account's state.
	GetAccount(ctx context.Context, account string) (payments.Account, error)
	// CreateAccountLink makes a fresh one-time link to the provider's onboarding.
	CreateAccountLink(ctx context.Context, r payments.AccountLinkRequest) (payments.AccountLink, error)
}

// errUnconfigured is returned when the payment provider is needed and not configured.
var errUnconfigured = errors.New("ledger: payments are not configured")

// Result is what a payment event (or the reconciliation) led to. It is stored with the
// event, so a redelivery is answered with it and changes nothing.
type Result string

// The results of payment events and of the reconciliation.
const (
	// ResultConfirmed: the pending booking is paid and confirmed.
	ResultConfirmed Result = "confirmed"
	// ResultConfirmedLate: the payment came after the booking failed, and the slot
	// was still free, so the late payer has it after all.
	ResultConfirmedLate Result = "confirmed_late"
	// ResultAlreadyConfirmed: a success for a booking that is confirmed already, with
	// the same payment (or one that cannot be told apart).
	ResultAlreadyConfirmed Result = "already_confirmed"
	// ResultRefunded: the payment came after the booking failed and the slot is gone
	// (or a refund was decided before); a refund job was enqueued.
	ResultRefunded Result = "refunded"
	// ResultRefundedDuplicate: a second payment, not the one that confirmed the
	// booking (paid through an orphan checkout); a refund job was enqueued for it.
	ResultRefundedDuplicate Result = "refunded_duplicate"
	// ResultAwaitingPayment: the checkout was completed with a payment method that
	// settles later; the outcome comes in a later event.
	ResultAwaitingPayment Result = "awaiting_payment"
	// ResultReopened: the booking failed and its opening is open again, in a new
	// offer generation.
	ResultReopened Result = "reopened"
	// ResultExpired: the booking failed too close to the start to offer the slot again;
	// the opening is expired.
	ResultExpired Result = "expired"
	// ResultFailed: the booking failed; its opening was not held by it (nothing to
	// reopen).
	ResultFailed Result = "payment_failed"
	// ResultAlreadyFailed: a failure for a booking that has failed already.
	ResultAlreadyFailed Result = "already_failed"
	// ResultKeptConfirmed: a failure that arrived after the booking was confirmed; a
	// confirmed booking never moves back.
	ResultKeptConfirmed Result = "kept_confirmed"
	// ResultKeptCompleted: a failed payment attempt, but the provider says the checkout
	// was completed meanwhile; the booking stands and the completion event confirms it.
	ResultKeptCompleted Result = "kept_completed"
	// ResultExpireRefused: the provider refused to end the checkout for a reason a retry
	// cannot fix; the booking waits for the checkout's own expiry.
	ResultExpireRefused Result = "expire_refused"
	// ResultUnconfigured: the event needs a call to the payment provider (ending the
	// checkout of a failed payment attempt) and no provider is configured; the booking
	// waits for the checkout's own expiry, whose event needs no call.
	ResultUnconfigured Result = "ignored_unconfigured"
	// ResultOtherSession: a failure of a checkout that is not the booking's
	// (an orphan of an earlier attempt); it must not fail the real one.
	ResultOtherSession Result = "ignored_other_session"
	// ResultUnknownBooking: no booking matches the event's booking id.
	ResultUnknownBooking Result = "ignored_unknown_booking"
	// ResultWrongAccount: the event came from another account than the one that took
	// (or will take) the booking's payment: a connected account's event naming a booking
	// of the platform or of another shop, or the platform's naming a connected account's
	// booking. Misrouted or forged by another shop, it must never confirm, fail or
	// refund the booking.
	ResultWrongAccount Result = "ignored_wrong_account"
	// ResultFeeCharged: a booking's fee was paid (its customer paid the page texted to
	// them, or its charge settled); ResultFeeUnchanged: an event about a fee that
	// changes nothing (charged already, or a failed attempt of the customer's own).
	ResultFeeCharged   Result = "fee_charged"
	ResultFeeUnchanged Result = "fee_unchanged"
	// ResultIgnoredType: an event of a kind the ledger does not act on.
	ResultIgnoredType Result = "ignored_type"
	// ResultStillOpen: (reconciliation) the provider still reports the checkout open or
	// unpaid, or the booking changed since it was read; nothing changes yet.
	ResultStillOpen Result = "still_open"
	// ResultAccountUpdated: a connected account's new state is stored on its shop.
	ResultAccountUpdated Result = "account_updated"
	// ResultAccountDisconnected: a connected account left the platform; its shop takes
	// no new checkout openings until it connects another.
	ResultAccountDisconnected Result = "account_disconnected"
	// ResultAccountIgnored: an account's event that changes no shop: no shop holds the
	// account (the platform's own, or one made elsewhere), it was disconnected already,
	// or a newer state of it is stored (events arrive out of order).
	ResultAccountIgnored Result = "ignored_account"
)

// Changed reports whether the result is a real transition: a booking confirmed or
// failed, or a refund decided. Replays, "already" and "kept" results and ignored events
// changed nothing.
func (r Result) Changed() bool {
	switch r {
	case ResultConfirmed, ResultConfirmedLate, ResultRefunded, ResultRefundedDuplicate,
		ResultReopened, ResultExpired, ResultFailed:
		return true
	}
	return false
}

// bookingStatus is the status a booking reached through r, for the bookings metric; ""
// when it did not move.
func (r Result) bookingStatus() string {
	switch r {
	case ResultConfirmed, ResultConfirmedLate:
		return BookingConfirmed
	case ResultReopened, ResultExpired, ResultFailed:
		return BookingPaymentFailed
	}
	return ""
}

// queries is this package's one way to its SQL: sqlc's Queries holds no state, and
// each call is given the pool or the transaction it runs on.
// Links makes a booking's short payment link (internal/paylink's Links).
type Links interface {
	URL(bookingID uuid.UUID) string
}

// Link is the payment link a booked text carries for the booking whose payment page is
// checkoutURL: the short link when the ledger has Links, else checkoutURL; "" when
// there is no page (yet).
func (s *Service) Link(bookingID uuid.UUID, checkoutURL string) string {
	if checkoutURL == "" || s == nil || s.cfg.Links == nil {
		return checkoutURL
	}
	return s.cfg.Links.URL(bookingID)
}

var queries = db.New()

// Config configures the Service. Zero fields mean the defaults.
type Config struct {
	Now func() time.Time
	// Links, when set, makes the short link a booked text carries instead of the
	// payment provider's own address (internal/paylink: PUBLIC_URL/p/{code}, which
	// redirects to it while the hold lasts). Nil: the provider's address.
	Links Links
	// CheckoutTimeout bounds the payment provider's call on the YES path (Link); default
	// 5s. After it the customer is told the link comes by text and the booking sweep
	// finishes the work (its own calls get twice as long).
	CheckoutTimeout time.Duration
	// CheckoutSuccessURL and CheckoutCancelURL are the pages the payment provider sends
	// the customer back to after paying or giving up.
	CheckoutSuccessURL, CheckoutCancelURL string
	// CheckoutRetryDelay is how old a booking still without a link must be before the
	// booking sweep tries to make it (the YES path's attempt is over by then), and the
	// least time between two attempts; default 15s.
	CheckoutRetryDelay time.Duration
	// NoticeDelay is how old a booking must be before the booking sweep texts a customer
	// whose answer was not recorded as delivered; default 30s (Twilio waits 15s for an
	// answer). With SweepEvery, the customer knows within a minute.
	NoticeDelay time.Duration
	// SweepEvery is how often the booking sweep runs; default 10s.
	SweepEvery time.Duration
	// ReconcileGrace is how long after a checkout's expiry a pending booking waits for
	// its event before the reconciliation asks the payment provider; default 5 min.
	ReconcileGrace time.Duration
	// ReconcileBatch caps how many bookings one reconciliation run reads back;
	// default 25.
	ReconcileBatch int
	// ReconcileBackoff is how long the reconciliation leaves a booking alone after
	// finding it unresolved (still open at the provider, or an error); it doubles with
	// each such run up to ReconcileBackoffMax. Default 5 min.
	ReconcileBackoff time.Duration
	// ReconcileBackoffMax caps ReconcileBackoff's doubling; default 1 h.
	ReconcileBackoffMax time.Duration
	// ProviderTimeout bounds each call to the payment provider outside the YES path and
	// the sweep; default 10s. One reconciliation run is given ReconcileBatch calls' worth
	// of time (plus a margin).
	ProviderTimeout time.Duration
	// Connect: checkout shops take their customers' payments on their own connected
	// accounts (STRIPE_CONNECT=on), with the platform's fee; off, every payment is the
	// platform account's.
	Connect bool
	// PlatformFeeBPS is the platform's fee on a connected account's payment, in basis
	// points, for shops the admin set none for (PLATFORM_FEE_BPS).
	PlatformFeeBPS int
	// ConnectAccountType is the type of the connected accounts Onboard creates:
	// standard (the default), express or custom.
	ConnectAccountType string
	// OnboardingReturnURL is where the provider's onboarding sends the owner back (the
	// dashboard); OnboardingRefreshURL where it sends one whose link expired or was used,
	// which must make a new link (Onboard) and redirect to it.
	OnboardingReturnURL, OnboardingRefreshURL string
	// Metrics counts bookings and payment events; nil counts nothing.
	Metrics *metrics.Metrics
	Logger  *slog.Logger
}

// Service is the payment ledger of bookings. It makes a new booking's payment link (for
// the YES path, Checkout) and the booking sweep that finishes what the YES path
// could not (the link, the news); it applies the payment provider's webhook events, the
// periodic reconciliation that stands in for a lost event, and refunds of payments that
// came too late or twice. Every transition runs in one transaction that holds the
// opening's and the booking's row locks and enqueues its follow-up jobs (texts, a new
// wave, a refund) inside it.
//
// The rules, whatever order events arrive in and however often:
//
//	pending_payment ──paid──▶ confirmed                    (confirmation text)
//	pending_payment ──expired / failed──▶ payment_failed  (offer failed; opening reopens
//	                                                        in a new generation, or
//	                                                        expires inside the cutoff;
//	                                                        "hold lapsed" text)
//	confirmed ──any failure──▶ confirmed                   (never moves back)
//	confirmed ──paid with another payment──▶ that payment is refunded
//	payment_failed ──paid──▶ confirmed if the slot is still free (open or expired, not
//	                          started) and no refund was decided; else refunded
//	confirmed ──moved up (MoveTx)──▶ moved  (its payment on the booking it became;
//	                                          its opening reopens in the chain)
//	moved ──its payment again──▶ moved      (applied already; another payment refunded)
type Service struct {
	pool     *pgxpool.Pool
	queue    jobs.Inserter
	provider PaymentProvider // nil when payments are not configured
	cfg      Config
	m        *metrics.Metrics
	log      *slog.Logger
}

// New returns the ledger. provider is the payment provider, the one place it is passed
// in; it may be nil when no shop takes payments: events are then still stored and
// acknowledged, and a booking that needs a link fails instead of holding its slot.
func New(pool *pgxpool.Pool, queue jobs.Inserter, provider PaymentProvider, cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.CheckoutTimeout = cmp.Or(cfg.CheckoutTimeout, 5*time.Second)
	cfg.CheckoutRetryDelay = cmp.Or(cfg.CheckoutRetryDelay, 15*time.Second)
	cfg.NoticeDelay = cmp.Or(cfg.NoticeDelay, 30*time.Second)
	cfg.SweepEvery = cmp.Or(cfg.SweepEvery, 10*time.Second)
	cfg.ReconcileGrace = cmp.Or(cfg.ReconcileGrace, 5*time.Minute)
	cfg.ReconcileBatch = cmp.Or(cfg.ReconcileBatch, 25)
	cfg.ReconcileBackoff = cmp.Or(cfg.ReconcileBackoff, 5*time.Minute)
	cfg.ReconcileBackoffMax = max(cmp.Or(cfg.ReconcileBackoffMax, time.Hour), cfg.ReconcileBackoff)
	cfg.ProviderTimeout = cmp.Or(cfg.ProviderTimeout, 10*time.Second)
	cfg.ConnectAccountType = cmp.Or(cfg.ConnectAccountType, "standard")
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	return &Service{pool: pool, queue: queue, provider: provider, cfg: cfg, m: cfg.Metrics, log: cfg.Logger}
}

// counted records a booking's new status, if it moved, once its transaction committed.
func (s *Service) counted(res Result) {
	if st := res.bookingStatus(); st != "" {
		s.m.Booking(st)
	}
}
