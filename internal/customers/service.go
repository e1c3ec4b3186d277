// Package customers holds the people a shop may text: who they are, what they prefer,
// whether they may be texted (consent, STOP and START, numbers that fail for good), and
// the shop's CSV import of them. The numbers a shop must not text are kept only as keyed
// hashes (suppress.go), under the server's erasure key.
package customers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/pgcode"
	"github.com/slotrecovery/slotrecovery/internal/phone"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// queries are the customers' and suppressions' sqlc queries; they hold no state.
var queries = db.New()

// ErrNoPhoneKeys is New's answer to a Config without PhoneKeys.
var ErrNoPhoneKeys = errors.New("customers: no phone keys (ERASURE_KEY) configured")

// Config configures the service.
type Config struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// PhoneKeys key the hashes kept of numbers that said STOP or were erased (the
	// server's ERASURE_KEY), newest first: the newest hashes what is recorded, and every
	// one is tried when matching, so records made under an older key still match after
	// a rotation. Required.
	PhoneKeys [][]byte
	// Consent, when set, keeps the owner's opt-ins and opt-outs (Add, Update and Import
	// turning sms_opt_in on or off) in the consent record, in the transaction that makes
	// them (internal/join's OwnerConsent). Nil: they are not recorded.
	Consent ConsentRecorder
}

// Service finds and changes a shop's customers.
type Service struct {
	pool *pgxpool.Pool
	cfg  Config
}

// New returns a Service on pool; it refuses a Config without PhoneKeys.
func New(pool *pgxpool.Pool, cfg Config) (*Service, error) {
	if len(cfg.PhoneKeys) == 0 {
		return nil, ErrNoPhoneKeys
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Service{pool: pool, cfg: cfg}, nil
}

// Customer is someone a shop may text. The API and the customer.* events show it as
// API renders it (api.Customer).
type Customer struct {
	ID     uuid.UUID
	ShopID uuid.UUID
	Phone  string
	Name   string
	// Language is the one the customer is texted in; "" means the shop's.
	Language   language.Code
	SMSOptIn   bool
	OptedOutAt *time.Time
	// UnreachableAt is set when texts to the number fail for good; a START clears it.
	UnreachableAt *time.Time
	Priority      int
	CreatedAt     time.Time
	Preferences   Preferences
	// ErasedAt is set once the customer is erased: no name, no phone, never texted.
	ErasedAt *time.Time
	// PossiblyReassignedAt is set when the number answered "wrong number" (it may have
	// changed hands), until the owner clears it.
	PossiblyReassignedAt *time.Time
	// MoveUp says the customer wants to be offered an earlier time for an appointment
	// they hold (a move-up offer); false by default.
	MoveUp bool
	// PausedUntil is set when the customer texted PAUSE: no offers before it. A time
	// past, or nil, means not paused; RESUME clears it.
	PausedUntil *time.Time
}

// NewCustomer is what a customer is created from.
type NewCustomer struct {
	Phone    string
	Name     string
	SMSOptIn bool
	Priority int
	// Language is the customer's own language, one of language.All in any case
	// (ParseLanguage reads it); "" leaves them in the shop's, whatever it is then.
	Language language.Code
	// Preferences say which openings they want to hear of; the zero value: any.
	Preferences Preferences
	// MoveUp: offer them earlier times for the appointments they hold.
	MoveUp bool
	// Source says who entered the customer (the zero value: the API), for the consent
	// record of an opt-in.
	Source Source
}

// Add adds a customer to shopID. A number that said STOP (as a customer or
// not), or that the shop erased before, is added opted out whatever n says: only the
// number's own START opts it back in.
func (s *Service) Add(ctx context.Context, shopID uuid.UUID, n NewCustomer) (Customer, error) {
	n.Name = strings.TrimSpace(n.Name)
	if !phone.Valid(n.Phone) {
		return Customer{}, problem.Invalidf("phone", "phone must be in E.164 form, e.g. +15555550100")
	}
	if len(n.Name) > 200 || strings.ContainsRune(n.Name, 0) {
		return Customer{}, problem.Invalidf("name", "name must be text of at most 200 characters")
	}
	if n.Priority < -1000 || n.Priority > 1000 {
		return Customer{}, problem.Invalidf("priority", "priority must be between -1000 and 1000")
	}
	lang, err := shops.CheckLanguage(n.Language)
	if err != nil {
		return Customer{}, err
	}
	// Checked as an update checks them: normalised, naming only the shop's people and
	// services.
	if err := n.Preferences.normalise(); err != nil {
		return Customer{}, err
	}
	if err := n.Preferences.checkCatalog(ctx, s.pool, shopID); err != nil {
		return Customer{}, err
	}
	src, err := n.Source.check()
	if err != nil {
		return Customer{}, err
	}
	days, starts, ends, services, staff := n.Preferences.columns()
	now := s.cfg.Now().UTC()
	var row db.Customer
	// The customer and the consent record's opt-in, together.
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		row, err = queries.CustomerInsert(ctx, tx, db.CustomerInsertParams{
			ShopID: shopID, Phone: n.Phone, Name: n.Name, SmsOptIn: n.SMSOptIn, Priority: int32(n.Priority),
			CreatedAt: now, PhoneHmacs: s.phoneHashes(shopID, n.Phone), Language: languageParam(lang),
			PrefDays: days, PrefWindowStarts: starts, PrefWindowEnds: ends, PrefServices: services, PrefStaffIds: staff,
			MoveUp: n.MoveUp,
		})
		if err != nil || !row.SmsOptIn || src.Method == SourceCustomer {
			return err
		}
		return s.recordConsent(ctx, tx, []ConsentChange{{
			ShopID: shopID, CustomerID: row.ID, OptIn: true, Method: src.Method, By: src.By, Language: lang, At: now,
		}})
	})
	if pgcode.Unique(err) {
		return Customer{}, &problem.Error{Kind: problem.Conflict, Code: "phone_exists", Field: "phone",
			Message: "a customer with this phone already exists"}
	}
	if err != nil {
		return Customer{}, fmt.Errorf("insert customer: %w", err)
	}
	return FromRow(row), nil
}

// ByPhone returns shopID's customer with that phone, or a NotFound problem.
func (s *Service) ByPhone(ctx context.Context, shopID uuid.UUID, number string) (Customer, error) {
	row, err := queries.CustomerGetByPhone(ctx, s.pool, db.CustomerGetByPhoneParams{ShopID: shopID, Phone: number})
	if errors.Is(err, pgx.ErrNoRows) {
		return Customer{}, problem.New(problem.NotFound, "customer_not_found", "no such customer")
	}
	if err != nil {
		return Customer{}, fmt.Errorf("get customer by phone: %w", err)
	}
	return FromRow(row), nil
}

// FromRow maps a database row to a Customer.
func FromRow(r db.Customer) Customer {
	c := Customer{
		ID: r.ID, ShopID: r.ShopID, Phone: r.Phone, Name: r.Name, SMSOptIn: r.SmsOptIn,
		OptedOutAt: r.OptedOutAt, UnreachableAt: r.UnreachableAt, Priority: int(r.Priority), CreatedAt: r.CreatedAt,
		ErasedAt: r.ErasedAt, Language: language.Code(r.Language.String), PossiblyReassignedAt: r.PossiblyReassignedAt,
		MoveUp: r.MoveUp, PausedUntil: r.PausedUntil,
	}
	for _, d := range r.PrefDays {
		c.Preferences.Days = append(c.Preferences.Days, int(d))
	}
	for i := range min(len(r.PrefWindowStarts), len(r.PrefWindowEnds)) {
		c.Preferences.Windows = append(c.Preferences.Windows, Window{Start: int(r.PrefWindowStarts[i]), End: int(r.PrefWindowEnds[i])})
	}
	c.Preferences.Services = append(c.Preferences.Services, r.PrefServices...)
	c.Preferences.StaffIDs = append(c.Preferences.StaffIDs, r.PrefStaffIds...)
	return c
}

// MarkUnreachable records that texts to the customer's number fail for good (the
// provider's error code says why), so no later wave tries it; a START clears it.
func (s *Service) MarkUnreachable(ctx context.Context, customerID uuid.UUID, code int) error {
	if err := queries.CustomerMarkUnreachable(ctx, s.pool, db.CustomerMarkUnreachableParams{ID: customerID, Now: s.cfg.Now().UTC(), Code: int32(code)}); err != nil {
		return fmt.Errorf("mark customer %s unreachable: %w", customerID, err)
	}
	return nil
}

// languageParam is a customer's language as stored: NULL for the shop's.
func languageParam(c language.Code) pgtype.Text {
	return pgtype.Text{String: string(c), Valid: c != ""}
}
