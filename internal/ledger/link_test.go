package ledger_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/payments"
	"github.com/slotrecovery/slotrecovery/internal/slots"
)

// TestALinkIsStoredOnce: the YES path's link is stored unless the booking sweep stored
// its own first (while Stripe answered the YES path); then StoreLink says so, and the
// booking keeps the sweep's link, the one its customer is texted.
func TestALinkIsStoredOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{})
	ctx := context.Background()

	c, _ := w.claim(w.open().ID, 1)
	require.False(t, c.LinkFollows)
	require.Equal(t, c.PaymentURL, w.query(`SELECT payment_url FROM bookings WHERE id = $1`, c.BookingID))

	w.co.onCreate = func(bookingID string) {
		_, err := w.pool.Exec(ctx, `UPDATE bookings SET payment_url = 'https://pay.example/sweep', stripe_checkout_session_id = 'cs_sweep'
			WHERE id = $1 AND payment_url IS NULL`, bookingID)
		require.NoError(t, err)
	}
	c, _ = w.claim(w.open().ID, 1)
	require.Equal(t, slots.Booked, c.Outcome)
	require.True(t, c.LinkFollows, "the sweep's link is the sweep's to text")
	require.Empty(t, c.PaymentURL)
	require.Equal(t, "https://pay.example/sweep", w.query(`SELECT payment_url FROM bookings WHERE id = $1`, c.BookingID))

	// Storing it again changes nothing.
	stored, err := ledger.StoreLink(ctx, w.pool, c.BookingID, payments.Checkout{SessionID: "cs_again", URL: "https://pay.example/again", ExpiresAt: w.clk.Now().Add(time.Hour)}, w.clk.Now())
	require.NoError(t, err)
	require.False(t, stored)
}
