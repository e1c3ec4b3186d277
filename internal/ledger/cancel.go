package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/offers"
	"github.com/slotrecovery/slotrecovery/internal/payments"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/texts"
)

// A customer's own cancellation of a booking (issue 45: a booked customer texts that they
// cannot come, and the shop lets customers cancel by text).

// LiveBooking is a customer's live booking (pending payment or confirmed) of an opening
// that has not started.
type LiveBooking struct {
	ID       uuid.UUID
	Status   string
	Service  string
	StartsAt time.Time
}

// LiveBookings returns the customer's live bookings at the shop whose opening starts
// after now, soonest first, at most two (two are enough to know that one text cannot
// say which it cancels).
func LiveBookings(ctx context.Context, q db.DBTX, shopID, customerID uuid.UUID, now time.Time) ([]LiveBooking, error) {
	rows, err := queries.BookingsLiveForCustomer(ctx, q, db.BookingsLiveForCustomerParams{
		CustomerID: customerID, ShopID: shopID, Now: now.UTC(),
	})
	if err != nil {
		return nil, fmt.Errorf("list customer's live bookings: %w", err)
	}
	out := make([]LiveBooking, 0, len(rows))
	for _, r := range rows {
		out = append(out, LiveBooking{ID: r.ID, Status: r.Status, Service: r.Service, StartsAt: r.StartsAt})
	}
	return out, nil
}

// Cancellation is what a customer's cancellation did.
type Cancellation struct {
	// Cancelled is false when the booking was no longer live, or its opening had
	// started, when the row locks were taken: nothing changed.
	Cancelled bool
	BookingID uuid.UUID
	Service   string
	StartsAt  time.Time
	// Refunded: the booking was paid, and a refund of its payment is enqueued (the
	// refund job texts the customer once the provider has refunded).
	Refunded bool
	// Result is what became of the opening: ResultReopened (offered again at once, in a
	// new generation), ResultExpired (too close to its start to offer it again), or ""
	// when the booking did not hold it.
	Result Result
	// Late: the cancellation came less than the accepted policy's late_cancel_hours
	// before the start (issue 48); LateCancelHours is that policy's. A late
	// cancellation of a deposit booking keeps the deposit (DepositKept, no refund); one
	// with a late-cancel fee in its terms owes it (Fee, pending until ChargeFee after the
	// commit, or no_card). Before the hour, or without terms, a payment is refunded in
	// full as it always was.
	Late            bool
	LateCancelHours int
	DepositKept     bool
	Fee             *Fee
	// OpenCheckout: the booking was pending with a payment link, which the caller ends
	// once the cancellation committed (EndCheckout), so that it cannot be paid.
	OpenCheckout bool
}

// ErrNotCancellable means the booking cannot be cancelled by its customer: it is not
// live any more, or its opening has started.
var ErrNotCancellable = errors.New("ledger: booking is not live")

// CancelByCustomer cancels a live booking at its customer's request, in tx, under the
// opening's and the booking's row locks (the order every transition takes them in), so
// that a concurrent payment, lapse or second cancellation sees it done or waits: a
// booking is cancelled once. A paid booking's payment is refunded (the refund job, as
// for a late payment; the booking's status tells its text). The opening it held opens
// again at once in a new offer generation, its first wave enqueued in tx (or expires,
// inside the shop's cutoff or when the shop can no longer take payments): the same
// release as a lapsed hold's. A payment that arrives after the cancellation is refunded
// (latePayment: the booking never takes the slot back). It returns ErrNotCancellable,
// with nothing changed, when the booking is no longer live or its opening has started.
func (s *Service) CancelByCustomer(ctx context.Context, tx pgx.Tx, bookingID uuid.UUID, now time.Time) (Cancellation, error) {
	return s.cancel(ctx, tx, bookingID, now, false)
}

// CancelLate is the owner's entry of a customer's cancellation (POST
// /api/bookings/{id}/late_cancel: the customer called): the shop's booking is cancelled
// as CancelByCustomer does, and the policy the customer accepted applies as it does to
// their text: inside its late_cancel_hours the deposit is kept and its late-cancel fee,
// if its terms have one, charged to the kept card after the commit; before them a
// payment is refunded in full and nothing is charged (a fee the accepted policy says
// is not owed is never charged). A booking without terms is cancelled and refunded as
// any other. Asked again for a booking so cancelled whose fee is still pending (the
// provider failed or the server stopped before its answer), it charges the fee then
// (the provider's idempotency key charges it once) and answers the cancellation as it
// stands.
func (s *Service) CancelLate(ctx context.Context, shopID, bookingID uuid.UUID) (Cancellation, error) {
	var c Cancellation
	var b db.Booking
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		b, err = queries.BookingGet(ctx, tx, bookingID)
		if errors.Is(err, pgx.ErrNoRows) || err == nil && b.ShopID != shopID {
			return ErrBookingNotFound
		}
		if err != nil {
			return fmt.Errorf("get booking %s: %w", bookingID, err)
		}
		c, err = s.cancel(ctx, tx, bookingID, s.cfg.Now(), false)
		return err
	})
	if errors.Is(err, ErrNotCancellable) && b.Status == BookingCancelled {
		if fee, ferr := BookingFee(ctx, s.pool, bookingID); ferr == nil && fee != nil &&
			fee.Kind == payments.FeeLateCancel && fee.State == FeePending {
			c.Late, c.Fee = true, fee
			c.Fee = s.ChargeFee(ctx, c)
			return c, nil
		}
	}
	if err != nil {
		return c, err
	}
	if c.Cancelled {
		if c.OpenCheckout {
			s.EndCheckout(ctx, c.BookingID)
		}
		s.m.Booking(BookingCancelled)
		c.Fee = s.ChargeFee(ctx, c)
	}
	return c, nil
}

func (s *Service) cancel(ctx context.Context, tx pgx.Tx, bookingID uuid.UUID, now time.Time, late bool) (Cancellation, error) {
	l, err := s.lock(ctx, tx, bookingID)
	if err != nil {
		return Cancellation{}, err
	}
	b, op := l.b, l.op
	c := Cancellation{BookingID: b.ID, Service: op.Service, StartsAt: op.StartsAt}
	if b.Service.Valid {
		c.Service = b.Service.String
	}
	if (b.Status != BookingPendingPayment && b.Status != BookingConfirmed) || !now.Before(op.StartsAt) {
		return c, ErrNotCancellable
	}
	if _, err := queries.BookingMarkCancelled(ctx, tx, db.BookingMarkCancelledParams{ID: b.ID, Now: now.UTC()}); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return c, ErrNotCancellable
		}
		return c, fmt.Errorf("mark booking cancelled: %w", err)
	}
	c.Cancelled = true
	// Its move-up offers go: there is nothing left to move.
	if err := offers.WithdrawBookingMoves(ctx, tx, b.ID, uuid.Nil); err != nil {
		return c, err
	}
	c.OpenCheckout = b.Status == BookingPendingPayment && b.StripeCheckoutSessionID.Valid
	terms, ok, err := BookingTerms(ctx, tx, b.ID)
	if err != nil {
		return c, err
	}
	if ok && terms.AcceptedAt != nil && (late || now.After(op.StartsAt.Add(-time.Duration(terms.LateCancelHours)*time.Hour))) {
		// Late, by the policy the customer accepted: what it says applies.
		c.Late, c.LateCancelHours = true, terms.LateCancelHours
		c.DepositKept = terms.Mode == shops.PaymentDeposit && b.Status == BookingConfirmed
		if terms.LateCancelFeeCents > 0 {
			if c.Fee, err = s.claimFee(ctx, tx, b.ShopID, b.ID, BookingConfirmed, b.Currency, payments.FeeLateCancel, now); err != nil {
				return c, err
			}
		}
	}
	// A card-mode page took nothing (its terms charged 0): there is nothing to refund.
	tookMoney := !ok || terms.ChargedCents > 0
	if !c.DepositKept && tookMoney && b.Status == BookingConfirmed && (b.StripePaymentIntentID.Valid || b.StripeCheckoutSessionID.Valid) {
		// Paid: the money goes back. Recorded as decided, as a late payment's refund is.
		if err := queries.BookingMarkRefundRequested(ctx, tx, db.BookingMarkRefundRequestedParams{ID: b.ID, Now: now.UTC()}); err != nil {
			return c, fmt.Errorf("mark refund requested: %w", err)
		}
		if err := s.requestRefund(ctx, tx, b.ID, b.StripePaymentIntentID.String); err != nil {
			return c, err
		}
		c.Refunded = true
	}
	if c.Result, err = s.release(ctx, tx, l, now); err != nil {
		return c, err
	}
	return c, nil
}

// ChargeFee charges the fee a cancellation left pending (Cancellation.Fee), after the
// cancellation committed, and returns it as it then stands; c's fee as it was when the
// charge could not be made now (logged: the owner sees it pending).
func (s *Service) ChargeFee(ctx context.Context, c Cancellation) *Fee {
	if c.Fee == nil || c.Fee.State != FeePending {
		return c.Fee
	}
	b, err := queries.BookingGet(ctx, s.pool, c.BookingID)
	if err != nil {
		s.log.WarnContext(ctx, "late-cancel fee not charged", "booking_id", c.BookingID, "err", err)
		return c.Fee
	}
	shop, err := shops.Read(ctx, s.pool, b.ShopID)
	if err != nil {
		s.log.WarnContext(ctx, "late-cancel fee not charged", "booking_id", c.BookingID, "err", err)
		return c.Fee
	}
	fee, err := s.chargeFee(ctx, shop, b.ID, b.StripeAccount.String, b.StripeCheckoutSessionID.String, c.Service, c.StartsAt, texts.In(shop.Language))
	if err != nil {
		s.log.WarnContext(ctx, "late-cancel fee not charged yet", "booking_id", c.BookingID, "err", err)
	}
	if fee == nil {
		return c.Fee
	}
	return fee
}

// EndCheckout ends the payment link of a booking its customer cancelled
// (Cancellation.OpenCheckout), after the cancellation committed: the provider is asked
// to expire the checkout so that it cannot be paid. A failure is logged and left: a
// payment that still arrives finds the booking cancelled and is refunded (latePayment).
func (s *Service) EndCheckout(ctx context.Context, bookingID uuid.UUID) {
	b, err := queries.BookingGet(ctx, s.pool, bookingID)
	if err != nil || b.Status != BookingCancelled || !b.StripeCheckoutSessionID.Valid || s.provider == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.ProviderTimeout)
	defer cancel()
	if err := s.provider.ExpireCheckout(ctx, b.StripeAccount.String, b.StripeCheckoutSessionID.String); err != nil {
		s.log.WarnContext(ctx, "cancelled booking's checkout not ended: a payment would be refunded", "booking_id", b.ID, "err", err)
	}
}

// release frees the opening a booking that ended held (a lapsed hold, a customer's
// cancellation): offered again at once in a new generation, if its start is beyond the
// shop's cutoff and the shop can take payments; else expired. The opening's event is
// recorded with the booking, as the change left them. "" when the booking did not hold
// the opening (nothing to free).
func (s *Service) release(ctx context.Context, tx pgx.Tx, l locked, now time.Time) (Result, error) {
	b, op := l.b, l.op
	if op.Status != slots.StatusFilled || !op.FilledBy.Valid || op.FilledBy.UUID != b.CustomerID {
		return "", nil
	}
	res := ResultReopened
	// A shop that can no longer take payments (its payment account was disconnected)
	// does not offer the slot again: its next taker's hold would lapse too.
	if now.Before(l.shop.Cutoff(op.StartsAt)) && l.shop.CheckoutReady() == nil {
		// A new generation from the top of the list.
		if err := slots.Reopen(ctx, tx, s.queue, op.ID, now); err != nil {
			return "", err
		}
	} else {
		if err := slots.ExpireFilled(ctx, tx, op.ID, now); err != nil {
			return "", err
		}
		res = ResultExpired
	}
	typ := hooks.OpeningReopened
	if res == ResultExpired {
		typ = hooks.OpeningExpired
	}
	if err := hooks.RecordOpening(ctx, tx, b.ShopID, typ, now, op.ID, b.ID); err != nil {
		return "", err
	}
	return res, nil
}
