package offers

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/metrics"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/sms"
)

// Texter sends one SMS and returns the provider's message id.
type Texter interface {
	Text(ctx context.Context, m sms.Message) (sid string, err error)
}

// Openings is what the waves ask of the openings' owner, internal/slots: the waves read
// openings themselves (OpeningForWave) but never change them; an opening past its
// cutoff is closed by its owner.
type Openings interface {
	// Expire closes an opening that is still open past its cutoff, with its offers
	// that were never texted.
	Expire(ctx context.Context, id uuid.UUID, now time.Time) error
}

// Pacer spaces out a sender's texts to the rate its number may send at, across
// instances; *pacing.Pacer implements it.
type Pacer interface {
	Wait(ctx context.Context, sender string, perSecond int) error
}

// CooldownChecker tells which customers are cooling down, in one round trip.
type CooldownChecker interface {
	Cooling(ctx context.Context, ids []string) (map[string]bool, error)
}

// Config configures the service; zero fields mean the defaults.
type Config struct {
	Now func() time.Time
	// MaxCandidates caps how many eligible customers one wave considers; default 5000.
	MaxCandidates int
	// SendParallelism is how many texts of a wave are in flight at once; default 32.
	SendParallelism int
	// MaxValidity caps an offer text's validity period; default 2h (never beyond the
	// cutoff).
	MaxValidity time.Duration
	// Pacer, when set, paces each shop's offer texts to its send rate (shops.Policy.
	// SendRate); nil sends as fast as SendParallelism allows.
	Pacer Pacer
	// MoveUps makes each opening's first wave offer it first to customers who asked to
	// move up (customers' move_up) and hold a later booking it can take
	// (OfferMoveUpCandidates). Off by default: a move-up offer's YES moves the
	// booking only where the YES path is given the book's mover (inbound.Config.Mover),
	// so both are turned on together.
	MoveUps bool
	Logger  *slog.Logger
	Metrics *metrics.Metrics
}

// queries is this package's one way to its SQL: sqlc's Queries holds no state, and
// each call is given the pool or the transaction it runs on.
var queries = db.New()

// Service runs the waves of offers.
type Service struct {
	pool      *pgxpool.Pool
	queue     jobs.Inserter
	texter    Texter
	cooldowns CooldownChecker
	shops     *shops.Service
	customers *customers.Service
	openings  Openings
	cfg       Config
	log       *slog.Logger
	m         *metrics.Metrics
}

// New returns a Service.
func New(pool *pgxpool.Pool, queue jobs.Inserter, texter Texter, cooldowns CooldownChecker, shopsSvc *shops.Service, customersSvc *customers.Service, openings Openings, cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxCandidates == 0 {
		cfg.MaxCandidates = 5000
	}
	if cfg.SendParallelism == 0 {
		cfg.SendParallelism = 32
	}
	if cfg.MaxValidity == 0 {
		cfg.MaxValidity = 2 * time.Hour
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{pool: pool, queue: queue, texter: texter, cooldowns: cooldowns,
		shops: shopsSvc, customers: customersSvc, openings: openings, cfg: cfg, log: cfg.Logger, m: cfg.Metrics}
}
