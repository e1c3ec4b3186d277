package offers_test

import (
	"testing"

	"github.com/slotrecovery/slotrecovery/internal/offers"
)

func TestMoney(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"usd": "$45.00", "gbp": "£45.00", "eur": "€45.00", "sek": "45.00 SEK", "jpy": "4500 JPY"} {
		if got := offers.Money(4500, in); got != want {
			t.Errorf("Money(4500, %s) = %q, want %q", in, got, want)
		}
	}
}
