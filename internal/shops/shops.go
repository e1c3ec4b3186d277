// Package shops holds the shops that declare openings: who they are, their offer
// policy and settings, how a shop and its owner prove who they are (an API key stored
// only as a hash, dashboard sessions), the address of its calendar feed and the state
// of its connected Stripe account, all of them the shop's own record. Its customers
// are package customers'.
package shops

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/keyring"
	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/pgcode"
	"github.com/slotrecovery/slotrecovery/internal/phone"
	"github.com/slotrecovery/slotrecovery/internal/problem"
)

// Payment modes.
const (
	PaymentCheckout = "checkout"
	PaymentNone     = "none"
)

// keyPrefix marks shop API keys so a leaked one is easy to recognise in a scan.
const keyPrefix = "shop_"

// queries are the shops' and customers' sqlc queries; they hold no state.
var queries = db.New()

// ErrUnauthorized means the API key is missing or unknown.
var ErrUnauthorized = problem.New(problem.Unauthorized, "unauthorized", "a valid shop API key is required")

// QuietHours is a daily window, in the shop's time zone, in which no offer is texted.
// Start may be after End (21:00–08:00 spans midnight).
type QuietHours struct {
	Start, End int // minutes after local midnight
}

// Contains reports whether the local time t falls inside the window.
func (q QuietHours) Contains(t time.Time) bool {
	m := t.Hour()*60 + t.Minute()
	if q.Start <= q.End {
		return m >= q.Start && m < q.End
	}
	return m >= q.Start || m < q.End
}

// EndAfter returns the first end of the window after local time t (t in the shop's zone).
func (q QuietHours) EndAfter(t time.Time) time.Time {
	y, mo, d := t.Date()
	end := time.Date(y, mo, d, q.End/60, q.End%60, 0, 0, t.Location())
	if !end.After(t) {
		end = time.Date(y, mo, d+1, q.End/60, q.End%60, 0, 0, t.Location())
	}
	return end
}

// Policy says how a shop's openings are offered.
type Policy struct {
	WaveSize     int
	WaveInterval time.Duration
	MinLead      time.Duration
	Quiet        *QuietHours
	Cooldown     time.Duration
	// MaxOffersPerDay caps the offers texted to one customer in one of the shop's local
	// days, across openings; 0 means no cap.
	MaxOffersPerDay int
	// FirstWaveDelay is a grace period between declaring an opening and its first wave,
	// so a mistaken declaration can be cancelled before anyone is texted.
	FirstWaveDelay time.Duration
	// SendRate is how many texts a second the shop's number may send: about 1 for a
	// long code (the default), 3 for a toll-free number, 100 for a short code. Waves are
	// paced to it.
	SendRate int
}

// WaveDuration is how long sending a whole wave takes at the shop's send rate.
func (p Policy) WaveDuration() time.Duration {
	return time.Duration(p.WaveSize) * time.Second / time.Duration(max(p.SendRate, 1))
}

// DefaultPolicy is used for fields a new shop leaves out.
var DefaultPolicy = Policy{WaveSize: 10, WaveInterval: 10 * time.Minute, MinLead: time.Hour, Cooldown: 24 * time.Hour, SendRate: 1}

// Shop is a business that declares openings.
type Shop struct {
	ID          uuid.UUID
	Name        string
	Timezone    string
	Location    *time.Location
	SMSNumber   string
	Currency    string
	PaymentMode string
	Policy      Policy
	// Language is what the shop's customers are texted in, unless theirs is known.
	Language language.Code
	// NotifyPhone is texted when a customer's text waits in the owner's inbox; "" for
	// no alerts.
	NotifyPhone string
	// Formality is how the texts address customers (tú/usted, tu/vous); "" is each
	// language's default.
	Formality Formality
	// GSM7 says whether accents outside GSM-7 may be folded to save a segment; "" is
	// GSM7Prefer.
	GSM7 GSM7
	// HelpContact is how customers reach the shop, given in the HELP answer (a phone, an
	// e-mail or an address); "" gives the shop's SMS number.
	HelpContact string
	// Slug names the shop in its join page's address, /join/<slug>: unique, derived
	// from the name at creation (Slugify), and the owner's to change.
	Slug string
	// PrivacyURL is the shop's privacy policy, linked from the join page's consent
	// disclosure; "" for none.
	PrivacyURL string
	// MoveUpDays is how far ahead of an opening, in days, a customer's booked
	// appointment may be for them to be offered the opening instead (0 to 90; default
	// 14); ChainMax is how many moves one chain of freed times may make (0 to 20;
	// default 5). Package offers reads both for its move-up offers.
	MoveUpDays, ChainMax int
	// CustomersCancelByText says what a booked customer's "can't make it" does: true
	// (the default) cancels the booking and reopens its opening at once; false hands
	// the text to the owner's inbox as a cancellation request.
	CustomersCancelByText bool
	// Ranking orders a wave's customers inside each priority tier (RankingPriority,
	// the default, keeps the list's order).
	Ranking Ranking
	// SkipAfterNoShows, when not nil, is how many no-shows in 180 days keep a customer
	// out of offers until the owner clears them.
	SkipAfterNoShows *int
	// JoinKeywords are the shop's own words a text may be to ask to join its list
	// (CheckJoinKeywords: upper case, at most MaxJoinKeywords), besides the defaults
	// JOIN, UNIRME and INSCRIRE (internal/join's Keyword); empty by default.
	JoinKeywords []string
	CreatedAt    time.Time
	// KeyVersion counts the shop's API keys: it starts at 1 and every RotateKey adds
	// one. A dashboard session records the version it was signed in under, so that a
	// rotation ends it (on every instance: the version is read from Postgres).
	KeyVersion int
	// SMSProblem, when not nil, is the last time texts failed because of the shop's own
	// number or account (see RecordSMSProblem).
	SMSProblem *SMSProblem
	// CalendarToken is the secret of the shop's calendar feed address
	// (/calendar/<token>.ics), derived under the server's key (see calendar.go);
	// RotateCalendarToken replaces it. Set on the shops the Service returns; empty in
	// one FromRow made, which has no key.
	CalendarToken string
	// calendarGeneration and calendarKeyID are what CalendarToken is derived from.
	calendarGeneration int32
	calendarKeyID      []byte
	// OldCalendarAddressUntil, when not nil, is when the feed address the shop had
	// before a re-key of the server's key (or before hashed addresses) stops working:
	// calendars still subscribed to it must take the current one by then.
	OldCalendarAddressUntil *time.Time
	// CalendarFullDetails puts customers' full names and phone numbers in the calendar
	// feed; off, it shows first names and masked numbers (feed addresses get shared).
	CalendarFullDetails bool
	// AutoDeclare says whether a cancelled future appointment of the shop's book
	// declares its opening by itself (internal/book); default true. Off, the owner
	// offers it with one click.
	AutoDeclare bool
	// Stripe is the shop's connected Stripe account (STRIPE_CONNECT=on), as the platform
	// last heard of it.
	Stripe StripeAccount
	// PlatformFeeBPS is the platform's fee on this shop's payments in basis points, set
	// by the admin; nil takes the server's default (PLATFORM_FEE_BPS).
	PlatformFeeBPS *int
	// Protection is the shop's no-show protection: deposit, kept card, cancellation
	// policy and fees (issue 48).
	Protection Protection
}

// SMSProblem is the latest text that failed because of the shop's own SMS number or
// account rather than the customer's, and how many failed so in the week before it.
type SMSProblem struct {
	Code  int
	At    time.Time
	Count int
}

// Recent reports whether the problem was seen within the last week before now.
func (p *SMSProblem) Recent(now time.Time) bool {
	return p != nil && now.Sub(p.At) < 7*24*time.Hour
}

// NewShop is what a shop is created from.
type NewShop struct {
	Name        string
	Timezone    string
	SMSNumber   string
	Currency    string
	PaymentMode string
	// Policy is the offer policy's fields as given: what is left out takes
	// DefaultPolicy's, and what is given is checked as a change's fields are.
	Policy PolicyFields
	// Language is what the shop's customers are texted in (unless theirs is set): one of
	// language.All, in any case (ParseLanguage reads it); "" is language.Default.
	Language language.Code
	// NotifyPhone is the owner's alert number (E.164) for texts waiting in the inbox;
	// "" for none.
	NotifyPhone string
	// Formality, GSM7 and HelpContact are the texts' wording settings (see Shop);
	// their zero values are the defaults.
	Formality   Formality
	GSM7        GSM7
	HelpContact string
	// Slug is the join page's name (CheckSlug); "" derives one from Name (Slugify),
	// made unique.
	Slug string
	// PrivacyURL is the privacy policy's https address; "" for none.
	PrivacyURL string
	// Protection is the no-show protection given at creation, as a change of the default
	// one (no deposit, no kept card, no policy or fees, 24 late-cancel hours) checked as
	// Update checks a change: payment mode deposit needs a deposit, a kept card Connect.
	// Update ignores it (ShopChange.Protection is the change).
	Protection ProtectionChange
}

// PolicyFields are offer-policy fields as a client sends them, for a new shop
// (NewShop.Policy) or a change (ShopChange.Policy): nil leaves a field as it is (the default
// for a new shop, the stored value for a change). One rule for both: a value is taken
// as sent, so an explicit 0 wave size, wave interval or send rate is refused (a wave of
// no one, no interval, a number that sends nothing), never read as "the default".
type PolicyFields struct {
	WaveSize                        *int
	WaveInterval, MinLead, Cooldown *time.Duration
	// Quiet replaces the quiet hours when QuietSet; a nil Quiet then removes them.
	Quiet    *QuietHours
	QuietSet bool
	// MaxOffersPerDay replaces the daily cap when set; 0 removes it.
	MaxOffersPerDay *int
	FirstWaveDelay  *time.Duration
	SendRate        *int
}

// apply sets the given fields on p. A 0 where 0 means nothing becomes -1, which the
// validation refuses with the field's range: 0 is not a way to ask for the default.
func (f PolicyFields) apply(p *Policy) {
	if f.WaveSize != nil {
		p.WaveSize = nonZero(*f.WaveSize)
	}
	if f.WaveInterval != nil {
		p.WaveInterval = time.Duration(nonZero(int64(*f.WaveInterval)))
	}
	if f.SendRate != nil {
		p.SendRate = nonZero(*f.SendRate)
	}
	if f.MinLead != nil {
		p.MinLead = *f.MinLead
	}
	if f.Cooldown != nil {
		p.Cooldown = *f.Cooldown
	}
	if f.QuietSet {
		p.Quiet = f.Quiet
	}
	if f.MaxOffersPerDay != nil {
		p.MaxOffersPerDay = *f.MaxOffersPerDay
	}
	if f.FirstWaveDelay != nil {
		p.FirstWaveDelay = *f.FirstWaveDelay
	}
}

// Fields is p with every field given: applied, it sets a policy to p.
func (p Policy) Fields() PolicyFields {
	q := p
	return PolicyFields{
		WaveSize: &q.WaveSize, WaveInterval: &q.WaveInterval, MinLead: &q.MinLead, Cooldown: &q.Cooldown,
		Quiet: q.Quiet, QuietSet: true, MaxOffersPerDay: &q.MaxOffersPerDay, FirstWaveDelay: &q.FirstWaveDelay,
		SendRate: &q.SendRate,
	}
}

func nonZero[T int | int64](v T) T {
	if v == 0 {
		return -1
	}
	return v
}

// When formats t as customers read it in texts: the shop's local day and time,
// "Sat 22 Nov 15:00".
func (s Shop) When(t time.Time) string {
	return t.In(s.Location).Format("Mon 2 Jan 15:04")
}

// Cutoff is the last moment an opening starting at startsAt may still be offered or
// booked: the shop's lead time before it.
func (s Shop) Cutoff(startsAt time.Time) time.Time {
	return startsAt.Add(-s.Policy.MinLead)
}

// Config configures the service.
type Config struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// PaymentsEnabled says whether checkout shops can be served (Stripe is configured).
	PaymentsEnabled bool
	// StripeConnect says that checkout shops take their payments on their own connected
	// Stripe accounts (STRIPE_CONNECT=on): every shop the Service returns has
	// Stripe.Required set, and a checkout shop declares openings only once its account
	// can take payments (Shop.CheckoutReady).
	StripeConnect bool
	// PlatformFeeBPS is the platform's default fee in basis points (PLATFORM_FEE_BPS):
	// every shop the Service returns carries it (Stripe.DefaultFeeBPS), to show the fee
	// its own is not set.
	PlatformFeeBPS int
	// ChargesIn, when set, says whether the payment provider charges in a currency: a
	// shop's currency must be one it does (at creation and in a change alike).
	ChargesIn func(currency string) bool
	// MinimumCharge, when set, is the payment provider's smallest charge in a currency
	// (0: none known). A change of currency or payment mode that would leave a checkout
	// shop's open openings priced below it is refused (ErrBelowMinimumCharge).
	MinimumCharge func(currency string) int64
	// Secrets are the server's SECRETS_KEY: the calendar feeds' addresses are derived
	// under them (calendar.go). Nil: a random key for this process (tests).
	Secrets *keyring.Ring
}

// Service creates, finds and changes shops.
type Service struct {
	pool *pgxpool.Pool
	cfg  Config
}

// New returns a Service on pool.
func New(pool *pgxpool.Pool, cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.Secrets = secretsOrRandom(cfg.Secrets)
	return &Service{pool: pool, cfg: cfg}
}

// Create makes a shop and returns it with its API key, which is shown only this once.
func (s *Service) Create(ctx context.Context, n NewShop) (Shop, string, error) {
	p := DefaultPolicy
	n.Policy.apply(&p)
	if err := s.normalise(&n, &p); err != nil {
		return Shop{}, "", err
	}
	// A new shop's protection is its change of the default one (the columns' defaults),
	// checked as a PATCH's is: a deposit shop is given its deposit, a kept card needs
	// Connect, and a policy given here is version 1, as it would be after a PATCH.
	protection, err := n.Protection.apply(Protection{LateCancelHours: defaultLateCancelHours}, n.PaymentMode, s.cfg.StripeConnect)
	if err != nil {
		return Shop{}, "", err
	}
	if err := s.checkCharges(protection, n); err != nil {
		return Shop{}, "", err
	}
	key, hash, err := newKey()
	if err != nil {
		return Shop{}, "", err
	}
	id := uuid.New()
	calKeyID, calHash, err := s.newCalendarToken(id)
	if err != nil {
		return Shop{}, "", err
	}
	var qs, qe pgtype.Int4
	if p.Quiet != nil {
		qs = pgtype.Int4{Int32: int32(p.Quiet.Start), Valid: true}
		qe = pgtype.Int4{Int32: int32(p.Quiet.End), Valid: true}
	}
	params := db.ShopInsertParams{
		ID: id, Name: n.Name, Timezone: n.Timezone, SmsNumber: n.SMSNumber, Currency: n.Currency,
		PaymentMode: n.PaymentMode, WaveSize: int32(p.WaveSize),
		WaveIntervalSeconds: int32(p.WaveInterval / time.Second), MinLeadMinutes: int32(p.MinLead / time.Minute),
		QuietStartMinute: qs, QuietEndMinute: qe, CooldownSeconds: int32(p.Cooldown / time.Second),
		ApiKeyHash: hash, CreatedAt: s.cfg.Now().UTC(),
		MaxOffersPerDay: capParam(p.MaxOffersPerDay), FirstWaveDelaySeconds: int32(p.FirstWaveDelay / time.Second),
		SendRate: int32(p.SendRate), CalendarKeyID: calKeyID, CalendarTokenHash: calHash,
		Language: string(n.Language), NotifyPhone: pgtype.Text{String: n.NotifyPhone, Valid: n.NotifyPhone != ""},
		Formality: formalityParam(n.Formality), Gsm7: string(n.GSM7), HelpContact: textParam(n.HelpContact),
		PrivacyUrl: textParam(n.PrivacyURL),
	}
	pp := protectionParams(id, protection)
	params.DepositCents, params.DepositPercent, params.KeepCard = pp.DepositCents, pp.DepositPercent, pp.KeepCard
	params.CancellationPolicy, params.LateCancelHours, params.PolicyVersion = pp.CancellationPolicy, pp.LateCancelHours, pp.PolicyVersion
	params.NoShowFeeCents, params.LateCancelFeeCents = pp.NoShowFeeCents, pp.LateCancelFeeCents
	var row db.Shop
	// A derived slug another shop takes between freeSlug and the insert is derived
	// again; a few such races in a row are not worth more tries than these.
	for attempt := 0; ; attempt++ {
		params.Slug = n.Slug
		if params.Slug == "" {
			if params.Slug, err = s.freeSlug(ctx, Slugify(n.Name)); err != nil {
				return Shop{}, "", err
			}
		}
		row, err = queries.ShopInsert(ctx, s.pool, params)
		if slugTaken(err) && n.Slug == "" && attempt < 3 {
			continue
		}
		break
	}
	if slugTaken(err) {
		return Shop{}, "", ErrSlugTaken
	}
	if pgcode.Unique(err) {
		return Shop{}, "", &problem.Error{Kind: problem.Conflict, Code: "sms_number_taken", Field: "sms_number",
			Message: "another shop already uses this SMS number"}
	}
	if err != nil {
		return Shop{}, "", fmt.Errorf("insert shop: %w", err)
	}
	shop, err := s.fromRow(row)
	return shop, key, err
}

// normalise checks a shop's settings and offer policy p, a new shop's or a changed one's
// alike, and puts them in their stored form.
func (s *Service) normalise(n *NewShop, p *Policy) error {
	n.Name = strings.TrimSpace(n.Name)
	if n.Name == "" || len(n.Name) > 200 || strings.ContainsRune(n.Name, 0) {
		return problem.Invalidf("name", "name is required (text, at most 200 characters)")
	}
	if n.Timezone == "" {
		return problem.Invalidf("timezone", "timezone is required, an IANA name such as Europe/London")
	}
	if _, err := time.LoadLocation(n.Timezone); err != nil || n.Timezone == "Local" {
		return problem.Invalidf("timezone", "%q is not an IANA time zone such as America/New_York", n.Timezone)
	}
	if !phone.Valid(n.SMSNumber) {
		return problem.Invalidf("sms_number", "sms_number must be in E.164 form, e.g. +15555550100")
	}
	n.Currency = strings.ToLower(strings.TrimSpace(n.Currency))
	if len(n.Currency) != 3 || strings.Trim(n.Currency, "abcdefghijklmnopqrstuvwxyz") != "" {
		return problem.Invalidf("currency", "currency must be a three-letter ISO code such as usd")
	}
	// A currency the provider does not charge in has no minimum charge to hold prices
	// to, and no payment could be taken in it.
	if s.cfg.ChargesIn != nil && !s.cfg.ChargesIn(n.Currency) {
		return problem.Invalidf("currency", "%q is not a currency the payment provider charges in; use a three-letter ISO code such as usd, eur or gbp", n.Currency)
	}
	lang, err := CheckLanguage(n.Language)
	if err != nil {
		return err
	}
	n.Language = cmp.Or(lang, language.Default)
	n.NotifyPhone = strings.TrimSpace(n.NotifyPhone)
	if n.NotifyPhone != "" && !phone.Valid(n.NotifyPhone) {
		return problem.Invalidf("notify_phone", "notify_phone must be in E.164 form, e.g. +15555550199, or null for no alerts")
	}
	if n.NotifyPhone != "" && n.NotifyPhone == n.SMSNumber {
		// The alert is texted from the shop's number: to itself, the provider refuses it.
		return problem.Invalidf("notify_phone", "notify_phone must be the owner's own phone, not the shop's SMS number")
	}
	if err := n.normaliseWording(); err != nil {
		return err
	}
	if n.Slug != "" {
		slug, err := CheckSlug(n.Slug)
		if err != nil {
			return err
		}
		n.Slug = slug
	}
	if n.PrivacyURL, err = checkPrivacyURL(n.PrivacyURL); err != nil {
		return err
	}
	if n.PaymentMode == "" {
		n.PaymentMode = PaymentCheckout
	}
	switch n.PaymentMode {
	case PaymentCheckout, PaymentDeposit, PaymentCard:
		if !s.cfg.PaymentsEnabled {
			return problem.Invalidf("payment_mode", "payment_mode %s needs Stripe, which this server has not configured; use none", n.PaymentMode)
		}
	case PaymentNone:
	default:
		return problem.Invalidf("payment_mode", "payment_mode must be checkout, deposit, card or none")
	}
	switch {
	case p.WaveSize < 1 || p.WaveSize > 1000:
		return problem.Invalidf("offer_policy.wave_size", "wave_size must be between 1 and 1000")
	case p.WaveInterval < 10*time.Second || p.WaveInterval > 24*time.Hour:
		return problem.Invalidf("offer_policy.wave_interval_seconds", "wave_interval_seconds must be between 10 and 86400")
	case p.MinLead < 0 || p.MinLead > 7*24*time.Hour:
		return problem.Invalidf("offer_policy.min_lead_minutes", "min_lead_minutes must be between 0 and 10080")
	case p.Cooldown < 0 || p.Cooldown > 30*24*time.Hour:
		return problem.Invalidf("offer_policy.cooldown_seconds", "cooldown_seconds must be between 0 and 2592000")
	case p.MaxOffersPerDay < 0 || p.MaxOffersPerDay > 1000:
		return problem.Invalidf("offer_policy.max_offers_per_day", "max_offers_per_day must be between 1 and 1000, or null for no cap")
	case p.SendRate < 1 || p.SendRate > 1000:
		return problem.Invalidf("offer_policy.send_rate_per_second", "send_rate_per_second must be between 1 and 1000 (a long code sends about 1 text a second, toll-free 3, a short code 100)")
	case p.FirstWaveDelay < 0 || p.FirstWaveDelay > 24*time.Hour || p.FirstWaveDelay%time.Second != 0:
		return problem.Invalidf("offer_policy.first_wave_delay_seconds", "first_wave_delay_seconds must be between 0 and 86400")
	}
	if q := p.Quiet; q != nil {
		if q.Start < 0 || q.Start >= 1440 || q.End < 0 || q.End >= 1440 || q.Start == q.End {
			return problem.Invalidf("offer_policy.quiet_hours", "quiet_hours needs different start and end times, HH:MM")
		}
	}
	return nil
}

// Authenticate finds the shop whose API key is key.
func (s *Service) Authenticate(ctx context.Context, key string) (Shop, error) {
	if !strings.HasPrefix(key, keyPrefix) || len(key) > 200 {
		return Shop{}, ErrUnauthorized
	}
	hash := hashKey(key)
	row, err := queries.ShopGetByKeyHash(ctx, s.pool, hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return Shop{}, ErrUnauthorized
	}
	if err != nil {
		return Shop{}, fmt.Errorf("find shop by key: %w", err)
	}
	// The lookup is by hash, so timing reveals nothing of the key; compare anyway so the
	// check does not rest on the index alone.
	if subtle.ConstantTimeCompare(row.ApiKeyHash, hash) != 1 {
		return Shop{}, ErrUnauthorized
	}
	return s.fromRow(row)
}

// Get returns the shop with id.
func (s *Service) Get(ctx context.Context, id uuid.UUID) (Shop, error) {
	return s.withConfig(Read(ctx, s.pool, id))
}

// fromRow is FromRow for the shops the Service returns: they carry what its
// configuration says of them (Stripe.Required).
func (s *Service) fromRow(r db.Shop) (Shop, error) {
	return s.withConfig(FromRow(&r))
}

// Configured returns shop as this Service returns its shops: with what the server's
// configuration says of it (Stripe.Required), which a shop read elsewhere (FromRow, as
// the inbound texts' statement reads it) does not carry.
func (s *Service) Configured(shop Shop) Shop {
	shop, _ = s.withConfig(shop, nil)
	return shop
}

func (s *Service) withConfig(shop Shop, err error) (Shop, error) {
	if err != nil {
		return shop, err
	}
	shop = s.withCalendarToken(shop)
	shop.Stripe.Required = s.cfg.StripeConnect
	if s.cfg.StripeConnect {
		shop.Stripe.DefaultFeeBPS = s.cfg.PlatformFeeBPS
	}
	return shop, nil
}

// Read reads a shop through q: the pool, or the caller's transaction when what it
// decides from the shop must be consistent with the rest of it.
func Read(ctx context.Context, q db.DBTX, id uuid.UUID) (Shop, error) {
	row, err := queries.ShopGet(ctx, q, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return Shop{}, problem.New(problem.NotFound, "shop_not_found", "no such shop")
	}
	if err != nil {
		return Shop{}, fmt.Errorf("get shop %s: %w", id, err)
	}
	return FromRow(&row)
}

// ReadForShare reads shop's row again in the caller's transaction and holds it FOR
// SHARE until tx ends: tx then waits for a change of the shop under way and reads what
// it stored, and a later change waits for tx. Whoever changes what an opening is
// checked against locks the row before looking at the shop's open openings (Update, for
// the currency and the payment mode; a Stripe account's disconnection, which cancels
// them), so an opening inserted in tx after this read is either among the openings they
// look at, or checked against what they stored. The shop returned keeps what the
// server's configuration says of it (Stripe.Required and DefaultFeeBPS) from shop, as the
// Service returned it.
func ReadForShare(ctx context.Context, tx pgx.Tx, shop Shop) (Shop, error) {
	row, err := queries.ShopGetForShare(ctx, tx, shop.ID)
	if errors.Is(err, pgx.ErrNoRows) {
		return Shop{}, ErrShopNotFound
	}
	if err != nil {
		return Shop{}, fmt.Errorf("get shop %s for share: %w", shop.ID, err)
	}
	cur, err := FromRow(&row)
	if err != nil {
		return Shop{}, err
	}
	cur.Stripe.Required, cur.Stripe.DefaultFeeBPS = shop.Stripe.Required, shop.Stripe.DefaultFeeBPS
	return cur, nil
}

// IDByNumber returns the id of the shop whose SMS number is number, or ErrShopNotFound.
func (s *Service) IDByNumber(ctx context.Context, number string) (uuid.UUID, error) {
	id, err := queries.ShopIDByNumber(ctx, s.pool, number)
	if errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, ErrShopNotFound
	}
	if err != nil {
		return uuid.Nil, fmt.Errorf("find shop by number: %w", err)
	}
	return id, nil
}

// FromRow maps a shop's row, read by whoever owns the statement that read it (the
// inbound log reads the shop with each text it stores), to a Shop.
func FromRow(r *db.Shop) (Shop, error) {
	loc, err := loadLocation(r.Timezone)
	if err != nil {
		return Shop{}, fmt.Errorf("shop %s time zone %q: %w", r.ID, r.Timezone, err)
	}
	s := Shop{
		ID: r.ID, Name: r.Name, Timezone: r.Timezone, Location: loc, SMSNumber: r.SmsNumber,
		Currency: r.Currency, PaymentMode: r.PaymentMode, CreatedAt: r.CreatedAt, KeyVersion: int(r.ApiKeyVersion),
		calendarGeneration: r.CalendarGeneration, calendarKeyID: r.CalendarKeyID, CalendarFullDetails: r.CalendarFullDetails,
		OldCalendarAddressUntil: oldAddressUntil(r),
		AutoDeclare:             r.AutoDeclare,
		Language:                language.Code(r.Language), NotifyPhone: r.NotifyPhone.String,
		Formality: Formality(r.Formality.String), GSM7: GSM7(r.Gsm7), HelpContact: r.HelpContact.String,
		Slug: r.Slug, PrivacyURL: r.PrivacyUrl.String, MoveUpDays: int(r.MoveUpDays), ChainMax: int(r.ChainMax),
		CustomersCancelByText: r.CustomersCancelByText, Ranking: Ranking(r.Ranking),
		JoinKeywords: append([]string{}, r.JoinKeywords...),
		Policy: Policy{
			WaveSize:     int(r.WaveSize),
			WaveInterval: time.Duration(r.WaveIntervalSeconds) * time.Second,
			MinLead:      time.Duration(r.MinLeadMinutes) * time.Minute,
			Cooldown:     time.Duration(r.CooldownSeconds) * time.Second,
			// A NULL cap reads as 0: no cap.
			MaxOffersPerDay: int(r.MaxOffersPerDay.Int32),
			FirstWaveDelay:  time.Duration(r.FirstWaveDelaySeconds) * time.Second,
			SendRate:        int(r.SendRate),
		},
	}
	if r.QuietStartMinute.Valid && r.QuietEndMinute.Valid {
		s.Policy.Quiet = &QuietHours{Start: int(r.QuietStartMinute.Int32), End: int(r.QuietEndMinute.Int32)}
	}
	if r.SmsProblemAt != nil {
		s.SMSProblem = &SMSProblem{Code: int(r.SmsProblemCode.Int32), At: *r.SmsProblemAt, Count: int(r.SmsProblemCount)}
	}
	s.Stripe = StripeAccount{
		ID: r.StripeAccountID.String, ChargesEnabled: r.StripeChargesEnabled, PayoutsEnabled: r.StripePayoutsEnabled,
		DetailsSubmitted: r.StripeDetailsSubmitted, RequirementsDue: r.StripeRequirementsDue,
		StatusAt: r.StripeStatusAt, DisconnectedAt: r.StripeDisconnectedAt,
	}
	if r.SkipAfterNoShows.Valid {
		n := int(r.SkipAfterNoShows.Int32)
		s.SkipAfterNoShows = &n
	}
	if r.PlatformFeeBps.Valid {
		bps := int(r.PlatformFeeBps.Int32)
		s.PlatformFeeBPS = &bps
	}
	s.Protection = protectionOf(r)
	return s, nil
}

// capParam is the daily cap as stored: NULL for none.
func capParam(n int) pgtype.Int4 {
	if n <= 0 {
		return pgtype.Int4{}
	}
	return pgtype.Int4{Int32: int32(n), Valid: true}
}

func newKey() (key string, hash []byte, err error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", nil, fmt.Errorf("make api key: %w", err)
	}
	key = keyPrefix + base64.RawURLEncoding.EncodeToString(b)
	return key, hashKey(key), nil
}

// hashKey is a plain SHA-256: the key carries 256 random bits, so a slow password hash
// would add cost without adding safety.
func hashKey(key string) []byte {
	h := sha256.Sum256([]byte(key))
	return h[:]
}

// RecordSMSProblem records, through q, that a text failed at now because of the shop's
// own number or account (the provider's code says what), for the owner's dashboard; the
// customer it was for is left as they are (customers.SMSFailed decides which it is).
func RecordSMSProblem(ctx context.Context, q db.DBTX, shopID uuid.UUID, code int, now time.Time) error {
	if err := queries.ShopRecordSMSProblem(ctx, q, db.ShopRecordSMSProblemParams{ID: shopID, Code: int32(code), Now: now.UTC()}); err != nil {
		return fmt.Errorf("record sms problem of shop %s: %w", shopID, err)
	}
	return nil
}
