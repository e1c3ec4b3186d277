package sms

import "errors"

// The provider's side of a shop's own sender: a number in the platform's account, the
// Messaging Service that sends from it and receives its texts, and the US A2P 10DLC
// registration (a brand and a campaign) that carriers require before a US local number
// may text customers. These are the neutral shapes internal/senders speaks; the Twilio
// adapter (internal/sms/twilio) translates them.

// ErrNoNumberAvailable is returned when the provider has no number to buy for the asked
// area code.
var ErrNoNumberAvailable = errors.New("sms: no number available")

// ErrNumberNotInAccount is returned when a number to adopt is not one of the account's.
var ErrNumberNotInAccount = errors.New("sms: number not in the account")

// PhoneNumber is a number the account holds.
type PhoneNumber struct {
	// SID is the provider's id of the number (PN…).
	SID string
	// Number is the number in E.164 form.
	Number string
}

// ServiceSpec is a Messaging Service to make for one shop.
type ServiceSpec struct {
	// Name names the service in the provider's console; it also finds a service made by
	// an earlier attempt whose answer was lost.
	Name string
	// InboundURL is where the provider posts the texts customers send to the service's
	// numbers; StatusCallbackURL where it posts delivery reports.
	InboundURL, StatusCallbackURL string
}

// BundleKind is a kind of compliance bundle: a customer profile (who the business is)
// or a trust product (the A2P messaging profile on top of it).
type BundleKind string

// The bundle kinds.
const (
	CustomerProfile BundleKind = "customer_profile"
	TrustProduct    BundleKind = "trust_product"
)

// Brand is a registered A2P brand as the provider last reported it.
type Brand struct {
	SID string
	// Status is the provider's: PENDING, IN_REVIEW, APPROVED, FAILED, SUSPENDED, DELETED.
	Status string
	// FailureReason is the provider's reason when Status is FAILED; "" otherwise.
	FailureReason string
}

// Campaign is what an A2P campaign says about the product: its use, how customers opt
// in, sample texts and the keyword handling.
type Campaign struct {
	BrandSID         string
	UseCase          string
	Description      string
	MessageFlow      string
	Samples          []string
	HasEmbeddedLinks bool
	OptInKeywords    []string
	OptInMessage     string
	OptOutKeywords   []string
	OptOutMessage    string
	HelpKeywords     []string
	HelpMessage      string
}

// CampaignState is a campaign as the provider last reported it.
type CampaignState struct {
	SID string
	// Status is the provider's: PENDING, IN_PROGRESS, VERIFIED, FAILED.
	Status string
	// FailureReason is the provider's reason when Status is FAILED.
	FailureReason string
}

// Address is a business's street address, as a compliance bundle needs it.
type Address struct {
	CustomerName, Street, City, Region, PostalCode, Country string
}
