package shops

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/problem"
)

// MaxPlatformFeeBPS is the most a shop's platform fee may be: half of each payment.
const MaxPlatformFeeBPS = 5000

// StripeAccount is a shop's connected Stripe account (STRIPE_CONNECT=on), as the
// platform last heard of it: from the account's own events (account.updated,
// account.application.deauthorized) or a read after onboarding.
type StripeAccount struct {
	// Required is true when the server takes checkout shops' payments on their own
	// connected accounts (STRIPE_CONNECT=on). The Service sets it, from its Config, on
	// every shop it returns; a Shop mapped by FromRow alone leaves it false.
	Required bool
	// DefaultFeeBPS is the server's platform fee (PLATFORM_FEE_BPS) with Connect on, 0
	// off; set by the Service like Required. Shop.PlatformFee says the shop's own.
	DefaultFeeBPS int
	// ID is the connected account's id; "" when the shop never connected one.
	ID string
	// ChargesEnabled: the account can take payments.
	ChargesEnabled bool
	// PayoutsEnabled: Stripe can pay the account's balance out to the shop's bank.
	PayoutsEnabled bool
	// DetailsSubmitted: the owner finished Stripe's onboarding form.
	DetailsSubmitted bool
	// RequirementsDue lists what Stripe still needs from the owner now, in Stripe's
	// words (e.g. "external_account").
	RequirementsDue []string
	// StatusAt is the time of the state stored (the event's, or the read's); nil before
	// any.
	StatusAt *time.Time
	// DisconnectedAt is when the owner disconnected the account from the platform; the
	// platform can no longer charge on it, and the shop must connect again.
	DisconnectedAt *time.Time
}

// Connected reports whether the shop has an account the platform can act on: one was
// created and not disconnected since.
func (a StripeAccount) Connected() bool { return a.ID != "" && a.DisconnectedAt == nil }

// Ready reports whether the account can take payments now.
func (a StripeAccount) Ready() bool { return a.Connected() && a.ChargesEnabled }

// ErrStripeAccountNotReady is the code of the answer to a checkout opening declared by
// a shop whose connected account cannot take payments.
const ErrStripeAccountNotReady = "stripe_account_not_ready"

// howToConnect is the part of every "not ready" message that says what to do.
const howToConnect = "connect Stripe from the dashboard's settings page (or POST /api/shop/stripe/onboarding for a Stripe onboarding link)"

// CheckoutReady says whether the shop can declare an opening its customers pay for: nil
// when it takes no payments, when the server charges on its own account (Connect off),
// or when the shop's connected account can take payments; otherwise a Conflict problem
// (code stripe_account_not_ready) that says what the owner must do. Holds already made
// are not its business: they run their course.
func (s Shop) CheckoutReady() error {
	a := s.Stripe
	if !s.UsesCheckout() || !a.Required || a.Ready() {
		return nil
	}
	var msg string
	switch {
	case a.ID == "":
		msg = "this shop's customers pay the shop's own Stripe account, and none is connected yet: " + howToConnect + ", then declare the opening"
	case a.DisconnectedAt != nil:
		msg = "this shop's Stripe account was disconnected from the platform, so it cannot take payments: " + howToConnect + " again, then declare the opening"
	default:
		msg = "Stripe has not enabled payments on this shop's account yet: finish the Stripe setup (" + howToConnect + ")"
		if len(a.RequirementsDue) > 0 {
			msg += "; Stripe still needs: " + strings.Join(a.RequirementsDue, ", ")
		}
	}
	return problem.New(problem.Conflict, ErrStripeAccountNotReady, msg)
}

// FeeBPS is the platform's fee on the shop's payments, in basis points: the admin's
// setting for the shop, else def (the server's default).
func (s Shop) FeeBPS(def int) int {
	if s.PlatformFeeBPS != nil {
		return *s.PlatformFeeBPS
	}
	return def
}

// PlatformFee is the platform's fee on the shop's payments as the Service knows it:
// the admin's for the shop, else the server's default; 0 without Connect.
func (s Shop) PlatformFee() int {
	if !s.Stripe.Required {
		return 0
	}
	return s.FeeBPS(s.Stripe.DefaultFeeBPS)
}

// SetPlatformFee sets the platform's fee on a shop's payments, in basis points (0 to
// MaxPlatformFeeBPS); nil returns the shop to the server's default. Only the admin may
// (the caller checks); it applies to payment links made from then on.
func (s *Service) SetPlatformFee(ctx context.Context, id uuid.UUID, bps *int) (Shop, error) {
	var p pgtype.Int4
	if bps != nil {
		if *bps < 0 || *bps > MaxPlatformFeeBPS {
			return Shop{}, problem.Invalidf("platform_fee_bps", "platform_fee_bps must be a whole number of basis points from 0 to %d (100 is 1%%), or null for the server's default", MaxPlatformFeeBPS)
		}
		p = pgtype.Int4{Int32: int32(*bps), Valid: true}
	}
	row, err := queries.ShopSetPlatformFee(ctx, s.pool, db.ShopSetPlatformFeeParams{ID: id, PlatformFeeBps: p})
	if errors.Is(err, pgx.ErrNoRows) {
		return Shop{}, ErrShopNotFound
	}
	if err != nil {
		return Shop{}, fmt.Errorf("set platform fee of shop %s: %w", id, err)
	}
	return s.fromRow(row)
}

// StripeStatus is a connected account's state, to store on its shop.
type StripeStatus struct {
	ChargesEnabled, PayoutsEnabled, DetailsSubmitted bool
	RequirementsDue                                  []string
}

// LockOnboarding takes, in the caller's transaction, the fence of a shop's onboarding: a
// second onboarding of the same shop waits until the first commits, then reads the
// account the first stored, so concurrent requests create one account. It locks nothing
// else (not the shop's row, which every booking's foreign key reads), and it ends with
// the transaction.
func LockOnboarding(ctx context.Context, tx pgx.Tx, shopID uuid.UUID) error {
	if err := queries.ShopLockOnboarding(ctx, tx, shopID); err != nil {
		return fmt.Errorf("lock onboarding of shop %s: %w", shopID, err)
	}
	return nil
}

// SetStripeAccount stores a shop's new connected account and its state at `at`, in the
// caller's transaction (under LockOnboarding). It replaces a disconnected one; it returns
// the shop as stored.
func SetStripeAccount(ctx context.Context, tx pgx.Tx, shopID uuid.UUID, account string, st StripeStatus, at time.Time) (Shop, error) {
	row, err := queries.ShopSetStripeAccount(ctx, tx, db.ShopSetStripeAccountParams{
		ID: shopID, Account: pgtype.Text{String: account, Valid: true},
		ChargesEnabled: st.ChargesEnabled, PayoutsEnabled: st.PayoutsEnabled, DetailsSubmitted: st.DetailsSubmitted,
		RequirementsDue: requirements(st.RequirementsDue), At: statusTime(at),
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return Shop{}, ErrShopNotFound
	}
	if err != nil {
		return Shop{}, fmt.Errorf("store stripe account of shop %s: %w", shopID, err)
	}
	return FromRow(&row)
}

// UpdateStripeStatus stores the state of the connected account `account` as it was at
// `at` (an account.updated event's time, or a read's), on whichever shop holds it. An
// older state than the one stored is ignored (events arrive out of order), and so is an
// account no shop holds. It reports the shop it updated (uuid.Nil for none).
func UpdateStripeStatus(ctx context.Context, q db.DBTX, account string, st StripeStatus, at time.Time) (uuid.UUID, error) {
	id, err := queries.ShopUpdateStripeStatus(ctx, q, db.ShopUpdateStripeStatusParams{
		Account: pgtype.Text{String: account, Valid: true}, ChargesEnabled: st.ChargesEnabled, PayoutsEnabled: st.PayoutsEnabled,
		DetailsSubmitted: st.DetailsSubmitted, RequirementsDue: requirements(st.RequirementsDue), At: statusTime(at),
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, nil
	}
	if err != nil {
		return uuid.Nil, fmt.Errorf("update stripe account %s: %w", account, err)
	}
	return id, nil
}

// DisconnectStripe records that the connected account `account` was disconnected from
// the platform at `at` (account.application.deauthorized): its shop takes no new
// checkout openings until it connects another account; holds already made run their
// course. It reports the shop (uuid.Nil when no shop holds the account, or it was
// recorded already).
func DisconnectStripe(ctx context.Context, q db.DBTX, account string, at time.Time) (uuid.UUID, error) {
	id, err := queries.ShopDisconnectStripe(ctx, q, db.ShopDisconnectStripeParams{
		Account: pgtype.Text{String: account, Valid: true}, At: statusTime(at),
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, nil
	}
	if err != nil {
		return uuid.Nil, fmt.Errorf("disconnect stripe account %s: %w", account, err)
	}
	return id, nil
}

// statusTime is the time a state is stored at: whole seconds, as Stripe times its
// events. A state read back at 12:00:00.7 and an event created "12:00:00" are then equal,
// and the event (Stripe's word on what changed) is applied rather than taken for an
// older state.
func statusTime(at time.Time) time.Time {
	return at.UTC().Truncate(time.Second)
}

// maxRequirements bounds what is stored of an account's requirements: Stripe lists a
// few dozen at most.
const maxRequirements = 100

func requirements(due []string) []string {
	if due == nil {
		return []string{}
	}
	return due[:min(len(due), maxRequirements)]
}
