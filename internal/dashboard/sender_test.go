package dashboard_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/dashboard"
	"github.com/slotrecovery/slotrecovery/internal/pacing"
	"github.com/slotrecovery/slotrecovery/internal/senders"
	"github.com/slotrecovery/slotrecovery/internal/sms/twilio"
)

// withSenders swaps the env's dashboard for one that shows shops' senders, under
// SMS_US_A2P=required when required.
func withSenders(t *testing.T, en *env, required bool) {
	t.Helper()
	svc := senders.New(en.pool, en.river, nil, nil, pacing.New(en.redis, en.prefix), senders.Config{RequireUSA2P: required})
	d, err := dashboard.New(en.pool, en.shops, en.slots, dashboard.Config{
		Customers: en.customers, Erasure: en.erasure,
		PublicURL: "https://slots.example", Inbox: en.inbox, SessionSecret: secret, Secure: en.secure,
		Redis: en.redis, KeyPrefix: en.prefix, Waves: en.waves, AccountIssue: twilio.AccountIssueOf, Senders: svc,
	})
	require.NoError(t, err)
	en.dash, en.e = d, echo.New()
	d.Register(en.e)
}

// TestSettingsShowTheSenderAndWhyOpeningsWait: the settings page says where the US shop's
// registration stands and Twilio's reason for a failure; under SMS_US_A2P=required its
// declaration is refused with the reason above the form.
func TestSettingsShowTheSenderAndWhyOpeningsWait(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{})
	withSenders(t, en, true)
	ck := en.login(t, en.keyA)

	body, csrf := en.page(t, ck, "/dashboard/settings")
	require.Contains(t, body, `id="sender"`)
	require.Contains(t, body, "Not registered")
	require.Contains(t, body, "+15555550100")

	rec := en.post("/dashboard/openings", declareForm(time.Now().AddDate(0, 0, 2).Format("2006-01-02"), "15:00", "30", "Cut", "30.00", csrf), ck)
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Contains(t, rec.Body.String(), "not registered for A2P 10DLC")
	require.Zero(t, countOpenings(t, en.pool, en.shopA.ID))

	// A set-up sender whose campaign failed, as the registration job records it.
	ctx := context.Background()
	_, err := en.pool.Exec(ctx, `INSERT INTO sms_senders (shop_id, status, number, number_sid, messaging_service_sid, created_at, updated_at)
		VALUES ($1, 'active', '+15555550100', 'PN0123456789abcdef0123456789abcdef', 'MG0123456789abcdef0123456789abcdef', now(), now())`, en.shopA.ID)
	require.NoError(t, err)
	_, err = en.pool.Exec(ctx, `INSERT INTO sms_registrations (shop_id, details, status, brand_status, campaign_status, failure_reason, updated_at)
		VALUES ($1, '{}', 'failed', 'APPROVED', 'FAILED', 'The sample messages do not match the description', now())`, en.shopA.ID)
	require.NoError(t, err)
	body, _ = en.page(t, ck, "/dashboard/settings")
	require.Contains(t, body, "Registration failed")
	require.Contains(t, body, "Twilio says: The sample messages do not match the description")
	require.Contains(t, body, "MG0123456789abcdef0123456789abcdef")

	// A shop whose number is not a US local number needs none.
	ckB := en.login(t, en.keyB)
	body, _ = en.page(t, ckB, "/dashboard/settings")
	require.Contains(t, body, "No registration needed")
}
