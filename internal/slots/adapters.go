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
// locked waits for the release notice instead), releases that announce the holder's
// note on the watcher's channel, and release through a context that outlives the
// request's.
func RedisLocker(c *redislock.Client, w *redislock.Watcher, channel string, m *metrics.Metrics) Locker {
	return redisLocker{c: c, w: w, channel: channel, m: m}
}

// LockChannel is the Redis channel on which slot lock releases are announced.
const LockChannel = "slot_lock_released"

type redisLocker struct {
	c       *redislock.Client
	w       *redislock.Watcher
	channel string
	m       *metrics.Metrics
}

func (r redisLocker) TryLock(ctx context.Context, key string, ttl time.Duration) (func(string), error) {
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
	return func(note string) {
		// Release must happen even if the request was cancelled; a failure only means the
		// key lives until its TTL (and its waiters until their deadline).
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = l.ReleaseAndNotify(ctx, r.channel, note)
	}, nil
}

func (r redisLocker) Watch(key string) (<-chan string, func()) { return r.w.Watch(key) }

func (r redisLocker) Recent(key string) []string { return r.w.Recent(key) }

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
