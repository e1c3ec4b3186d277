package senders

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slotrecovery/slotrecovery/api"
	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/pgcode"
	"github.com/slotrecovery/slotrecovery/internal/pgvalue"
	"github.com/slotrecovery/slotrecovery/internal/phone"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/sms"
)

var queries = db.New()

// Provider is the SMS provider's API for numbers and Messaging Services;
// *twilio.Sender implements it.
type Provider interface {
	FindNumber(ctx context.Context, number string) (sms.PhoneNumber, error)
	FindNumberNamed(ctx context.Context, name string) (sms.PhoneNumber, bool, error)
	BuyNumber(ctx context.Context, areaCode int, name string) (sms.PhoneNumber, error)
	FindService(ctx context.Context, name string) (string, bool, error)
	CreateService(ctx context.Context, spec sms.ServiceSpec) (string, error)
	AttachNumber(ctx context.Context, serviceSID, numberSID string) error
}

// JoinFlow is how a shop's customers join its list themselves, for its campaign.
type JoinFlow struct {
	// PageURL is the shop's public join page (PUBLIC_URL/join/<slug>).
	PageURL string
	// Confirmation is the text a joining number is sent, which it answers YES to.
	Confirmation string
	// Keywords are the texts that ask to join (JOIN, UNIRME, INSCRIRE).
	Keywords []string
}

// Pacer spaces out calls under a key across every instance; *pacing.Pacer implements it.
type Pacer interface {
	Wait(ctx context.Context, key string, perSecond int) error
}

// Config configures the service; zero fields mean the defaults.
type Config struct {
	// InboundURL and StatusCallbackURL are the server's webhooks (PUBLIC_URL and the
	// paths) a new Messaging Service is pointed at.
	InboundURL, StatusCallbackURL string
	// RequireUSA2P (SMS_US_A2P=required) stops a shop with a US local number whose
	// campaign is not verified from declaring openings.
	RequireUSA2P bool
	// PerSecond is how many registration calls per second the provider takes across
	// every instance; 0 means 1 (Twilio's for these endpoints).
	PerSecond int
	// PollMin and PollMax bound the wait between two polls of a brand's or campaign's
	// status (doubling from PollMin); 0 means 1 minute and 1 hour.
	PollMin, PollMax time.Duration
	// Turn is how long one run of a registration job walks its flow (one step at
	// least) before it makes way for the other shops' registrations waiting in the
	// queue; 0 means 1 second, about one call at the provider's rate.
	Turn time.Duration
	// SubmissionsPerDay is how many registrations a shop may submit in 24 hours, the
	// first included; 0 means 3. Each one costs the platform the brand and campaign
	// fees, and a loop of them would hold the provider's shared rate.
	SubmissionsPerDay int
	// PaymentsEnabled says the server takes card payments (Stripe is configured): any
	// shop may then send payment links, now or after switching to checkout, so its
	// campaign declares embedded links.
	PaymentsEnabled bool
	// Join, when set, tells a shop's join flow (internal/join, wired by the server):
	// the campaign's message flow then describes the join page, its samples include the
	// confirmation text, and its opt-in keywords the join keywords. Nil: the campaign
	// describes customers the shop records itself and START.
	Join func(shops.Shop) JoinFlow
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger; nil discards.
	Logger *slog.Logger
}

// Service sets up shops' senders and registers them.
type Service struct {
	pool     *pgxpool.Pool
	jobs     jobs.Inserter
	provider Provider
	reg      Registrar
	pacer    Pacer
	cfg      Config
}

// New returns the service. provider and reg may be nil (no provider configured): then
// setting up a sender or registering answers 503.
func New(pool *pgxpool.Pool, inserter jobs.Inserter, provider Provider, reg Registrar, pacer Pacer, cfg Config) *Service {
	cfg.PerSecond = cmp.Or(cfg.PerSecond, 1)
	cfg.SubmissionsPerDay = cmp.Or(cfg.SubmissionsPerDay, 3)
	cfg.Turn = cmp.Or(cfg.Turn, time.Second)
	cfg.PollMin = cmp.Or(cfg.PollMin, time.Minute)
	cfg.PollMax = cmp.Or(cfg.PollMax, time.Hour)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{pool: pool, jobs: inserter, provider: provider, reg: reg, pacer: pacer, cfg: cfg}
}

// Errors the API shows.
var (
	// ErrSenderExists: the shop has its own sender already.
	ErrSenderExists = problem.New(problem.Conflict, "sender_exists", "the shop already has its own sender")
	// ErrNoSender: registration needs the shop's own sender (its Messaging Service).
	ErrNoSender = problem.New(problem.Conflict, "no_sender",
		"the shop has no sender of its own yet: POST /api/shops/{id}/sms/number first")
	// ErrRegistrationUnderway: a registration is under way or verified; a new one may
	// follow a failure only.
	ErrRegistrationUnderway = problem.New(problem.Conflict, "registration_underway",
		"a registration is under way or verified already; a new one may be submitted after a failure")
	// ErrNotRegistered: SMS_US_A2P=required and the shop's US campaign is not verified.
	ErrNotRegistered = problem.New(problem.Conflict, "sender_not_registered",
		"the shop's US number is not registered for A2P 10DLC yet (its campaign is not VERIFIED): no texts can go out")
	// ErrNoProvider: no SMS provider is configured (development without Twilio).
	ErrNoProvider = problem.New(problem.Unavailable, "sms_provider_unavailable", "no SMS provider is configured")
)

// Sender is a shop's sender: what the API shows as the shop's sms_sender and the
// sms_sender.updated event carries, rendered by API and Event.
type Sender struct {
	ShopID uuid.UUID
	// Number is the shop's SMS number.
	Number string
	// MessagingServiceSID is its own Messaging Service; "" for a shop that texts from
	// its number alone.
	MessagingServiceSID string
	// Registration is the US A2P 10DLC registration; nil when none was submitted.
	Registration *Registration
}

// Registration is where a shop's A2P 10DLC registration stands.
type Registration struct {
	// Status is submitted, brand_pending, campaign_pending, verified or failed.
	Status string
	// BrandStatus and CampaignStatus are Twilio's, "" until there is a brand or campaign.
	BrandStatus    string
	CampaignStatus string
	// FailureReason is Twilio's reason for a failure.
	FailureReason string
	UpdatedAt     time.Time
}

// API returns the sender as the owners' API shows it (the shop's sms_sender).
func (s Sender) API() api.SMSSender {
	out := api.SMSSender{Number: s.Number, MessagingServiceSID: nonEmpty(s.MessagingServiceSID)}
	if r := s.Registration; r != nil {
		out.Registration = &api.SMSRegistration{Status: r.Status, BrandStatus: nonEmpty(r.BrandStatus),
			CampaignStatus: nonEmpty(r.CampaignStatus), FailureReason: nonEmpty(r.FailureReason), UpdatedAt: r.UpdatedAt.UTC()}
	}
	return out
}

// Event returns the data of the sms_sender.updated event announcing the sender as it
// now is.
func (s Sender) Event() api.SMSSenderUpdated {
	a := s.API()
	return api.SMSSenderUpdated{ShopID: s.ShopID, Number: a.Number, MessagingServiceSID: a.MessagingServiceSID, Registration: a.Registration}
}

// nonEmpty is nil for "": the API shows what is not there yet as null.
func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// The registration's statuses.
const (
	StatusSubmitted       = "submitted"
	StatusBrandPending    = "brand_pending"
	StatusCampaignPending = "campaign_pending"
	StatusVerified        = "verified"
	StatusFailed          = "failed"
)

// Get returns the shop's sender: its own, or its number alone.
func (s *Service) Get(ctx context.Context, shop shops.Shop) (Sender, error) {
	return read(ctx, s.pool, shop.ID, shop.SMSNumber)
}

func read(ctx context.Context, q db.DBTX, shopID uuid.UUID, number string) (Sender, error) {
	out := Sender{ShopID: shopID, Number: number}
	row, err := queries.SenderGet(ctx, q, shopID)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return Sender{}, fmt.Errorf("get sender of shop %s: %w", shopID, err)
	case row.Status == "active":
		out.Number, out.MessagingServiceSID = row.Number.String, row.MessagingServiceSid.String
	}
	reg, err := queries.RegistrationGet(ctx, q, shopID)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return Sender{}, fmt.Errorf("get registration of shop %s: %w", shopID, err)
	default:
		out.Registration = registrationOf(reg)
	}
	return out, nil
}

func registrationOf(r db.SmsRegistration) *Registration {
	return &Registration{Status: r.Status, BrandStatus: r.BrandStatus.String, CampaignStatus: r.CampaignStatus.String,
		FailureReason: r.FailureReason.String, UpdatedAt: r.UpdatedAt.UTC()}
}

// NumberRequest asks for a shop's own sender: AreaCode buys a number there (any when
// both are empty), PhoneNumber adopts one the account holds.
type NumberRequest struct {
	AreaCode    string
	PhoneNumber string
}

var areaCode = regexp.MustCompile(`^[2-9][0-9]{2}$`)

// serviceName names the shop's number and Messaging Service in the provider's console,
// and finds one an attempt made without recording it.
func serviceName(shopID uuid.UUID) string { return "slot recovery " + shopID.String() }

// USLocal reports whether number is a US (NANP) local number: +1 and not toll-free.
// Carriers require A2P 10DLC registration for those.
func USLocal(number string) bool {
	if !strings.HasPrefix(number, "+1") || len(number) != 12 {
		return false
	}
	switch number[2:5] {
	case "800", "833", "844", "855", "866", "877", "888":
		return false
	}
	return true
}

// Provision gives the shop its own sender: a number (bought in the area code, or adopted
// from the account), its own Messaging Service (inbound texts and delivery reports to our
// webhooks, sticky sender) with the number attached, and the number as the shop's
// sms_number. Requests for one shop run one at a time; a retry resumes where an earlier
// attempt stopped, buying nothing twice. A shop that has its own sender gets
// ErrSenderExists.
func (s *Service) Provision(ctx context.Context, shopID uuid.UUID, req NumberRequest) (Sender, error) {
	var code int
	switch {
	case req.AreaCode != "" && req.PhoneNumber != "":
		return Sender{}, problem.Invalidf("phone_number", "give area_code to buy a number or phone_number to adopt one, not both")
	case req.PhoneNumber != "" && !phone.Valid(req.PhoneNumber):
		return Sender{}, problem.Invalidf("phone_number", "phone_number must be in E.164 form, such as +15555550100")
	case req.AreaCode != "" && !areaCode.MatchString(req.AreaCode):
		return Sender{}, problem.Invalidf("area_code", "area_code must be a US area code: three digits, the first 2-9")
	case req.AreaCode != "":
		code, _ = strconv.Atoi(req.AreaCode) // three digits, matched above
	}
	if s.provider == nil {
		return Sender{}, ErrNoProvider
	}
	if _, err := shops.Read(ctx, s.pool, shopID); err != nil {
		return Sender{}, err
	}

	// One connection holds the shop's advisory lock for the whole set-up and records
	// each step on it as it finishes (each committed at once, so a failed later step
	// keeps it); the last writes are one transaction on it. One connection only: a set-up
	// waiting for the lock holds no second one the holder might need.
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return Sender{}, fmt.Errorf("provision sender of %s: %w", shopID, err)
	}
	defer conn.Release()
	if err := queries.SenderLockSession(ctx, conn, shopID.String()); err != nil {
		return Sender{}, fmt.Errorf("lock sender of %s: %w", shopID, err)
	}
	defer func() {
		if _, err := queries.SenderUnlockSession(context.WithoutCancel(ctx), conn, shopID.String()); err != nil {
			// A connection back in the pool must not keep the lock.
			_ = conn.Conn().Close(context.WithoutCancel(ctx))
		}
	}()
	row, err := queries.SenderStart(ctx, conn, db.SenderStartParams{ShopID: shopID, Now: s.cfg.Now()})
	if err != nil {
		return Sender{}, fmt.Errorf("start sender of %s: %w", shopID, err)
	}
	if row.Status == "active" {
		return Sender{}, ErrSenderExists
	}
	name := serviceName(shopID)

	if !row.NumberSid.Valid {
		var n sms.PhoneNumber
		bought := false
		if req.PhoneNumber != "" {
			if n, err = s.provider.FindNumber(ctx, req.PhoneNumber); errors.Is(err, sms.ErrNumberNotInAccount) {
				return Sender{}, problem.Invalidf("phone_number", "phone_number is not a number of the platform's account")
			}
		} else {
			var found bool
			// An attempt that bought the number and died before recording it named it.
			if n, found, err = s.provider.FindNumberNamed(ctx, name); err == nil && !found {
				n, err = s.provider.BuyNumber(ctx, code, name)
				bought = true
				if errors.Is(err, sms.ErrNoNumberAvailable) {
					return Sender{}, problem.Invalidf("area_code", "no number is available in area code %s", req.AreaCode)
				}
			}
		}
		if err != nil {
			return Sender{}, fmt.Errorf("number for shop %s: %w", shopID, err)
		}
		// Another shop texting from it: refused before a service is made for it.
		if other, err := queries.ShopIDByNumber(ctx, conn, n.Number); err == nil && other != shopID {
			return Sender{}, shops.ErrNumberTaken
		} else if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return Sender{}, fmt.Errorf("find the shop of number %s: %w", phone.Mask(n.Number), err)
		}
		if row, err = queries.SenderSetNumber(ctx, conn, db.SenderSetNumberParams{ShopID: shopID,
			Number: pgvalue.TextOrNull(n.Number), NumberSid: pgvalue.TextOrNull(n.SID), Bought: bought, UsLocal: USLocal(n.Number), Now: s.cfg.Now()}); err != nil {
			if pgcode.Unique(err) {
				return Sender{}, shops.ErrNumberTaken
			}
			return Sender{}, fmt.Errorf("record number of shop %s: %w", shopID, err)
		}
	}
	if !row.MessagingServiceSid.Valid {
		sid, found, err := s.provider.FindService(ctx, name)
		if err == nil && !found {
			sid, err = s.provider.CreateService(ctx, sms.ServiceSpec{Name: name, InboundURL: s.cfg.InboundURL,
				StatusCallbackURL: s.cfg.StatusCallbackURL})
		}
		if err != nil {
			return Sender{}, fmt.Errorf("messaging service for shop %s: %w", shopID, err)
		}
		if row, err = queries.SenderSetService(ctx, conn, db.SenderSetServiceParams{ShopID: shopID,
			ServiceSid: pgvalue.TextOrNull(sid), Now: s.cfg.Now()}); err != nil {
			return Sender{}, fmt.Errorf("record messaging service of shop %s: %w", shopID, err)
		}
	}
	if err := s.provider.AttachNumber(ctx, row.MessagingServiceSid.String, row.NumberSid.String); err != nil {
		return Sender{}, fmt.Errorf("attach number of shop %s: %w", shopID, err)
	}

	tx, err := conn.Begin(ctx)
	if err != nil {
		return Sender{}, fmt.Errorf("provision sender of %s: %w", shopID, err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := shops.SetSMSNumber(ctx, tx, shopID, row.Number.String); err != nil {
		return Sender{}, err
	}
	if _, err := queries.SenderActivate(ctx, tx, db.SenderActivateParams{ShopID: shopID, Now: s.cfg.Now()}); err != nil {
		return Sender{}, fmt.Errorf("activate sender of shop %s: %w", shopID, err)
	}
	out, err := read(ctx, tx, shopID, row.Number.String)
	if err != nil {
		return Sender{}, err
	}
	if err := hooks.Record(ctx, tx, shopID, hooks.SMSSenderUpdated, s.cfg.Now(), out.Event()); err != nil {
		return Sender{}, err
	}
	if err := tx.Commit(ctx); err != nil {
		return Sender{}, fmt.Errorf("provision sender of %s: %w", shopID, err)
	}
	s.cfg.Logger.Info("sender set up", "shop_id", shopID, "number", phone.Mask(out.Number), "messaging_service_sid", out.MessagingServiceSID)
	return out, nil
}

// CheckCanText is the SMS_US_A2P=required rule: a shop whose number is a US local number
// and whose campaign is not VERIFIED gets ErrNotRegistered (it cannot text offers). With
// the setting off it always passes.
func (s *Service) CheckCanText(ctx context.Context, shop shops.Shop) error {
	if !s.cfg.RequireUSA2P || !USLocal(shop.SMSNumber) {
		return nil
	}
	reg, err := queries.RegistrationGet(ctx, s.pool, shop.ID)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return ErrNotRegistered
	case err != nil:
		return fmt.Errorf("get registration of shop %s: %w", shop.ID, err)
	case reg.Status != StatusVerified: // the campaign approved
		return ErrNotRegistered
	}
	return nil
}
