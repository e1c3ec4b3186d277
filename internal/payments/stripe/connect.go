package stripe

import (
	"context"
	"fmt"
	"strings"

	stripego "github.com/stripe/stripe-go/v76"

	"github.com/slotrecovery/slotrecovery/internal/payments"
)

// Stripe Connect: shops' connected accounts, their onboarding links, and the
// platform's application fee on their direct charges.

// maxFeeBPS is the most basis points a fee can be: the whole payment. The server's own
// cap (half the payment) is its configuration's; this one only refuses nonsense.
const maxFeeBPS = 10_000

// feeStep returns the multiple of the smallest unit Stripe accepts an amount in, for
// currency (lower case): three-decimal currencies (BHD, JOD, KWD, OMR, TND) need
// amounts ending in 0, and ISK and UGX, counted in hundredths, whole units.
func feeStep(currency string) int64 {
	switch currency {
	case "bhd", "jod", "kwd", "omr", "tnd":
		return 10
	case "isk", "ugx":
		return 100
	}
	return 1
}

// ApplicationFee is the platform's fee on a payment of amount (in currency's smallest
// unit) at bps basis points: amount × bps / 10,000 rounded half up, to the nearest
// amount Stripe accepts in the currency (a multiple of 10 in three-decimal currencies,
// of 100 in ISK and UGX; zero-decimal currencies such as JPY need nothing more). It is
// never negative and always less than amount: a fee that would take the whole payment
// leaves the shop something (the largest acceptable amount below it).
func ApplicationFee(amount int64, currency string, bps int) int64 {
	if amount <= 0 || bps <= 0 {
		return 0
	}
	step := feeStep(strings.ToLower(currency))
	// In units of step/10,000 of the smallest unit: one division, so the rounding
	// happens once (rounding to the unit and then to the step could round twice).
	unit := 10_000 * step
	fee := (amount*int64(min(bps, maxFeeBPS)) + unit/2) / unit * step
	if fee >= amount {
		fee = (amount - 1) / step * step
	}
	return fee
}

// accountTypes are the connected account types CreateAccount makes.
var accountTypes = map[string]bool{"standard": true, "express": true, "custom": true}

// validateAccount checks a connected account id ("" is the platform's own account). It
// goes into a header, so it must look like Stripe's ids and nothing more.
func validateAccount(account string) error {
	if account == "" {
		return nil
	}
	if !strings.HasPrefix(account, "acct_") || len(account) > 255 {
		return fmt.Errorf("%w: %q is not a connected account id (acct_…)", payments.ErrInvalid, account)
	}
	for _, r := range account {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return fmt.Errorf("%w: %q is not a connected account id (acct_…)", payments.ErrInvalid, account)
		}
	}
	return nil
}

// accountIdempotencyKey makes the creation of a shop's account happen once: concurrent
// or retried requests for the same shop get Stripe's first answer, the same account. A
// shop whose account was disconnected gets a new one, under a new key.
func accountIdempotencyKey(shopID, replaces string) string {
	key := "connect_account:" + shopID
	if replaces != "" {
		key += ":after:" + replaces
	}
	return key
}

// CreateAccount creates a connected account for a shop, of r.Type (standard, express
// or custom), with the shop's id in its metadata. Express and custom accounts are asked
// for the card_payments and transfers capabilities that direct charges need (a standard
// account has them from its own onboarding). The idempotency key is per shop (and the
// account it replaces), so two concurrent requests for a shop make one account.
func (c *Client) CreateAccount(ctx context.Context, r payments.AccountRequest) (payments.Account, error) {
	if r.ShopID == "" || len(r.ShopID) > maxBookingIDLen {
		return payments.Account{}, fmt.Errorf("create connected account: %w: shop id is required (at most %d bytes)", payments.ErrInvalid, maxBookingIDLen)
	}
	if !accountTypes[r.Type] {
		return payments.Account{}, fmt.Errorf("create connected account for shop %s: %w: type %q is not standard, express or custom", r.ShopID, payments.ErrInvalid, r.Type)
	}
	if err := validateAccount(r.Replaces); err != nil {
		return payments.Account{}, fmt.Errorf("create connected account for shop %s: %w", r.ShopID, err)
	}
	params := &stripego.AccountParams{Type: stripego.String(r.Type)}
	if r.Type != "standard" {
		params.Capabilities = &stripego.AccountCapabilitiesParams{
			CardPayments: &stripego.AccountCapabilitiesCardPaymentsParams{Requested: stripego.Bool(true)},
			Transfers:    &stripego.AccountCapabilitiesTransfersParams{Requested: stripego.Bool(true)},
		}
	}
	params.Context = ctx
	params.AddMetadata("shop_id", r.ShopID)
	params.SetIdempotencyKey(accountIdempotencyKey(r.ShopID, r.Replaces))
	a, err := c.api.Accounts.New(params)
	if err != nil {
		return payments.Account{}, fmt.Errorf("create connected account for shop %s: %w", r.ShopID, translate(err))
	}
	return accountOf(a), nil
}

// GetAccount reads a connected account's state back from Stripe.
func (c *Client) GetAccount(ctx context.Context, account string) (payments.Account, error) {
	if account == "" {
		return payments.Account{}, fmt.Errorf("get connected account: %w: account id is required", payments.ErrInvalid)
	}
	if err := validateAccount(account); err != nil {
		return payments.Account{}, fmt.Errorf("get connected account: %w", err)
	}
	params := &stripego.AccountParams{}
	params.Context = ctx
	a, err := c.api.Accounts.GetByID(account, params)
	if err != nil {
		return payments.Account{}, fmt.Errorf("get connected account %s: %w", account, translate(err))
	}
	return accountOf(a), nil
}

// CreateAccountLink makes a fresh, one-time link to Stripe's onboarding of a connected
// account (type account_onboarding, the only type a standard account takes). Links
// expire within minutes and work once: make one per visit, never store one.
func (c *Client) CreateAccountLink(ctx context.Context, r payments.AccountLinkRequest) (payments.AccountLink, error) {
	if r.Account == "" {
		return payments.AccountLink{}, fmt.Errorf("create account link: %w: account id is required", payments.ErrInvalid)
	}
	if err := validateAccount(r.Account); err != nil {
		return payments.AccountLink{}, fmt.Errorf("create account link: %w", err)
	}
	if !absoluteURL(r.RefreshURL) || !absoluteURL(r.ReturnURL) {
		return payments.AccountLink{}, fmt.Errorf("create account link for %s: %w: refresh and return urls must be absolute http(s) urls", r.Account, payments.ErrInvalid)
	}
	params := &stripego.AccountLinkParams{
		Account:    stripego.String(r.Account),
		Type:       stripego.String(string(stripego.AccountLinkTypeAccountOnboarding)),
		RefreshURL: stripego.String(r.RefreshURL),
		ReturnURL:  stripego.String(r.ReturnURL),
	}
	params.Context = ctx
	l, err := c.api.AccountLinks.New(params)
	if err != nil {
		return payments.AccountLink{}, fmt.Errorf("create account link for %s: %w", r.Account, translate(err))
	}
	return payments.AccountLink{URL: l.URL, ExpiresAt: unixTime(l.ExpiresAt)}, nil
}

func accountOf(a *stripego.Account) payments.Account {
	out := payments.Account{
		ID: a.ID, ChargesEnabled: a.ChargesEnabled, PayoutsEnabled: a.PayoutsEnabled, DetailsSubmitted: a.DetailsSubmitted,
	}
	if a.Requirements != nil {
		out.RequirementsDue = append([]string{}, a.Requirements.CurrentlyDue...)
	}
	return out
}
