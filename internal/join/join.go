package join

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/inbox"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/phone"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/replies"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// queries are the join requests' and consent events' sqlc queries; they hold no state.
var queries = db.New()

// DisclosureVersion names the wording of the join page's disclosure (the catalogues'
// "disclosure"); change it with the wording, so the record says which one was shown.
const DisclosureVersion = "2026-11-29"

// RequestTTL is how long a join request waits for its YES.
const RequestTTL = 24 * time.Hour

// Input bounds.
const (
	MaxName      = 100
	MaxUserAgent = 300
)

// Config configures the Service; its zero fields take the defaults.
type Config struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// PerWeek is how many texts a week the disclosure and the confirmation announce
	// ("about 2/week"); 0 means 2.
	PerWeek int
	// Limits are the pumping limits (limits.go); nil Limiter refuses every request
	// (nothing can be counted, so nothing is sent).
	Limits Limits
	// Refused is called with the reason of each refused request ("honeypot",
	// "country", "shape", "own_number", "ip", "number", "shop_budget", "unavailable"), to
	// count them on /metrics; nil: not. Each is counted in Postgres too (Refusals).
	Refused func(reason string)
}

// Service takes join requests, confirms them and keeps the consent record.
type Service struct {
	pool      *pgxpool.Pool
	queue     jobs.Inserter
	customers *customers.Service
	cfg       Config
}

// New returns a Service.
func New(pool *pgxpool.Pool, queue jobs.Inserter, cs *customers.Service, cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.PerWeek = cmp.Or(cfg.PerWeek, 2)
	cfg.Limits = cfg.Limits.withDefaults()
	return &Service{pool: pool, queue: queue, customers: cs, cfg: cfg}
}

// Disclosure is the consent wording a visitor of the shop's page ticks, in lang.
func (s *Service) Disclosure(shop shops.Shop, lang language.Code) string {
	return Words(lang, "disclosure", "shop", shop.Name, "per_week", strconv.Itoa(s.cfg.PerWeek))
}

// PerWeek is how many texts a week the disclosure announces.
func (s *Service) PerWeek() int { return s.cfg.PerWeek }

// Submission is what the join page's form sends.
type Submission struct {
	Name, Phone string
	Language    language.Code
	Consent     bool
	// Honeypot is the hidden field people never see and bots fill.
	Honeypot  string
	IP        netip.Addr
	UserAgent string
	// Wants are what the visitor wants to be offered (optional): saved on the customer
	// with their YES.
	Wants Wants
}

// FieldErrors are the message ids of a submission's wrong fields, by form field
// ("name", "phone", "consent", "services", "staff", "days", "times"): the page shows each next to its field. They are about
// what was typed, never about the number's standing with the shop.
type FieldErrors map[string]string

func (f FieldErrors) Error() string { return "join: the form has wrong fields" }

// Outcome is what became of a submission; the visitor is told the same whatever it is.
type Outcome struct {
	// Sent is true when a confirmation text was queued.
	Sent bool
	// Refused is the reason it was not ("" when Sent).
	Refused string
}

// Request takes a submission of shop's join page: it checks the form (FieldErrors), then
// the pumping limits, and when they allow it stores a join request and queues the
// confirmation text in one transaction. A refusal is an Outcome, not an error: the page
// answers it as it answers a text sent.
func (s *Service) Request(ctx context.Context, shop shops.Shop, sub Submission) (Outcome, error) {
	name := strings.TrimSpace(sub.Name)
	cc := phone.CallingCode(shop.SMSNumber)
	errs := FieldErrors{}
	if name == "" || utf8.RuneCountInString(name) > MaxName || strings.ContainsAny(name, "\x00\r\n") || !utf8.ValidString(name) {
		errs["name"] = "error_name"
	}
	number, ok := phone.Normalize(sub.Phone, cc)
	if !ok {
		errs["phone"] = "error_phone"
	}
	if !sub.Consent {
		errs["consent"] = "error_consent"
	}
	lang := sub.Language
	if _, ok := language.Parse(string(lang)); !ok {
		lang = shop.Language.Or(language.Default)
	}
	prefs, err := s.preferences(ctx, shop, sub.Wants, errs)
	if err != nil {
		return Outcome{}, err
	}
	if len(errs) > 0 {
		return Outcome{}, errs
	}
	storedPrefs, err := storePreferences(prefs)
	if err != nil {
		return Outcome{}, fmt.Errorf("store preferences: %w", err)
	}
	// Redis unreachable refuses too (allow's reason says so): counted, not an error,
	// since the visitor is answered the same.
	if reason, err := s.allow(ctx, shop, number, sub); reason != "" {
		return Outcome{Refused: reason}, s.refused(ctx, shop, reason)
	} else if err != nil {
		return Outcome{}, fmt.Errorf("join request for shop %s: %w", shop.ID, err)
	}
	ua := sub.UserAgent
	if len(ua) > MaxUserAgent {
		ua = ua[:MaxUserAgent]
	}
	// Postgres text holds no NUL; a browser never sends one.
	ua = strings.ReplaceAll(strings.ToValidUTF8(ua, ""), "\x00", "")
	now := s.cfg.Now().UTC()
	id := uuid.New()
	body := smsText(shop, lang, "confirm", "shop", shop.Name, "per_week", strconv.Itoa(s.cfg.PerWeek))
	var ip *netip.Addr
	if sub.IP.IsValid() {
		a := sub.IP.Unmap()
		ip = &a
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := queries.JoinRequestInsert(ctx, tx, db.JoinRequestInsertParams{
			ID: id, ShopID: shop.ID, Phone: number, Name: name, Language: string(lang), Method: MethodPage, Ip: ip, UserAgent: ua,
			DisclosureVersion: DisclosureVersion, DisclosureText: s.Disclosure(shop, lang), ConfirmationBody: body,
			CreatedAt: now, ExpiresAt: now.Add(RequestTTL), Preferences: storedPrefs,
		}); err != nil {
			return fmt.Errorf("insert join request: %w", err)
		}
		_, err := inbox.Queue(ctx, tx, s.queue, inbox.Outgoing{
			Key: "join_confirm:" + id.String(), ShopID: shop.ID, From: shop.SMSNumber, To: number, Body: body,
			NotAfter: now.Add(RequestTTL), At: now,
		})
		return err
	})
	if err != nil {
		return Outcome{}, fmt.Errorf("join request for shop %s: %w", shop.ID, err)
	}
	return Outcome{Sent: true}, nil
}

// Reply is a text a number sent the shop, as the inbound path read it.
type Reply struct {
	From, Body string
	// MessageSID is the provider's id of the text, kept in the consent record as the
	// confirmation.
	MessageSID string
	// At is when it arrived; the zero value is now.
	At time.Time
}

// Confirm is asked by the inbound path for a text that is no answer to an offer: when
// the number has a live join request with shop and the text is an affirmative (YES,
// START or another the replies reader knows), the number joins: the customer is
// created, or updated, opted in with the request's name and language, the opt-in is
// recorded with its proof, and the welcome text is queued. handled is true then, and
// the caller answers nothing more (the welcome is the answer). A text that is not an
// affirmative, or from a number with no live request, is not handled.
func (s *Service) Confirm(ctx context.Context, shop shops.Shop, r Reply) (handled bool, err error) {
	reading := replies.Read(r.Body, "")
	if reading.Intent != replies.Yes && reading.Intent != replies.OptIn {
		return false, nil
	}
	now := s.cfg.Now().UTC()
	at := r.At.UTC()
	if r.At.IsZero() {
		at = now
	}
	req, err := queries.JoinRequestLive(ctx, s.pool, db.JoinRequestLiveParams{ShopID: shop.ID, Phone: r.From, Now: now})
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("find join request: %w", err)
	}
	// The customer's changes are customers' own, each in its transaction, and each may
	// run again without harm: a confirmation that fails after them and is retried (the
	// same YES redelivered, or another) finds the customer and goes on.
	c, err := s.joinCustomer(ctx, shop, req)
	if err != nil {
		return false, err
	}
	lang := language.Code(req.Language)
	welcome := smsText(shop, lang, "welcome", "shop", shop.Name, "per_week", strconv.Itoa(s.cfg.PerWeek))
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := queries.JoinRequestConfirm(ctx, tx, db.JoinRequestConfirmParams{
			ID: req.ID, Now: &now, CustomerID: uuid.NullUUID{UUID: c.ID, Valid: true},
		}); errors.Is(err, pgx.ErrNoRows) {
			return errConfirmedMeanwhile
		} else if err != nil {
			return fmt.Errorf("confirm join request %s: %w", req.ID, err)
		}
		sum := sha256.Sum256([]byte(req.DisclosureText))
		if _, err := queries.ConsentEventInsert(ctx, tx, db.ConsentEventInsertParams{
			ID: uuid.New(), ShopID: shop.ID, CustomerID: c.ID, Kind: KindOptIn, Method: req.Method, At: now,
			Ip: req.Ip, UserAgent: text(req.UserAgent), Language: req.Language, // both NULL for a keyword's
			DisclosureVersion: text(req.DisclosureVersion), DisclosureSha256: sum[:], DisclosureText: text(req.DisclosureText),
			ConfirmationSid: text(r.MessageSID), ConfirmationBody: text(r.Body), ConfirmationAt: &at,
			JoinRequestID: uuid.NullUUID{UUID: req.ID, Valid: true},
		}); err != nil {
			return fmt.Errorf("record consent: %w", err)
		}
		_, err := inbox.Queue(ctx, tx, s.queue, inbox.Outgoing{
			Key: "join_welcome:" + req.ID.String(), ShopID: shop.ID, From: shop.SMSNumber, To: c.Phone, Body: welcome,
			CustomerID: c.ID, At: now,
		})
		return err
	})
	if errors.Is(err, errConfirmedMeanwhile) {
		return true, nil // another YES of the number's confirmed it, and was welcomed
	}
	if err != nil {
		return false, fmt.Errorf("confirm join of shop %s: %w", shop.ID, err)
	}
	return true, nil
}

var errConfirmedMeanwhile = errors.New("join: request confirmed meanwhile")

// joinCustomer creates the request's number as an opted-in customer of the shop, or opts
// in and updates the one it is, with the request's name (when it had none) and language.
// The number's own YES is what START is: it clears a STOP it said before.
func (s *Service) joinCustomer(ctx context.Context, shop shops.Shop, req db.JoinRequest) (customers.Customer, error) {
	lang := language.Code(req.Language)
	c, err := s.customers.ByPhone(ctx, shop.ID, req.Phone)
	if p, ok := problem.As(err); ok && p.Kind == problem.NotFound {
		if err := s.customers.OptInNumber(ctx, shop.ID, req.Phone); err != nil {
			return customers.Customer{}, err
		}
		c, err = s.customers.Add(ctx, shop.ID, customers.NewCustomer{Phone: req.Phone, Name: req.Name, SMSOptIn: true, Language: lang,
			// The customer's own YES: Confirm records it, with its proof.
			Source: customers.Source{Method: customers.SourceCustomer}})
		if p, ok := problem.As(err); ok && p.Kind == problem.Conflict {
			c, err = s.customers.ByPhone(ctx, shop.ID, req.Phone) // added meanwhile (another YES)
		}
		if err != nil {
			return customers.Customer{}, err
		}
	} else if err != nil {
		return customers.Customer{}, err
	}
	if !c.SMSOptIn || c.OptedOutAt != nil || c.UnreachableAt != nil {
		if err := s.customers.OptIn(ctx, c.ID); err != nil {
			return customers.Customer{}, err
		}
	}
	ch := customers.Change{Language: &lang, Source: customers.Source{Method: customers.SourceCustomer}}
	if c.Name == "" {
		ch.Name = &req.Name
	}
	yes := true
	ch.SMSOptIn = &yes
	// What they asked for on the page replaces what the customer had; nothing asked
	// for keeps it.
	prefs, asked, err := loadPreferences(req.Preferences)
	if err != nil {
		return customers.Customer{}, err
	}
	if asked {
		ch.Preferences = &prefs
	}
	out, err := s.customers.Update(ctx, shop.ID, c.ID, ch)
	if p, ok := problem.As(err); ok && p.Kind == problem.Invalid && asked {
		// A service or person they picked left the shop's catalogue since: they join
		// all the same, with the preferences they had.
		ch.Preferences = nil
		out, err = s.customers.Update(ctx, shop.ID, c.ID, ch)
	}
	return out, err
}

// PurgeAfter is how long after its expiry a join request is forgotten (the retention's
// Keep for join_requests).
const PurgeAfter = time.Hour

// Purge forgets up to limit join requests that expired before before: an unconfirmed
// one leaves nothing (no customer, no name, no number), a confirmed one's proof is in
// the consent record. It is the retention's batch for join_requests.
func Purge(ctx context.Context, conn db.DBTX, before time.Time, limit int32) (int64, error) {
	n, err := queries.JoinRequestPurge(ctx, conn, db.JoinRequestPurgeParams{Before: before.UTC(), MaxRows: limit})
	if err != nil {
		return 0, fmt.Errorf("purge join requests: %w", err)
	}
	return n, nil
}
