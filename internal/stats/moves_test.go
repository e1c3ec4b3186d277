package stats_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/stats"
)

// TestMovedYesBookingCountsOnce: a paid YES booking moved up to an earlier opening is
// one booking, a move-up, paid once: the moved booking (its opening offered again) is
// not counted beside the booking it became.
func TestMovedYesBookingCountsOnce(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	ctx := context.Background()
	later := h.add(t, h.shop, openingSpec{name: "later", local: "2026-11-12 15:00", service: "Cut", staff: h.ana, status: "filled",
		price: 3000, fillSecs: 600, offers: []offerSpec{{1, "accepted", 1, true}},
		booking: &bookingSpec{wave: 1, status: "confirmed", amount: 3000, service: "Cut", checkout: true}})
	earlier := h.add(t, h.shop, openingSpec{name: "earlier", local: "2026-11-10 10:00", service: "Cut", staff: h.ana, status: "filled",
		price: 3000, fillSecs: 600, offers: []offerSpec{{1, "accepted", 1, true}},
		booking: &bookingSpec{wave: 1, status: "confirmed", amount: 3000, service: "Cut", checkout: true}})
	// The move, as ledger.MoveTx leaves it: the payment on the earlier booking, the later
	// one moved, its opening open again; the earlier booking's offer named the later one.
	_, err := h.pool.Exec(ctx, `
		WITH old AS (SELECT id FROM bookings WHERE opening_id = $1), nb AS (SELECT id, offer_id FROM bookings WHERE opening_id = $2),
		moved AS (UPDATE bookings SET status = 'moved', moved_to = (SELECT id FROM nb), stripe_checkout_session_id = NULL
			WHERE id = (SELECT id FROM old)),
		offer AS (UPDATE slot_offers SET move_from_booking = (SELECT id FROM old) WHERE id = (SELECT offer_id FROM nb))
		UPDATE slot_openings SET status = 'open', filled_by = NULL, filled_at = NULL, generation = 2 WHERE id = $1`, later, earlier)
	require.NoError(t, err)
	got, err := h.svc.Report(ctx, h.shop, stats.Query{From: "2026-11-09", To: "2026-11-15"})
	require.NoError(t, err)
	require.Equal(t, 1, got.Totals.Bookings, "the moved booking is not a second booking")
	require.Equal(t, 1, got.Totals.MoveUps)
	require.Equal(t, 1, got.Totals.Paid)
	require.Equal(t, int64(3000), got.Totals.PaidCents)
}
