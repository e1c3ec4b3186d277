package twilio_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/sms"
	"github.com/slotrecovery/slotrecovery/internal/sms/twilio"
	"github.com/slotrecovery/slotrecovery/internal/testkit/twiliofake"
)

// TestProvisionANumberAndService buys a number, makes a Messaging Service and attaches
// the number, each call held to Twilio's documents by the fake (its cleanup fails the
// test on any breach).
func TestProvisionANumberAndService(t *testing.T) {
	t.Parallel()
	tw, fake := newSender(t)
	ctx := t.Context()

	n, err := tw.BuyNumber(ctx, 415, "slot recovery shop 1")
	require.NoError(t, err)
	require.Regexp(t, `^\+1415555`, n.Number)
	require.Regexp(t, `^PN[0-9a-f]{32}$`, n.SID)

	found, ok, err := tw.FindNumberNamed(ctx, "slot recovery shop 1")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, n, found)
	_, ok, err = tw.FindNumberNamed(ctx, "another shop")
	require.NoError(t, err)
	require.False(t, ok)

	got, err := tw.FindNumber(ctx, n.Number)
	require.NoError(t, err)
	require.Equal(t, n.SID, got.SID)
	_, err = tw.FindNumber(ctx, "+15005550006")
	require.ErrorIs(t, err, sms.ErrNumberNotInAccount)

	fake.NoNumbersIn("212")
	_, err = tw.BuyNumber(ctx, 212, "x")
	require.ErrorIs(t, err, sms.ErrNoNumberAvailable)

	spec := sms.ServiceSpec{Name: "slot recovery shop 1", InboundURL: "https://example.com/webhooks/twilio/sms",
		StatusCallbackURL: "https://example.com/webhooks/twilio/status"}
	svc, err := tw.CreateService(ctx, spec)
	require.NoError(t, err)
	again, ok, err := tw.FindService(ctx, spec.Name)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, svc, again)
	require.NoError(t, tw.AttachNumber(ctx, svc, n.SID))
	require.NoError(t, tw.AttachNumber(ctx, svc, n.SID), "attaching twice is a no-op")
	require.Equal(t, 1, fake.CallCount("CreatePhoneNumber"))

	services := fake.Services()
	require.Len(t, services, 1)
	require.Equal(t, spec.InboundURL, services[0].InboundRequestURL)
	require.Equal(t, spec.StatusCallbackURL, services[0].StatusCallback)
	require.True(t, services[0].StickySender)
	require.Equal(t, []string{n.SID}, services[0].Numbers)

	// A text through the service names it, not a From.
	sid, err := tw.Text(ctx, sms.Message{From: n.Number, MessagingServiceSID: svc, To: "+15555550123", Body: "hi"})
	require.NoError(t, err)
	msgs := fake.Messages()
	require.Len(t, msgs, 1)
	require.Equal(t, sid, msgs[0].SID)
	require.Equal(t, svc, msgs[0].MessagingServiceSID)
	require.Empty(t, msgs[0].From)
}

// TestRegisterABrandAndCampaign walks the ISV flow's calls against the fake.
func TestRegisterABrandAndCampaign(t *testing.T) {
	t.Parallel()
	tw, fake := newSender(t)
	ctx := t.Context()
	const policy = "RNdfbf3fae0e1107f8aded0e7cead80bf5"

	profile, err := tw.CreateBundle(ctx, sms.CustomerProfile, "Shop", "owner@example.com", policy)
	require.NoError(t, err)
	ok, reason, err := tw.Evaluate(ctx, sms.CustomerProfile, profile, policy)
	require.NoError(t, err)
	require.False(t, ok)
	require.Contains(t, reason, "Business Information")

	user, err := tw.CreateEndUser(ctx, "customer_profile_business_information", "Shop", map[string]any{"business_name": "Shop"})
	require.NoError(t, err)
	addr, err := tw.CreateAddress(ctx, sms.Address{CustomerName: "Shop", Street: "1 Main St", City: "Austin", Region: "TX", PostalCode: "78701", Country: "US"})
	require.NoError(t, err)
	doc, err := tw.CreateDocument(ctx, "customer_profile_address", "address", map[string]any{"address_sids": addr})
	require.NoError(t, err)
	require.NoError(t, tw.Assign(ctx, sms.CustomerProfile, profile, user))
	require.NoError(t, tw.Assign(ctx, sms.CustomerProfile, profile, doc))
	ok, _, err = tw.Evaluate(ctx, sms.CustomerProfile, profile, policy)
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, tw.Submit(ctx, sms.CustomerProfile, profile))

	product, err := tw.CreateBundle(ctx, sms.TrustProduct, "Shop A2P", "owner@example.com", "RNb0d4771c2c98518d916a3d4cd70a8f8b")
	require.NoError(t, err)
	info, err := tw.CreateEndUser(ctx, "us_a2p_messaging_profile_information", "Shop", map[string]any{"company_type": "private"})
	require.NoError(t, err)
	require.NoError(t, tw.Assign(ctx, sms.TrustProduct, product, info))
	require.NoError(t, tw.Assign(ctx, sms.TrustProduct, product, profile))
	require.NoError(t, tw.Submit(ctx, sms.TrustProduct, product))

	done := sms.Done{"customer_profile": profile, "trust_product": product}
	brand, err := tw.CreateBrand(ctx, sms.Business{Name: "Shop", Type: "private_profit"}, done)
	require.NoError(t, err)
	require.Equal(t, "PENDING", brand.Status)
	require.Equal(t, sms.InReview, brand.Review)
	require.Equal(t, "STANDARD", fake.Brands()[0].BrandType, "a company's brand")
	found, ok, next, err := tw.FindBrand(ctx, done, "")
	require.Empty(t, next)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, brand.SID, found.SID)
	fake.SetBrandStatus(brand.SID, "APPROVED", "")
	brand, err = tw.Brand(ctx, brand.SID)
	require.NoError(t, err)
	require.Equal(t, "APPROVED", brand.Status)
	require.Equal(t, sms.Approved, brand.Review)

	svc, err := tw.CreateService(ctx, sms.ServiceSpec{Name: "s", InboundURL: "https://example.com/a", StatusCallbackURL: "https://example.com/b"})
	require.NoError(t, err)
	_, ok, err = tw.FindCampaign(ctx, svc)
	require.NoError(t, err)
	require.False(t, ok)
	camp, err := tw.CreateCampaign(ctx, svc, sms.Campaign{BrandSID: brand.SID,
		Description: "Texts a shop's customers when a slot opens", MessageFlow: "Customers opt in at the counter",
		Samples: []string{"A slot opened at 3pm. Reply YES", "You're booked"}, HasEmbeddedLinks: true,
		OptInKeywords: []string{"START"}, OptInMessage: "You're in", OptOutKeywords: []string{"STOP", "CANCEL"},
		OptOutMessage: "You're out", HelpKeywords: []string{"HELP"}, HelpMessage: "Call us"})
	require.NoError(t, err)
	require.Equal(t, "IN_PROGRESS", camp.Status)
	fake.SetCampaignStatus(camp.SID, "FAILED", "The campaign's samples do not match its description")
	camp, err = tw.Campaign(ctx, svc, camp.SID)
	require.NoError(t, err)
	require.Equal(t, "FAILED", camp.Status)
	require.Equal(t, sms.Rejected, camp.Review)
	require.Contains(t, camp.FailureReason, "samples do not match")
	listed, ok, err := tw.FindCampaign(ctx, svc)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, camp, listed)
	require.NoError(t, tw.DeleteCampaign(ctx, svc, camp.SID))
	require.Empty(t, fake.Campaigns())
}

// TestStatusCallbackOfAServiceTextNamesTheNumber: Twilio's report of a text sent through
// a Messaging Service gives the number the service picked as From, which is how a
// delivery report finds its shop.
func TestStatusCallbackOfAServiceTextNamesTheNumber(t *testing.T) {
	t.Parallel()
	tw, fake := newSender(t)
	ctx := t.Context()
	n, err := tw.BuyNumber(ctx, 512, "shop")
	require.NoError(t, err)
	svc, err := tw.CreateService(ctx, sms.ServiceSpec{Name: "shop", InboundURL: "https://example.com/a", StatusCallbackURL: "https://example.com/b"})
	require.NoError(t, err)
	require.NoError(t, tw.AttachNumber(ctx, svc, n.SID))
	// A receiver that takes every report, where the text's StatusCallback points.
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(rcv.Close)
	sender, err := twilio.New(twilio.Config{AccountSID: twiliofake.TestAccountSID, AuthToken: twiliofake.TestAuthToken,
		APIURL: fake.URL(), StatusCallbackURL: rcv.URL + "/webhooks/twilio/status"})
	require.NoError(t, err)
	sid, err := sender.Text(ctx, sms.Message{From: n.Number, MessagingServiceSID: svc, To: "+15555550123", Body: "hi"})
	require.NoError(t, err)
	_, err = fake.Report(ctx, sid, "undelivered", 30003)
	require.NoError(t, err)
	cbs := fake.Callbacks()
	require.Len(t, cbs, 1)
	require.Equal(t, n.Number, cbs[0].Form.Get("From"))
	require.Equal(t, svc, cbs[0].Form.Get("MessagingServiceSid"))
}
