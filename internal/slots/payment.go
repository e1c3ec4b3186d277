package slots

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/slotrecovery/slotrecovery/internal/metrics"
	"github.com/slotrecovery/slotrecovery/internal/payments"
)

// Payments is split by job:
//
//	payment.go              Payments, its configuration and the Result of a transition
//	payment_events.go       the webhook's event ledger: store, dedupe, apply once
//	payment_transitions.go  paid and failed, under the opening's and booking's row locks
//	reconcile.go            reading stale pending bookings back from Stripe
//	refund.go               refunding late and duplicate payments
//	checkout.go             the payment link's safety net (EnsureCheckout)
//	texts.go                what the customer is told (wording in internal/texts)

// PaymentProvider takes payment for bookings: payment links (checkout sessions) that
// expire with the hold, reading them back, and refunds. It speaks internal/payments'
// types; *stripe.Client (internal/payments/stripe) implements it.
type PaymentProvider interface {
	// CreateCheckout makes a payment link for one booking, idempotently per (booking,
	// expiry). An error for which payments.Transient is false means retrying cannot
	// help.
	CreateCheckout(ctx context.Context, r payments.CheckoutRequest) (payments.Checkout, error)
	// ExpireCheckout ends an open session so it can no longer be paid; it returns
	// payments.ErrAlreadyCompleted when the customer has paid.
	ExpireCheckout(ctx context.Context, sessionID string) error
	// GetCheckout reads a session back; an error matching payments.ErrNotFound means
	// Stripe has no such session.
	GetCheckout(ctx context.Context, sessionID string) (payments.Session, error)
	// Refund refunds one payment of a booking in full, idempotently per (booking,
	// payment); a payment refunded already counts as success.
	Refund(ctx context.Context, paymentIntentID, bookingID string) (refundID string, err error)
}

// errUnconfigured is returned when Stripe is needed and not configured.
var errUnconfigured = errors.New("slots: payments are not configured")

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
	// ResultRefundedDuplicate: a second payment, with another PaymentIntent, for a
	// booking confirmed already (paid through an orphan session); a refund job was
	// enqueued for it.
	ResultRefundedDuplicate Result = "refunded_duplicate"
	// ResultAwaitingPayment: Checkout completed with a delayed payment method; the
	// outcome comes in a later event.
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
	// ResultKeptCompleted: a declined card, but Stripe says the session was paid
	// meanwhile; the booking stands and the completion event confirms it.
	ResultKeptCompleted Result = "kept_completed"
	// ResultExpireRefused: Stripe refused to expire the session for a reason a retry
	// cannot fix; the booking waits for the session's own expiry.
	ResultExpireRefused Result = "expire_refused"
	// ResultUnconfigured: the event needs a Stripe call (expiring the session of a
	// declined card) and Stripe is not configured; the booking waits for the session's
	// own expiry, whose event needs no call.
	ResultUnconfigured Result = "ignored_unconfigured"
	// ResultOtherSession: a failure of a Checkout Session that is not the booking's
	// (an orphan of an earlier attempt); it must not fail the real one.
	ResultOtherSession Result = "ignored_other_session"
	// ResultUnknownBooking: no booking matches the event's metadata.
	ResultUnknownBooking Result = "ignored_unknown_booking"
	// ResultIgnoredType: an event type the booking flow does not act on.
	ResultIgnoredType Result = "ignored_type"
	// ResultStillOpen: (reconciliation) Stripe still reports the session open or
	// unpaid, or the booking changed since it was read; nothing changes yet.
	ResultStillOpen Result = "still_open"
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

// PaymentsConfig configures Payments. Zero fields mean the defaults.
type PaymentsConfig struct {
	// ReconcileGrace is how long after a Checkout Session's expiry a pending booking
	// waits for its webhook before the reconciliation asks Stripe; default 5 min.
	ReconcileGrace time.Duration
	// ReconcileBatch caps how many bookings one reconciliation run reads back;
	// default 25.
	ReconcileBatch int
	// ReconcileBackoff is how long the reconciliation leaves a booking alone after
	// finding it unresolved (still open at Stripe, or an error); it doubles with each
	// such run up to ReconcileBackoffMax. Default 5 min.
	ReconcileBackoff time.Duration
	// ReconcileBackoffMax caps ReconcileBackoff's doubling; default 1 h.
	ReconcileBackoffMax time.Duration
	// ProviderTimeout bounds each call to the payment provider; default 10s. One reconciliation run is
	// given ReconcileBatch Stripe calls' worth of time (plus a margin).
	ProviderTimeout time.Duration
	// Metrics counts bookings and Stripe events; nil counts nothing.
	Metrics *metrics.Metrics
}

// Payments applies payment outcomes to bookings: Stripe's webhook events, the periodic
// reconciliation that stands in for a lost webhook, and refunds of payments that came
// too late or twice. Every transition runs in one transaction that holds the opening's
// and the booking's row locks and enqueues its follow-up jobs (texts, a new wave, a
// refund) inside it.
//
// The rules, whatever order events arrive in and however often:
//
//	pending_payment ──paid──▶ confirmed                    (confirmation text)
//	pending_payment ──expired / failed──▶ payment_failed  (offer failed; opening reopens
//	                                                        in a new generation, or
//	                                                        expires inside the cutoff;
//	                                                        "hold lapsed" text)
//	confirmed ──any failure──▶ confirmed                   (never moves back)
//	confirmed ──paid with another PaymentIntent──▶ that payment is refunded
//	payment_failed ──paid──▶ confirmed if the slot is still free (open or expired, not
//	                          started) and no refund was decided; else refunded
type Payments struct {
	s        *Service
	provider PaymentProvider // nil when payments are not configured
	cfg      PaymentsConfig
	m        *metrics.Metrics
	log      *slog.Logger
}

// NewPayments returns Payments for the bookings of s; provider is normally s's own. It
// may be nil when no shop takes payments; events are then still stored and acknowledged.
func NewPayments(s *Service, provider PaymentProvider, cfg PaymentsConfig) *Payments {
	cfg.ReconcileGrace = cmp.Or(cfg.ReconcileGrace, 5*time.Minute)
	cfg.ReconcileBatch = cmp.Or(cfg.ReconcileBatch, 25)
	cfg.ReconcileBackoff = cmp.Or(cfg.ReconcileBackoff, 5*time.Minute)
	cfg.ReconcileBackoffMax = max(cmp.Or(cfg.ReconcileBackoffMax, time.Hour), cfg.ReconcileBackoff)
	cfg.ProviderTimeout = cmp.Or(cfg.ProviderTimeout, 10*time.Second)
	return &Payments{s: s, provider: provider, cfg: cfg, m: cfg.Metrics, log: s.log}
}

// counted records a booking's new status, if it moved, once its transaction committed.
func (p *Payments) counted(res Result) {
	if st := res.bookingStatus(); st != "" {
		p.m.Booking(st)
	}
}

func pgText(s string) (t pgtype.Text) {
	if s != "" {
		t.String, t.Valid = s, true
	}
	return t
}
