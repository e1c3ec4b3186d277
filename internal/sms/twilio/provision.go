package twilio

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"

	api "github.com/twilio/twilio-go/rest/api/v2010"
	messaging "github.com/twilio/twilio-go/rest/messaging/v1"
	trusthub "github.com/twilio/twilio-go/rest/trusthub/v1"

	"github.com/slotrecovery/slotrecovery/internal/phone"
	"github.com/slotrecovery/slotrecovery/internal/sms"
)

// A shop's own sender through Twilio: numbers (the REST API's AvailablePhoneNumbers and
// IncomingPhoneNumbers), Messaging Services (Messaging v1), and the US A2P 10DLC
// registration (TrustHub v1's customer profiles and trust products, Messaging v1's brand
// registrations and Usa2p campaigns). Every call goes to Config.APIURL when it is set.
// Each method is one call to Twilio (or one list), bounded by the sender's timeout and
// the caller's ctx; internal/senders decides the order and records what each made.

func (t *Sender) rest(ctx context.Context) *api.ApiService {
	return api.NewApiService(t.handler(ctx, nil))
}

func (t *Sender) messaging(ctx context.Context) *messaging.ApiService {
	return messaging.NewApiService(t.handler(ctx, nil))
}

func (t *Sender) trusthub(ctx context.Context) *trusthub.ApiService {
	return trusthub.NewApiService(t.handler(ctx, nil))
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// FindNumber returns the account's number, or sms.ErrNumberNotInAccount.
func (t *Sender) FindNumber(ctx context.Context, number string) (sms.PhoneNumber, error) {
	list, err := t.rest(ctx).ListIncomingPhoneNumber(
		(&api.ListIncomingPhoneNumberParams{}).SetPhoneNumber(number).SetPageSize(20).SetLimit(20))
	if err != nil {
		return sms.PhoneNumber{}, fmt.Errorf("find number %s: %w", phone.Mask(number), fromTwilio(err))
	}
	for _, n := range list {
		if str(n.PhoneNumber) == number {
			return sms.PhoneNumber{SID: str(n.Sid), Number: number}, nil
		}
	}
	return sms.PhoneNumber{}, fmt.Errorf("find number %s: %w", phone.Mask(number), sms.ErrNumberNotInAccount)
}

// FindNumberNamed returns the account's number whose friendly name is name: one bought
// by an earlier attempt whose answer was lost.
func (t *Sender) FindNumberNamed(ctx context.Context, name string) (sms.PhoneNumber, bool, error) {
	list, err := t.rest(ctx).ListIncomingPhoneNumber(
		(&api.ListIncomingPhoneNumberParams{}).SetFriendlyName(name).SetPageSize(20).SetLimit(20))
	if err != nil {
		return sms.PhoneNumber{}, false, fmt.Errorf("find number named %q: %w", name, fromTwilio(err))
	}
	for _, n := range list {
		if str(n.FriendlyName) == name {
			return sms.PhoneNumber{SID: str(n.Sid), Number: str(n.PhoneNumber)}, true, nil
		}
	}
	return sms.PhoneNumber{}, false, nil
}

// BuyNumber buys an SMS-capable US local number in areaCode (any when 0), named name.
func (t *Sender) BuyNumber(ctx context.Context, areaCode int, name string) (sms.PhoneNumber, error) {
	p := (&api.ListAvailablePhoneNumberLocalParams{}).SetSmsEnabled(true).SetPageSize(1).SetLimit(1)
	if areaCode != 0 {
		p.SetAreaCode(areaCode)
	}
	avail, err := t.rest(ctx).ListAvailablePhoneNumberLocal("US", p)
	if err != nil {
		return sms.PhoneNumber{}, fmt.Errorf("find a number to buy in %d: %w", areaCode, fromTwilio(err))
	}
	if len(avail) == 0 || str(avail[0].PhoneNumber) == "" {
		return sms.PhoneNumber{}, fmt.Errorf("buy a number in %d: %w", areaCode, sms.ErrNoNumberAvailable)
	}
	n, err := t.rest(ctx).CreateIncomingPhoneNumber(
		(&api.CreateIncomingPhoneNumberParams{}).SetPhoneNumber(*avail[0].PhoneNumber).SetFriendlyName(name))
	if err != nil {
		return sms.PhoneNumber{}, fmt.Errorf("buy number %s: %w", phone.Mask(*avail[0].PhoneNumber), fromTwilio(err))
	}
	return sms.PhoneNumber{SID: str(n.Sid), Number: str(n.PhoneNumber)}, nil
}

// FindService returns the SID of the Messaging Service named name, if there is one.
func (t *Sender) FindService(ctx context.Context, name string) (string, bool, error) {
	list, err := t.messaging(ctx).ListService((&messaging.ListServiceParams{}).SetPageSize(50).SetLimit(1000))
	if err != nil {
		return "", false, fmt.Errorf("find messaging service %q: %w", name, fromTwilio(err))
	}
	for _, s := range list {
		if str(s.FriendlyName) == name {
			return str(s.Sid), true, nil
		}
	}
	return "", false, nil
}

// CreateService makes a Messaging Service: inbound texts and delivery reports to our
// webhooks, sticky sender (a customer always hears from the same number).
func (t *Sender) CreateService(ctx context.Context, spec sms.ServiceSpec) (string, error) {
	p := (&messaging.CreateServiceParams{}).SetFriendlyName(spec.Name).
		SetInboundRequestUrl(spec.InboundURL).SetInboundMethod("POST").
		SetStatusCallback(spec.StatusCallbackURL).SetStickySender(true).
		SetUseInboundWebhookOnNumber(false)
	s, err := t.messaging(ctx).CreateService(p)
	if err != nil {
		return "", fmt.Errorf("create messaging service %q: %w", spec.Name, fromTwilio(err))
	}
	return str(s.Sid), nil
}

// AttachNumber adds the number to the service's sender pool; a number already in it is
// left as it is.
func (t *Sender) AttachNumber(ctx context.Context, serviceSID, numberSID string) error {
	list, err := t.messaging(ctx).ListPhoneNumber(serviceSID, (&messaging.ListPhoneNumberParams{}).SetPageSize(50).SetLimit(400))
	if err != nil {
		return fmt.Errorf("list numbers of %s: %w", serviceSID, fromTwilio(err))
	}
	for _, n := range list {
		if str(n.Sid) == numberSID {
			return nil
		}
	}
	if _, err := t.messaging(ctx).CreatePhoneNumber(serviceSID, (&messaging.CreatePhoneNumberParams{}).SetPhoneNumberSid(numberSID)); err != nil {
		return fmt.Errorf("attach %s to %s: %w", numberSID, serviceSID, fromTwilio(err))
	}
	return nil
}

// CreateBundle makes an empty customer profile or trust product under policy.
func (t *Sender) CreateBundle(ctx context.Context, kind sms.BundleKind, name, email, policy string) (string, error) {
	th := t.trusthub(ctx)
	switch kind {
	case sms.CustomerProfile:
		b, err := th.CreateCustomerProfile((&trusthub.CreateCustomerProfileParams{}).SetFriendlyName(name).SetEmail(email).SetPolicySid(policy))
		if err != nil {
			return "", fmt.Errorf("create customer profile: %w", fromTwilio(err))
		}
		return str(b.Sid), nil
	case sms.TrustProduct:
		b, err := th.CreateTrustProduct((&trusthub.CreateTrustProductParams{}).SetFriendlyName(name).SetEmail(email).SetPolicySid(policy))
		if err != nil {
			return "", fmt.Errorf("create trust product: %w", fromTwilio(err))
		}
		return str(b.Sid), nil
	}
	return "", fmt.Errorf("create bundle: unknown kind %q", kind)
}

// CreateEndUser makes a TrustHub end user of the type with the attributes.
func (t *Sender) CreateEndUser(ctx context.Context, typ, name string, attrs map[string]any) (string, error) {
	u, err := t.trusthub(ctx).CreateEndUser((&trusthub.CreateEndUserParams{}).SetType(typ).SetFriendlyName(name).SetAttributes(attrs))
	if err != nil {
		return "", fmt.Errorf("create end user %s: %w", typ, fromTwilio(err))
	}
	return str(u.Sid), nil
}

// CreateAddress makes an address in the account (the REST API's Addresses).
func (t *Sender) CreateAddress(ctx context.Context, a sms.Address) (string, error) {
	p := (&api.CreateAddressParams{}).SetCustomerName(a.CustomerName).SetStreet(a.Street).SetCity(a.City).
		SetRegion(a.Region).SetPostalCode(a.PostalCode).SetIsoCountry(a.Country)
	r, err := t.rest(ctx).CreateAddress(p)
	if err != nil {
		return "", fmt.Errorf("create address: %w", fromTwilio(err))
	}
	return str(r.Sid), nil
}

// CreateDocument makes a TrustHub supporting document of the type.
func (t *Sender) CreateDocument(ctx context.Context, typ, name string, attrs map[string]any) (string, error) {
	d, err := t.trusthub(ctx).CreateSupportingDocument((&trusthub.CreateSupportingDocumentParams{}).SetType(typ).SetFriendlyName(name).SetAttributes(attrs))
	if err != nil {
		return "", fmt.Errorf("create supporting document %s: %w", typ, fromTwilio(err))
	}
	return str(d.Sid), nil
}

// Assign puts an end user, a document or another bundle into the bundle.
func (t *Sender) Assign(ctx context.Context, kind sms.BundleKind, bundle, object string) error {
	th := t.trusthub(ctx)
	var err error
	switch kind {
	case sms.CustomerProfile:
		_, err = th.CreateCustomerProfileEntityAssignment(bundle, (&trusthub.CreateCustomerProfileEntityAssignmentParams{}).SetObjectSid(object))
	case sms.TrustProduct:
		_, err = th.CreateTrustProductEntityAssignment(bundle, (&trusthub.CreateTrustProductEntityAssignmentParams{}).SetObjectSid(object))
	default:
		err = fmt.Errorf("unknown kind %q", kind)
	}
	if err != nil {
		return fmt.Errorf("assign %s to %s: %w", object, bundle, fromTwilio(err))
	}
	return nil
}

// Evaluate asks Twilio whether the bundle is complete under policy; reason says what is
// missing when it is not.
func (t *Sender) Evaluate(ctx context.Context, kind sms.BundleKind, bundle, policy string) (ok bool, reason string, err error) {
	th := t.trusthub(ctx)
	var status *string
	var results *[]any
	switch kind {
	case sms.CustomerProfile:
		e, cerr := th.CreateCustomerProfileEvaluation(bundle, (&trusthub.CreateCustomerProfileEvaluationParams{}).SetPolicySid(policy))
		err = cerr
		if e != nil {
			status, results = e.Status, e.Results
		}
	case sms.TrustProduct:
		e, cerr := th.CreateTrustProductEvaluation(bundle, (&trusthub.CreateTrustProductEvaluationParams{}).SetPolicySid(policy))
		err = cerr
		if e != nil {
			status, results = e.Status, e.Results
		}
	default:
		err = fmt.Errorf("unknown kind %q", kind)
	}
	if err != nil {
		return false, "", fmt.Errorf("evaluate %s: %w", bundle, fromTwilio(err))
	}
	if str(status) == "compliant" {
		return true, "", nil
	}
	return false, evaluationReason(results), nil
}

// evaluationReason reads the first failed requirement of an evaluation's results.
func evaluationReason(results *[]any) string {
	if results != nil {
		for _, r := range *results {
			m, ok := r.(map[string]any)
			if !ok || m["passed"] == true {
				continue
			}
			if name, ok := m["friendly_name"].(string); ok && name != "" {
				return "TrustHub evaluation: " + name + " is incomplete"
			}
		}
	}
	return "TrustHub evaluation: noncompliant"
}

// Submit sends the bundle for Twilio's review.
func (t *Sender) Submit(ctx context.Context, kind sms.BundleKind, bundle string) error {
	th := t.trusthub(ctx)
	var err error
	switch kind {
	case sms.CustomerProfile:
		_, err = th.UpdateCustomerProfile(bundle, (&trusthub.UpdateCustomerProfileParams{}).SetStatus("pending-review"))
	case sms.TrustProduct:
		_, err = th.UpdateTrustProduct(bundle, (&trusthub.UpdateTrustProductParams{}).SetStatus("pending-review"))
	default:
		err = fmt.Errorf("unknown kind %q", kind)
	}
	if err != nil {
		return fmt.Errorf("submit %s: %w", bundle, fromTwilio(err))
	}
	return nil
}

func brandOf(b *messaging.MessagingV1BrandRegistrations) sms.Brand {
	return sms.Brand{SID: str(b.Sid), Status: str(b.Status), Review: brandReview(str(b.Status)),
		FailureReason: str(b.FailureReason)}
}

// brandPageSize is how many brands one call of FindBrand reads.
const brandPageSize = 100

// FindBrand looks for the brand registered for the business whose steps made done in
// one page of the account's brands (one call): page is "" for the first, and next names
// the page after it ("" after the last).
func (t *Sender) FindBrand(ctx context.Context, done sms.Done, page string) (b sms.Brand, found bool, next string, err error) {
	profile := done[stepProfile]
	q, _ := url.ParseQuery(page)
	resp, err := t.messaging(ctx).PageBrandRegistrations((&messaging.ListBrandRegistrationsParams{}).SetPageSize(brandPageSize),
		q.Get("PageToken"), q.Get("Page"))
	if err != nil {
		return sms.Brand{}, false, "", fmt.Errorf("list brands: %w", fromTwilio(err))
	}
	for i := range resp.Data {
		if str(resp.Data[i].CustomerProfileBundleSid) == profile {
			return brandOf(&resp.Data[i]), true, "", nil
		}
	}
	if u, err := url.Parse(str(resp.Meta.NextPageUrl)); err == nil && len(resp.Data) > 0 && str(resp.Meta.NextPageUrl) != "" {
		nq := u.Query()
		next = url.Values{"PageToken": {nq.Get("PageToken")}, "Page": {nq.Get("Page")}}.Encode()
	}
	return sms.Brand{}, false, next, nil
}

// CreateBrand registers the brand of business b, whose steps made done: its customer
// profile and A2P trust product.
func (t *Sender) CreateBrand(ctx context.Context, b sms.Business, done sms.Done) (sms.Brand, error) {
	r, err := t.messaging(ctx).CreateBrandRegistrations((&messaging.CreateBrandRegistrationsParams{}).
		SetCustomerProfileBundleSid(done[stepProfile]).SetA2PProfileBundleSid(done[stepTrustProduct]).SetBrandType(brandType(b)))
	if err != nil {
		return sms.Brand{}, fmt.Errorf("create brand: %w", fromTwilio(err))
	}
	return brandOf(r), nil
}

// Brand reads a brand's status.
func (t *Sender) Brand(ctx context.Context, sid string) (sms.Brand, error) {
	b, err := t.messaging(ctx).FetchBrandRegistrations(sid)
	if err != nil {
		return sms.Brand{}, fmt.Errorf("fetch brand %s: %w", sid, fromTwilio(err))
	}
	return brandOf(b), nil
}

func campaignOf(c *messaging.MessagingV1UsAppToPersonResponse) sms.CampaignState {
	out := sms.CampaignState{SID: str(c.Sid), Status: str(c.CampaignStatus), Review: campaignReview(str(c.CampaignStatus))}
	if c.Errors != nil {
		for _, e := range *c.Errors {
			if d, ok := e["description"].(string); ok && d != "" {
				out.FailureReason = d
				if code, ok := e["error_code"].(float64); ok {
					out.FailureReason = strconv.Itoa(int(code)) + ": " + d
				}
				break
			}
		}
	}
	return out
}

// FindCampaign returns the service's campaign, if it has one.
func (t *Sender) FindCampaign(ctx context.Context, service string) (sms.CampaignState, bool, error) {
	list, err := t.messaging(ctx).ListUsAppToPerson(service, (&messaging.ListUsAppToPersonParams{}).SetPageSize(20).SetLimit(20))
	if err != nil {
		return sms.CampaignState{}, false, fmt.Errorf("list campaigns of %s: %w", service, fromTwilio(err))
	}
	if len(list) == 0 {
		return sms.CampaignState{}, false, nil
	}
	return campaignOf(&list[0]), true, nil
}

// CreateCampaign registers the service's campaign.
func (t *Sender) CreateCampaign(ctx context.Context, service string, c sms.Campaign) (sms.CampaignState, error) {
	p := (&messaging.CreateUsAppToPersonParams{}).SetBrandRegistrationSid(c.BrandSID).
		SetDescription(c.Description).SetMessageFlow(c.MessageFlow).SetMessageSamples(c.Samples).
		SetUsAppToPersonUsecase(useCase(c)).SetHasEmbeddedLinks(c.HasEmbeddedLinks).SetHasEmbeddedPhone(false).
		SetOptInKeywords(c.OptInKeywords).SetOptInMessage(c.OptInMessage).
		SetOptOutKeywords(c.OptOutKeywords).SetOptOutMessage(c.OptOutMessage).
		SetHelpKeywords(c.HelpKeywords).SetHelpMessage(c.HelpMessage)
	r, err := t.messaging(ctx).CreateUsAppToPerson(service, p)
	if err != nil {
		return sms.CampaignState{}, fmt.Errorf("create campaign of %s: %w", service, fromTwilio(err))
	}
	return campaignOf(r), nil
}

// Campaign reads a campaign's status.
func (t *Sender) Campaign(ctx context.Context, service, sid string) (sms.CampaignState, error) {
	r, err := t.messaging(ctx).FetchUsAppToPerson(service, sid, nil)
	if err != nil {
		return sms.CampaignState{}, fmt.Errorf("fetch campaign %s: %w", sid, fromTwilio(err))
	}
	return campaignOf(r), nil
}

// DeleteCampaign removes a failed campaign, so that a fixed one can be registered.
func (t *Sender) DeleteCampaign(ctx context.Context, service, sid string) error {
	if err := t.messaging(ctx).DeleteUsAppToPerson(service, sid); err != nil {
		var te *sms.Error
		if errors.As(fromTwilio(err), &te) && te.Code == 20404 {
			return nil // gone already
		}
		return fmt.Errorf("delete campaign %s: %w", sid, fromTwilio(err))
	}
	return nil
}
