package dashboard_test

import (
	"context"
	"encoding/csv"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
)

// TestPaymentLabelsFollowBookingTerms: a confirmed booking's payment label is what the
// booking was made under, not the shop's mode of the day: a plain checkout booking stays
// "Paid" after the shop switches to deposit, a deposit booking stays "Deposit paid" and a
// card booking "Card kept" after it switches to none, and a booking made without
// payments is "Confirmed"; on the page and in the export alike.
func TestPaymentLabelsFollowBookingTerms(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday})
	ctx := context.Background()
	c := en.addCustomer(t, en.shopA, "+15555550123", "Dana")
	ny := en.shopA.Location
	booked := func(day int, service string) uuid.UUID {
		t.Helper()
		o := insertOpening(t, en.pool, en.shopA.ID, time.Date(2026, 11, day, 10, 0, 0, 0, ny), wednesday, service, 4000, slots.StatusOpen)
		return book(t, en.pool, o, c.ID, ledger.BookingConfirmed, 4000, wednesday)
	}
	terms := func(b uuid.UUID, mode string, charged int64) {
		t.Helper()
		_, err := en.pool.Exec(ctx, `INSERT INTO booking_terms (booking_id, shop_id, mode, price_cents, charged_cents,
				keep_card, policy_version, policy_text, policy_sha256, late_cancel_hours, no_show_fee_cents, late_cancel_fee_cents,
				accepted_at, created_at)
			VALUES ($1, $2, $3, 4000, $4, $5, 1, 'Policy', 'abc', 24, 1000, 0, now(), now())`, b, en.shopA.ID, mode, charged, mode == "card")
		require.NoError(t, err)
	}
	booked(2, "Plain checkout")
	terms(booked(3, "With a deposit"), "deposit", 800)
	terms(booked(4, "Card only"), "card", 0)
	none := booked(5, "Without payments")
	// Made while the shop took no payments: confirmed at once, never held for a page.
	_, err := en.pool.Exec(ctx, `UPDATE bookings SET checkout_expires_at = NULL WHERE id = $1`, none)
	require.NoError(t, err)

	want := map[string]string{"Plain checkout": "Paid", "With a deposit": "Deposit paid", "Card only": "Card kept",
		"Without payments": "Confirmed"}
	ck := en.login(t, en.keyA)
	check := func(when string) {
		t.Helper()
		body, _ := en.page(t, ck, "/dashboard")
		badge := regexp.MustCompile(`badge badge-\w+">([^<]+)<`)
		seen := 0
		for _, row := range strings.Split(body, "<tr") {
			for service, label := range want {
				if strings.Contains(row, service) {
					m := badge.FindStringSubmatch(row)
					require.NotNil(t, m, "%s: %s has a payment badge", when, service)
					require.Equal(t, label, m[1], "%s: %s on the page", when, service)
					seen++
				}
			}
		}
		require.Equal(t, len(want), seen, "%s: every booking is listed", when)
		rec := en.get("/dashboard/export.csv?from=2026-11-01&to=2026-11-30", ck)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		rows, err := csv.NewReader(strings.NewReader(rec.Body.String())).ReadAll()
		require.NoError(t, err)
		require.Len(t, rows, 1+len(want))
		for _, r := range rows[1:] {
			require.Equal(t, want[r[5]], r[9], "%s: %s in the export", when, r[5])
		}
	}
	check("a checkout shop")
	deposit, percent := shops.PaymentDeposit, 20
	_, err = en.shops.Update(ctx, en.shopA.ID, shops.ShopChange{PaymentMode: &deposit,
		Protection: shops.ProtectionChange{DepositPercent: &percent, DepositPercentSet: true}})
	require.NoError(t, err)
	check("switched to deposit")
	nothing := shops.PaymentNone
	_, err = en.shops.Update(ctx, en.shopA.ID, shops.ShopChange{PaymentMode: &nothing})
	require.NoError(t, err)
	check("switched to none")
}
