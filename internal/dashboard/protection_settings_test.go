package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// protectionForm is the settings form of shop A (Ada's Barbers, USD) with extra's pairs
// set on it.
func protectionForm(csrf string, extra ...string) url.Values {
	f := url.Values{"csrf": {csrf}, "name": {"Ada's Barbers"}, "timezone": {"America/New_York"}, "currency": {"USD"},
		"payment_mode": {"checkout"}, "wave_size": {"10"}, "wave_interval_seconds": {"600"}, "min_lead_minutes": {"60"},
		"cooldown_seconds": {"86400"}, "protection_shown": {"1"}, "late_cancel_hours": {"24"}}
	for i := 0; i+1 < len(extra); i += 2 {
		f.Set(extra[i], extra[i+1])
	}
	return f
}

// TestSettingsProtection: the settings page sets the no-show protection as PATCH
// /api/shop does: a deposit in dollars or a percent, a kept card, the policy with its
// hours and fees in dollars; the page shows them back; the policy's version moves on
// only when the policy, its hours or fees change; a bad value is shown next to its field
// with the API's words.
func TestSettingsProtection(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{connect: true})
	ck := en.login(t, en.keyA)
	body, csrf := en.page(t, ck, "/dashboard/settings")
	for _, id := range []string{"set-deposit", "set-deposit-percent", "set-keep-card", "set-policy", "set-late-cancel-hours",
		"set-no-show-fee", "set-late-cancel-fee"} {
		require.Contains(t, body, `id="`+id+`"`)
	}
	shop := func() shops.Shop {
		t.Helper()
		s, err := en.shops.Get(context.Background(), en.shopA.ID)
		require.NoError(t, err)
		return s
	}
	v0 := shop().Protection.PolicyVersion
	policy := "Free to cancel until 24 hours before.\r\nAfter that, the deposit is kept."
	rec := en.post("/dashboard/settings", protectionForm(csrf, "payment_mode", "deposit", "deposit", "12.50",
		"keep_card", "on", "cancellation_policy", policy, "late_cancel_hours", "48", "no_show_fee", "20",
		"late_cancel_fee", "7.5"), ck)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	s := shop()
	require.Equal(t, shops.PaymentDeposit, s.PaymentMode)
	p := s.Protection
	require.NotNil(t, p.DepositCents)
	require.EqualValues(t, 1250, *p.DepositCents)
	require.Nil(t, p.DepositPercent)
	require.True(t, p.KeepCard)
	require.Equal(t, "Free to cancel until 24 hours before.\nAfter that, the deposit is kept.", p.Policy)
	require.Equal(t, 48, p.LateCancelHours)
	require.EqualValues(t, 2000, p.NoShowFeeCents)
	require.EqualValues(t, 750, p.LateCancelFeeCents)
	require.Equal(t, v0+1, p.PolicyVersion, "a new policy is a new version")

	body, _ = en.page(t, ck, "/dashboard/settings")
	require.Regexp(t, `id="set-deposit"[^>]*value="12.50"`, body)
	require.Regexp(t, `id="set-keep-card"[^>]*checked`, body)
	require.Regexp(t, `id="set-late-cancel-hours"[^>]*value="48"`, body)
	require.Regexp(t, `id="set-no-show-fee"[^>]*value="20.00"`, body)
	require.Regexp(t, `id="set-late-cancel-fee"[^>]*value="7.50"`, body)
	require.Contains(t, body, "After that, the deposit is kept.</textarea>")

	// The same values again, and a percent for the amount: the policy is the same one.
	rec = en.post("/dashboard/settings", protectionForm(csrf, "payment_mode", "deposit", "deposit_percent", "30",
		"keep_card", "on", "cancellation_policy", policy, "late_cancel_hours", "48", "no_show_fee", "20.00",
		"late_cancel_fee", "7.50"), ck)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	p = shop().Protection
	require.Nil(t, p.DepositCents)
	require.Equal(t, 30, *p.DepositPercent)
	require.Equal(t, v0+1, p.PolicyVersion, "nothing of the policy changed")
	body, _ = en.page(t, ck, "/dashboard/settings")
	require.Regexp(t, `id="set-deposit-percent"[^>]*value="30"`, body)
	require.Regexp(t, `id="set-deposit"[^>]*value=""`, body, "one deposit at a time")

	// A form from before the fields leaves them as they are.
	old := protectionForm(csrf, "payment_mode", "deposit")
	old.Del("protection_shown")
	require.Equal(t, http.StatusSeeOther, en.post("/dashboard/settings", old, ck).Code)
	require.Equal(t, p, shop().Protection)

	for _, c := range []struct {
		name    string
		form    []string
		errorID string
		want    string
	}{
		{"both deposits", []string{"payment_mode", "deposit", "deposit", "10", "deposit_percent", "20"}, "set-deposit-error", "not both"},
		{"no deposit", []string{"payment_mode", "deposit"}, "set-deposit-error", "Payment_mode deposit needs deposit_cents or deposit_percent."},
		{"percent", []string{"deposit_percent", "150"}, "set-deposit-percent-error", "Deposit_percent must be between 1 and 100, or null."},
		{"amount", []string{"no_show_fee", "12.345"}, "set-no-show-fee-error", "at most 2 decimals"},
		{"hours", []string{"late_cancel_hours", "900"}, "set-late-cancel-hours-error", "Late_cancel_hours must be between 0 and 720."},
		{"policy", []string{"cancellation_policy", strings.Repeat("x", 501)}, "set-policy-error", "at most 500 characters"},
	} {
		rec := en.post("/dashboard/settings", protectionForm(csrf, c.form...), ck)
		require.Equal(t, http.StatusUnprocessableEntity, rec.Code, c.name)
		require.Contains(t, fieldError(rec.Body.String(), c.errorID), c.want, c.name)
	}
	require.Equal(t, p, shop().Protection, "a refused form changes nothing")

	// Fees cleared and the card no longer kept: a new version.
	rec = en.post("/dashboard/settings", protectionForm(csrf, "cancellation_policy", policy, "late_cancel_hours", "48"), ck)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	p = shop().Protection
	require.False(t, p.KeepCard)
	require.Zero(t, p.NoShowFeeCents)
	require.Equal(t, v0+2, p.PolicyVersion)
}

// TestSettingsProtectionNoConnect: without STRIPE_CONNECT the page says plainly that
// cards cannot be kept, with no box to tick, and card mode is refused beside the payment.
func TestSettingsProtectionNoConnect(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{})
	ck := en.login(t, en.keyA)
	body, csrf := en.page(t, ck, "/dashboard/settings")
	require.NotContains(t, body, `id="set-keep-card"`)
	require.Contains(t, body, `id="set-keep-card-unavailable"`)
	require.Contains(t, body, "Keeping cards for a fee is not available")

	rec := en.post("/dashboard/settings", protectionForm(csrf, "keep_card", "on", "no_show_fee", "5", "cancellation_policy", "A no-show pays $5."), ck)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	s, err := en.shops.Get(context.Background(), en.shopA.ID)
	require.NoError(t, err)
	require.False(t, s.Protection.KeepCard, "not offered, not set")
	require.EqualValues(t, 500, s.Protection.NoShowFeeCents)

	rec = en.post("/dashboard/settings", protectionForm(csrf, "payment_mode", "card"), ck)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	require.Contains(t, fieldError(rec.Body.String(), "set-payment-error"), "STRIPE_CONNECT=on")
}
