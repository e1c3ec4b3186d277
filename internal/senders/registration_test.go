package senders_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/jobs"
	lang "github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/senders"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/sms"
	"github.com/slotrecovery/slotrecovery/internal/testkit/twiliofake"
	"github.com/slotrecovery/slotrecovery/internal/texts"
)

func company() senders.Details {
	return senders.Details{BusinessName: "Ana's Salon LLC", BusinessType: "private_profit", EIN: "12-3456789",
		Website: "https://anas.example.com",
		Address: senders.Address{Street: "1 Congress Ave", City: "Austin", Region: "TX", PostalCode: "78701", Country: "US"},
		Contact: senders.Contact{FirstName: "Ana", LastName: "Diaz", Email: "ana@example.com", Phone: "+15125550142"}}
}

func soleProprietor() senders.Details {
	d := company()
	d.BusinessType, d.EIN, d.Website = "sole_proprietor", "", ""
	return d
}

// runJobs works the registration jobs on the world's database until the test ends.
func (w *world) runJobs(t *testing.T, svc *senders.Service) {
	t.Helper()
	workers := river.NewWorkers()
	river.AddWorker(workers, &senders.RegistrationWorker{Service: svc})
	c, err := river.NewClient(riverpgxv5.New(w.pool), &river.Config{
		Queues:            map[string]river.QueueConfig{jobs.QueueSenders: {MaxWorkers: 2}},
		Workers:           workers,
		FetchPollInterval: 20 * time.Millisecond, FetchCooldown: 5 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	require.NoError(t, c.Start(context.Background()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = c.Stop(ctx)
	})
}

// status waits for the shop's registration to reach want.
func (w *world) status(t *testing.T, svc *senders.Service, shop shops.Shop, want string) senders.Registration {
	t.Helper()
	var last senders.Registration
	require.Eventually(t, func() bool {
		s, err := svc.Get(context.Background(), shop)
		if err != nil || s.Registration == nil {
			return false
		}
		last = *s.Registration
		return last.Status == want
	}, 20*time.Second, 10*time.Millisecond, "registration never reached %s", want)
	return last
}

func (w *world) withSender(t *testing.T, svc *senders.Service, language string) (shops.Shop, senders.Sender) {
	t.Helper()
	s, _, err := w.shops.Create(t.Context(), shops.NewShop{Name: "Ana's Salon", Timezone: "America/Chicago",
		SMSNumber: "+15555550150", Currency: "usd", PaymentMode: shops.PaymentNone, Language: lang.Code(language)})
	require.NoError(t, err)
	sender, err := svc.Provision(t.Context(), s.ID, senders.NumberRequest{AreaCode: "512"})
	require.NoError(t, err)
	s, err = w.shops.Get(t.Context(), s.ID)
	require.NoError(t, err)
	return s, sender
}

func onlyBrand(t *testing.T, fake *twiliofake.Server) twiliofake.Brand {
	t.Helper()
	var b []twiliofake.Brand
	require.Eventually(t, func() bool { b = fake.Brands(); return len(b) == 1 }, 20*time.Second, 10*time.Millisecond)
	return b[0]
}

func onlyCampaign(t *testing.T, fake *twiliofake.Server) twiliofake.Campaign {
	t.Helper()
	var c []twiliofake.Campaign
	require.Eventually(t, func() bool { c = fake.Campaigns(); return len(c) == 1 }, 20*time.Second, 10*time.Millisecond)
	return c[0]
}

// TestCompanyRegistrationReachesVerified walks a company's registration to VERIFIED
// against the fake, every call held to Twilio's documents.
func TestCompanyRegistrationReachesVerified(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	svc := w.service(w.twilio, w.twilio)
	w.runJobs(t, svc)
	shop, sender := w.withSender(t, svc, "es")

	got, err := svc.Register(t.Context(), shop, company())
	require.NoError(t, err)
	require.Equal(t, senders.StatusSubmitted, got.Registration.Status)
	_, err = svc.Register(t.Context(), shop, company())
	require.ErrorIs(t, err, senders.ErrRegistrationUnderway)

	w.status(t, svc, shop, senders.StatusBrandPending)
	brand := onlyBrand(t, w.fake)
	require.Equal(t, "STANDARD", brand.BrandType)
	w.fake.SetBrandStatus(brand.SID, "APPROVED", "")
	w.status(t, svc, shop, senders.StatusCampaignPending)
	camp := onlyCampaign(t, w.fake)
	require.Equal(t, sender.MessagingServiceSID, camp.ServiceSID)
	require.Equal(t, brand.SID, camp.BrandSID)
	require.Equal(t, "CUSTOMER_CARE", camp.Form.Get("UsAppToPersonUsecase"))
	// The samples are the product's own texts, in the shop's language.
	samples := camp.Form["MessageSamples"]
	require.Len(t, samples, 2)
	es := texts.In("es")
	require.Equal(t, es.OptedOut(&shop), camp.Form.Get("OptOutMessage"))
	day := time.Now().In(shop.Location).AddDate(0, 0, 1)
	at := time.Date(day.Year(), day.Month(), day.Day(), 15, 0, 0, 0, shop.Location)
	require.Equal(t, []string{es.Offer(&shop, "Haircut", at, 3500), es.Confirmed(&shop, "Haircut", at)}, samples,
		"an offer and the answer to its YES, in the shop's language")
	require.Subset(t, camp.Form["OptOutKeywords"], []string{"STOP", "BAJA", "ARRET"}, "the opt-out keywords of every language")
	require.Subset(t, camp.Form["HelpKeywords"], []string{"HELP", "AYUDA", "AIDE"}, "the help keywords of every language")

	w.fake.SetCampaignStatus(camp.SID, "VERIFIED", "")
	reg := w.status(t, svc, shop, senders.StatusVerified)
	require.Equal(t, "APPROVED", reg.BrandStatus)
	require.Equal(t, "VERIFIED", reg.CampaignStatus)

	profile := w.bundle(t, "customer_profile")
	require.Equal(t, "RNdfbf3fae0e1107f8aded0e7cead80bf5", profile.PolicySID, "a secondary customer profile")
	require.Equal(t, "pending-review", profile.Status)
	require.Len(t, profile.Assigned, 3)
	info, ok := w.fake.EndUser(profile.Assigned[0])
	require.True(t, ok)
	require.Equal(t, "12-3456789", info.Attributes["business_registration_number"])

	steps, err := svc.Transitions(t.Context(), shop.ID)
	require.NoError(t, err)
	var seen []string
	for _, s := range steps {
		if len(seen) == 0 || seen[len(seen)-1] != s.Status {
			seen = append(seen, s.Status)
		}
	}
	require.Equal(t, []string{"submitted", "brand_pending", "campaign_pending", "verified"}, seen)
	require.Equal(t, 1, w.fake.CallCount("CreateBrandRegistrations"))
	require.Equal(t, 1, w.fake.CallCount("CreateUsAppToPerson"))
}

func (w *world) bundle(t *testing.T, kind string) twiliofake.Bundle {
	t.Helper()
	for _, b := range w.fake.Bundles() {
		if b.Kind == kind {
			return b
		}
	}
	t.Fatalf("no %s", kind)
	return twiliofake.Bundle{}
}

func TestSoleProprietorRegistrationReachesVerified(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	svc := w.service(w.twilio, w.twilio)
	w.runJobs(t, svc)
	shop, _ := w.withSender(t, svc, "en")

	_, err := svc.Register(t.Context(), shop, soleProprietor())
	require.NoError(t, err)
	brand := onlyBrand(t, w.fake)
	require.Equal(t, "SOLE_PROPRIETOR", brand.BrandType)
	starter := w.bundle(t, "customer_profile")
	require.Equal(t, "RN806dd6cd175f314e1f96a9727ee271f4", starter.PolicySID, "a starter profile")
	require.Len(t, starter.Assigned, 2, "the person and the address")
	person, ok := w.fake.EndUser(starter.Assigned[0])
	require.True(t, ok)
	require.Equal(t, "starter_customer_profile_information", person.Type)
	require.Equal(t, "+15125550142", person.Attributes["phone_number"], "the owner's mobile, for the one-time code")
	w.fake.SetBrandStatus(brand.SID, "APPROVED", "")
	camp := onlyCampaign(t, w.fake)
	require.Equal(t, "SOLE_PROPRIETOR", camp.Form.Get("UsAppToPersonUsecase"))
	w.fake.SetCampaignStatus(camp.SID, "VERIFIED", "")
	w.status(t, svc, shop, senders.StatusVerified)
}

// TestFailedCampaignKeepsItsReasonAndIsResubmitted: the reason Twilio gives is kept; a
// resubmission keeps the approved brand, deletes the failed campaign and registers a new
// one, which is verified.
func TestFailedCampaignKeepsItsReasonAndIsResubmitted(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	svc := w.service(w.twilio, w.twilio)
	w.runJobs(t, svc)
	shop, _ := w.withSender(t, svc, "en")

	_, err := svc.Register(t.Context(), shop, company())
	require.NoError(t, err)
	w.fake.SetBrandStatus(onlyBrand(t, w.fake).SID, "APPROVED", "")
	first := onlyCampaign(t, w.fake)
	const reason = "Campaign description does not match the sample messages"
	w.fake.SetCampaignStatus(first.SID, "FAILED", reason)
	reg := w.status(t, svc, shop, senders.StatusFailed)
	require.Contains(t, reg.FailureReason, reason)
	require.Equal(t, "FAILED", reg.CampaignStatus)

	_, err = svc.Register(t.Context(), shop, company())
	require.NoError(t, err)
	var second twiliofake.Campaign
	require.Eventually(t, func() bool {
		c := w.fake.Campaigns()
		if len(c) == 1 && c[0].SID != first.SID {
			second = c[0]
			return true
		}
		return false
	}, 20*time.Second, 10*time.Millisecond, "the failed campaign is replaced: %+v %+v", w.fake.Campaigns(), func() any { s, _ := svc.Get(context.Background(), shop); return s.Registration }())
	w.fake.SetCampaignStatus(second.SID, "VERIFIED", "")
	reg = w.status(t, svc, shop, senders.StatusVerified)
	require.Empty(t, reg.FailureReason)
	require.Len(t, w.fake.Brands(), 1, "the approved brand is kept")
	require.Equal(t, 1, w.fake.CallCount("DeleteUsAppToPerson"))
}

func TestFailedBrandKeepsItsReason(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	svc := w.service(w.twilio, w.twilio)
	w.runJobs(t, svc)
	shop, _ := w.withSender(t, svc, "en")
	_, err := svc.Register(t.Context(), shop, company())
	require.NoError(t, err)
	w.fake.SetBrandStatus(onlyBrand(t, w.fake).SID, "FAILED", "TCR: the EIN does not match the business name")
	reg := w.status(t, svc, shop, senders.StatusFailed)
	require.Equal(t, "TCR: the EIN does not match the business name", reg.FailureReason)
	require.Equal(t, "FAILED", reg.BrandStatus)
}

// crashing wraps the registrar: after the call named by crashAfter reaches Twilio, the
// instance "dies" (the call's answer never reaches the flow), once.
type crashing struct {
	senders.Registrar
	mu         sync.Mutex
	crashAfter string
}

func (c *crashing) crash(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.crashAfter == name {
		c.crashAfter = ""
		return true
	}
	return false
}

func (c *crashing) CreateBrand(ctx context.Context, b sms.Business, done sms.Done) (sms.Brand, error) {
	brand, err := c.Registrar.CreateBrand(ctx, b, done)
	if c.crash("brand") {
		return sms.Brand{}, context.Canceled
	}
	return brand, err
}

func (c *crashing) CreateCampaign(ctx context.Context, service string, spec sms.Campaign) (sms.CampaignState, error) {
	s, err := c.Registrar.CreateCampaign(ctx, service, spec)
	if c.crash("campaign") {
		return sms.CampaignState{}, context.Canceled
	}
	return s, err
}

// TestKilledInstanceResumesWithoutDuplicates: an instance dies right after Twilio made the
// brand, and again right after it made the campaign, each before recording it; the next
// run finds them instead of registering a second brand or campaign.
func TestKilledInstanceResumesWithoutDuplicates(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	reg := &crashing{Registrar: w.twilio, crashAfter: "brand"}
	svc := w.service(w.twilio, reg)
	shop, _ := w.withSender(t, svc, "en")
	_, err := svc.Register(t.Context(), shop, company())
	require.NoError(t, err)

	_, err = svc.Advance(t.Context(), shop.ID, 1)
	require.ErrorIs(t, err, context.Canceled, "the first instance dies")
	wait, err := svc.Advance(t.Context(), shop.ID, 1)
	require.NoError(t, err)
	require.Positive(t, wait)
	require.Len(t, w.fake.Brands(), 1)

	w.fake.SetBrandStatus(w.fake.Brands()[0].SID, "APPROVED", "")
	reg.mu.Lock()
	reg.crashAfter = "campaign"
	reg.mu.Unlock()
	_, err = svc.Advance(t.Context(), shop.ID, 1)
	require.ErrorIs(t, err, context.Canceled)
	_, err = svc.Advance(t.Context(), shop.ID, 1)
	require.NoError(t, err)
	require.Len(t, w.fake.Campaigns(), 1)
	w.fake.SetCampaignStatus(w.fake.Campaigns()[0].SID, "VERIFIED", "")
	wait, err = svc.Advance(t.Context(), shop.ID, 1)
	require.NoError(t, err)
	require.Zero(t, wait)
	got, err := svc.Get(t.Context(), shop)
	require.NoError(t, err)
	require.Equal(t, senders.StatusVerified, got.Registration.Status)
	// Every object was made once: one profile, one trust product, one of each end user.
	require.Equal(t, 1, w.fake.CallCount("CreateCustomerProfile"))
	require.Equal(t, 1, w.fake.CallCount("CreateTrustProduct"))
	require.Equal(t, 3, w.fake.CallCount("CreateEndUser"))
	require.Equal(t, 1, w.fake.CallCount("CreateBrandRegistrations"))
	require.Equal(t, 1, w.fake.CallCount("CreateUsAppToPerson"))
}

// TestRegistrationCallsArePacedAcrossInstances: two instances (services sharing Redis)
// polling at once never call Twilio's registration endpoints faster than once a second.
func TestRegistrationCallsArePacedAcrossInstances(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	fast := w.service(w.twilio, w.twilio)
	shop, _ := w.withSender(t, fast, "en")
	_, err := fast.Register(t.Context(), shop, company())
	require.NoError(t, err)
	_, err = fast.Advance(t.Context(), shop.ID, 1) // the flow up to the brand, unpaced
	require.NoError(t, err)

	w.cfg.PerSecond = 1
	a, b := w.service(w.twilio, w.twilio), w.service(w.twilio, w.twilio)
	before := len(w.fake.Calls())
	var wg sync.WaitGroup
	for _, svc := range []*senders.Service{a, b, a, b} {
		wg.Go(func() {
			_, err := svc.Advance(context.Background(), shop.ID, 1)
			require.NoError(t, err)
		})
	}
	wg.Wait()
	calls := w.fake.Calls()[before:]
	require.Len(t, calls, 4, "each run reads the brand once")
	for i := 1; i < len(calls); i++ {
		gap := calls[i].At.Sub(calls[i-1].At)
		require.GreaterOrEqual(t, gap, 950*time.Millisecond, "call %d came %s after the one before", i, gap)
	}
}

func TestDetailsValidateNamesTheField(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		field  string
		change func(*senders.Details)
	}{
		{"business_name", func(d *senders.Details) { d.BusinessName = " " }},
		{"business_type", func(d *senders.Details) { d.BusinessType = "llc" }},
		{"ein", func(d *senders.Details) { d.EIN = "123" }},
		{"website", func(d *senders.Details) { d.Website = "anas.example.com" }},
		{"address.street", func(d *senders.Details) { d.Address.Street = "" }},
		{"address.postal_code", func(d *senders.Details) { d.Address.PostalCode = "" }},
		{"address.country", func(d *senders.Details) { d.Address.Country = "usa" }},
		{"contact.first_name", func(d *senders.Details) { d.Contact.FirstName = "" }},
		{"contact.email", func(d *senders.Details) { d.Contact.Email = "ana at example" }},
		{"contact.phone", func(d *senders.Details) { d.Contact.Phone = "5125550142" }},
	} {
		d := company()
		tc.change(&d)
		err := d.Validate()
		_, field := problemCode(t, err)
		require.Equal(t, tc.field, field)
	}
	require.NoError(t, company().Validate())
	require.NoError(t, soleProprietor().Validate(), "a sole proprietor needs no EIN nor website")
}

func TestRegisterNeedsTheShopsOwnSender(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	svc := w.service(w.twilio, w.twilio)
	shop := w.shop(t, "+15555550160")
	_, err := svc.Register(t.Context(), shop, company())
	require.ErrorIs(t, err, senders.ErrNoSender)
}

func TestRequiredRegistrationGatesUSLocalNumbers(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.cfg.RequireUSA2P = true
	svc := w.service(w.twilio, w.twilio)
	w.runJobs(t, svc)
	uk := w.shop(t, "+447700900150")
	require.NoError(t, svc.CheckCanText(t.Context(), uk), "not a US number")
	tollFree := w.shop(t, "+18885550150")
	require.NoError(t, svc.CheckCanText(t.Context(), tollFree), "toll-free numbers are verified otherwise")

	shop, _ := w.withSender(t, svc, "en")
	require.ErrorIs(t, svc.CheckCanText(t.Context(), shop), senders.ErrNotRegistered)
	_, err := svc.Register(t.Context(), shop, company())
	require.NoError(t, err)
	w.fake.SetBrandStatus(onlyBrand(t, w.fake).SID, "APPROVED", "")
	require.ErrorIs(t, svc.CheckCanText(t.Context(), shop), senders.ErrNotRegistered)
	w.fake.SetCampaignStatus(onlyCampaign(t, w.fake).SID, "VERIFIED", "")
	w.status(t, svc, shop, senders.StatusVerified)
	require.NoError(t, svc.CheckCanText(t.Context(), shop))

	off := w.cfg
	off.RequireUSA2P = false
	other := w.shop(t, "+15125550777")
	require.NoError(t, senders.New(w.pool, w.queue, w.twilio, w.twilio, w.pacer, off).CheckCanText(t.Context(), other))
}

// dying is an instance's registrar that dies right after Twilio made the brand: the
// brand exists, its SID never reaches the flow, and the instance stops.
type dying struct {
	senders.Registrar
	made chan struct{}
}

func (d *dying) CreateBrand(ctx context.Context, b sms.Business, done sms.Done) (sms.Brand, error) {
	if _, err := d.Registrar.CreateBrand(ctx, b, done); err != nil {
		return sms.Brand{}, err
	}
	close(d.made)
	<-ctx.Done() // the instance is going down
	return sms.Brand{}, ctx.Err()
}

// TestAnotherInstanceResumesAKilledFlow: instance A's River worker walks the flow up to
// the brand, which Twilio makes, and A is stopped before recording it; instance B's
// worker takes the job over and finishes the registration with one brand and one
// campaign.
func TestAnotherInstanceResumesAKilledFlow(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	d := &dying{Registrar: w.twilio, made: make(chan struct{})}
	a := w.service(w.twilio, d)
	shop, _ := w.withSender(t, a, "en")

	workersA := river.NewWorkers()
	river.AddWorker(workersA, &senders.RegistrationWorker{Service: a})
	clientA, err := river.NewClient(riverpgxv5.New(w.pool), &river.Config{
		Queues:  map[string]river.QueueConfig{jobs.QueueSenders: {MaxWorkers: 1}},
		Workers: workersA, FetchPollInterval: 20 * time.Millisecond, FetchCooldown: 5 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	require.NoError(t, clientA.Start(context.Background()))
	_, err = a.Register(t.Context(), shop, company())
	require.NoError(t, err)
	select {
	case <-d.made:
	case <-time.After(20 * time.Second):
		t.Fatal("instance A never reached the brand")
	}
	stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, clientA.StopAndCancel(stop))
	require.Len(t, w.fake.Brands(), 1)

	b := w.service(w.twilio, w.twilio)
	w.runJobs(t, b)
	w.status(t, b, shop, senders.StatusBrandPending)
	brand := onlyBrand(t, w.fake)
	w.fake.SetBrandStatus(brand.SID, "APPROVED", "")
	w.fake.SetCampaignStatus(onlyCampaign(t, w.fake).SID, "VERIFIED", "")
	w.status(t, b, shop, senders.StatusVerified)
	require.Len(t, w.fake.Brands(), 1, "no second brand")
	require.Len(t, w.fake.Campaigns(), 1)
	require.Equal(t, 1, w.fake.CallCount("CreateBrandRegistrations"))
	require.Equal(t, 1, w.fake.CallCount("CreateCustomerProfile"), "the profile recorded by A is B's too")
}
