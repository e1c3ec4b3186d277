package sms

import (
	"context"
	"errors"
)

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
// or a trust product (the A2P messaging profile on top of it). The Twilio adapter's own
// words; internal/senders speaks of a business, a brand and a campaign.
type BundleKind string

// The bundle kinds.
const (
	CustomerProfile BundleKind = "customer_profile"
	TrustProduct    BundleKind = "trust_product"
)

// Business is who registers a brand: what the provider's review of the business needs.
type Business struct {
	Name string
	// Type is one of BusinessTypes.
	Type    string
	EIN     string
	Website string
	Address Address
	// The authorised representative; Phone is their mobile (a sole proprietor's brand
	// sends its one-time code there).
	FirstName, LastName, Email, Phone string
}

// BusinessTypes are the kinds of business a registration takes.
var BusinessTypes = []string{"sole_proprietor", "private_profit", "public_profit", "non_profit", "government"}

// SoleProprietor reports whether the business is one person without an EIN.
func (b Business) SoleProprietor() bool { return b.Type == "sole_proprietor" }

// Done is what a registration's calls have made so far, by step name (each step's
// result: the id the provider gave, or a marker). The caller keeps it; the provider's
// adapter reads it to know what comes next.
type Done map[string]string

// Step is the provider's next call in registering a business before its brand: Run
// makes it and returns what to record under Name (stored: never renamed).
type Step struct {
	Name string
	Run  func(ctx context.Context) (string, error)
}

// IncompleteError is a step's answer when the provider finds the business's details
// incomplete: the registration fails with Reason, and a resubmission with fixed details
// starts again.
type IncompleteError struct{ Reason string }

func (e *IncompleteError) Error() string { return "sms: registration incomplete: " + e.Reason }

// Review is where the provider's review of a brand or a campaign stands.
type Review int

// The reviews' outcomes.
const (
	InReview Review = iota
	Approved
	Rejected
)

// Brand is a registered A2P brand as the provider last reported it.
type Brand struct {
	SID    string
	Review Review
	// Status is the provider's: PENDING, IN_REVIEW, APPROVED, FAILED, SUSPENDED, DELETED.
	Status string
	// FailureReason is the provider's reason when Status is FAILED; "" otherwise.
	FailureReason string
}

// Campaign is what an A2P campaign says about the product: its use, how customers opt
// in, sample texts and the keyword handling.
type Campaign struct {
	BrandSID string
	// SoleProprietor says the brand is a sole proprietor's, whose campaigns have a use
	// case of their own.
	SoleProprietor   bool
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
	SID    string
	Review Review
	// Status is the provider's: PENDING, IN_PROGRESS, VERIFIED, FAILED.
	Status string
	// FailureReason is the provider's reason when Status is FAILED.
	FailureReason string
}

// Address is a business's street address, as a compliance bundle needs it.
type Address struct {
	CustomerName, Street, City, Region, PostalCode, Country string
}
