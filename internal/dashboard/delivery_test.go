package dashboard_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
)

// TestSMSProblemNeedsAttention: texts that failed because of the
// shop's own number or account are shown to its owner, with what to do; another shop
// never sees it, and it goes once a week has passed without another.
func TestSMSProblemNeedsAttention(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday})
	ckA := en.login(t, en.keyA)
	body, _ := en.page(t, ckA, "/dashboard")
	require.NotContains(t, body, `id="sms-problem"`)

	ctx := context.Background()
	require.NoError(t, shops.RecordSMSProblem(ctx, en.pool, en.shopA.ID, 21408, en.clock.Now()))
	require.NoError(t, shops.RecordSMSProblem(ctx, en.pool, en.shopA.ID, 21408, en.clock.Now()))
	body, _ = en.page(t, ckA, "/dashboard")
	text := html.UnescapeString(body)
	require.Contains(t, body, `id="sms-problem" role="alert"`)
	require.Contains(t, text, "texts are failing because of your SMS number or account")
	require.Contains(t, text, "2 texts failed in the past week")
	require.Contains(t, text, "provider code 21408")
	require.Contains(t, text, "geographic permissions")

	body, _ = en.page(t, en.login(t, en.keyB), "/dashboard")
	require.NotContains(t, body, `id="sms-problem"`, "another shop never sees it")

	en.clock.Set(wednesday.Add(8 * 24 * time.Hour))
	body, _ = en.page(t, en.login(t, en.keyA), "/dashboard")
	require.NotContains(t, body, `id="sms-problem"`, "a week later without another failure")
}

// TestWavesShowDelivery: each wave of an open opening says how many of its texts the
// carriers delivered and how many they did not.
func TestWavesShowDelivery(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday})
	op := insertOpening(t, en.pool, en.shopA.ID, time.Date(2026, 11, 20, 20, 0, 0, 0, time.UTC), wednesday.Add(-time.Hour), "Skin fade", 4500, slots.StatusOpen)
	for i, delivery := range []string{"delivered", "delivered", "undelivered", ""} {
		c := en.addCustomer(t, en.shopA, "+1555555030"+string(rune('0'+i)), "C")
		status := "sent"
		if delivery == "undelivered" {
			status = "failed"
		}
		_, err := en.pool.Exec(context.Background(), `INSERT INTO slot_offers (opening_id, customer_id, shop_id, generation, wave, status, created_at, sent_at, delivery)
			VALUES ($1, $2, $3, 1, 1, $4, $5, $5, NULLIF($6, ''))`, op, c.ID, en.shopA.ID, status, wednesday.Add(-50*time.Minute), delivery)
		require.NoError(t, err)
	}
	body, _ := en.page(t, en.login(t, en.keyA), "/dashboard")
	require.Contains(t, html.UnescapeString(body), "2 delivered, 1 not delivered (replaced in the next wave)")
}

// TestSettingsSendRate: the owner sets the number's send rate; an invalid one is
// refused next to its field.
func TestSettingsSendRate(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday})
	ck := en.login(t, en.keyA)
	body, csrf := en.page(t, ck, "/dashboard/settings")
	require.Contains(t, body, `name="send_rate_per_second"`)
	form := func(rate string) url.Values {
		p := en.shopA.Policy
		return url.Values{"csrf": {csrf}, "name": {en.shopA.Name}, "timezone": {en.shopA.Timezone}, "currency": {en.shopA.Currency},
			"payment_mode": {en.shopA.PaymentMode}, "wave_size": {strconv.Itoa(p.WaveSize)}, "wave_interval_seconds": {strconv.Itoa(int(p.WaveInterval / time.Second))},
			"min_lead_minutes": {strconv.Itoa(int(p.MinLead / time.Minute))}, "cooldown_seconds": {strconv.Itoa(int(p.Cooldown / time.Second))},
			"first_wave_delay_seconds": {"0"}, "send_rate_per_second": {rate}}
	}
	rec := en.post("/dashboard/settings", form("3"), ck)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	got, err := en.shops.Get(context.Background(), en.shopA.ID)
	require.NoError(t, err)
	require.Equal(t, 3, got.Policy.SendRate)

	rec = en.post("/dashboard/settings", form("0"), ck)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	require.Contains(t, rec.Body.String(), `id="set-send-rate-error"`)
}

// TestDeclaringAWaveTooSlowSaysSo: a declaration whose first wave the number cannot send
// before the offers close is made, and the owner is told why the last customers will
// not be reached.
func TestDeclaringAWaveTooSlowSaysSo(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday}) // 07:00 in New York; the shop needs an hour's lead
	slow := 1000
	_, err := en.shops.Update(context.Background(), en.shopA.ID, shops.ShopChange{Policy: shops.PolicyFields{WaveSize: &slow}})
	require.NoError(t, err)
	ck := en.login(t, en.keyA)
	_, csrf := en.page(t, ck, "/dashboard")
	rec := en.post("/dashboard/openings", declareForm("2026-11-18", "08:10", "30", "Cut", "30.00", csrf), ck)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	require.Equal(t, "/dashboard?notice=declared_slow#open", rec.Header().Get("Location"))
	body, _ := en.page(t, ck, "/dashboard?notice=declared_slow")
	require.Contains(t, html.UnescapeString(body), "your number cannot text a whole wave before the offers close")
}
