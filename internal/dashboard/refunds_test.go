package dashboard_test

import (
	"context"
	"html"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/slots"
)

// TestFailedRefundNeedsAttention (issue 10, finding 5): a booking whose payment could not
// be refunded is listed at the top of its owner's dashboard, with the payment to refund
// and what to do (refund it by hand in Stripe); another shop never sees it, and a page
// without one shows no banner.
func TestFailedRefundNeedsAttention(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday})
	dana := en.addCustomer(t, en.shopA, "+15555550123", "Dana Whitfield")
	// Friday 15:00 in New York.
	op := insertOpening(t, en.pool, en.shopA.ID, time.Date(2026, 11, 20, 20, 0, 0, 0, time.UTC), wednesday.Add(-time.Hour), "Skin fade", 4500, slots.StatusOpen)
	b := book(t, en.pool, op, dana.ID, slots.BookingPaymentFailed, 4500, wednesday.Add(-30*time.Minute))

	ckA := en.login(t, en.keyA)
	body, _ := en.page(t, ckA, "/dashboard")
	require.NotContains(t, body, `id="refunds-failed"`, "nothing needs attention yet")

	// What the refund job records when Stripe refuses (slots' RefundWorker).
	_, err := en.pool.Exec(context.Background(), `UPDATE bookings SET refund_failed_at = $2, refund_failed_payment_intent = 'pi_3Late',
		refund_error = 'Stripe refused the refund (charge_disputed): Charge ch_1 has been charged back.' WHERE id = $1`,
		b, wednesday.Add(-10*time.Minute))
	require.NoError(t, err)

	body, _ = en.page(t, ckA, "/dashboard")
	text := html.UnescapeString(body)
	require.Contains(t, body, `id="refunds-failed" role="alert"`)
	require.Contains(t, text, "Needs your attention: 1 refund could not be made")
	require.Contains(t, text, "Refund each payment by hand in your Stripe Dashboard")
	require.Contains(t, text, "<code>pi_3Late</code>")
	require.Contains(t, text, "Skin fade</strong>, Fri 20 Nov 2026, 15:00")
	require.Contains(t, text, "Dana Whitfield")
	require.Contains(t, text, "+155******23", "masked phone")
	require.NotContains(t, text, "5555550123", "never the full phone")
	require.Contains(t, text, "$45.00")
	require.Contains(t, text, "Failed Wed 18 Nov 2026, 06:50: Stripe refused the refund (charge_disputed): Charge ch_1 has been charged back.")

	body, _ = en.page(t, en.login(t, en.keyB), "/dashboard")
	require.NotContains(t, body, `id="refunds-failed"`, "another shop never sees it")
	require.NotContains(t, body, "pi_3Late")
}
