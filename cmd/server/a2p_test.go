package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/httperr"
	"github.com/slotrecovery/slotrecovery/internal/senders"
	"github.com/slotrecovery/slotrecovery/internal/testkit/twiliofake"
)

// TestRegistrationResubmissionsAreLimited: over the API, an owner whose registrations
// keep failing may submit 3 in 24 hours; the 4th is answered 409 registration_limit in
// the API's error shape, saying when the next may go, and nothing more reaches Twilio.
func TestRegistrationResubmissionsAreLimited(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.startWith(nil, serveOptions{tune: fastTune, tuneSenders: func(c *senders.Config) {
		c.PollMin, c.PollMax, c.PerSecond = 20*time.Millisecond, 100*time.Millisecond, 1000
	}})
	shop := e.newShop(base, "none", nil)
	var view senderView
	require.Equal(t, http.StatusCreated, e.api(base, http.MethodPost, "/api/shops/"+shop.ID+"/sms/number", adminToken,
		map[string]any{"area_code": "512"}, &view))
	details := map[string]any{
		"business_name": "Joe's Barbers LLC", "business_type": "private_profit", "ein": "12-3456789", "website": "https://joes.example.com",
		"address": map[string]any{"street": "1 Congress Ave", "city": "Austin", "region": "TX", "postal_code": "78701", "country": "US"},
		"contact": map[string]any{"first_name": "Joe", "last_name": "Ruiz", "email": "joe@example.com", "phone": "+15125550191"},
	}
	status := func() string {
		var v senderView
		e.api(base, http.MethodGet, "/api/shop", shop.APIKey, nil, &v)
		if v.SMSSender.Registration == nil {
			return ""
		}
		return v.SMSSender.Registration.Status
	}
	for i := 1; i <= 3; i++ {
		require.Equal(t, http.StatusAccepted, e.api(base, http.MethodPost, "/api/shop/sms/registration", shop.APIKey, details, nil),
			"submission %d", i)
		var brands []twiliofake.Brand
		require.Eventually(t, func() bool { brands = e.twilio.Brands(); return len(brands) == i }, 30*time.Second, 20*time.Millisecond)
		e.twilio.SetBrandStatus(brands[i-1].SID, "FAILED", "TCR: the EIN does not match the business name")
		require.Eventually(t, func() bool { return status() == senders.StatusFailed }, 30*time.Second, 20*time.Millisecond)
	}
	calls := len(e.twilio.Calls())

	var refused httperr.Body
	require.Equal(t, http.StatusConflict, e.api(base, http.MethodPost, "/api/shop/sms/registration", shop.APIKey, details, &refused))
	require.Equal(t, senders.CodeSubmissionLimit, refused.Error.Code)
	require.Contains(t, refused.Error.Message, "3 registrations in the last 24 hours")
	_, after, _ := strings.Cut(refused.Error.Message, "after ")
	_, err := time.Parse(time.RFC3339, after)
	require.NoError(t, err, "it says when the next may go: %q", refused.Error.Message)
	require.Equal(t, senders.StatusFailed, status(), "the failed registration stands")
	require.Equal(t, calls, len(e.twilio.Calls()), "nothing more reached Twilio")
}
