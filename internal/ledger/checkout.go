package ledger

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/inbox"
	"github.com/slotrecovery/slotrecovery/internal/payments"
	"github.com/slotrecovery/slotrecovery/internal/pgbatch"
	"github.com/slotrecovery/slotrecovery/internal/pgvalue"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/texts"
)

// minCheckoutExpiry is the payment provider's floor for a checkout's expiry (30
// minutes), with a margin for the request's own travel time.
const minCheckoutExpiry = 30*time.Minute + 20*time.Second

// maxHoldExtension bounds how far past CheckoutHold (counted from the booking) the
// safety net may push the expiry while it waits for the provider. After that the
// customer has had no link for too long: the slot goes back to the others.
const maxHoldExtension = 10 * time.Minute

// maxCheckoutRetryDelay caps the wait between the sweep's attempts at one link, so that
// it tries several times before the hold runs out.
const maxCheckoutRetryDelay = 2 * time.Minute

// ErrCheckoutRefused is wrapped by a checkout error that retrying cannot fix (the
// provider refused the request itself, not an outage or a timeout). The booking then
// fails at once instead of holding the slot while the job retries.
var ErrCheckoutRefused = errors.New("ledger: checkout refused")

// newCheckout asks the payment provider for booking b's payment link, expiring at
// expires, waiting at most timeout. It is the one place a link is made, for the YES
// path (Checkout) and for its safety net (EnsureCheckout); both store it with
// BookingStoreLink, made by storeLinkParams. An error that retrying cannot fix wraps
// ErrCheckoutRefused.
func (s *Service) newCheckout(ctx context.Context, timeout time.Duration, w texts.Words, shop shops.Shop, b db.Booking, service string, startsAt, expires time.Time) (payments.Checkout, error) {
	if s.provider == nil {
		return payments.Checkout{}, errUnconfigured
	}
	account, feeBPS, err := s.payee(shop)
	if err != nil {
		return payments.Checkout{}, fmt.Errorf("%w: %w", ErrCheckoutRefused, err)
	}
	callCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r := payments.CheckoutRequest{
		BookingID: b.ID.String(), AmountCents: b.AmountCents, Currency: b.Currency,
		Description: w.CheckoutItem(&shop, service, startsAt), Locale: string(w.Language()), ExpiresAt: expires,
		SuccessURL: s.cfg.CheckoutSuccessURL, CancelURL: s.cfg.CheckoutCancelURL,
		Account: account, FeeBPS: feeBPS,
	}
	// A protected shop's terms (deposit, kept card, policy) are fixed before the first
	// attempt: one more write on such a shop's YES, none on a plain checkout's.
	terms, ok, err := s.fixTerms(callCtx, shop, b)
	if err != nil {
		return payments.Checkout{}, err
	}
	if ok {
		checkoutTerms(&r, terms)
		if terms.Mode == shops.PaymentDeposit {
			r.Description = w.DepositItem(&shop, service, startsAt)
		}
	}
	co, err := s.provider.CreateCheckout(callCtx, r)
	if err != nil && !payments.Transient(err) {
		return payments.Checkout{}, fmt.Errorf("%w: %w", ErrCheckoutRefused, err)
	}
	return co, err
}

// errNoAccount: with Connect on, the shop has no connected account the platform can
// charge on (never connected, or disconnected since the opening was declared).
var errNoAccount = errors.New("ledger: the shop has no connected account to take the payment")

// payee decides on which account a new checkout of shop is made, and the platform's fee
// on it: the platform's own account without Connect; with it, the shop's connected
// account and its fee (the admin's for the shop, else the server's). The account's
// charges are left to the provider to refuse: the stored state may lag behind it, and
// the provider's word is the one that counts when money moves.
func (s *Service) payee(shop shops.Shop) (account string, feeBPS int, err error) {
	if !s.cfg.Connect {
		return "", 0, nil
	}
	if !shop.Stripe.Connected() {
		return "", 0, errNoAccount
	}
	return shop.Stripe.ID, shop.FeeBPS(s.cfg.PlatformFeeBPS), nil
}

// Checkout makes the payment link of booking b, which a YES has just committed for
// service at startsAt, in w (the customer's language: the payment page's and its line
// item's), on the YES path: bounded by CheckoutTimeout, expiring when the
// booking's hold does. It stores nothing: the caller stores the link (StoreLink) in the
// round trip that stores its own answer with it, so that an answer is never stored
// with a link that was not, and the winner's answer costs no round trip of its own. An
// error means the link could not be made in time: the booking holds, and the booking
// sweep makes the link (EnsureCheckout) and texts it.
func (s *Service) Checkout(ctx context.Context, w texts.Words, shop shops.Shop, b db.Booking, service string, startsAt time.Time) (payments.Checkout, error) {
	if b.CheckoutExpiresAt == nil {
		return payments.Checkout{}, fmt.Errorf("booking %s has no checkout expiry", b.ID)
	}
	return s.newCheckout(ctx, s.cfg.CheckoutTimeout, w, shop, b, service, startsAt, *b.CheckoutExpiresAt)
}

// StoreLink stores booking id's payment link co, at now, once: it changes no row when a
// link was stored first (the booking sweep's, which texts it itself) or the booking
// ended, and the caller then must not tell the customer of co. q may be a
// *pgbatch.Queue, whose command tag for this one statement has the rows it changed.
func StoreLink(ctx context.Context, q db.DBTX, id uuid.UUID, co payments.Checkout, now time.Time) (stored bool, err error) {
	n, err := queries.BookingStoreLink(ctx, q, storeLinkParams(id, co, now))
	if err != nil {
		return false, fmt.Errorf("store checkout: %w", err)
	}
	return n > 0, nil
}

// QueueLink queues StoreLink's statement in q, to go with the caller's own in one
// round trip; its Result tells, once q is sent, whether the link was stored (1 row) or
// the booking had one already (0).
func QueueLink(ctx context.Context, q *pgbatch.Queue, id uuid.UUID, co payments.Checkout, now time.Time) (*pgbatch.Result, error) {
	if _, err := queries.BookingStoreLink(ctx, q, storeLinkParams(id, co, now)); err != nil {
		return nil, fmt.Errorf("queue checkout: %w", err)
	}
	return q.Last(), nil
}

func storeLinkParams(id uuid.UUID, co payments.Checkout, now time.Time) db.BookingStoreLinkParams {
	p := db.BookingStoreLinkParams{
		ID: id, Now: now.UTC(), ExpiresAt: co.ExpiresAt.UTC(),
		Account: pgvalue.TextOrNull(co.Account), ApplicationFeeCents: co.ApplicationFeeCents,
	}
	p.SessionID.String, p.SessionID.Valid = co.SessionID, true
	p.PaymentUrl.String, p.PaymentUrl.Valid = co.URL, true
	if co.PaymentIntentID != "" {
		p.PaymentIntentID.String, p.PaymentIntentID.Valid = co.PaymentIntentID, true
	}
	return p
}

// EnsureCheckout makes sure a pending booking has a payment link and that the customer
// was sent it. It is the safety net behind the YES path's attempt (Checkout), run by the
// booking sweep after the provider's errors, timeouts or a crash; it does nothing when
// the link already exists. The same idempotency key (booking and stored expiry) makes
// the provider return the first checkout if an earlier attempt reached it.
//
// It never holds a slot without a link for long: when the provider refuses the request for
// good (ErrCheckoutRefused), or payments are not configured, or a new expiry would end
// more than maxHoldExtension after the hold that began with the booking, the booking
// fails like an unpaid one (the slot reopens, the customer is told the hold lapsed); the
// error then wraps ErrCheckoutRefused or says payments are not configured.
func (s *Service) EnsureCheckout(ctx context.Context, bookingID uuid.UUID) error {
	b, err := queries.BookingGet(ctx, s.pool, bookingID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get booking %s: %w", bookingID, err)
	}
	if b.Status != BookingPendingPayment || b.PaymentUrl.Valid {
		return nil
	}
	if s.provider == nil {
		if _, err := s.lapse(ctx, b); err != nil {
			return err
		}
		return fmt.Errorf("booking %s failed: %w", b.ID, errUnconfigured)
	}
	shop, op, customer, err := s.parties(ctx, b)
	if err != nil {
		return err
	}

	now := s.cfg.Now()
	expires := now.Add(slots.CheckoutHold)
	if b.CheckoutExpiresAt != nil {
		expires = *b.CheckoutExpiresAt
	}
	if expires.Sub(now) < minCheckoutExpiry {
		// The first attempt never reached the provider in time; it would refuse the stored
		// expiry now. Move to a later one (a new idempotency key) and hold the slot that
		// much longer, within bounds.
		later := now.Add(slots.CheckoutHold).UTC().Truncate(time.Second)
		if later.After(b.CreatedAt.Add(slots.CheckoutHold + maxHoldExtension)) {
			res, err := s.lapse(ctx, b)
			if err != nil {
				return err
			}
			s.log.WarnContext(ctx, "no payment link within the hold", "booking_id", b.ID, "result", res)
			return nil
		}
		b, err = queries.BookingSetCheckoutExpiry(ctx, s.pool, db.BookingSetCheckoutExpiryParams{ID: b.ID, ExpiresAt: later, Now: now.UTC()})
		if errors.Is(err, pgx.ErrNoRows) {
			return nil // a link was stored or the booking ended meanwhile
		}
		if err != nil {
			return fmt.Errorf("move checkout expiry: %w", err)
		}
		expires = later
	}
	// What was booked: the service offered to the customer (a shop with services), else
	// the opening's.
	service := cmp.Or(b.Service.String, op.Service)
	co, err := s.newCheckout(ctx, 2*s.cfg.CheckoutTimeout, wordsFor(shop, customer), shop, b, service, op.StartsAt, expires)
	if errors.Is(err, ErrCheckoutRefused) {
		res, ferr := s.lapse(ctx, b)
		if ferr != nil {
			return errors.Join(fmt.Errorf("create checkout for booking %s: %w", b.ID, err), ferr)
		}
		s.log.WarnContext(ctx, "checkout refused; booking failed", "booking_id", b.ID, "result", res, "err", err)
		return fmt.Errorf("create checkout for booking %s: %w", b.ID, err)
	}
	if err != nil {
		return fmt.Errorf("create checkout for booking %s: %w", b.ID, err)
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		stored, err := queries.BookingStoreLink(ctx, tx, storeLinkParams(b.ID, co, now))
		if err != nil {
			return fmt.Errorf("store checkout: %w", err)
		}
		if stored == 0 {
			return nil // stored by the YES path meanwhile (it answered with the link), or failed
		}
		staff, err := staffName(ctx, tx, op)
		if err != nil {
			return err
		}
		// The link text tells the customer of the booking: no notice after it.
		if _, err := queries.BookingMarkTold(ctx, tx, db.BookingMarkToldParams{ID: b.ID, Now: now.UTC()}); err != nil {
			return fmt.Errorf("mark booking told: %w", err)
		}
		_, err = s.queueText(ctx, tx, inbox.Outgoing{
			Key: "checkout_link:" + b.ID.String(), ShopID: shop.ID, From: shop.SMSNumber, To: customer.Phone, CustomerID: customer.ID,
			Body:     BookedText(wordsFor(shop, customer), shop, service, staff, op.StartsAt, false, s.Link(b.ID, co.URL), now),
			NotAfter: expires,
		})
		if err != nil {
			return fmt.Errorf("enqueue link text: %w", err)
		}
		return nil
	})
}
