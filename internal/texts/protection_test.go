package texts_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/texts"
)

// TestProtectionTexts (issue 48): the booked answer of a deposit or card shop says what
// its page takes, and the policy's one line says until when a cancellation is free and
// what it costs after; a late cancellation's answer says what the accepted policy does,
// in every language.
func TestProtectionTexts(t *testing.T) {
	t.Parallel()
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	start := time.Date(2026, 11, 28, 19, 0, 0, 0, time.UTC) // Sat 2:00 PM in New York
	shop := shops.Shop{Name: "Joe's Barbers", Timezone: "America/New_York", Location: ny, Currency: "usd",
		SMSNumber: "+15555550100", PaymentMode: shops.PaymentDeposit,
		Protection: shops.Protection{LateCancelHours: 24, LateCancelFeeCents: 1500}}
	en := texts.In(language.English)

	early := start.Add(-72 * time.Hour) // booked three days before: free to cancel for two
	got := en.LinkProtected(&shop, "Cut", start, "https://x.test/p/abc", 30*time.Minute, early)
	require.Contains(t, got, "Pay the deposit within 30 min")
	// A deposit shop with a fee: a late cancellation keeps the deposit and charges the fee.
	require.True(t, strings.HasSuffix(got, "Free to cancel until Fri Nov 27 2:00 PM; after, the deposit is kept and $15.00 charged."), got)
	// Booked inside the policy's hours: no "free until" a time gone by.
	got = en.LinkProtected(&shop, "Cut", start, "https://x.test/p/abc", 30*time.Minute, start.Add(-2*time.Hour))
	require.True(t, strings.HasSuffix(got, " Cancelling now keeps the deposit and costs $15.00."), got)
	checkout := shop
	checkout.PaymentMode = shops.PaymentCheckout
	require.Equal(t, "Free to cancel until Fri Nov 27 2:00 PM; $15.00 after.", en.PolicyLine(&checkout, start, early), "a fee alone")
	require.Equal(t, "Cancelling now costs $15.00.", en.PolicyLine(&checkout, start, start.Add(-2*time.Hour)))
	deposit := shop
	deposit.Protection.LateCancelFeeCents = 0
	require.Equal(t, "Free to cancel until Fri Nov 27 2:00 PM; the deposit is kept after.", en.PolicyLine(&deposit, start, early))
	require.Equal(t, "The deposit is kept if you cancel.", en.PolicyLine(&deposit, start, start.Add(-24*time.Hour)),
		"the policy's hour itself is late")

	card := shop
	card.PaymentMode, card.Protection.LateCancelFeeCents = shops.PaymentCard, 0
	got = en.LinkProtected(&card, "Cut", start, "https://x.test/p/abc", 30*time.Minute, early)
	require.Contains(t, got, "Add a card within 30 min")
	require.NotContains(t, got, "Free to cancel", "nothing to lose by cancelling: no line")

	require.Contains(t, en.CancelledLate(&shop, "Cut", start, 24, true, false, 1500),
		"less than 24 h before: the deposit is kept and a $15.00 fee will be charged to your card")
	require.Contains(t, en.CancelledLate(&shop, "Cut", start, 24, false, true, 1500),
		"your payment is refunded and a $15.00 fee will be charged to your card")
	require.Contains(t, en.CancelledLate(&shop, "Cut", start, 24, true, false, 0), "the deposit is kept.")

	for _, l := range []language.Code{language.Spanish, language.French} {
		w := texts.In(l)
		require.NotContains(t, w.LinkProtected(&shop, "Cut", start, "u", 30*time.Minute, early), "{{", l)
		for _, now := range []time.Time{early, start} {
			for _, p := range []shops.Shop{shop, deposit, checkout} {
				line := w.PolicyLine(&p, start, now)
				require.NotEmpty(t, line, l)
				require.NotContains(t, line, "{{", l)
			}
		}
		require.NotContains(t, w.CancelledLate(&shop, "Cut", start, 24, true, false, 1500), "{{", l)
		require.NotContains(t, w.FeePayLink(&shop, "Cut", start, "$20.00", "u"), "{{", l)
	}
}
