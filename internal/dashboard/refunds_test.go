package dashboard_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/slots"
)

// TestFailedRefundNeedsAttention: a booking whose payment could not
// be refunded is listed at the top of its owner's dashboard, with the payment to refund
// and what to do (refund it by hand in Stripe); another shop never sees it, and a page
// without one shows no banner.
func TestFailedRefundNeedsAttention(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday})
	dana := en.addCustomer(t, en.shopA, "+15555550123", "Dana Whitfield")
	// Friday 15:00 in New York.
	op := insertOpening(t, en.pool, en.shopA.ID, time.Date(2026, 11, 20, 20, 0, 0, 0, time.UTC), wednesday.Add(-time.Hour), "Skin fade", 4500, slots.StatusOpen)
	b := book(t, en.pool, op, dana.ID, ledger.BookingPaymentFailed, 4500, wednesday.Add(-30*time.Minute))

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

// TestFailedRefundMarkedRefundedByHand: the owner who refunded a payment by hand takes it
// off the banner with its button (a signed-in POST with the page's CSRF token); another
// shop cannot, nor a request without the token; the failure stays on the booking, and a
// later failure of the same booking shows again.
func TestFailedRefundMarkedRefundedByHand(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday})
	ctx := context.Background()
	dana := en.addCustomer(t, en.shopA, "+15555550123", "Dana Whitfield")
	op := insertOpening(t, en.pool, en.shopA.ID, time.Date(2026, 11, 20, 20, 0, 0, 0, time.UTC), wednesday.Add(-time.Hour), "Skin fade", 4500, slots.StatusOpen)
	b := book(t, en.pool, op, dana.ID, ledger.BookingPaymentFailed, 4500, wednesday.Add(-30*time.Minute))
	q := db.New()
	fail := func(pi string, at time.Time) {
		t.Helper()
		// The statement slots' refund job records a failure with.
		n, err := q.BookingSetRefundFailed(ctx, en.pool, db.BookingSetRefundFailedParams{
			ID: b, Now: at, PaymentIntentID: pgtype.Text{String: pi, Valid: true}, Reason: pgtype.Text{String: "Stripe refused the refund.", Valid: true},
		})
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
	}
	fail("pi_3Late", wednesday.Add(-10*time.Minute))
	done := "/dashboard/refunds/" + b.String() + "/done"

	ckA := en.login(t, en.keyA)
	body, csrfA := en.page(t, ckA, "/dashboard")
	require.Contains(t, body, `action="`+done+`"`, "the banner's item has its button")

	rec := en.post(done, url.Values{}, ckA)
	require.Equal(t, http.StatusForbidden, rec.Code, "no CSRF token: %s", rec.Body.String())
	ckB := en.login(t, en.keyB)
	_, csrfB := en.page(t, ckB, "/dashboard")
	rec = en.post(done, url.Values{"csrf": {csrfB}}, ckB)
	require.Equal(t, http.StatusNotFound, rec.Code, "another shop's booking: %s", rec.Body.String())
	rec = en.post("/dashboard/refunds/not-a-uuid/done", url.Values{"csrf": {csrfA}}, ckA)
	require.Equal(t, http.StatusNotFound, rec.Code)
	body, _ = en.page(t, ckA, "/dashboard")
	require.Contains(t, body, `id="refunds-failed"`, "still listed")

	rec = en.post(done, url.Values{"csrf": {csrfA}}, ckA)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	require.Equal(t, "/dashboard?notice=refund_done", rec.Header().Get("Location"))
	body, _ = en.page(t, ckA, "/dashboard?notice=refund_done")
	require.NotContains(t, body, `id="refunds-failed"`, "off the banner")
	require.Contains(t, html.UnescapeString(body), "Marked as refunded by hand.")
	var failedAt, dismissedAt *time.Time
	require.NoError(t, en.pool.QueryRow(ctx, `SELECT refund_failed_at, refund_failed_dismissed_at FROM bookings WHERE id = $1`, b).
		Scan(&failedAt, &dismissedAt))
	require.NotNil(t, failedAt, "the failure stays on record")
	require.NotNil(t, dismissedAt)
	require.True(t, dismissedAt.Equal(wednesday), "dismissed at %v", dismissedAt)
	rec = en.post(done, url.Values{"csrf": {csrfA}}, ckA)
	require.Equal(t, http.StatusNotFound, rec.Code, "nothing left to dismiss")

	// A later refund of the booking fails too: it needs the owner again.
	fail("pi_3Again", wednesday.Add(time.Minute))
	body, _ = en.page(t, ckA, "/dashboard")
	require.Contains(t, body, `id="refunds-failed"`)
	require.Contains(t, body, "<code>pi_3Again</code>")
}
