package ledger_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/pgbatch"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
)

// TestAWinnersAnswerIsStoredWithItsLink: the caller's answer to a YES goes in the round
// trip that stores the booking's payment link, and only with the link it names. When
// the booking sweep stored its own link first, the answer is not stored and the claim
// says the link follows (the sweep texts its link).
func TestAWinnersAnswerIsStoredWithItsLink(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{})
	ctx := context.Background()
	_, err := w.pool.Exec(ctx, `CREATE TABLE link_answers (booking_id uuid, url text)`)
	require.NoError(t, err)
	answer := func(ctx context.Context, q *pgbatch.Queue, c slots.Claim) {
		_, err := q.Exec(ctx, `INSERT INTO link_answers SELECT $1::uuid, $2::text
			WHERE EXISTS (SELECT 1 FROM bookings WHERE id = $1::uuid AND payment_url = $2::text)`, c.BookingID, c.PaymentURL)
		require.NoError(t, err)
	}
	answered := func(bookingID uuid.UUID) []string {
		t.Helper()
		rows, err := w.pool.Query(ctx, `SELECT url FROM link_answers WHERE booking_id = $1`, bookingID)
		require.NoError(t, err)
		defer rows.Close()
		var urls []string
		for rows.Next() {
			var u string
			require.NoError(t, rows.Scan(&u))
			urls = append(urls, u)
		}
		return urls
	}

	c := w.bookClaimable(w.open(), answer)
	require.Equal(t, slots.Booked, c.Outcome)
	require.True(t, c.AnswerStored)
	require.NotEmpty(t, c.PaymentURL)
	require.Equal(t, c.PaymentURL, w.query(`SELECT payment_url FROM bookings WHERE id = $1`, c.BookingID))
	require.Equal(t, []string{c.PaymentURL}, answered(c.BookingID), "the answer was stored with the link it names")

	// The booking sweep stores its link while Stripe answers the YES path.
	w.co.onCreate = func(bookingID string) {
		_, err := w.pool.Exec(ctx, `UPDATE bookings SET payment_url = 'https://pay.example/sweep', stripe_checkout_session_id = 'cs_sweep'
			WHERE id = $1 AND payment_url IS NULL`, bookingID)
		require.NoError(t, err)
	}
	c = w.bookClaimable(w.open(), answer)
	require.Equal(t, slots.Booked, c.Outcome)
	require.False(t, c.AnswerStored, "the answer names a link the booking does not hold")
	require.True(t, c.LinkFollows)
	require.Empty(t, c.PaymentURL)
	require.Empty(t, answered(c.BookingID))
	require.Equal(t, "https://pay.example/sweep", w.query(`SELECT payment_url FROM bookings WHERE id = $1`, c.BookingID))
}

// bookClaimable gives a new customer an offer of op and has them say YES through
// BookClaimable, with answer.
func (w *world) bookClaimable(op slots.Opening, answer slots.LinkAnswer) slots.Claim {
	w.t.Helper()
	ctx := context.Background()
	w.phones++
	c, err := w.shops.AddCustomer(ctx, w.shop.ID, shops.NewCustomer{Phone: fmt.Sprintf("+1555200%04d", w.phones), SMSOptIn: true})
	require.NoError(w.t, err)
	var offerID uuid.UUID
	require.NoError(w.t, w.pool.QueryRow(ctx, `INSERT INTO slot_offers (opening_id, customer_id, shop_id, generation, wave, status, created_at, sent_at)
		VALUES ($1, $2, $3, 1, 1, 'sent', $4, $4) RETURNING id`, op.ID, c.ID, w.shop.ID, w.clk.Now()).Scan(&offerID))
	claim, err := w.svc.BookClaimable(ctx, w.shop, c.ID, slots.Claimable{Live: []slots.LiveOffer{
		{OfferID: offerID, OpeningID: op.ID, Generation: 1, StartsAt: op.StartsAt},
	}}, answer)
	require.NoError(w.t, err)
	return claim
}
