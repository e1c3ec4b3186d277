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
