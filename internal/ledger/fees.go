package ledger

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/inbox"
	"github.com/slotrecovery/slotrecovery/internal/payments"
	"github.com/slotrecovery/slotrecovery/internal/pgvalue"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// FeeCharger charges fees to cards kept by completed checkouts, on the shop's connected
// account (*stripe.Client implements it). The ledger's PaymentProvider is asked for it:
// a provider without it keeps no cards.
type FeeCharger interface {
	// KeptCard reads back the card checkout sessionID on account kept;
	// payments.ErrNotFound when it kept none.
	KeptCard(ctx context.Context, account, sessionID string) (payments.KeptCard, error)
	// ChargeFee charges a fee off-session, once per booking and kind.
	ChargeFee(ctx context.Context, r payments.FeeRequest) (payments.FeeCharge, error)
}

// The states of a booking's fee (booking_fees.state): FeePending while it is being
// charged (or its charge failed for a reason a later click may not have), then the
// provider's outcome (payments.FeeOutcome's charged, requires_action, declined), or
// FeeNoCard when there is no kept card to charge.
const (
	FeePending        = "pending"
	FeeCharged        = string(payments.FeeCharged)
	FeeRequiresAction = string(payments.FeeRequiresAction)
	FeeDeclined       = string(payments.FeeDeclined)
	FeeNoCard         = "no_card"
)

// Fee is a booking's fee: at most one per booking, whatever its kind.
type Fee struct {
	Kind        payments.FeeKind
	State       string
	AmountCents int64
	Currency    string
	// PaymentIntentID is the provider's payment of the fee; DeclineCode and Message
	// the provider's reason for a decline (for the owner).
	PaymentIntentID      string
	DeclineCode, Message string
	ApplicationFeeCents  int64
	At                   time.Time
}

func feeOf(r db.BookingFee) *Fee {
	return &Fee{Kind: payments.FeeKind(r.Kind), State: r.State, AmountCents: r.AmountCents, Currency: r.Currency,
		PaymentIntentID: r.PaymentIntentID.String, DeclineCode: r.DeclineCode, Message: r.Message,
		ApplicationFeeCents: r.ApplicationFeeCents, At: r.UpdatedAt}
}

// BookingFee returns booking id's fee, nil when it has none.
func BookingFee(ctx context.Context, q db.DBTX, id uuid.UUID) (*Fee, error) {
	r, err := queries.BookingFeeGet(ctx, q, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read fee of booking %s: %w", id, err)
	}
	return feeOf(r), nil
}

// claimFee records, in tx, that booking b owes a fee of kind under its accepted terms,
// once: nil when the terms have no such fee (or none were recorded), else the booking's
// one fee (the first claim's, whatever kind a later one asks). A booking whose page did
// not keep a card, or was never completed, owes it with nothing to charge (FeeNoCard).
func (s *Service) claimFee(ctx context.Context, tx pgx.Tx, shopID, bookingID uuid.UUID, status, currency string, kind payments.FeeKind, now time.Time) (*Fee, error) {
	t, ok, err := BookingTerms(ctx, tx, bookingID)
	if err != nil {
		return nil, err
	}
	amount := t.NoShowFeeCents
	if kind == payments.FeeLateCancel {
		amount = t.LateCancelFeeCents
	}
	if !ok || amount <= 0 {
		return BookingFee(ctx, tx, bookingID)
	}
	state := FeePending
	if !t.KeepCard || t.AcceptedAt == nil || status != BookingConfirmed && status != BookingCancelled {
		state = FeeNoCard
	}
	r, err := queries.BookingFeeClaim(ctx, tx, db.BookingFeeClaimParams{
		BookingID: bookingID, ShopID: shopID, Kind: string(kind), State: state, AmountCents: amount, Currency: currency, Now: now.UTC(),
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return BookingFee(ctx, tx, bookingID)
	}
	if err != nil {
		return nil, fmt.Errorf("claim fee of booking %s: %w", bookingID, err)
	}
	return feeOf(r), nil
}

// chargeFee charges booking id's pending fee, if this caller wins the turn to
// (BookingFeeAttempt: one at a time; again only once an attempt is stale), and stores
// the provider's answer; it returns the fee as it then stands. A fee that is not
// pending, or whose turn is another's, is returned as it is. A failed call leaves it
// pending for a later click (the provider's idempotency key makes that one charge
// nothing twice).
func (s *Service) chargeFee(ctx context.Context, shop shops.Shop, id uuid.UUID, account, sessionID, service string, startsAt time.Time, w describer) (*Fee, error) {
	now := s.cfg.Now()
	r, err := queries.BookingFeeAttempt(ctx, s.pool, db.BookingFeeAttemptParams{BookingID: id, Now: now.UTC(), Stale: now.Add(-2 * s.cfg.ProviderTimeout).UTC()})
	if errors.Is(err, pgx.ErrNoRows) {
		return BookingFee(ctx, s.pool, id)
	}
	if err != nil {
		return nil, fmt.Errorf("take turn at fee of booking %s: %w", id, err)
	}
	// The card is the one the page the customer completed kept: the session their
	// acceptance names (a payment through an earlier session than the booking's latest
	// is applied all the same, see paid).
	if t, ok, err := BookingTerms(ctx, s.pool, id); err != nil {
		return feeOf(r), err
	} else if ok && t.CheckoutSession != "" {
		sessionID = t.CheckoutSession
	}
	fc, ok := s.provider.(FeeCharger)
	if !ok || account == "" || sessionID == "" {
		// No provider that keeps cards, or a checkout on the platform's own account
		// (Connect off), which keeps none.
		return s.settleFee(ctx, id, payments.FeeCharge{}, FeeNoCard)
	}
	callCtx, cancel := context.WithTimeout(ctx, s.cfg.ProviderTimeout)
	defer cancel()
	card, err := fc.KeptCard(callCtx, account, sessionID)
	if errors.Is(err, payments.ErrNotFound) {
		return s.settleFee(ctx, id, payments.FeeCharge{}, FeeNoCard)
	}
	if err != nil {
		return feeOf(r), fmt.Errorf("read kept card of booking %s: %w", id, err)
	}
	charge, err := fc.ChargeFee(callCtx, payments.FeeRequest{
		BookingID: id.String(), Kind: payments.FeeKind(r.Kind), Account: account, Card: card,
		AmountCents: r.AmountCents, Currency: r.Currency, FeeBPS: shop.FeeBPS(s.cfg.PlatformFeeBPS),
		Description: feeItem(w, payments.FeeKind(r.Kind), shop, service, startsAt),
	})
	if err != nil {
		return feeOf(r), fmt.Errorf("charge fee of booking %s: %w", id, err)
	}
	fee, err := s.settleFee(ctx, id, charge, string(charge.Outcome))
	if err == nil && fee != nil && fee.State == FeeRequiresAction {
		// The bank wants the customer: they are texted a page to pay it themselves.
		if err := s.askToPay(ctx, shop, id, account, fee); err != nil {
			s.log.WarnContext(ctx, "fee's payment page not texted", "booking_id", id, "err", err)
		}
	}
	return fee, err
}

// feePageLasts is how long a fee's own payment page stays open (Stripe's longest is 24
// hours).
const feePageLasts = 23 * time.Hour

// askToPay makes a payment page for booking id's fee, whose off-session charge the
// customer's bank wanted them to confirm (Stripe's authentication_required), on the
// shop's account with the platform's fee, and texts it to the customer, once. Its expiry
// comes from the fee's settlement, so a retry asks the provider for the same page.
func (s *Service) askToPay(ctx context.Context, shop shops.Shop, id uuid.UUID, account string, fee *Fee) error {
	b, err := queries.BookingGet(ctx, s.pool, id)
	if err != nil {
		return fmt.Errorf("get booking %s: %w", id, err)
	}
	_, op, customer, err := s.parties(ctx, b)
	if err != nil {
		return err
	}
	w := wordsFor(shop, customer)
	callCtx, cancel := context.WithTimeout(ctx, s.cfg.ProviderTimeout)
	defer cancel()
	expires := fee.At.Add(feePageLasts).UTC().Truncate(time.Second)
	co, err := s.provider.CreateCheckout(callCtx, payments.CheckoutRequest{
		BookingID: id.String(), AmountCents: fee.AmountCents, Currency: fee.Currency, Fee: fee.Kind,
		Description: feeItem(w, fee.Kind, shop, op.Service, op.StartsAt), Locale: string(w.Language()), ExpiresAt: expires,
		SuccessURL: s.cfg.CheckoutSuccessURL, CancelURL: s.cfg.CheckoutCancelURL,
		Account: account, FeeBPS: shop.FeeBPS(s.cfg.PlatformFeeBPS),
	})
	if err != nil {
		return fmt.Errorf("create fee page of booking %s: %w", id, err)
	}
	now := s.cfg.Now()
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		n, err := queries.BookingFeeSetPayURL(ctx, tx, db.BookingFeeSetPayURLParams{BookingID: id, PayUrl: pgvalue.TextOrNull(co.URL), Now: now.UTC()})
		if err != nil {
			return fmt.Errorf("store fee page of booking %s: %w", id, err)
		}
		if n == 0 {
			return nil // texted before
		}
		_, err = s.queueText(ctx, tx, inbox.Outgoing{
			Key: "fee_pay:" + id.String(), ShopID: shop.ID, From: shop.SMSNumber, To: customer.Phone, CustomerID: customer.ID,
			Body:     w.FeePayLink(&shop, op.Service, op.StartsAt, w.Amount(fee.AmountCents, fee.Currency), co.URL),
			NotAfter: expires,
		})
		if err != nil {
			return fmt.Errorf("enqueue fee page text: %w", err)
		}
		return nil
	})
}

// feePaid applies the provider's report that a fee's payment succeeded (the customer
// paid it on the page askToPay texted, or a charge settled): the fee is charged. Only
// the account that took the booking's payment reports on its fee.
func (s *Service) feePaid(ctx context.Context, ev payments.Event) (EventResult, error) {
	id, err := uuid.Parse(ev.BookingID)
	if err != nil {
		return s.settle(ctx, ev.ID, ResultUnknownBooking)
	}
	b, err := queries.BookingGet(ctx, s.pool, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return s.settle(ctx, ev.ID, ResultUnknownBooking)
	}
	if err != nil {
		return EventResult{}, fmt.Errorf("get booking %s: %w", id, err)
	}
	if !tookPayment(b, &ev.Account) {
		return s.wrongAccount(ctx, ev)
	}
	if ev.Kind != payments.EventFeeCharged {
		// A failed attempt of the customer's own: the page stays for another card, and
		// the fee stays as it was answered.
		return s.settle(ctx, ev.ID, ResultFeeUnchanged)
	}
	_, err = queries.BookingFeePaid(ctx, s.pool, db.BookingFeePaidParams{
		BookingID: id, Kind: string(ev.Fee), PaymentIntentID: pgvalue.TextOrNull(ev.PaymentIntentID), Now: s.cfg.Now().UTC(),
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return s.settle(ctx, ev.ID, ResultFeeUnchanged)
	}
	if err != nil {
		return EventResult{}, fmt.Errorf("record fee of booking %s paid: %w", id, err)
	}
	return s.settle(ctx, ev.ID, ResultFeeCharged)
}

// describer words a fee's payment (texts.Words).
type describer interface {
	NoShowFeeItem(shop *shops.Shop, service string, startsAt time.Time) string
	LateCancelFeeItem(shop *shops.Shop, service string, startsAt time.Time) string
}

func feeItem(w describer, kind payments.FeeKind, shop shops.Shop, service string, startsAt time.Time) string {
	if kind == payments.FeeLateCancel {
		return w.LateCancelFeeItem(&shop, service, startsAt)
	}
	return w.NoShowFeeItem(&shop, service, startsAt)
}

// maxFeeMessage is booking_fees.message's limit.
const maxFeeMessage = 500

func (s *Service) settleFee(ctx context.Context, id uuid.UUID, c payments.FeeCharge, state string) (*Fee, error) {
	msg := c.Message
	if len(msg) > maxFeeMessage {
		msg = strings.ToValidUTF8(msg[:maxFeeMessage], "")
	}
	r, err := queries.BookingFeeSettle(ctx, s.pool, db.BookingFeeSettleParams{
		BookingID: id, State: state, PaymentIntentID: pgvalue.TextOrNull(c.PaymentIntentID),
		DeclineCode: c.DeclineCode, Message: msg, ApplicationFeeCents: c.ApplicationFeeCents, Now: s.cfg.Now().UTC(),
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return BookingFee(ctx, s.pool, id)
	}
	if err != nil {
		return nil, fmt.Errorf("store fee of booking %s: %w", id, err)
	}
	return feeOf(r), nil
}

// FeesOf returns the fees of some of a shop's bookings, by booking (the dashboard's
// list of filled slots shows them).
func (s *Service) FeesOf(ctx context.Context, shopID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]*Fee, error) {
	out := map[uuid.UUID]*Fee{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := queries.BookingFeesOfShop(ctx, s.pool, db.BookingFeesOfShopParams{ShopID: shopID, Ids: ids})
	if err != nil {
		return nil, fmt.Errorf("read fees of shop %s: %w", shopID, err)
	}
	for _, r := range rows {
		out[r.BookingID] = feeOf(r)
	}
	return out, nil
}
