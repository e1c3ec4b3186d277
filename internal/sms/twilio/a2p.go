package twilio

import (
	"context"
	"maps"

	"github.com/slotrecovery/slotrecovery/internal/sms"
)

// The US A2P 10DLC registration of a business in Twilio's words (docs: "ISV API
// onboarding"): a customer profile (TrustHub) holding the business's information, its
// authorised representative and its address; an A2P trust product on top of it; then the
// brand (Messaging v1) made from both. internal/senders asks for the next step, paces
// and records it; nothing of this shape reaches it.

// Twilio's TrustHub policies: a secondary customer profile and an A2P messaging profile
// for a company; a starter profile and a sole proprietor A2P profile for a sole
// proprietor.
const (
	policySecondaryProfile = "RNdfbf3fae0e1107f8aded0e7cead80bf5"
	policyA2PProfile       = "RNb0d4771c2c98518d916a3d4cd70a8f8b"
	policyStarterProfile   = "RN806dd6cd175f314e1f96a9727ee271f4"
	policySoleProprietor   = "RN670d5d2e282a6130ae063b234b6019c8"
)

// Step names: what each step made is recorded under them (sms.Done). They are stored
// with registrations: never rename them.
const (
	stepProfile          = "customer_profile"
	stepBusinessInfo     = "business_information"
	stepRepresentative   = "authorized_representative"
	stepAddress          = "address"
	stepAddressDocument  = "address_document"
	stepProfileEvaluated = "customer_profile_evaluated"
	stepProfileSubmitted = "customer_profile_submitted"
	stepTrustProduct     = "trust_product"
	stepMessagingProfile = "messaging_profile_information"
	stepProductEvaluated = "trust_product_evaluated"
	stepProductSubmitted = "trust_product_submitted"
	assignedPrefix       = "assigned:"
)

// Brand and campaign statuses that end a review (Messaging v1).
const (
	brandApproved    = "APPROVED"
	brandFailed      = "FAILED"
	campaignVerified = "VERIFIED"
	campaignFailed   = "FAILED"
)

// NextBusinessStep is the first call of b's registration, up to its brand, that done
// does not hold yet; false when the business is registered and submitted for review
// (the brand comes next). Each step is one call to Twilio.
func (t *Sender) NextBusinessStep(b sms.Business, done sms.Done) (sms.Step, bool) {
	profilePolicy, productPolicy := policySecondaryProfile, policyA2PProfile
	if b.SoleProprietor() {
		profilePolicy, productPolicy = policyStarterProfile, policySoleProprietor
	}
	name := b.Name
	person := map[string]any{"first_name": b.FirstName, "last_name": b.LastName, "email": b.Email, "phone_number": b.Phone}
	// A company's profile holds its business information and its authorised
	// representative; a sole proprietor's starter profile holds the person alone.
	infoType := "customer_profile_business_information"
	info := map[string]any{"business_name": b.Name, "business_type": businessType(b.Type),
		"business_industry": "PERSONAL_CARE", "business_regions_of_operation": "USA_AND_CANADA",
		"business_registration_identifier": "EIN", "business_registration_number": b.EIN}
	if b.Website != "" {
		info["website_url"] = b.Website
	}
	if b.SoleProprietor() {
		infoType, info = "starter_customer_profile_information", person
	}
	// A company's A2P profile says what kind of company it is; a sole proprietor's names
	// the brand and the mobile its one-time code goes to.
	messagingType, messagingInfo := "us_a2p_messaging_profile_information", map[string]any{"company_type": companyType(b.Type)}
	if b.SoleProprietor() {
		messagingType = "sole_proprietor_information"
		messagingInfo = map[string]any{"brand_name": b.Name, "vertical": "PERSONAL_CARE", "mobile_phone_number": b.Phone}
	}

	var plan []planned
	add := func(name string, run func(ctx context.Context) (string, error)) {
		plan = append(plan, planned{name, run})
	}
	assign := func(kind sms.BundleKind, bundle string, objects ...string) {
		for _, obj := range objects {
			add(assignedPrefix+bundle+":"+obj, func(ctx context.Context) (string, error) {
				return obj, t.Assign(ctx, kind, bundle, obj)
			})
		}
	}
	evaluate := func(evaluated, submitted string, kind sms.BundleKind, bundle, policy string) {
		add(evaluated, func(ctx context.Context) (string, error) {
			ok, why, err := t.Evaluate(ctx, kind, bundle, policy)
			if err == nil && !ok {
				return "", &sms.IncompleteError{Reason: why}
			}
			return "compliant", err
		})
		add(submitted, func(ctx context.Context) (string, error) { return "submitted", t.Submit(ctx, kind, bundle) })
	}

	add(stepProfile, func(ctx context.Context) (string, error) {
		return t.CreateBundle(ctx, sms.CustomerProfile, name, b.Email, profilePolicy)
	})
	add(stepBusinessInfo, func(ctx context.Context) (string, error) { return t.CreateEndUser(ctx, infoType, name, info) })
	if !b.SoleProprietor() {
		add(stepRepresentative, func(ctx context.Context) (string, error) {
			rep := maps.Clone(person)
			rep["business_title"], rep["job_position"] = "Owner", "Other"
			return t.CreateEndUser(ctx, "authorized_representative_1", b.FirstName+" "+b.LastName, rep)
		})
	}
	add(stepAddress, func(ctx context.Context) (string, error) {
		a := b.Address
		a.CustomerName = name
		return t.CreateAddress(ctx, a)
	})
	add(stepAddressDocument, func(ctx context.Context) (string, error) {
		return t.CreateDocument(ctx, "customer_profile_address", name+" address", map[string]any{"address_sids": done[stepAddress]})
	})
	// The rest names what the steps above made: planned only once they are done.
	if next, ok := firstUndone(plan, done); ok {
		return next, true
	}
	profile := done[stepProfile]
	objects := []string{done[stepBusinessInfo]}
	if !b.SoleProprietor() {
		objects = append(objects, done[stepRepresentative])
	}
	objects = append(objects, done[stepAddressDocument])
	if t.primary != "" && !b.SoleProprietor() {
		objects = append(objects, t.primary)
	}
	assign(sms.CustomerProfile, profile, objects...)
	evaluate(stepProfileEvaluated, stepProfileSubmitted, sms.CustomerProfile, profile, profilePolicy)
	add(stepTrustProduct, func(ctx context.Context) (string, error) {
		return t.CreateBundle(ctx, sms.TrustProduct, name+" A2P", b.Email, productPolicy)
	})
	add(stepMessagingProfile, func(ctx context.Context) (string, error) {
		return t.CreateEndUser(ctx, messagingType, name, messagingInfo)
	})
	if next, ok := firstUndone(plan, done); ok {
		return next, true
	}
	product := done[stepTrustProduct]
	assign(sms.TrustProduct, product, done[stepMessagingProfile], profile)
	evaluate(stepProductEvaluated, stepProductSubmitted, sms.TrustProduct, product, productPolicy)
	return firstUndone(plan, done)
}

// planned is a step of NextBusinessStep's plan.
type planned struct {
	name string
	run  func(ctx context.Context) (string, error)
}

func firstUndone(plan []planned, done sms.Done) (sms.Step, bool) {
	for _, s := range plan {
		if _, ok := done[s.name]; !ok {
			return sms.Step{Name: s.name, Run: s.run}, true
		}
	}
	return sms.Step{}, false
}

func businessType(t string) string {
	switch t {
	case "sole_proprietor":
		return "Sole Proprietorship"
	case "non_profit":
		return "Non-profit Corporation"
	case "government":
		return "Government"
	}
	return "Corporation"
}

func companyType(t string) string {
	switch t {
	case "public_profit":
		return "public"
	case "non_profit":
		return "non-profit"
	case "government":
		return "government"
	case "sole_proprietor":
		return "sole_proprietor"
	}
	return "private"
}

func brandReview(status string) sms.Review {
	switch status {
	case brandApproved:
		return sms.Approved
	case brandFailed:
		return sms.Rejected
	}
	return sms.InReview
}

func campaignReview(status string) sms.Review {
	switch status {
	case campaignVerified:
		return sms.Approved
	case campaignFailed:
		return sms.Rejected
	}
	return sms.InReview
}

func brandType(b sms.Business) string {
	if b.SoleProprietor() {
		return "SOLE_PROPRIETOR"
	}
	return "STANDARD"
}

func useCase(c sms.Campaign) string {
	if c.SoleProprietor {
		return "SOLE_PROPRIETOR"
	}
	return "CUSTOMER_CARE"
}
