package slots

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/riverqueue/river"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// Outcome is how a claim on a slot ended.
type Outcome string

// Claim outcomes.
const (
	// Booked: this customer holds the slot now.
	Booked Outcome = "booked"
	// Taken: someone else got it first, or it is no longer bookable.
	Taken Outcome = "taken"
	// NoOffer: the customer holds no offer that could be claimed.
	NoOffer Outcome = "no_offer"
)

// ErrUnavailable means the lock service or the database could not be reached: no booking
// was made and the customer should try again shortly ("fail closed").
var ErrUnavailable = problem.New(problem.Unavailable, "unavailable", "booking is unavailable for a moment")

// Claim is the result of a customer's YES.
type Claim struct {
	Outcome    Outcome
	OpeningID  uuid.UUID
	BookingID  uuid.UUID
	StartsAt   time.Time
	Service    string
	PriceCents int64
	// PaymentURL is the Checkout link when it was made in time.
	PaymentURL string
	// LinkFollows means the booking holds but the link could not be made in time: a job
	// makes it and texts it.
	LinkFollows bool
	// Confirmed means the booking needs no (more) payment.
	Confirmed bool
	// Repeat means this customer already held the slot: the answer repeats the booking.
	Repeat bool
}

// Book gives the customer's newest claimable offer's slot to the customer, if nobody
// else has it. The order matters: the Redis lock turns away concurrent claims at once
// (a loser is told "taken" without waiting); then one transaction locks the opening
// row, rechecks that it is open, before the cutoff and that the offer is still live,
// and writes the booking, whose partial unique index is the final fence. The Stripe
// call happens after the commit, so a slow Stripe never holds the row lock.
func (s *Service) Book(ctx context.Context, shop shops.Shop, customerID uuid.UUID) (Claim, error) {
	offer, err := s.q.OfferNewestClaimable(ctx, s.pool, customerID)
	if errors.Is(err, pgx.ErrNoRows) {
		return s.noClaimable(ctx, customerID)
	}
	if err != nil {
		return Claim{}, fmt.Errorf("find claimable offer: %w: %w", ErrUnavailable, err)
	}
	if offer.ShopID != shop.ID {
		return Claim{Outcome: NoOffer}, nil
	}

	unlock, err := s.locker.TryLock(ctx, s.cfg.KeyPrefix+LockKey(shop.ID, offer.StartsAt), s.cfg.LockTTL)
	if errors.Is(err, ErrLockHeld) {
		return Claim{Outcome: Taken, OpeningID: offer.OpeningID}, nil
	}
	if err != nil {
		return Claim{}, fmt.Errorf("lock slot: %w: %w", ErrUnavailable, err)
	}
	// Released as soon as the transaction has decided who holds the slot (Postgres says
	// so from then on): the Stripe call below must not keep other claims waiting.
	release := sync.OnceFunc(unlock)
	defer release()

	now := s.cfg.Now()
	claim := Claim{OpeningID: offer.OpeningID}
	var booking db.Booking
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		op, err := s.q.OpeningLock(ctx, tx, offer.OpeningID)
		if err != nil {
			return fmt.Errorf("lock opening: %w", err)
		}
		claim.StartsAt, claim.Service, claim.PriceCents = op.StartsAt.UTC(), op.Service, op.PriceCents
		if op.Status != StatusOpen || op.Generation != offer.Generation || !now.Before(Cutoff(shop, op.StartsAt)) {
			claim.Outcome = Taken
			return nil
		}
		if _, err := s.q.OfferAccept(ctx, tx, offer.OfferID); errors.Is(err, pgx.ErrNoRows) {
			// Declined or failed since we looked: nothing to claim.
			claim.Outcome = NoOffer
			return nil
		} else if err != nil {
			return fmt.Errorf("accept offer: %w", err)
		}
		if _, err := s.q.OpeningMarkFilled(ctx, tx, db.OpeningMarkFilledParams{ID: op.ID, CustomerID: uuid.NullUUID{UUID: customerID, Valid: true}, Now: now.UTC()}); err != nil {
			return fmt.Errorf("mark opening filled: %w", err)
		}
		p := db.BookingInsertParams{
			OpeningID: op.ID, CustomerID: customerID, OfferID: uuid.NullUUID{UUID: offer.OfferID, Valid: true},
			ShopID: shop.ID, AmountCents: op.PriceCents, Currency: shop.Currency, CreatedAt: now.UTC(),
		}
		if shop.PaymentMode == shops.PaymentNone {
			p.Status = BookingConfirmed
			t := now.UTC()
			p.ConfirmedAt = &t
		} else {
			p.Status = BookingPendingPayment
			exp := now.Add(s.cfg.CheckoutHold).UTC().Truncate(time.Second)
			p.CheckoutExpiresAt = &exp
		}
		booking, err = s.q.BookingInsert(ctx, tx, p)
		if isUniqueViolation(err) {
			// The fence held: a live booking exists although the opening looked open.
			claim.Outcome = Taken
			return errRollback
		}
		if err != nil {
			return fmt.Errorf("insert booking: %w", err)
		}
		if err := s.q.OfferMarkOthersLost(ctx, tx, db.OfferMarkOthersLostParams{OpeningID: op.ID, AcceptedID: offer.OfferID}); err != nil {
			return fmt.Errorf("mark other offers lost: %w", err)
		}
		if shop.PaymentMode != shops.PaymentNone {
			// The safety net: if Stripe is down or this process dies before the link is
			// stored, the job makes the link and texts it.
			if _, err := s.queue.InsertTx(ctx, tx, jobs.Checkout{BookingID: booking.ID},
				&river.InsertOpts{ScheduledAt: now.Add(s.cfg.CheckoutRetryDelay)}); err != nil {
				return fmt.Errorf("enqueue checkout job: %w", err)
			}
		}
		claim.Outcome = Booked
		return nil
	})
	release()
	if errors.Is(err, errRollback) {
		return claim, nil
	}
	if err != nil {
		return Claim{}, fmt.Errorf("book opening %s: %w: %w", offer.OpeningID, ErrUnavailable, err)
	}
	if claim.Outcome != Booked {
		return claim, nil
	}
	claim.BookingID = booking.ID

	// The cooldown is a courtesy (fewer texts to someone who just booked); a failure to
	// set it must not undo a booking that Postgres has already committed.
	if shop.Policy.Cooldown > 0 {
		if err := s.cooldowns.Start(context.WithoutCancel(ctx), customerID.String(), shop.Policy.Cooldown); err != nil {
			s.log.WarnContext(ctx, "cooldown not set", "customer_id", customerID, "err", err)
		}
	}
	if shop.PaymentMode == shops.PaymentNone {
		claim.Confirmed = true
		return claim, nil
	}
	url, err := s.checkoutNow(ctx, shop, booking, claim)
	if err != nil {
		s.log.WarnContext(ctx, "checkout deferred to job", "booking_id", booking.ID, "err", err)
		claim.LinkFollows = true
		return claim, nil
	}
	if url == "" {
		claim.LinkFollows = true
	}
	claim.PaymentURL = url
	return claim, nil
}

// checkoutNow makes the Checkout Session on the YES path, bounded by CheckoutTimeout,
// and stores the link. It returns "" when the job stored a link first (the job then
// texts it).
func (s *Service) checkoutNow(ctx context.Context, shop shops.Shop, b db.Booking, c Claim) (string, error) {
	if s.checkouts == nil {
		return "", errors.New("payments are not configured")
	}
	// The timeout is Stripe's alone: a session that arrives at the last moment must still
	// be stored, with the request's own context.
	callCtx, cancel := context.WithTimeout(ctx, s.cfg.CheckoutTimeout)
	defer cancel()
	co, err := s.checkouts.CreateCheckout(callCtx, CheckoutRequest{
		BookingID: b.ID.String(), AmountCents: b.AmountCents, Currency: b.Currency,
		Description: CheckoutDescription(shop, c.Service, c.StartsAt), ExpiresAt: *b.CheckoutExpiresAt,
	})
	if err != nil {
		return "", err
	}
	row, err := s.q.BookingSetCheckout(ctx, s.pool, setCheckoutParams(b.ID, co, s.cfg.Now()))
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("store checkout: %w", err)
	}
	return row.PaymentUrl.String, nil
}

// noClaimable tells a late YES (the customer had an offer, now lost or gone) from a YES
// with nothing behind it.
func (s *Service) noClaimable(ctx context.Context, customerID uuid.UUID) (Claim, error) {
	last, err := s.q.OfferNewestForCustomer(ctx, s.pool, customerID)
	if errors.Is(err, pgx.ErrNoRows) {
		return Claim{Outcome: NoOffer}, nil
	}
	if err != nil {
		return Claim{}, fmt.Errorf("find newest offer: %w: %w", ErrUnavailable, err)
	}
	switch last.Status {
	case "lost", "sent", "sending":
		return Claim{Outcome: Taken}, nil
	case "accepted":
		// The winner saying YES again (the first answer was slow or lost): the same
		// answer, with the link if there is one.
		b, err := s.q.OfferAcceptedBooking(ctx, s.pool, last.ID)
		if errors.Is(err, pgx.ErrNoRows) {
			return Claim{Outcome: NoOffer}, nil
		}
		if err != nil {
			return Claim{}, fmt.Errorf("find booking of accepted offer: %w: %w", ErrUnavailable, err)
		}
		return Claim{
			Outcome: Booked, Repeat: true, OpeningID: b.OpeningID, BookingID: b.ID,
			StartsAt: b.StartsAt.UTC(), Service: b.Service, PaymentURL: b.PaymentUrl.String,
			LinkFollows: b.Status == BookingPendingPayment && !b.PaymentUrl.Valid,
			Confirmed:   b.Status == BookingConfirmed,
		}, nil
	default:
		return Claim{Outcome: NoOffer}, nil
	}
}

// CheckoutDescription is the line item the customer sees on the Stripe page.
func CheckoutDescription(shop shops.Shop, service string, startsAt time.Time) string {
	return fmt.Sprintf("%s at %s, %s", service, shop.Name, shop.When(startsAt))
}

func setCheckoutParams(id uuid.UUID, co Checkout, now time.Time) db.BookingSetCheckoutParams {
	p := db.BookingSetCheckoutParams{
		ID: id, Now: now.UTC(), ExpiresAt: co.ExpiresAt.UTC(),
	}
	p.SessionID.String, p.SessionID.Valid = co.SessionID, true
	p.PaymentUrl.String, p.PaymentUrl.Valid = co.URL, true
	if co.PaymentIntentID != "" {
		p.PaymentIntentID.String, p.PaymentIntentID.Valid = co.PaymentIntentID, true
	}
	return p
}

var errRollback = errors.New("slots: roll back")

func isUniqueViolation(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && pg.Code == "23505"
}
