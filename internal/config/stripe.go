package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// MaxPlatformFeeBPS caps PLATFORM_FEE_BPS and every shop's own fee: half the payment.
const MaxPlatformFeeBPS = 5000

// The connected account types STRIPE_CONNECT_ACCOUNT_TYPE accepts.
var connectAccountTypes = []string{"standard", "express", "custom"}

// loadStripe reads the platform's Stripe account and its webhook endpoint's secrets
// (the Connect settings are loadConnect's).
func (c *Config) loadStripe(get func(string) string, bad func(name, why string)) {
	c.StripeSecretKey = get("STRIPE_SECRET_KEY")
	c.StripeAPIURL = get("STRIPE_API_URL")
	c.StripeWebhookSecrets = secrets(get("STRIPE_WEBHOOK_SECRET"))
	checkAPIURL("STRIPE_API_URL", c.StripeAPIURL, bad)
	if c.StripeSecretKey != "" && !strings.HasPrefix(c.StripeSecretKey, "sk_") && !strings.HasPrefix(c.StripeSecretKey, "rk_") {
		bad("STRIPE_SECRET_KEY", "must be a Stripe secret or restricted key (sk_… or rk_…)")
	}
	if c.StripeSecretKey != "" && len(c.StripeWebhookSecrets) == 0 {
		bad("STRIPE_WEBHOOK_SECRET", "is required when STRIPE_SECRET_KEY is set")
	}
	if len(c.StripeWebhookSecrets) > 2 {
		bad("STRIPE_WEBHOOK_SECRET", "takes at most two comma-separated secrets (new,old)")
	}
}

// loadConnect reads the Stripe Connect settings. They are checked against each other and
// against the platform's Stripe settings: Connect needs the platform's key, and its
// endpoint's own secret.
func (c *Config) loadConnect(get func(string) string, bad func(name, why string)) {
	switch v := strings.ToLower(get("STRIPE_CONNECT")); v {
	case "", "off", "0", "false":
	case "on", "1", "true":
		c.StripeConnect = true
	default:
		bad("STRIPE_CONNECT", "must be on or off (off, the default: every payment is the platform account's)")
	}
	c.StripeConnectWebhookSecrets = secrets(get("STRIPE_CONNECT_WEBHOOK_SECRET"))
	c.StripeConnectAccountType = strings.ToLower(get("STRIPE_CONNECT_ACCOUNT_TYPE"))
	if c.StripeConnectAccountType == "" {
		c.StripeConnectAccountType = connectAccountTypes[0]
	} else if !slices.Contains(connectAccountTypes, c.StripeConnectAccountType) {
		bad("STRIPE_CONNECT_ACCOUNT_TYPE", "must be standard (the default), express or custom")
	}
	if v := get("PLATFORM_FEE_BPS"); v != "" {
		bps, err := strconv.Atoi(v)
		switch {
		case err != nil || bps < 0 || bps > MaxPlatformFeeBPS:
			bad("PLATFORM_FEE_BPS", fmt.Sprintf("must be a whole number of basis points from 0 to %d (100 is 1%%)", MaxPlatformFeeBPS))
		case bps > 0 && !c.StripeConnect:
			bad("PLATFORM_FEE_BPS", "takes a fee only from connected accounts' payments: set STRIPE_CONNECT=on, or leave it unset")
		default:
			c.PlatformFeeBPS = bps
		}
	}
	if len(c.StripeConnectWebhookSecrets) > 2 {
		bad("STRIPE_CONNECT_WEBHOOK_SECRET", "takes at most two comma-separated secrets (new,old)")
	}
	for _, s := range c.StripeConnectWebhookSecrets {
		if slices.Contains(c.StripeWebhookSecrets, s) {
			bad("STRIPE_CONNECT_WEBHOOK_SECRET", "must differ from STRIPE_WEBHOOK_SECRET: Stripe gives the Connect endpoint a signing secret of its own")
			break
		}
	}
	if !c.StripeConnect {
		return
	}
	if c.StripeSecretKey == "" {
		bad("STRIPE_CONNECT", "is on, which needs STRIPE_SECRET_KEY (the platform's key creates the connected accounts and their checkouts)")
	}
	if len(c.StripeConnectWebhookSecrets) == 0 {
		bad("STRIPE_CONNECT_WEBHOOK_SECRET", "is required when STRIPE_CONNECT=on: connected accounts' events come to /webhooks/stripe/connect signed with the Connect endpoint's secret")
	}
}
