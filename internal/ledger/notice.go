package ledger

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/inbox"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// A booked customer must learn of it. The answer to their YES normally tells them (the
// TwiML carries the link or the confirmation), and the handler records that it was
// written back to Twilio in time (MarkTold). If it was not (the process died after the
// commit, the connection dropped, Twilio's 15 s passed), the booking sweep texts them
// the outcome, once, NoticeDelay after the booking.

// TellOnce records, in q's transaction, that the customer is being told of the booking,
// at now, and reports whether this is the first time: a caller about to text the booking
// (the inbound sweeper finishing a YES its handler never answered) texts only then,
// since the payment link, the notice or an earlier answer may have told the customer
// already. Like MarkTold it is a function over the caller's transaction, not a method:
// the callers (internal/inbound) change bookings only through it.
func TellOnce(ctx context.Context, q db.DBTX, bookingID uuid.UUID, now time.Time) (bool, error) {
	n, err := queries.BookingMarkTold(ctx, q, db.BookingMarkToldParams{ID: bookingID, Now: now.UTC()})
	if err != nil {
		return false, fmt.Errorf("mark booking %s told: %w", bookingID, err)
	}
	return n > 0, nil
}

// MarkTold records that the customers of these bookings have learnt of them, at now
// (their answers were written back in time). q may be a *pgbatch.Queue: the marks then
// go with the caller's own statements.
func MarkTold(ctx context.Context, q db.DBTX, now time.Time, bookingIDs ...uuid.UUID) error {
	if len(bookingIDs) == 0 {
		return nil
	}
	// In one order, so that concurrent marks lock the rows alike.
	ids := slices.Clone(bookingIDs)
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	if err := queries.BookingsMarkTold(ctx, q, db.BookingsMarkToldParams{Ids: ids, Now: now.UTC()}); err != nil {
		return fmt.Errorf("mark %d bookings told: %w", len(ids), err)
	}
	return nil
}

// Notify texts the customer the outcome of their booking if nothing told them yet: the
// payment link, or the confirmation when the shop takes no payment. A pending booking
// whose link is not made yet is left to EnsureCheckout, which texts the link itself.
func (s *Service) Notify(ctx context.Context, bookingID uuid.UUID) error {
	b, err := queries.BookingGet(ctx, s.pool, bookingID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get booking %s: %w", bookingID, err)
	}
	if b.CustomerToldAt != nil {
		return nil
	}
	pendingWithLink := b.Status == BookingPendingPayment && b.PaymentUrl.Valid
	confirmedAtOnce := b.Status == BookingConfirmed && b.StripeCheckoutSessionID.String == ""
	if !pendingWithLink && !confirmedAtOnce {
		// Still waiting for its link (EnsureCheckout texts it), paid (the customer used
		// the link), or over.
		return nil
	}
	shop, op, customer, err := s.parties(ctx, b)
	if err != nil {
		return err
	}
	text := inbox.Outgoing{Key: "booking_notice:" + b.ID.String(), ShopID: shop.ID, From: shop.SMSNumber, To: customer.Phone, CustomerID: customer.ID}
	staff, err := staffName(ctx, s.pool, op)
	if err != nil {
		return err
	}
	text.Body = BookedText(wordsFor(shop, customer), shop, op.Service, staff, op.StartsAt, confirmedAtOnce, s.Link(b.ID, b.PaymentUrl.String), s.cfg.Now())
	text.NotAfter = op.StartsAt
	if pendingWithLink && b.CheckoutExpiresAt != nil {
		text.NotAfter = *b.CheckoutExpiresAt
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		n, err := queries.BookingMarkTold(ctx, tx, db.BookingMarkToldParams{ID: b.ID, Now: s.cfg.Now().UTC()})
		if err != nil {
			return fmt.Errorf("mark booking told: %w", err)
		}
		if n == 0 {
			return nil // the answer was recorded as delivered meanwhile
		}
		if _, err := s.queueText(ctx, tx, text); err != nil {
			return fmt.Errorf("enqueue booking notice: %w", err)
		}
		s.log.InfoContext(ctx, "booking notice texted: the answer may not have reached the customer", "booking_id", b.ID)
		return nil
	})
}

// parties reads what texting a booking's customer needs: the shop, the opening and the
// customer.
func (s *Service) parties(ctx context.Context, b db.Booking) (shops.Shop, db.SlotOpening, db.Customer, error) {
	shop, err := shops.Read(ctx, s.pool, b.ShopID)
	if err != nil {
		return shops.Shop{}, db.SlotOpening{}, db.Customer{}, err
	}
	op, err := queries.OpeningGet(ctx, s.pool, b.OpeningID)
	if err != nil {
		return shops.Shop{}, db.SlotOpening{}, db.Customer{}, fmt.Errorf("get opening: %w", err)
	}
	customer, err := queries.CustomerGet(ctx, s.pool, b.CustomerID)
	if err != nil {
		return shops.Shop{}, db.SlotOpening{}, db.Customer{}, fmt.Errorf("get customer: %w", err)
	}
	return shop, op, customer, nil
}
