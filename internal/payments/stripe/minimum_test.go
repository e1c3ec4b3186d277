package stripe_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/payments/stripe"
)

func TestMinimumCharge(t *testing.T) {
	t.Parallel()
	for cur, want := range map[string]int64{"usd": 50, "GBP": 30, "jpy": 50, "eur": 50, "huf": 17500, "xyz": 0} {
		require.Equal(t, want, stripe.MinimumCharge(cur), cur)
	}
}

func TestChargesIn(t *testing.T) {
	t.Parallel()
	for cur, want := range map[string]bool{
		"usd": true, "EUR": true, "jpy": true, "kwd": true, "huf": true, "xcd": true,
		"xyz": false, "abc": false, "eek": false, "": false, "us": false, "usdd": false,
	} {
		require.Equal(t, want, stripe.ChargesIn(cur), cur)
	}
	// Every currency with a published minimum is one Stripe charges in.
	for _, cur := range []string{"usd", "aed", "aud", "bgn", "brl", "cad", "chf", "czk", "dkk", "eur", "gbp", "hkd",
		"huf", "inr", "jpy", "mxn", "myr", "nok", "nzd", "pln", "ron", "sek", "sgd", "thb"} {
		require.True(t, stripe.ChargesIn(cur), cur)
		require.Positive(t, stripe.MinimumCharge(cur), cur)
	}
}
