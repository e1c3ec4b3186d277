package hooks

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/keyring"
	"github.com/slotrecovery/slotrecovery/internal/metrics"
	"github.com/slotrecovery/slotrecovery/internal/problem"
)

// Errors the API maps to answers.
var (
	ErrEndpointNotFound = problem.New(problem.NotFound, "webhook_endpoint_not_found", "no such webhook endpoint")
	ErrDeliveryNotFound = problem.New(problem.NotFound, "webhook_delivery_not_found", "no such delivery")
	// ErrEndpointDisabled refuses to send again to a disabled endpoint: enable it first.
	ErrEndpointDisabled = &problem.Error{Kind: problem.Conflict, Code: "webhook_endpoint_disabled",
		Message: "the endpoint is disabled; enable it (PATCH disabled=false) before sending again"}
)

// DefaultSchedule is the delay before each scheduled attempt, the first immediate: the
// Standard Webhooks specification's suggested steps (5 s, 5 min, 30 min, 2 h, 5 h,
// 10 h, 10 h: eight attempts over about 28 hours), continued with 10-hour steps so that
// the attempts span about three days, as the issue asks and as Stripe retries its own
// webhooks (an endpoint down over a weekend still gets its events): twelve attempts,
// the last about 67½ hours after the first. An endpoint failing for DisableAfter (5
// days) is disabled, which stops what is left.
var DefaultSchedule = []time.Duration{
	0, 5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour,
	10 * time.Hour, 10 * time.Hour, 10 * time.Hour, 10 * time.Hour,
}

// SecretOverlap is how long a rotated secret keeps signing beside the new one.
const SecretOverlap = 24 * time.Hour

// Retention is how long events, deliveries and attempts are kept (Purge).
const Retention = 30 * 24 * time.Hour

// Config configures the Service; zero fields mean the defaults.
type Config struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// DevMode allows http:// endpoint URLs (https only otherwise).
	DevMode bool
	// AllowPrivate lets deliveries reach loopback, private, link-local and metadata
	// addresses (tests, self-hosting: WEBHOOK_ALLOW_PRIVATE=1). Off, they are refused at
	// every connection.
	AllowPrivate bool
	// Schedule is the delay before each scheduled attempt (the first usually 0); default
	// DefaultSchedule. Its length is the number of attempts.
	Schedule []time.Duration
	// Timeout bounds one attempt, answer included; default 10 s.
	Timeout time.Duration
	// DisableAfter disables an endpoint whose attempts have all failed for this long;
	// default 5 days.
	DisableAfter time.Duration
	// MaxEndpoints caps a shop's endpoints; default 10.
	MaxEndpoints int
	// PerShop caps the attempts in flight to one shop's endpoints, on every instance
	// together, so that a shop whose receivers are slow holds at most that many of the
	// queue's workers and never starves another shop's deliveries; default 4.
	// PerEndpoint caps those to one endpoint, so that a slow endpoint leaves its shop's
	// others room; default 2. A job over either cap waits BusyWait (default 1 s),
	// doubling each time up to a minute, without counting an attempt.
	PerShop     int
	PerEndpoint int
	BusyWait    time.Duration
	// MaxResends caps a shop's "send again" attempts waiting or in flight; default 20.
	// Past it, Resend answers ErrResendsLimited until some are sent.
	MaxResends int
	// MaxEventsPerHour caps the events of one shop sent in an hour; default 1000. An
	// event past it is recorded, but its deliveries are made failed (with the reason)
	// instead of sent: the owner can still send them again.
	MaxEventsPerHour int
	// MaxMessageEventsPerHour caps the message.received events of one shop sent in an
	// hour; default 200. They have their own budget, apart from MaxEventsPerHour, which
	// they do not count against: anyone may text a shop's number, and a stranger's flood
	// must never hold back the shop's bookings' and openings' events.
	MaxMessageEventsPerHour int
	// PollEvery is how often the dispatcher looks for new events; default 1 s.
	PollEvery time.Duration
	// UserAgent is sent with every attempt; default "SlotRecovery-Webhooks/1".
	UserAgent string
	Logger    *slog.Logger
	// Metrics counts attempts and the dispatcher's lag; nil counts nothing.
	Metrics *metrics.Metrics
	// Secrets seal the endpoints' signing secrets in the database (the server's
	// SECRETS_KEY; see secrets.go). Nil: a random key for this process (tests).
	Secrets *keyring.Ring
}

// Service manages a shop's endpoints and delivers its events.
type Service struct {
	pool   *pgxpool.Pool
	queue  jobs.Inserter
	client *http.Client
	cfg    Config
	log    *slog.Logger
	// permits counts the attempts in flight per shop and endpoint, in Postgres.
	permits *permitSession
}

// New returns a Service. queue enqueues the delivery jobs (the server's River client).
func New(pool *pgxpool.Pool, queue jobs.Inserter, cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if len(cfg.Schedule) == 0 {
		cfg.Schedule = DefaultSchedule
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.DisableAfter == 0 {
		cfg.DisableAfter = 5 * 24 * time.Hour
	}
	if cfg.MaxEndpoints == 0 {
		cfg.MaxEndpoints = 10
	}
	if cfg.PerShop == 0 {
		cfg.PerShop = 4
	}
	if cfg.PerEndpoint == 0 {
		cfg.PerEndpoint = 2
	}
	if cfg.MaxResends == 0 {
		cfg.MaxResends = 20
	}
	if cfg.MaxEventsPerHour == 0 {
		cfg.MaxEventsPerHour = 1000
	}
	if cfg.MaxMessageEventsPerHour == 0 {
		cfg.MaxMessageEventsPerHour = 200
	}
	if cfg.BusyWait == 0 {
		cfg.BusyWait = time.Second
	}
	if cfg.PollEvery == 0 {
		cfg.PollEvery = time.Second
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "SlotRecovery-Webhooks/1"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Secrets == nil {
		cfg.Secrets = keyring.Random()
	}
	return &Service{pool: pool, queue: queue,
		client: newClient(cfg), cfg: cfg, log: cfg.Logger, permits: &permitSession{pool: pool}}
}

// Endpoint is a shop's webhook endpoint, as the owner sees it (never its secret).
type Endpoint struct {
	ID            uuid.UUID
	ShopID        uuid.UUID
	URL           string
	Description   string
	EnabledEvents []string
	// DisabledAt is set while the endpoint is disabled, by the owner or by the server
	// after failing for days (DisabledReason says which and why).
	DisabledAt     *time.Time
	DisabledReason string
	// FailingSince is when its attempts started failing, nil after a success.
	FailingSince *time.Time
	// PreviousSecretExpiresAt is set while a rotated secret still signs beside the
	// new one: until then.
	PreviousSecretExpiresAt *time.Time
	CreatedAt               time.Time
	UpdatedAt               time.Time
}

// MaxEndpoints is how many endpoints a shop may have.
func (s *Service) MaxEndpoints() int { return s.cfg.MaxEndpoints }

// Disabled reports whether the endpoint gets no deliveries.
func (e Endpoint) Disabled() bool { return e.DisabledAt != nil }

// Subscribed reports whether the endpoint wants events of type typ.
func (e Endpoint) Subscribed(typ string) bool {
	return slices.Contains(e.EnabledEvents, AllTypes) || slices.Contains(e.EnabledEvents, typ)
}

func endpointFromRow(r db.WebhookEndpoint, now time.Time) Endpoint {
	e := Endpoint{
		ID: r.ID, ShopID: r.ShopID, URL: r.Url, Description: r.Description, EnabledEvents: r.EnabledEvents,
		DisabledAt: r.DisabledAt, DisabledReason: r.DisabledReason.String, FailingSince: r.FailingSince,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}
	if t := r.PreviousSecretExpiresAt; t != nil && t.After(now) {
		e.PreviousSecretExpiresAt = t
	}
	return e
}

// NewEndpoint is what an endpoint is created from. Empty EnabledEvents means every type.
type NewEndpoint struct {
	URL           string
	Description   string
	EnabledEvents []string
	Disabled      bool
}

// EndpointChange is an owner's edit of an endpoint; nil fields stay as they are.
// Enabling a disabled endpoint clears the failures that disabled it.
type EndpointChange struct {
	URL           *string
	Description   *string
	EnabledEvents *[]string
	Disabled      *bool
}

// CreateEndpoint adds an endpoint to shopID and returns it with its signing secret,
// which is shown only this once.
func (s *Service) CreateEndpoint(ctx context.Context, shopID uuid.UUID, n NewEndpoint) (Endpoint, string, error) {
	u, err := s.checkURL(n.URL)
	if err != nil {
		return Endpoint{}, "", err
	}
	desc, err := checkDescription(n.Description)
	if err != nil {
		return Endpoint{}, "", err
	}
	events, err := checkEvents(n.EnabledEvents)
	if err != nil {
		return Endpoint{}, "", err
	}
	secret, err := NewSecret()
	if err != nil {
		return Endpoint{}, "", err
	}
	sealed, err := s.seal(shopID, secret)
	if err != nil {
		return Endpoint{}, "", err
	}
	now := s.cfg.Now().UTC()
	p := db.WebhookEndpointInsertParams{ShopID: shopID, Url: u, Description: desc, EnabledEvents: events, Secret: sealed, Now: now}
	if n.Disabled {
		p.DisabledAt, p.DisabledReason = &now, pgtype.Text{String: disabledByOwner, Valid: true}
	}
	var row db.WebhookEndpoint
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := queries.WebhookEndpointLockShop(ctx, tx, shopID); err != nil {
			return fmt.Errorf("lock shop's endpoints: %w", err)
		}
		n, err := queries.WebhookEndpointCountForShop(ctx, tx, shopID)
		if err != nil {
			return fmt.Errorf("count endpoints: %w", err)
		}
		if n >= int64(s.cfg.MaxEndpoints) {
			return &problem.Error{Kind: problem.Conflict, Code: "too_many_webhook_endpoints",
				Message: fmt.Sprintf("a shop may have at most %d webhook endpoints; delete one first", s.cfg.MaxEndpoints)}
		}
		row, err = queries.WebhookEndpointInsert(ctx, tx, p)
		if err != nil {
			return fmt.Errorf("insert webhook endpoint: %w", err)
		}
		return nil
	})
	if err != nil {
		return Endpoint{}, "", err
	}
	return endpointFromRow(row, now), secret, nil
}

// disabledByOwner is the reason of an endpoint the owner disabled.
const disabledByOwner = "disabled by the owner"

// Endpoints lists shopID's endpoints, oldest first.
func (s *Service) Endpoints(ctx context.Context, shopID uuid.UUID) ([]Endpoint, error) {
	rows, err := queries.WebhookEndpointList(ctx, s.pool, shopID)
	if err != nil {
		return nil, fmt.Errorf("list webhook endpoints: %w", err)
	}
	now := s.cfg.Now()
	out := make([]Endpoint, len(rows))
	for i, r := range rows {
		out[i] = endpointFromRow(r, now)
	}
	return out, nil
}

// Endpoint returns shopID's endpoint id; another shop's is not found.
func (s *Service) Endpoint(ctx context.Context, shopID, id uuid.UUID) (Endpoint, error) {
	row, err := queries.WebhookEndpointGet(ctx, s.pool, db.WebhookEndpointGetParams{ID: id, ShopID: shopID})
	if errors.Is(err, pgx.ErrNoRows) {
		return Endpoint{}, ErrEndpointNotFound
	}
	if err != nil {
		return Endpoint{}, fmt.Errorf("get webhook endpoint %s: %w", id, err)
	}
	return endpointFromRow(row, s.cfg.Now()), nil
}

// UpdateEndpoint applies an owner's change to shopID's endpoint id.
func (s *Service) UpdateEndpoint(ctx context.Context, shopID, id uuid.UUID, ch EndpointChange) (Endpoint, error) {
	var out Endpoint
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		row, err := queries.WebhookEndpointGetForUpdate(ctx, tx, db.WebhookEndpointGetForUpdateParams{ID: id, ShopID: shopID})
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrEndpointNotFound
		}
		if err != nil {
			return fmt.Errorf("get webhook endpoint %s: %w", id, err)
		}
		now := s.cfg.Now().UTC()
		p := db.WebhookEndpointUpdateParams{
			ID: id, ShopID: shopID, Url: row.Url, Description: row.Description, EnabledEvents: row.EnabledEvents,
			DisabledAt: row.DisabledAt, DisabledReason: row.DisabledReason, Now: now,
		}
		if ch.URL != nil {
			if p.Url, err = s.checkURL(*ch.URL); err != nil {
				return err
			}
		}
		if ch.Description != nil {
			if p.Description, err = checkDescription(*ch.Description); err != nil {
				return err
			}
		}
		if ch.EnabledEvents != nil {
			if p.EnabledEvents, err = checkEvents(*ch.EnabledEvents); err != nil {
				return err
			}
		}
		if ch.Disabled != nil {
			switch {
			case *ch.Disabled && row.DisabledAt == nil:
				p.DisabledAt, p.DisabledReason = &now, pgtype.Text{String: disabledByOwner, Valid: true}
			case !*ch.Disabled:
				p.DisabledAt, p.DisabledReason = nil, pgtype.Text{}
			}
		}
		updated, err := queries.WebhookEndpointUpdate(ctx, tx, p)
		if err != nil {
			return fmt.Errorf("update webhook endpoint %s: %w", id, err)
		}
		out = endpointFromRow(updated, now)
		return nil
	})
	return out, err
}

// DeleteEndpoint deletes shopID's endpoint id with its deliveries.
func (s *Service) DeleteEndpoint(ctx context.Context, shopID, id uuid.UUID) error {
	n, err := queries.WebhookEndpointDelete(ctx, s.pool, db.WebhookEndpointDeleteParams{ID: id, ShopID: shopID})
	if err != nil {
		return fmt.Errorf("delete webhook endpoint %s: %w", id, err)
	}
	if n == 0 {
		return ErrEndpointNotFound
	}
	return nil
}

// RotateSecret gives the endpoint a new signing secret and returns it (shown only this
// once). For SecretOverlap the secret it replaces signs too, so every attempt carries two
// signatures and the receiver can switch secrets without losing an event. A second
// rotation within that time drops the oldest secret.
func (s *Service) RotateSecret(ctx context.Context, shopID, id uuid.UUID) (Endpoint, string, error) {
	secret, err := NewSecret()
	if err != nil {
		return Endpoint{}, "", err
	}
	sealed, err := s.seal(shopID, secret)
	if err != nil {
		return Endpoint{}, "", err
	}
	now := s.cfg.Now().UTC()
	row, err := queries.WebhookEndpointRotateSecret(ctx, s.pool, db.WebhookEndpointRotateSecretParams{
		ID: id, ShopID: shopID, Secret: sealed, ExpiresAt: now.Add(SecretOverlap), Now: now,
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return Endpoint{}, "", ErrEndpointNotFound
	}
	if err != nil {
		return Endpoint{}, "", fmt.Errorf("rotate secret of webhook endpoint %s: %w", id, err)
	}
	return endpointFromRow(row, now), secret, nil
}

// SecretPrefix starts every signing secret, as Standard Webhooks has it.
const SecretPrefix = "whsec_"

// NewSecret makes a signing secret: whsec_ and the base64 of 32 random bytes (the
// HMAC key is those bytes).
func NewSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("make webhook secret: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(b), nil
}

func checkDescription(d string) (string, error) {
	d = strings.TrimSpace(d)
	if len(d) > 500 || !utf8.ValidString(d) || strings.ContainsRune(d, 0) {
		return "", problem.Invalidf("description", "description must be text of at most 500 bytes")
	}
	return d, nil
}

// checkEvents validates and normalises an endpoint's event types: known types, sorted,
// without repeats; empty or containing "*" means every type (["*"]).
func checkEvents(events []string) ([]string, error) {
	if len(events) == 0 || slices.Contains(events, AllTypes) {
		return []string{AllTypes}, nil
	}
	if len(events) > 50 {
		return nil, problem.Invalidf("enabled_events", "enabled_events lists at most 50 types")
	}
	out := make([]string, 0, len(events))
	for _, e := range events {
		if !slices.Contains(Types, e) {
			return nil, problem.Invalidf("enabled_events", "unknown event type %q; the types are %s, or \"*\" for all",
				truncate(e, 60), strings.Join(Types, ", "))
		}
		out = append(out, e)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// truncate shortens s to at most n bytes without splitting a character.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Close ends the connection that holds this instance's attempt permits (see permits.go):
// call it once the delivery workers have stopped.
func (s *Service) Close() { s.permits.close() }
