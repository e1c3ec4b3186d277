package slots

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/riverqueue/river"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/metrics"
	"github.com/slotrecovery/slotrecovery/internal/payments"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// Stripe is what payment outcomes ask of Stripe besides creating sessions.
// *payments.Client implements it.
type Stripe interface {
	// ExpireCheckout ends an open session so it can no longer be paid; it returns
	// payments.ErrAlreadyCompleted when the customer has paid.
	ExpireCheckout(ctx context.Context, sessionID string) error
	// GetCheckout reads a session back.
	GetCheckout(ctx context.Context, sessionID string) (payments.Session, error)
	// Refund refunds a booking's payment in full, idempotently per booking.
	Refund(ctx context.Context, paymentIntentID, bookingID string) (refundID string, err error)
}

// What a payment event (or the reconciliation) led to. The result is stored with the
// event, so a redelivery is answered with it and changes nothing.
const (
	// ResultConfirmed: the pending booking is paid and confirmed.
	ResultConfirmed = "confirmed"
	// ResultConfirmedLate: the payment came after the booking failed, and the slot
	// was still free, so the late payer has it after all.
	ResultConfirmedLate = "confirmed_late"
	// ResultAlreadyConfirmed: a success for a booking that is confirmed already.
	ResultAlreadyConfirmed = "already_confirmed"
	// ResultRefunded: the payment came after the booking failed and the slot is gone;
	// a refund job was enqueued.
	ResultRefunded = "refunded"
	// ResultAwaitingPayment: Checkout completed with a delayed payment method; the
	// outcome comes in a later event.
	ResultAwaitingPayment = "awaiting_payment"
	// ResultReopened: the booking failed and its opening is open again, in a new
	// offer generation.
	ResultReopened = "reopened"
	// ResultExpired: the booking failed too close to the start to offer the slot again;
	// the opening is expired.
	ResultExpired = "expired"
	// ResultFailed: the booking failed; its opening was not held by it (nothing to
	// reopen).
	ResultFailed = "payment_failed"
	// ResultAlreadyFailed: a failure for a booking that has failed already.
	ResultAlreadyFailed = "already_failed"
	// ResultKeptConfirmed: a failure that arrived after the booking was confirmed; a
	// confirmed booking never moves back.
	ResultKeptConfirmed = "kept_confirmed"
	// ResultKeptCompleted: a declined card, but Stripe says the session was paid
	// meanwhile; the booking stands and the completion event confirms it.
	ResultKeptCompleted = "kept_completed"
	// ResultExpireRefused: Stripe refused to expire the session for a reason a retry
	// cannot fix; the booking waits for the session's own expiry.
	ResultExpireRefused = "expire_refused"
	// ResultOtherSession: a failure of a Checkout Session that is not the booking's
	// (an orphan of an earlier attempt); it must not fail the real one.
	ResultOtherSession = "ignored_other_session"
	// ResultUnknownBooking: no booking matches the event's metadata.
	ResultUnknownBooking = "ignored_unknown_booking"
	// ResultIgnoredType: an event type the booking flow does not act on.
	ResultIgnoredType = "ignored_type"
	// ResultStillOpen: (reconciliation) Stripe still reports the session open or
	// unpaid; nothing changes yet.
	ResultStillOpen = "still_open"
)

// PaymentEvent is a verified Stripe webhook event, as the booking flow reads it.
type PaymentEvent struct {
	// ID is Stripe's event id, the key of the ledger.
	ID string
	// Type is the event type, e.g. payments.EventCheckoutCompleted.
	Type string
	// BookingID comes from metadata.booking_id, else client_reference_id.
	BookingID string
	// SessionID is the Checkout Session id (checkout.session.* events only).
	SessionID string
	// PaymentIntentID is the PaymentIntent id, when known.
	PaymentIntentID string
	// PaymentStatus is the session's payment_status (checkout.session.* events only).
	PaymentStatus string
	// Payload is the event as received, stored in the ledger.
	Payload []byte
}

// EventResult is what handling an event did.
type EventResult struct {
	// Result is one of the Result constants.
	Result string
	// Replayed is true when the event was handled before and its stored result is
	// repeated.
	Replayed bool
}

// PaymentsConfig configures Payments. Zero fields mean the defaults.
type PaymentsConfig struct {
	// ReconcileGrace is how long after a Checkout Session's expiry a pending booking
	// waits for its webhook before the reconciliation asks Stripe; default 5 min.
	ReconcileGrace time.Duration
	// ReconcileBatch caps how many bookings one reconciliation run reads back;
	// default 100.
	ReconcileBatch int
	// StripeTimeout bounds each Stripe call; default 10s.
	StripeTimeout time.Duration
	Metrics       *metrics.Metrics
}

// Payments applies payment outcomes to bookings: Stripe's webhook events, the periodic
// reconciliation that stands in for a lost webhook, and refunds of payments that came
// too late. Every transition runs in one transaction that holds the opening's row lock
// and enqueues its follow-up jobs (texts, a new wave, a refund) inside it.
//
// The rules, whatever order events arrive in and however often:
//
//	pending_payment ──paid──▶ confirmed                    (confirmation text)
//	pending_payment ──expired / failed──▶ payment_failed  (offer failed; opening reopens
//	                                                        in a new generation, or
//	                                                        expires inside the cutoff;
//	                                                        "hold lapsed" text)
//	confirmed ──any failure──▶ confirmed                   (never moves back)
//	payment_failed ──paid──▶ confirmed if the slot is still free (open or expired, not
//	                          started) and no refund was decided; else refunded
type Payments struct {
	s      *Service
	stripe Stripe // nil when Stripe is not configured
	cfg    PaymentsConfig
	m      *metrics.Metrics
	log    *slog.Logger
}

// NewPayments returns Payments for the bookings of s. stripe may be nil when no shop
// takes payments; events are then still stored and acknowledged.
func NewPayments(s *Service, stripe Stripe, cfg PaymentsConfig) *Payments {
	cfg.ReconcileGrace = cmp.Or(cfg.ReconcileGrace, 5*time.Minute)
	cfg.ReconcileBatch = cmp.Or(cfg.ReconcileBatch, 100)
	cfg.StripeTimeout = cmp.Or(cfg.StripeTimeout, 10*time.Second)
	return &Payments{s: s, stripe: stripe, cfg: cfg, m: cfg.Metrics, log: s.log}
}

type eventKind int

const (
	kindOther eventKind = iota
	kindPaid
	kindAwaiting
	kindFailed
)

func classify(ev PaymentEvent) eventKind {
	switch ev.Type {
	case payments.EventCheckoutCompleted:
		if ev.PaymentStatus == payments.PaymentPaid || ev.PaymentStatus == payments.PaymentNoPaymentRequired {
			return kindPaid
		}
		return kindAwaiting
	case payments.EventCheckoutAsyncSucceeded:
		return kindPaid
	case payments.EventCheckoutExpired, payments.EventCheckoutAsyncFailed, payments.EventPaymentFailed:
		return kindFailed
	}
	return kindOther
}

// HandleEvent stores a verified event and applies it, once. The event is stored first
// (its id is the key); a redelivery of an event that has a result gets that result back
// and changes nothing. Unknown types and unknown bookings are stored with a result, so
// Stripe stops retrying them. An error means the event could not be applied for now
// (the database or Stripe is unreachable): the stored event has no result yet, and
// Stripe's retry applies it.
func (p *Payments) HandleEvent(ctx context.Context, ev PaymentEvent) (EventResult, error) {
	now := p.s.cfg.Now()
	bookingID, idErr := uuid.Parse(ev.BookingID)
	_, err := p.s.q.StripeEventInsert(ctx, p.s.pool, db.StripeEventInsertParams{
		EventID: ev.ID, Type: ev.Type, BookingID: uuid.NullUUID{UUID: bookingID, Valid: idErr == nil},
		Payload: ev.Payload, ReceivedAt: now.UTC(),
	})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		stored, err := p.s.q.StripeEventGet(ctx, p.s.pool, ev.ID)
		if err != nil {
			return EventResult{}, fmt.Errorf("read stored stripe event %s: %w", ev.ID, err)
		}
		if stored.Result.Valid {
			return EventResult{Result: stored.Result.String, Replayed: true}, nil
		}
		// Stored by an earlier delivery that failed (or is still running): handle it
		// now. The event's row lock below keeps two runs from both acting.
	case err != nil:
		return EventResult{}, fmt.Errorf("store stripe event %s: %w", ev.ID, err)
	}

	kind := classify(ev)
	if kind == kindOther {
		return p.settle(ctx, ev.ID, ResultIgnoredType)
	}
	if idErr != nil {
		return p.settle(ctx, ev.ID, ResultUnknownBooking)
	}
	b, err := p.s.q.BookingGet(ctx, p.s.pool, bookingID)
	if errors.Is(err, pgx.ErrNoRows) {
		return p.settle(ctx, ev.ID, ResultUnknownBooking)
	}
	if err != nil {
		return EventResult{}, fmt.Errorf("get booking %s: %w", bookingID, err)
	}
	if kind == kindAwaiting {
		return p.settle(ctx, ev.ID, ResultAwaitingPayment)
	}
	if ev.Type == payments.EventPaymentFailed && b.Status == BookingPendingPayment {
		// A declined card does not end a Checkout Session: the customer could still pay
		// with another card after the slot went to someone else. End the session first,
		// outside the transaction (a slow Stripe must not hold the opening's lock).
		res, err := p.expireSession(ctx, b)
		if err != nil {
			return EventResult{}, err
		}
		if res != "" {
			return p.settle(ctx, ev.ID, res)
		}
	}

	var out EventResult
	var after func()
	err = pgx.BeginFunc(ctx, p.s.pool, func(tx pgx.Tx) error {
		stored, err := p.s.q.StripeEventLock(ctx, tx, ev.ID)
		if err != nil {
			return fmt.Errorf("lock stripe event %s: %w", ev.ID, err)
		}
		if stored.Result.Valid {
			out = EventResult{Result: stored.Result.String, Replayed: true}
			return nil
		}
		var res string
		if kind == kindPaid {
			res, after, err = p.paid(ctx, tx, bookingID, ev.SessionID, ev.PaymentIntentID, now)
		} else {
			res, after, err = p.failed(ctx, tx, bookingID, ev.SessionID, now)
		}
		if err != nil {
			return err
		}
		out = EventResult{Result: res}
		return p.s.q.StripeEventSetResult(ctx, tx, db.StripeEventSetResultParams{EventID: ev.ID, Result: pgText(res), Now: now.UTC()})
	})
	if err != nil {
		return EventResult{}, fmt.Errorf("apply stripe event %s (%s) to booking %s: %w", ev.ID, ev.Type, bookingID, err)
	}
	if after != nil {
		after()
	}
	return out, nil
}

// settle stores the result of an event that changes nothing.
func (p *Payments) settle(ctx context.Context, eventID, result string) (EventResult, error) {
	err := p.s.q.StripeEventSetResult(ctx, p.s.pool, db.StripeEventSetResultParams{
		EventID: eventID, Result: pgText(result), Now: p.s.cfg.Now().UTC(),
	})
	if err != nil {
		return EventResult{}, fmt.Errorf("store result of stripe event %s: %w", eventID, err)
	}
	return EventResult{Result: result}, nil
}

// expireSession ends a pending booking's Checkout Session before its failure is
// applied. It returns a result when the failure must not be applied (the session was
// paid meanwhile, or Stripe refuses for good), "" to go on, and an error when a retry
// may help.
func (p *Payments) expireSession(ctx context.Context, b db.Booking) (string, error) {
	if !b.StripeCheckoutSessionID.Valid {
		// The link is still being made; Stripe retries the event, by when it exists.
		return "", fmt.Errorf("booking %s has no checkout session yet", b.ID)
	}
	if p.stripe == nil {
		return "", errors.New("payments are not configured")
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.StripeTimeout)
	defer cancel()
	err := p.stripe.ExpireCheckout(ctx, b.StripeCheckoutSessionID.String)
	switch {
	case err == nil:
		return "", nil
	case errors.Is(err, payments.ErrAlreadyCompleted):
		return ResultKeptCompleted, nil
	case payments.Transient(err):
		return "", fmt.Errorf("expire checkout of booking %s: %w", b.ID, err)
	default:
		// The session ends by itself at its expiry, and that event fails the booking.
		p.log.WarnContext(ctx, "stripe refused to expire checkout session", "booking_id", b.ID, "err", err)
		return ResultExpireRefused, nil
	}
}

// locked is a booking with its opening, both row-locked, and what texts need.
type locked struct {
	b        db.Booking
	op       db.SlotOpening
	shop     shops.Shop
	customer db.Customer
}

// lock takes the opening's row lock (the order Book uses: opening, then booking) and
// reads the booking afresh under it.
func (p *Payments) lock(ctx context.Context, tx pgx.Tx, bookingID uuid.UUID) (locked, error) {
	var l locked
	b, err := p.s.q.BookingGet(ctx, tx, bookingID)
	if err != nil {
		return l, fmt.Errorf("get booking: %w", err)
	}
	if l.op, err = p.s.q.OpeningLock(ctx, tx, b.OpeningID); err != nil {
		return l, fmt.Errorf("lock opening: %w", err)
	}
	if l.b, err = p.s.q.BookingLock(ctx, tx, bookingID); err != nil {
		return l, fmt.Errorf("lock booking: %w", err)
	}
	shopRow, err := p.s.q.ShopGet(ctx, tx, l.b.ShopID)
	if err != nil {
		return l, fmt.Errorf("get shop: %w", err)
	}
	if l.shop, err = shops.FromRow(shopRow); err != nil {
		return l, err
	}
	if l.customer, err = p.s.q.CustomerGet(ctx, tx, l.b.CustomerID); err != nil {
		return l, fmt.Errorf("get customer: %w", err)
	}
	return l, nil
}

// paid applies a successful payment. after, if not nil, runs once the transaction has
// committed.
func (p *Payments) paid(ctx context.Context, tx pgx.Tx, bookingID uuid.UUID, sessionID, paymentIntentID string, now time.Time) (string, func(), error) {
	l, err := p.lock(ctx, tx, bookingID)
	if err != nil {
		return "", nil, err
	}
	b := l.b
	if sessionID != "" && b.StripeCheckoutSessionID.Valid && b.StripeCheckoutSessionID.String != sessionID {
		// Money arrived through a session that is not the booking's. Unlike a failure,
		// a payment is real whichever session took it, so it is applied all the same.
		p.log.WarnContext(ctx, "payment on another checkout session", "booking_id", b.ID, "session_id", sessionID)
	}
	switch b.Status {
	case BookingConfirmed:
		return ResultAlreadyConfirmed, nil, nil
	case BookingPendingPayment:
		if _, err := p.s.q.BookingMarkConfirmed(ctx, tx, db.BookingMarkConfirmedParams{ID: b.ID, Now: now.UTC(), PaymentIntentID: pgText(paymentIntentID)}); err != nil {
			return "", nil, fmt.Errorf("confirm booking: %w", err)
		}
		if err := p.textConfirmed(ctx, tx, l); err != nil {
			return "", nil, err
		}
		return ResultConfirmed, func() { p.m.Booking(BookingConfirmed) }, nil
	}
	return p.latePayment(ctx, tx, l, paymentIntentID, now)
}

// latePayment handles money that arrived after its booking failed: the late payer gets
// the slot if nobody else holds it and it has not started; otherwise the payment is
// refunded. Once a refund is decided the booking never takes the slot back, so a
// customer is never both refunded and booked.
func (p *Payments) latePayment(ctx context.Context, tx pgx.Tx, l locked, paymentIntentID string, now time.Time) (string, func(), error) {
	b, op := l.b, l.op
	refunded, err := p.s.q.StripeEventRefundDecided(ctx, tx, uuid.NullUUID{UUID: b.ID, Valid: true})
	if err != nil {
		return "", nil, fmt.Errorf("check earlier refund: %w", err)
	}
	free := (op.Status == StatusOpen || op.Status == StatusExpired) && !op.FilledBy.Valid && now.Before(op.StartsAt)
	if b.Status == BookingPaymentFailed && !b.RefundID.Valid && !refunded && free {
		ok, err := p.retake(ctx, tx, l, paymentIntentID, now)
		if err != nil {
			return "", nil, err
		}
		if ok {
			return ResultConfirmedLate, func() { p.m.Booking(BookingConfirmed) }, nil
		}
	}
	if _, err := p.s.queue.InsertTx(ctx, tx, jobs.Refund{BookingID: b.ID, PaymentIntentID: paymentIntentID}, nil); err != nil {
		return "", nil, fmt.Errorf("enqueue refund: %w", err)
	}
	return ResultRefunded, nil, nil
}

// retake gives a free opening back to the late payer. It runs in a savepoint: should
// the partial unique index refuse the booking (another went live), the payment is
// refunded instead.
func (p *Payments) retake(ctx context.Context, tx pgx.Tx, l locked, paymentIntentID string, now time.Time) (bool, error) {
	sp, err := tx.Begin(ctx)
	if err != nil {
		return false, fmt.Errorf("savepoint: %w", err)
	}
	defer func() { _ = sp.Rollback(ctx) }()
	if _, err := p.s.q.OpeningMarkFilledLate(ctx, sp, db.OpeningMarkFilledLateParams{
		ID: l.op.ID, CustomerID: uuid.NullUUID{UUID: l.b.CustomerID, Valid: true}, Now: now.UTC(),
	}); errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("mark opening filled: %w", err)
	}
	_, err = p.s.q.BookingMarkConfirmedLate(ctx, sp, db.BookingMarkConfirmedLateParams{ID: l.b.ID, Now: now.UTC(), PaymentIntentID: pgText(paymentIntentID)})
	if errors.Is(err, pgx.ErrNoRows) || isUniqueViolation(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("confirm late booking: %w", err)
	}
	// The new generation's offers are over: their YES now gets "taken".
	if err := p.s.q.OfferMarkOthersLost(ctx, sp, db.OfferMarkOthersLostParams{OpeningID: l.op.ID, AcceptedID: l.b.OfferID.UUID}); err != nil {
		return false, fmt.Errorf("mark other offers lost: %w", err)
	}
	if err := p.textConfirmed(ctx, sp, l); err != nil {
		return false, err
	}
	if err := sp.Commit(ctx); err != nil {
		return false, fmt.Errorf("release savepoint: %w", err)
	}
	return true, nil
}

// failed applies a failed or expired payment.
func (p *Payments) failed(ctx context.Context, tx pgx.Tx, bookingID uuid.UUID, sessionID string, now time.Time) (string, func(), error) {
	l, err := p.lock(ctx, tx, bookingID)
	if err != nil {
		return "", nil, err
	}
	b, op := l.b, l.op
	switch b.Status {
	case BookingConfirmed:
		return ResultKeptConfirmed, nil, nil
	case BookingPaymentFailed, BookingCancelled:
		return ResultAlreadyFailed, nil, nil
	}
	if sessionID != "" && b.StripeCheckoutSessionID.Valid && b.StripeCheckoutSessionID.String != sessionID {
		// An orphan session from an earlier attempt expired; the booking's own
		// session may still be paid.
		return ResultOtherSession, nil, nil
	}
	if _, err := p.s.q.BookingMarkFailed(ctx, tx, db.BookingMarkFailedParams{ID: b.ID, Now: now.UTC()}); err != nil {
		return "", nil, fmt.Errorf("mark booking failed: %w", err)
	}
	if err := p.s.q.OfferMarkFailedForBooking(ctx, tx, b.ID); err != nil {
		return "", nil, fmt.Errorf("mark offer failed: %w", err)
	}
	res := ResultFailed
	if op.Status == StatusFilled && op.FilledBy.Valid && op.FilledBy.UUID == b.CustomerID {
		if now.Before(Cutoff(l.shop, op.StartsAt)) {
			// A new generation from the top of the list. The failed customer is still
			// cooling down from the YES (Book set it), so the wave passes them over.
			reopened, err := p.s.q.OpeningReopen(ctx, tx, db.OpeningReopenParams{ID: op.ID, Now: now.UTC()})
			if err != nil {
				return "", nil, fmt.Errorf("reopen opening: %w", err)
			}
			if _, err := p.s.queue.InsertTx(ctx, tx, jobs.Wave{OpeningID: op.ID, Generation: int(reopened.Generation), Wave: 1}, nil); err != nil {
				return "", nil, fmt.Errorf("enqueue wave: %w", err)
			}
			res = ResultReopened
		} else {
			if _, err := p.s.q.OpeningExpireFilled(ctx, tx, db.OpeningExpireFilledParams{ID: op.ID, Now: now.UTC()}); err != nil {
				return "", nil, fmt.Errorf("expire opening: %w", err)
			}
			res = ResultExpired
		}
	}
	if _, err := p.s.queue.InsertTx(ctx, tx, jobs.Text{
		Key: "lapsed:" + b.ID.String(), ShopID: l.shop.ID, From: l.shop.SMSNumber, To: l.customer.Phone,
		Body: LapsedText(l.shop, op.Service, op.StartsAt),
	}, nil); err != nil {
		return "", nil, fmt.Errorf("enqueue lapsed text: %w", err)
	}
	return res, func() { p.m.Booking(BookingPaymentFailed) }, nil
}

func (p *Payments) textConfirmed(ctx context.Context, tx pgx.Tx, l locked) error {
	_, err := p.s.queue.InsertTx(ctx, tx, jobs.Text{
		Key: "confirmed:" + l.b.ID.String(), ShopID: l.shop.ID, From: l.shop.SMSNumber, To: l.customer.Phone,
		Body: ConfirmedText(l.shop, l.op.Service, l.op.StartsAt), NotAfter: l.op.StartsAt,
	}, nil)
	if err != nil {
		return fmt.Errorf("enqueue confirmation text: %w", err)
	}
	return nil
}

// Reconcile stands in for lost webhooks: it reads back from Stripe the pending bookings
// whose session expired more than ReconcileGrace ago and applies what Stripe reports,
// through the same transitions as the events. A booking that never got a session at all
// is failed like an expired one. It returns how many bookings changed; errors of single
// bookings are logged and the next run tries them again.
func (p *Payments) Reconcile(ctx context.Context) (int, error) {
	now := p.s.cfg.Now()
	ids, err := p.s.q.BookingListStale(ctx, p.s.pool, db.BookingListStaleParams{
		Before: now.Add(-p.cfg.ReconcileGrace).UTC(), MaxRows: int32(p.cfg.ReconcileBatch),
	})
	if err != nil {
		return 0, fmt.Errorf("list stale bookings: %w", err)
	}
	changed := 0
	for _, id := range ids {
		res, err := p.reconcileOne(ctx, id, now)
		if err != nil {
			if ctx.Err() != nil {
				return changed, ctx.Err()
			}
			p.log.WarnContext(ctx, "reconcile booking", "booking_id", id, "err", err)
			p.m.StripeEvent("reconcile", "error")
			continue
		}
		p.m.StripeEvent("reconcile", res)
		if res != ResultStillOpen {
			changed++
			p.log.InfoContext(ctx, "booking reconciled", "booking_id", id, "result", res)
		}
	}
	return changed, nil
}

func (p *Payments) reconcileOne(ctx context.Context, id uuid.UUID, now time.Time) (string, error) {
	b, err := p.s.q.BookingGet(ctx, p.s.pool, id)
	if err != nil {
		return "", fmt.Errorf("get booking: %w", err)
	}
	kind, sessionID, paymentIntentID := kindFailed, "", ""
	if b.StripeCheckoutSessionID.Valid {
		if p.stripe == nil {
			return "", errors.New("payments are not configured")
		}
		sessionID = b.StripeCheckoutSessionID.String
		cctx, cancel := context.WithTimeout(ctx, p.cfg.StripeTimeout)
		sess, err := p.stripe.GetCheckout(cctx, sessionID)
		cancel()
		if err != nil {
			return "", err
		}
		switch {
		case sess.Status == payments.SessionComplete && (sess.PaymentStatus == payments.PaymentPaid || sess.PaymentStatus == payments.PaymentNoPaymentRequired):
			kind, paymentIntentID = kindPaid, sess.PaymentIntentID
		case sess.Status == payments.SessionExpired:
			kind = kindFailed
		default:
			// Still open (clocks disagree) or a delayed payment still settling: its
			// own event or a later run decides.
			return ResultStillOpen, nil
		}
	}
	var res string
	var after func()
	err = pgx.BeginFunc(ctx, p.s.pool, func(tx pgx.Tx) error {
		var err error
		if kind == kindPaid {
			res, after, err = p.paid(ctx, tx, id, sessionID, paymentIntentID, now)
		} else {
			res, after, err = p.failed(ctx, tx, id, sessionID, now)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	if after != nil {
		after()
	}
	return res, nil
}

// RefundBooking refunds a booking's late payment and tells the customer. It does
// nothing for a booking already refunded or confirmed. Stripe's idempotency key is
// derived from the booking, so a retry after a lost answer cannot refund twice.
func (p *Payments) RefundBooking(ctx context.Context, bookingID uuid.UUID, paymentIntentID string) error {
	b, err := p.s.q.BookingGet(ctx, p.s.pool, bookingID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get booking %s: %w", bookingID, err)
	}
	if b.RefundID.Valid || b.Status == BookingConfirmed {
		return nil
	}
	if p.stripe == nil {
		return errors.New("payments are not configured")
	}
	ctx2, cancel := context.WithTimeout(ctx, p.cfg.StripeTimeout)
	defer cancel()
	pi := cmp.Or(paymentIntentID, b.StripePaymentIntentID.String)
	if pi == "" && b.StripeCheckoutSessionID.Valid {
		sess, err := p.stripe.GetCheckout(ctx2, b.StripeCheckoutSessionID.String)
		if err != nil {
			return fmt.Errorf("find payment of booking %s: %w", b.ID, err)
		}
		pi = sess.PaymentIntentID
	}
	if pi == "" {
		return river.JobCancel(fmt.Errorf("booking %s: no payment to refund", b.ID))
	}
	refundID, err := p.stripe.Refund(ctx2, pi, b.ID.String())
	if err != nil {
		if !payments.Transient(err) {
			return river.JobCancel(err)
		}
		return err
	}
	now := p.s.cfg.Now()
	return pgx.BeginFunc(ctx, p.s.pool, func(tx pgx.Tx) error {
		_, err := p.s.q.BookingSetRefund(ctx, tx, db.BookingSetRefundParams{
			ID: b.ID, RefundID: pgText(refundID), PaymentIntentID: pgText(pi), Now: now.UTC(),
		})
		if errors.Is(err, pgx.ErrNoRows) {
			return nil // an earlier run stored it and told the customer
		}
		if err != nil {
			return fmt.Errorf("store refund: %w", err)
		}
		shopRow, err := p.s.q.ShopGet(ctx, tx, b.ShopID)
		if err != nil {
			return fmt.Errorf("get shop: %w", err)
		}
		shop, err := shops.FromRow(shopRow)
		if err != nil {
			return err
		}
		op, err := p.s.q.OpeningGet(ctx, tx, b.OpeningID)
		if err != nil {
			return fmt.Errorf("get opening: %w", err)
		}
		customer, err := p.s.q.CustomerGet(ctx, tx, b.CustomerID)
		if err != nil {
			return fmt.Errorf("get customer: %w", err)
		}
		if _, err := p.s.queue.InsertTx(ctx, tx, jobs.Text{
			Key: "refunded:" + b.ID.String(), ShopID: shop.ID, From: shop.SMSNumber, To: customer.Phone,
			Body: RefundedText(shop, op.Service, op.StartsAt),
		}, nil); err != nil {
			return fmt.Errorf("enqueue refund text: %w", err)
		}
		return nil
	})
}

// ConfirmedText tells a customer the payment went through.
func ConfirmedText(shop shops.Shop, service string, startsAt time.Time) string {
	return fmt.Sprintf("%s: you're booked for %s %s. See you then!",
		shop.Name, service, startsAt.In(shop.Location).Format("Mon 2 Jan 15:04"))
}

// LapsedText tells a customer their hold ended because the payment did not go through.
func LapsedText(shop shops.Shop, service string, startsAt time.Time) string {
	return fmt.Sprintf("%s: your hold on %s %s has lapsed because the payment didn't go through. You have not been charged.",
		shop.Name, service, startsAt.In(shop.Location).Format("Mon 2 Jan 15:04"))
}

// RefundedText tells a customer their late payment was refunded.
func RefundedText(shop shops.Shop, service string, startsAt time.Time) string {
	return fmt.Sprintf("%s: sorry, your payment for %s %s arrived after the slot had gone to someone else. We've refunded it in full.",
		shop.Name, service, startsAt.In(shop.Location).Format("Mon 2 Jan 15:04"))
}

// RefundWorker runs jobs.Refund.
type RefundWorker struct {
	river.WorkerDefaults[jobs.Refund]
	Payments *Payments
}

// Work implements river.Worker.
func (w *RefundWorker) Work(ctx context.Context, job *river.Job[jobs.Refund]) error {
	return w.Payments.RefundBooking(ctx, job.Args.BookingID, job.Args.PaymentIntentID)
}

// ReconcileWorker runs jobs.Reconcile.
type ReconcileWorker struct {
	river.WorkerDefaults[jobs.Reconcile]
	Payments *Payments
}

// Work implements river.Worker.
func (w *ReconcileWorker) Work(ctx context.Context, _ *river.Job[jobs.Reconcile]) error {
	_, err := w.Payments.Reconcile(ctx)
	return err
}

// Timeout implements river.Worker: one run reads up to ReconcileBatch sessions.
func (w *ReconcileWorker) Timeout(*river.Job[jobs.Reconcile]) time.Duration { return 5 * time.Minute }

func pgText(s string) (t pgtype.Text) {
	if s != "" {
		t.String, t.Valid = s, true
	}
	return t
}
