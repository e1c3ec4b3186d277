package slots

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/slotrecovery/slotrecovery/internal/metrics"
	"github.com/slotrecovery/slotrecovery/internal/payments"
	"github.com/slotrecovery/slotrecovery/internal/redislock"
)

// RedisLocker adapts redislock to Locker: no retries (a claim that finds the slot
// locked loses at once), and release through a context that outlives the request's.
func RedisLocker(c *redislock.Client, m *metrics.Metrics) Locker {
	return redisLocker{c: c, m: m}
}

type redisLocker struct {
	c *redislock.Client
	m *metrics.Metrics
}

func (r redisLocker) TryLock(ctx context.Context, key string, ttl time.Duration) (func(), error) {
	l, err := r.c.Obtain(ctx, key, ttl, nil)
	switch {
	case errors.Is(err, redislock.ErrNotObtained):
		r.m.Lock("held")
		return nil, ErrLockHeld
	case err != nil:
		r.m.Lock("error")
		return nil, err
	}
	r.m.Lock("obtained")
	return func() {
		// Release must happen even if the request was cancelled; a failure only means the
		// key lives until its TTL.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = l.Release(ctx)
	}, nil
}

// CheckoutCreator creates a provider's checkout session for one booking.
// *stripe.Client (internal/payments/stripe) implements it.
type CheckoutCreator interface {
	CreateCheckout(ctx context.Context, r payments.CheckoutRequest) (payments.Checkout, error)
}

// StripeCheckouts adapts the payments client to Checkouts, with the pages Stripe sends
// the customer back to.
func StripeCheckouts(p CheckoutCreator, successURL, cancelURL string) Checkouts {
	return stripeCheckouts{p: p, success: successURL, cancel: cancelURL}
}

type stripeCheckouts struct {
	p               CheckoutCreator
	success, cancel string
}

func (s stripeCheckouts) CreateCheckout(ctx context.Context, r CheckoutRequest) (Checkout, error) {
	co, err := s.p.CreateCheckout(ctx, payments.CheckoutRequest{
		BookingID: r.BookingID, AmountCents: r.AmountCents, Currency: r.Currency, Description: r.Description,
		ExpiresAt: r.ExpiresAt, SuccessURL: s.success, CancelURL: s.cancel,
	})
	if err != nil && !payments.Transient(err) {
		return Checkout{}, fmt.Errorf("%w: %w", ErrCheckoutRefused, err)
	}
	if err != nil {
		return Checkout{}, err
	}
	return Checkout{SessionID: co.SessionID, URL: co.URL, PaymentIntentID: co.PaymentIntentID, ExpiresAt: co.ExpiresAt}, nil
}
