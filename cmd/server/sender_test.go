package main

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/senders"
	"github.com/slotrecovery/slotrecovery/internal/testkit/twiliofake"
)

type senderView struct {
	SMSNumber string `json:"sms_number"`
	SMSSender struct {
		Number              string  `json:"number"`
		MessagingServiceSID *string `json:"messaging_service_sid"`
		Registration        *struct {
			Status         string  `json:"status"`
			CampaignStatus *string `json:"campaign_status"`
			FailureReason  *string `json:"failure_reason"`
		} `json:"registration"`
	} `json:"sms_sender"`
}

// TestOwnSenderUnderRequiredRegistration is each shop's own sender end to end, on a real server against
// the fake Twilio (every call held to Twilio's documents): with SMS_US_A2P=required an
// unregistered US shop declares nothing (its customers' texts are still answered); the
// admin gives it its own number and Messaging Service, the owner registers, the brand
// and the campaign are approved, and then its offers go out through its service.
func TestOwnSenderUnderRequiredRegistration(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.startWith(map[string]string{"SMS_US_A2P": "required"}, serveOptions{tune: fastTune,
		tuneSenders: func(c *senders.Config) {
			c.PollMin, c.PollMax, c.PerSecond = 20*time.Millisecond, 100*time.Millisecond, 1000
		}})
	shop := e.newShop(base, "none", nil)
	require.Equal(t, http.StatusConflict, e.api(base, http.MethodPost, "/api/openings", shop.APIKey, map[string]any{
		"starts_at":        time.Now().Add(3 * time.Hour).UTC().Truncate(time.Second).Format(time.RFC3339),
		"duration_minutes": 30, "service": "Haircut", "price_cents": 4500}, nil))
	answer := e.text(base, "+15125550190", shop.SMSNumber, "hello?")
	require.Equal(t, http.StatusOK, answer.Status, "a customer who writes in is still answered")
	require.NotEmpty(t, answer.Outcome)

	var view senderView
	require.Equal(t, http.StatusCreated, e.api(base, http.MethodPost, "/api/shops/"+shop.ID+"/sms/number", adminToken,
		map[string]any{"area_code": "512"}, &view))
	require.NotNil(t, view.SMSSender.MessagingServiceSID)
	service := *view.SMSSender.MessagingServiceSID
	shop.SMSNumber = view.SMSNumber
	require.Equal(t, view.SMSSender.Number, shop.SMSNumber)
	svc := e.twilio.Services()
	require.Len(t, svc, 1)
	require.Equal(t, publicURL+"/webhooks/twilio/sms", svc[0].InboundRequestURL)

	require.Equal(t, http.StatusAccepted, e.api(base, http.MethodPost, "/api/shop/sms/registration", shop.APIKey, map[string]any{
		"business_name": "Joe's Barbers LLC", "business_type": "private_profit", "ein": "12-3456789", "website": "https://joes.example.com",
		"address": map[string]any{"street": "1 Congress Ave", "city": "Austin", "region": "TX", "postal_code": "78701", "country": "US"},
		"contact": map[string]any{"first_name": "Joe", "last_name": "Ruiz", "email": "joe@example.com", "phone": "+15125550191"},
	}, nil))
	var brands []twiliofake.Brand
	require.Eventually(t, func() bool { brands = e.twilio.Brands(); return len(brands) == 1 }, 30*time.Second, 20*time.Millisecond)
	e.twilio.SetBrandStatus(brands[0].SID, "APPROVED", "")
	var camps []twiliofake.Campaign
	require.Eventually(t, func() bool { camps = e.twilio.Campaigns(); return len(camps) == 1 }, 30*time.Second, 20*time.Millisecond)
	require.Equal(t, service, camps[0].ServiceSID)
	e.twilio.SetCampaignStatus(camps[0].SID, "VERIFIED", "")
	require.Eventually(t, func() bool {
		var v senderView
		e.api(base, http.MethodGet, "/api/shop", shop.APIKey, nil, &v)
		return v.SMSSender.Registration != nil && v.SMSSender.Registration.Status == "verified"
	}, 30*time.Second, 20*time.Millisecond)

	c := e.newCustomer(base, shop, "+15125550192", true)
	e.newOpening(base, shop, 3*time.Hour)
	require.Eventually(t, func() bool { return len(e.twilio.MessagesTo(c.Phone)) == 1 }, 30*time.Second, 20*time.Millisecond)
	m := e.twilio.MessagesTo(c.Phone)[0]
	require.Equal(t, service, m.MessagingServiceSID, "the offer goes through the shop's own service")
	require.Empty(t, m.From)
}
