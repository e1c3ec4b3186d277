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
	"github.com/slotrecovery/slotrecovery/internal/pgvalue"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
)

// Shops' connected accounts (STRIPE_CONNECT=on): the onboarding that makes one, and the
// provider's account events that keep its state on the shop current. The shop's row is
// shops'; the ledger, which holds the payment provider, asks it to store what the
// provider says.

// ErrConnectOff answers an onboarding on a server that takes every payment on its own
// account (STRIPE_CONNECT off): there is nothing to connect.
var ErrConnectOff = problem.New(problem.Conflict, "stripe_connect_off",
	"this server takes every payment on its own Stripe account (STRIPE_CONNECT is off): shops have no Stripe account of their own to connect")

// errProviderDown answers an onboarding the provider could not serve.
var errProviderDown = problem.New(problem.Unavailable, "stripe_unavailable",
	"Stripe did not answer as expected; try again in a moment")

// Onboard returns a fresh link to the provider's onboarding of the shop's connected
// account, for its owner to open now (links expire within minutes and work once). The
// account is created the first time (of the configured type), and again only after the
// shop's account was disconnected; every later call reuses it. Concurrent calls for one
// shop create one account: they queue on a per-shop fence in Postgres
// (shops.LockOnboarding) and the second finds the account the first stored; the
// provider's idempotency key per shop is the second fence, should the first attempt's
// answer have been lost.
func (s *Service) Onboard(ctx context.Context, shopID uuid.UUID) (payments.AccountLink, error) {
	if !s.cfg.Connect {
		return payments.AccountLink{}, ErrConnectOff
	}
	if s.provider == nil {
		return payments.AccountLink{}, errUnconfigured
	}
	shop, err := shops.Read(ctx, s.pool, shopID)
	if err != nil {
		return payments.AccountLink{}, err
	}
	account := shop.Stripe
	if !account.Connected() {
		if account, err = s.createAccount(ctx, shopID); err != nil {
			return payments.AccountLink{}, err
		}
	}
	cctx, cancel := context.WithTimeout(ctx, s.cfg.ProviderTimeout)
	defer cancel()
	link, err := s.provider.CreateAccountLink(cctx, payments.AccountLinkRequest{
		Account: account.ID, RefreshURL: s.cfg.OnboardingRefreshURL, ReturnURL: s.cfg.OnboardingReturnURL,
	})
	if err != nil {
		return payments.AccountLink{}, s.providerProblem(ctx, "make onboarding link", shopID, err)
	}
	return link, nil
}

// createAccount creates and stores the shop's connected account, under the shop's
// onboarding fence, unless another onboarding stored one first.
func (s *Service) createAccount(ctx context.Context, shopID uuid.UUID) (shops.StripeAccount, error) {
	var out shops.StripeAccount
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := shops.LockOnboarding(ctx, tx, shopID); err != nil {
			return err
		}
		cur, err := shops.Read(ctx, tx, shopID)
		if err != nil {
			return err
		}
		if cur.Stripe.Connected() {
			out = cur.Stripe // made by the onboarding this one waited for
			return nil
		}
		cctx, cancel := context.WithTimeout(ctx, s.cfg.ProviderTimeout)
		defer cancel()
		a, err := s.provider.CreateAccount(cctx, payments.AccountRequest{
			ShopID: shopID.String(), Type: s.cfg.ConnectAccountType, Replaces: cur.Stripe.ID,
		})
		if err != nil {
			return s.providerProblem(ctx, "create connected account", shopID, err)
		}
		stored, err := shops.SetStripeAccount(ctx, tx, shopID, a.ID, stripeStatus(a), s.cfg.Now())
		if err != nil {
			return err
		}
		s.log.InfoContext(ctx, "connected account created", "shop_id", shopID, "account", a.ID, "replaces", cur.Stripe.ID)
		out = stored.Stripe
		return nil
	})
	return out, err
}

// RefreshAccount reads the shop's connected account back from the provider and stores
// its state: an owner back from the onboarding sees where it stands at once, without
// waiting for the account's event. It does nothing for a shop without a connected
// account.
func (s *Service) RefreshAccount(ctx context.Context, shopID uuid.UUID) error {
	if !s.cfg.Connect || s.provider == nil {
		return nil
	}
	shop, err := shops.Read(ctx, s.pool, shopID)
	if err != nil {
		return err
	}
	if !shop.Stripe.Connected() {
		return nil
	}
	now := s.cfg.Now()
	cctx, cancel := context.WithTimeout(ctx, s.cfg.ProviderTimeout)
	defer cancel()
	a, err := s.provider.GetAccount(cctx, shop.Stripe.ID)
	if err != nil {
		return s.providerProblem(ctx, "read connected account", shopID, err)
	}
	if _, err := shops.UpdateStripeStatus(ctx, s.pool, a.ID, stripeStatus(a), now); err != nil {
		return err
	}
	return nil
}

// providerProblem logs a provider's failure to serve an owner's request and answers it
// as a problem the owner can act on (try again), never with the provider's own text.
func (s *Service) providerProblem(ctx context.Context, what string, shopID uuid.UUID, err error) error {
	if p, ok := problem.As(err); ok {
		return p
	}
	s.log.WarnContext(ctx, what+" failed", "shop_id", shopID, "transient", payments.Transient(err), "err", err)
	return fmt.Errorf("%s for shop %s: %w", what, shopID, errors.Join(errProviderDown, err))
}

func stripeStatus(a payments.Account) shops.StripeStatus {
	return shops.StripeStatus{
		ChargesEnabled: a.ChargesEnabled, PayoutsEnabled: a.PayoutsEnabled, DetailsSubmitted: a.DetailsSubmitted,
		RequirementsDue: a.RequirementsDue,
	}
}

// accountChanged stores a connected account's new state on its shop, or its
// disconnection, and the event's result, in one transaction under the event's row lock
// (a redelivery waits and answers with the stored result). The event's creation time
// orders the states: an older one arriving late changes nothing.
//
// A disconnection also cancels the shop's open openings, in the same transaction
// (slots.CancelOpen: their waves stop, opening.cancelled is recorded): a YES to one of
// them would be told "yours!" and then that the hold lapsed, since no payment link can
// be made on an account that left. Holds already made run their course, and a hold that
// lapses now expires its opening instead of reopening it (failed). The shop's row is
// updated (and so locked) before the openings are listed: a declaration, which reads the
// row FOR SHARE before it inserts (shops.ReadForShare), either commits first and its
// opening is cancelled here, or waits and is refused (the account is disconnected).
func (s *Service) accountChanged(ctx context.Context, ev payments.Event, now time.Time) (EventResult, error) {
	st := ev.AccountState
	if st == nil || st.ID == "" {
		return s.settle(ctx, ev.ID, ResultIgnoredType)
	}
	at := ev.Created
	if at.IsZero() {
		at = now
	}
	var out EventResult
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		stored, err := queries.StripeEventLock(ctx, tx, ev.ID)
		if err != nil {
			return fmt.Errorf("lock payment event %s: %w", ev.ID, err)
		}
		if stored.Result.Valid {
			out = EventResult{Result: Result(stored.Result.String), Replayed: true}
			return nil
		}
		var shopID uuid.UUID
		res := ResultAccountUpdated
		if st.Disconnected {
			res = ResultAccountDisconnected
			shopID, err = shops.DisconnectStripe(ctx, tx, st.ID, at)
			if err == nil && shopID != uuid.Nil {
				err = s.cancelUnpayable(ctx, tx, shopID, now)
			}
		} else {
			shopID, err = shops.UpdateStripeStatus(ctx, tx, st.ID, stripeStatus(*st), at)
		}
		if err != nil {
			return err
		}
		if shopID == uuid.Nil {
			res = ResultAccountIgnored
		} else {
			s.log.InfoContext(ctx, "connected account changed", "shop_id", shopID, "account", st.ID,
				"charges_enabled", st.ChargesEnabled, "disconnected", st.Disconnected)
		}
		out = EventResult{Result: res}
		_, err = queries.StripeEventSetResult(ctx, tx, db.StripeEventSetResultParams{EventID: ev.ID, Result: pgvalue.TextOrNull(string(res)), Now: now.UTC()})
		return err
	})
	if err != nil {
		return EventResult{}, fmt.Errorf("apply account event %s (%s): %w", ev.ID, st.ID, err)
	}
	return out, nil
}

// cancelUnpayable cancels the open openings of a checkout shop whose payment account was
// just disconnected (see accountChanged); a shop whose customers pay nothing keeps them.
func (s *Service) cancelUnpayable(ctx context.Context, tx pgx.Tx, shopID uuid.UUID, now time.Time) error {
	shop, err := shops.Read(ctx, tx, shopID)
	if err != nil {
		return err
	}
	if !shop.UsesCheckout() {
		return nil
	}
	cancelled, err := slots.CancelOpen(ctx, tx, shopID, now)
	if err != nil {
		return err
	}
	if len(cancelled) > 0 {
		s.log.InfoContext(ctx, "open openings cancelled: the shop's payment account was disconnected",
			"shop_id", shopID, "openings", len(cancelled))
	}
	return nil
}
