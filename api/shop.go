package api

import (
	"time"

	"github.com/google/uuid"
)

// Shop is a shop as the owners' API shows it (GET /api/shop, the admin's answers); its
// API key only in the answers that make one.
type Shop struct {
	ID          uuid.UUID   `json:"id"`
	Name        string      `json:"name"`
	Timezone    string      `json:"timezone"`
	SMSNumber   string      `json:"sms_number"`
	Currency    string      `json:"currency"`
	PaymentMode string      `json:"payment_mode"`
	OfferPolicy OfferPolicy `json:"offer_policy"`
	APIKey      string      `json:"api_key,omitempty"`
	CreatedAt   time.Time   `json:"created_at"`
	// CalendarURL is the shop's secret calendar feed address.
	CalendarURL         string `json:"calendar_url"`
	CalendarFullDetails bool   `json:"calendar_full_details"`
	// Stripe is the shop's own Stripe account (STRIPE_CONNECT=on).
	Stripe StripeAccount `json:"stripe"`
	// Language is what its customers are texted in, unless theirs is set.
	Language string `json:"language"`
	// NotifyPhone is texted when a text waits in the owner's inbox; null for none. It is
	// always a confirmed number: a number set by PATCH waits in NotifyPhonePending
	// until the code texted to it is entered (POST /api/shop/notify_phone/confirm).
	NotifyPhone *string `json:"notify_phone"`
	// NotifyPhonePending is the alert number waiting for its code; null for none. In
	// GET and PATCH /api/shop and the admin's answers.
	NotifyPhonePending *NotifyPhonePending `json:"notify_phone_pending,omitempty"`
	// SMSSender is the shop's sender and its A2P registration; in GET /api/shop and
	// the admin's answers.
	SMSSender *SMSSender `json:"sms_sender,omitempty"`
	// AutoDeclare: a cancelled future appointment of the shop's book declares its
	// opening by itself; false leaves it for the owner to offer.
	AutoDeclare bool `json:"auto_declare"`
	// Formality is how the texts address customers: informal (tú, tu) or formal
	// (usted, vous); null for the language's default (informal in Spanish, formal in
	// French; English has one way).
	Formality *string `json:"formality"`
	// GSM7 is prefer (the default: accents outside GSM-7 are written as their base
	// letter where that makes a text fewer segments) or exact (accents kept).
	GSM7 string `json:"gsm7"`
	// HelpContact is how customers reach the shop, given in the answer to HELP (a phone
	// number, an e-mail or an address, at most 100 characters); null gives the shop's
	// SMS number.
	HelpContact *string `json:"help_contact"`
	// Slug names the shop's join page: JoinURL is PUBLIC_URL/join/<slug>.
	Slug    string `json:"slug"`
	JoinURL string `json:"join_url"`
	// PrivacyURL is the privacy policy the join page links to; null for none.
	PrivacyURL *string `json:"privacy_url"`
	// MoveUpDays is how far ahead of an opening (days) a booked appointment may be to be
	// offered it instead; ChainMax is how many moves one chain of freed times may make.
	MoveUpDays int `json:"move_up_days"`
	ChainMax   int `json:"chain_max"`
	// CustomersCancelByText: a booked customer's "can't make it" cancels the booking and
	// reopens its opening (true, the default); false hands it to the owner's inbox.
	CustomersCancelByText bool `json:"customers_cancel_by_text"`
	// Ranking orders a wave's customers inside each priority tier: priority (the list's
	// order, the default), fair, reliable or value.
	Ranking string `json:"ranking"`
	// SkipAfterNoShows is how many no-shows in 180 days keep a customer out of offers
	// until the owner clears them; null for never.
	SkipAfterNoShows *int `json:"skip_after_no_shows"`
	// JoinCountries are the calling codes whose numbers may join the list from the join
	// page or by text: the shop's own (its SMS number's) first, then those it added. In
	// GET and PATCH /api/shop and the admin's answers.
	JoinCountries []string `json:"join_countries,omitempty"`
	// JoinKeywords are the shop's own words that ask to join by text (up to 5, upper
	// case), besides JOIN, UNIRME and INSCRIRE, which always work; [] for none.
	JoinKeywords []string `json:"join_keywords"`
	// No-show protection (issue 48). DepositCents or DepositPercent is the deposit of a
	// payment_mode deposit shop (null for none); KeepCard keeps a checkout or deposit
	// customer's card for a fee (payment_mode card always keeps it).
	DepositCents   *int64 `json:"deposit_cents"`
	DepositPercent *int   `json:"deposit_percent"`
	KeepCard       bool   `json:"keep_card"`
	// CancellationPolicy is shown on the payment page, whose completion accepts it;
	// LateCancelHours before the start a cancellation becomes late; the fees are charged
	// to a kept card (0: none). PolicyVersion moves on with each change of them.
	CancellationPolicy string `json:"cancellation_policy"`
	LateCancelHours    int    `json:"late_cancel_hours"`
	NoShowFeeCents     int64  `json:"no_show_fee_cents"`
	LateCancelFeeCents int64  `json:"late_cancel_fee_cents"`
	PolicyVersion      int    `json:"policy_version"`
}

// NotifyPhonePending is an alert number waiting for the code texted to it.
type NotifyPhonePending struct {
	Phone     string    `json:"phone"`
	ExpiresAt time.Time `json:"expires_at"`
}

// OfferPolicy is a shop's offer policy.
type OfferPolicy struct {
	WaveSize            int         `json:"wave_size"`
	WaveIntervalSeconds int64       `json:"wave_interval_seconds"`
	MinLeadMinutes      int64       `json:"min_lead_minutes"`
	QuietHours          *QuietHours `json:"quiet_hours"`
	CooldownSeconds     int64       `json:"cooldown_seconds"`
	// MaxOffersPerDay is null when there is no cap.
	MaxOffersPerDay       *int  `json:"max_offers_per_day"`
	FirstWaveDelaySeconds int64 `json:"first_wave_delay_seconds"`
	SendRatePerSecond     int   `json:"send_rate_per_second"`
}

// QuietHours are the hours no offer is texted, "HH:MM" in the shop's time zone.
type QuietHours struct {
	Start string `json:"start"`
	End   string `json:"end"`
}

// StripeAccount is the shop's Stripe account in GET /api/shop.
type StripeAccount struct {
	// Connect is true when the server charges on shops' own accounts
	// (STRIPE_CONNECT=on); false, every payment is the platform's and the rest is empty.
	Connect bool `json:"connect"`
	// AccountID is the connected account; null before the shop connects one. After a
	// disconnection it is the account that left (DisconnectedAt says when).
	AccountID        *string    `json:"account_id"`
	ChargesEnabled   bool       `json:"charges_enabled"`
	PayoutsEnabled   bool       `json:"payouts_enabled"`
	DetailsSubmitted bool       `json:"details_submitted"`
	RequirementsDue  []string   `json:"requirements_due"`
	DisconnectedAt   *time.Time `json:"disconnected_at"`
	// Ready: the shop can declare checkout openings now.
	Ready bool `json:"ready"`
	// PlatformFeeBPS is the platform's fee on the shop's payments, in basis points (0
	// without Connect).
	PlatformFeeBPS int `json:"platform_fee_bps"`
}

// StripeOnboarding is a one-time link to Stripe's onboarding.
type StripeOnboarding struct {
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expires_at"`
}
