package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/payments"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// Terms are what a booking's payment page asked and showed (issue 48): how much it
// charged at the YES (the price, a deposit, or nothing with only the card kept),
// whether it kept the card, and the cancellation policy with its fees; and, once the
// customer completed the page, their acceptance. They are fixed with the first checkout
// and kept through the customer's erasure (they name no one).
type Terms struct {
	BookingID uuid.UUID
	// Mode is the shop's payment mode then: checkout, deposit or card.
	Mode         string
	PriceCents   int64
	ChargedCents int64
	KeepCard     bool
	// PolicyVersion, PolicyText and PolicySHA256 name the policy shown.
	PolicyVersion int
	PolicyText    string
	PolicySHA256  string
	// LateCancelHours, NoShowFeeCents and LateCancelFeeCents are the policy's terms, as
	// accepted: what a later fee charges, whatever the shop changed since.
	LateCancelHours    int
	NoShowFeeCents     int64
	LateCancelFeeCents int64
	// CheckoutSession and AcceptedAt record the acceptance (nil AcceptedAt: the page
	// was not completed). AcceptedIP and AcceptedUserAgent are empty: Stripe's Checkout
	// reports neither for a completed session.
	CheckoutSession               string
	AcceptedAt                    *time.Time
	AcceptedIP, AcceptedUserAgent string
}

// DepositCents is the deposit a deposit booking took (0 for other modes).
func (t Terms) DepositCents() int64 {
	if t.Mode != shops.PaymentDeposit {
		return 0
	}
	return t.ChargedCents
}

// BalanceCents is what is left for the visit of a deposit booking (0 for other modes).
func (t Terms) BalanceCents() int64 {
	if t.Mode != shops.PaymentDeposit {
		return 0
	}
	return t.PriceCents - t.ChargedCents
}

func termsOf(r db.BookingTerm) Terms {
	return Terms{
		BookingID: r.BookingID, Mode: r.Mode, PriceCents: r.PriceCents, ChargedCents: r.ChargedCents, KeepCard: r.KeepCard,
		PolicyVersion: int(r.PolicyVersion), PolicyText: r.PolicyText, PolicySHA256: r.PolicySha256,
		LateCancelHours: int(r.LateCancelHours), NoShowFeeCents: r.NoShowFeeCents, LateCancelFeeCents: r.LateCancelFeeCents,
		CheckoutSession: r.CheckoutSession.String, AcceptedAt: r.AcceptedAt,
		AcceptedIP: r.AcceptedIp.String, AcceptedUserAgent: r.AcceptedUserAgent.String,
	}
}

// protects reports whether shop's payment page has terms to record: anything beyond
// today's plain checkout (a deposit, a card only, a kept card, a policy or a fee). A
// plain checkout shop's YES writes nothing more than before.
func protects(shop shops.Shop) bool {
	p := shop.Protection
	return shop.PaymentMode == shops.PaymentDeposit || shop.PaymentMode == shops.PaymentCard || shop.KeepsCard() ||
		p.Policy != "" || p.NoShowFeeCents > 0 || p.LateCancelFeeCents > 0
}

// fixTerms returns booking b's terms, fixing them from shop's settings the first time
// (BookingTermsFix): every later checkout attempt of b asks for what the first did.
// ok is false for a shop without protection (no terms: the plain checkout).
func (s *Service) fixTerms(ctx context.Context, shop shops.Shop, b db.Booking) (Terms, bool, error) {
	if !protects(shop) {
		return Terms{}, false, nil
	}
	p := shop.Protection
	mode := shop.PaymentMode
	if mode == shops.PaymentNone {
		mode = shops.PaymentCheckout // a booking of a shop switched since: charged as a checkout
	}
	row, err := queries.BookingTermsFix(ctx, s.pool, db.BookingTermsFixParams{
		BookingID: b.ID, ShopID: b.ShopID, Mode: mode, PriceCents: b.AmountCents, ChargedCents: shop.Charge(b.AmountCents),
		KeepCard: shop.KeepsCard(), PolicyVersion: int32(p.PolicyVersion), PolicyText: p.Policy,
		PolicySha256: shops.PolicySHA256(p.Policy), LateCancelHours: int32(p.LateCancelHours),
		NoShowFeeCents: p.NoShowFeeCents, LateCancelFeeCents: p.LateCancelFeeCents, Now: s.cfg.Now().UTC(),
	})
	if err != nil {
		return Terms{}, false, fmt.Errorf("fix terms of booking %s: %w", b.ID, err)
	}
	return termsOf(row), true, nil
}

// checkoutTerms sets what r asks of the customer from terms t.
func checkoutTerms(r *payments.CheckoutRequest, t Terms) {
	r.AmountCents, r.KeepCard, r.Policy = t.ChargedCents, t.KeepCard, t.PolicyText
	if t.Mode == shops.PaymentCard {
		// Nothing charged, so no application fee either.
		r.Mode, r.AmountCents, r.KeepCard, r.FeeBPS = payments.CheckoutCardOnly, 0, true, 0
	}
}

// BookingTerms returns the shop's booking's terms; ok false when it has none (a plain
// checkout, a shop without payments, or no checkout made yet).
func BookingTerms(ctx context.Context, q db.DBTX, bookingID uuid.UUID) (Terms, bool, error) {
	row, err := queries.BookingTermsGet(ctx, q, bookingID)
	if errors.Is(err, pgx.ErrNoRows) {
		return Terms{}, false, nil
	}
	if err != nil {
		return Terms{}, false, fmt.Errorf("read terms of booking %s: %w", bookingID, err)
	}
	return termsOf(row), true, nil
}

// accept records, in the confirming transaction, that the customer completed the
// payment page showing booking id's terms (through checkout sessionID).
func accept(ctx context.Context, tx pgx.Tx, id uuid.UUID, sessionID string, now time.Time) error {
	p := db.BookingTermsAcceptParams{BookingID: id, Now: now.UTC()}
	p.CheckoutSession.String, p.CheckoutSession.Valid = sessionID, sessionID != ""
	if err := queries.BookingTermsAccept(ctx, tx, p); err != nil {
		return fmt.Errorf("record acceptance of booking %s: %w", id, err)
	}
	return nil
}

// Protection is a booking's no-show protection as the owner sees it: its terms (the
// acceptance record; nil for a booking without) and its fee (nil for none).
type Protection struct {
	BookingID   uuid.UUID
	Status      string
	AmountCents int64
	Currency    string
	Terms       *Terms
	Fee         *Fee
}

// BookingProtection returns the shop's booking's protection; ErrBookingNotFound for
// another shop's booking or none.
func (s *Service) BookingProtection(ctx context.Context, shopID, bookingID uuid.UUID) (Protection, error) {
	q := s.pool
	b, err := queries.BookingGet(ctx, q, bookingID)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && b.ShopID != shopID {
		return Protection{}, ErrBookingNotFound
	}
	if err != nil {
		return Protection{}, fmt.Errorf("get booking %s: %w", bookingID, err)
	}
	out := Protection{BookingID: b.ID, Status: b.Status, AmountCents: b.AmountCents, Currency: b.Currency}
	t, ok, err := BookingTerms(ctx, q, bookingID)
	if err != nil {
		return Protection{}, err
	}
	if ok {
		out.Terms = &t
	}
	if out.Fee, err = BookingFee(ctx, q, bookingID); err != nil {
		return Protection{}, err
	}
	return out, nil
}
