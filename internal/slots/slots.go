package slots

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/slotrecovery/slotrecovery/internal/catalog"
	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/money"
	"github.com/slotrecovery/slotrecovery/internal/offers"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// Opening statuses.
const (
	StatusOpen      = "open"
	StatusFilled    = "filled"
	StatusCompleted = "completed"
	StatusCancelled = "cancelled"
	StatusExpired   = "expired"
)

var statuses = []string{StatusOpen, StatusFilled, StatusCompleted, StatusCancelled, StatusExpired}

// ErrNotFound means no opening with that id belongs to the shop.
var ErrNotFound = problem.New(problem.NotFound, "opening_not_found", "no such opening")

// Opening is a slot a shop wants filled, as owners see it.
type Opening struct {
	ID              uuid.UUID
	ShopID          uuid.UUID
	StartsAt        time.Time
	DurationMinutes int
	Service         string
	PriceCents      int64
	Status          string
	Generation      int
	OffersSent      int
	CreatedAt       time.Time
	FilledAt        *time.Time
	FilledBy        *Filler
	Booking         *Booking
	// StaffID is the person whose freed time this is (uuid.Nil: anyone's), StaffName
	// their name.
	StaffID   uuid.UUID
	StaffName string
	// ParentID is the opening this one is the rest of (uuid.Nil: declared).
	ParentID uuid.UUID
	// Source and SourceID say where it came from (NewOpening's).
	Source   string
	SourceID uuid.UUID
	// Chain is the chain of moves the opening is in, when a move-up freed it; nil
	// otherwise.
	Chain *Chain
	// Warnings are what the owner should know of a declaration that was accepted
	// anyway (only Declare sets them).
	Warnings []string
}

// Filler is the customer holding an opening.
type Filler struct {
	CustomerID uuid.UUID
	Phone      string
	Name       string
}

// Booking is an opening's latest booking, as owners see it.
type Booking struct {
	ID                      uuid.UUID
	Status                  string
	AmountCents             int64
	PaymentURL              string
	StripeCheckoutSessionID string
	// ApplicationFeeCents is the platform's fee on the payment (Stripe Connect), 0
	// without one: the shop receives AmountCents less it.
	ApplicationFeeCents int64
	// Service is what was booked, lasting DurationMinutes from the opening's start.
	Service         string
	DurationMinutes int
}

// NewOpening is what a shop declares. Once the shop has services (internal/catalog),
// Service may be empty (each customer is offered a service of theirs that fits) or must
// name one of them, and PriceCents may be 0 (the named service's price).
type NewOpening struct {
	StartsAt        time.Time
	DurationMinutes int
	Service         string
	PriceCents      int64
	// StaffID is the person whose freed time this is; uuid.Nil: anyone's.
	StaffID uuid.UUID
	// Source is where the opening came from: "" for the owner's declaration,
	// SourceAppointment for the time a cancelled appointment freed, SourceID its id.
	Source   string
	SourceID uuid.UUID
	// Chain, for the time a move-up freed, is the chain of moves it belongs to; nil
	// otherwise.
	Chain *Chain
}

// Chain is where an opening freed by a move-up stands in its chain of moves: the
// chain's id (its first opening's), how many moves made it (1 for the first) and the
// appointment moved away from it.
type Chain struct {
	ID        uuid.UUID
	Position  int
	MovedFrom uuid.UUID
}

// SourceAppointment is the Source of an opening that a cancelled appointment of the
// shop's book declared (internal/book).
const SourceAppointment = "appointment"

// Locker holds the per-slot locks, shared by every instance.
type Locker interface {
	// TryLock takes key without waiting. It returns ErrLockHeld when another holder has
	// it, and another error when the lock service cannot be reached. release frees the
	// key (if still ours) and announces note to the key's watchers.
	TryLock(ctx context.Context, key string, ttl time.Duration) (release func(note string), err error)
	// Watch delivers the notes of key's releases from now on until stop is called.
	// Notices can be missed: a wait on them must be bounded.
	Watch(key string) (notes <-chan string, stop func())
	// Recent returns the notes of key's releases seen lately (possibly not all).
	Recent(key string) []string
}

// ErrLockHeld is what a Locker returns when the key is held by someone else.
var ErrLockHeld = errors.New("slots: lock held")

// Cooldowns starts a customer's offer cooldown.
type Cooldowns interface {
	Start(ctx context.Context, customerID string, d time.Duration) error
}

// CheckoutHold is how long a booking that takes payment holds its slot: its payment link
// expires that long after the YES, and the slot goes back to the others if it is not
// paid by then. 31 minutes: the payment provider's shortest checkout (30 minutes), plus
// a minute so that a request never arrives just under it.
const CheckoutHold = 31 * time.Minute

// PayWithin is how long the text with a payment link tells the customer they have to
// pay: the hold, a minute short so the text's own travel never makes it a promise the
// hold does not keep (30 minutes).
const PayWithin = CheckoutHold - time.Minute

// Config configures the service. Zero fields mean the defaults.
type Config struct {
	Now func() time.Time
	// LockTTL bounds how long a crashed holder keeps its key; default 30s.
	LockTTL time.Duration
	// LockWait bounds how long a claim waits for another holder's decision on the same
	// slot before Postgres decides without the lock; default 3s, well inside Twilio's
	// 15s.
	LockWait time.Duration
	// MinimumCharge, when set, is the payment provider's smallest charge in a currency
	// (0: none known): a shop that takes payments cannot declare an opening for less,
	// since its taker would be told "yours!" and then that the hold lapsed.
	MinimumCharge func(currency string) int64
	// KeyPrefix is prepended to lock keys (tests).
	KeyPrefix string
	Logger    *slog.Logger
}

// queries is this package's one way to its SQL: sqlc's Queries holds no state, and
// each call is given the pool or the transaction it runs on.
var queries = db.New()

// Service runs openings and the claim on them.
type Service struct {
	pool      *pgxpool.Pool
	queue     jobs.Inserter
	locker    Locker
	turns     turns // this instance's contenders for a lock key take turns
	cooldowns Cooldowns
	cfg       Config
	log       *slog.Logger
}

// New returns a Service.
func New(pool *pgxpool.Pool, queue jobs.Inserter, locker Locker, cooldowns Cooldowns, cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.LockTTL == 0 {
		cfg.LockTTL = 30 * time.Second
	}
	if cfg.LockWait == 0 {
		cfg.LockWait = 3 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{pool: pool, queue: queue, locker: locker, cooldowns: cooldowns, cfg: cfg, log: cfg.Logger}
}

// LockKey is the Redis key that serialises claims on one slot of one shop:
// slot_lock:<shop_id>:<starts_at in RFC 3339, UTC, seconds>.
func LockKey(shopID uuid.UUID, startsAt time.Time) string {
	return "slot_lock:" + shopID.String() + ":" + startsAt.UTC().Truncate(time.Second).Format(time.RFC3339)
}

// Declare records a new opening and enqueues its first wave of offers in the same
// transaction: the wave exists if and only if the opening does, and so does its
// opening.declared event (for the shop's webhook endpoints). A checkout shop whose
// connected Stripe account cannot take payments (STRIPE_CONNECT=on) gets a Conflict
// problem, code stripe_account_not_ready (shops.Shop.CheckoutReady).
//
// shop is the caller's copy, which may be stale by the time the opening is inserted:
// the checks that depend on it (shopAllows) run again in the transaction, on the shop's
// row read FOR SHARE (shops.ReadForShare).
func (s *Service) Declare(ctx context.Context, shop shops.Shop, n NewOpening) (Opening, error) {
	now := s.cfg.Now()
	if err := s.check(ctx, s.pool, shop, &n, now); err != nil {
		return Opening{}, err
	}
	var id uuid.UUID
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		id, err = s.insert(ctx, tx, shop, n, now)
		return err
	})
	if err != nil {
		return Opening{}, err
	}
	o, err := s.Get(ctx, shop.ID, id)
	if err != nil {
		return Opening{}, err
	}
	o.Warnings = waveWarnings(shop, o.StartsAt, now)
	return o, nil
}

// DeclareTx is Declare inside the caller's transaction tx: the opening, its first wave
// and its event exist if and only if tx commits, with what the caller changed in it
// (internal/book: the cancellation of the appointment whose time it offers). It
// returns the new opening's id.
func (s *Service) DeclareTx(ctx context.Context, tx pgx.Tx, shop shops.Shop, n NewOpening) (uuid.UUID, error) {
	now := s.cfg.Now()
	// The catalog is read in tx too: the caller may hold locks other transactions of
	// its own wait on, and a second connection from the pool could be the one they hold.
	if err := s.check(ctx, tx, shop, &n, now); err != nil {
		return uuid.Nil, err
	}
	return s.insert(ctx, tx, shop, n, now)
}

// check checks a new opening on the caller's copy of the shop, reading the catalog
// through q: a refusal costs no transaction of its own.
func (s *Service) check(ctx context.Context, q db.DBTX, shop shops.Shop, n *NewOpening, now time.Time) error {
	n.Service = strings.TrimSpace(n.Service)
	switch {
	case n.StartsAt.IsZero():
		return problem.Invalidf("starts_at", "starts_at is required, RFC 3339, e.g. 2026-11-22T15:00:00Z")
	case !n.StartsAt.After(now):
		return problem.Invalidf("starts_at", "starts_at must be in the future")
	case n.StartsAt.After(now.AddDate(1, 0, 0)):
		return problem.Invalidf("starts_at", "starts_at must be within a year")
	case n.DurationMinutes <= 0 || n.DurationMinutes > 1440:
		return problem.Invalidf("duration_minutes", "duration_minutes must be between 1 and 1440")
	case (n.Source == "") != (n.SourceID == uuid.Nil), n.Source != "" && n.Source != SourceAppointment:
		return fmt.Errorf("slots: an opening's source is %q or none, with its id", SourceAppointment)
	}
	// A shop with services books each customer's own service: the opening's service and
	// price are optional then, and a service it names must be one of them.
	withServices, err := catalog.HasServices(ctx, q, shop.ID)
	if err != nil {
		return err
	}
	if err := s.checkWhat(ctx, q, shop.ID, withServices, n); err != nil {
		return err
	}
	return s.shopAllows(shop, *n, now)
}

// insert inserts a checked opening, its first wave and its event in tx.
func (s *Service) insert(ctx context.Context, tx pgx.Tx, shop shops.Shop, n NewOpening, now time.Time) (uuid.UUID, error) {
	// Again on the shop as it is now, held until tx commits. A change of currency or
	// payment mode (shops.Service.Update) or a disconnected Stripe account (the ledger)
	// may have committed since the caller read the shop, after checking the shop's open
	// openings, which did not include this one yet. Both lock the shop's row before they
	// look at the openings, so either they wait for this transaction and see its opening,
	// or it waits for them and is checked against what they stored. The row first, the
	// opening after: the order they take them in too.
	cur, err := shops.ReadForShare(ctx, tx, shop)
	if err != nil {
		return uuid.Nil, err
	}
	if err := s.shopAllows(cur, n, now); err != nil {
		return uuid.Nil, err
	}
	p := db.OpeningInsertParams{
		ShopID: cur.ID, StartsAt: n.StartsAt.UTC().Truncate(time.Second), DurationMinutes: int32(n.DurationMinutes),
		Service: n.Service, PriceCents: n.PriceCents, CreatedAt: now.UTC(),
		StaffID: uuid.NullUUID{UUID: n.StaffID, Valid: n.StaffID != uuid.Nil},
	}
	if n.Source != "" {
		p.Source = pgtype.Text{String: n.Source, Valid: true}
		p.SourceID = uuid.NullUUID{UUID: n.SourceID, Valid: true}
	}
	if c := n.Chain; c != nil {
		p.ChainID = uuid.NullUUID{UUID: c.ID, Valid: true}
		p.ChainPosition = pgtype.Int4{Int32: int32(c.Position), Valid: true}
		p.ChainMovedFrom = uuid.NullUUID{UUID: c.MovedFrom, Valid: true}
	}
	row, err := queries.OpeningInsert(ctx, tx, p)
	if err != nil {
		return uuid.Nil, fmt.Errorf("insert opening: %w", err)
	}
	if _, err := s.queue.InsertTx(ctx, tx, jobs.Wave{OpeningID: row.ID, Generation: 1, Wave: 1}, nil); err != nil {
		return uuid.Nil, fmt.Errorf("enqueue first wave: %w", err)
	}
	if err := hooks.RecordOpening(ctx, tx, cur.ID, hooks.OpeningDeclared, now, row.ID, uuid.Nil); err != nil {
		return uuid.Nil, err
	}
	return row.ID, nil
}

// checkWhat checks n's service, price and person. Without services: a service and a
// positive price, as declared. With them: a service it names must be one of the shop's
// (its price when n has none), and no service means each customer is offered their
// own. A person must be one of the shop's.
func (s *Service) checkWhat(ctx context.Context, q db.DBTX, shopID uuid.UUID, withServices bool, n *NewOpening) error {
	if n.StaffID != uuid.Nil {
		p, err := catalog.New(q, nil).Person(ctx, shopID, n.StaffID)
		if errors.Is(err, catalog.ErrStaffNotFound) || (err == nil && !p.Active) {
			return &problem.Error{Kind: problem.Invalid, Code: "unknown_staff", Field: "staff_id",
				Message: "staff_id names no active person of the shop"}
		}
		if err != nil {
			return err
		}
	}
	priceErr := problem.Invalidf("price_cents", "price_cents must be a positive amount in the smallest currency unit, at most %d (the most the payment provider charges at once)", money.MaxAmount)
	if !withServices {
		switch {
		case n.Service == "" || len(n.Service) > 100:
			return problem.Invalidf("service", "service is required (at most 100 characters)")
		case n.PriceCents <= 0 || n.PriceCents > money.MaxAmount:
			return priceErr
		}
		return nil
	}
	if n.PriceCents < 0 || n.PriceCents > money.MaxAmount {
		return priceErr
	}
	if n.Service == "" {
		return nil
	}
	sv, err := catalog.ServiceNamed(ctx, q, shopID, n.Service)
	if errors.Is(err, catalog.ErrServiceNotFound) {
		return &problem.Error{Kind: problem.Invalid, Code: "unknown_service", Field: "service",
			Message: fmt.Sprintf("the shop has no active service named %q", n.Service)}
	}
	if err != nil {
		return err
	}
	n.Service = sv.Name
	if n.PriceCents == 0 {
		n.PriceCents = sv.PriceCents
	}
	return nil
}

// shopAllows checks n against what the shop's settings require of an opening: a start
// beyond the shop's lead time, and for a shop that takes payments, that it can take
// them and that the price is one the payment provider charges.
func (s *Service) shopAllows(shop shops.Shop, n NewOpening, now time.Time) error {
	if !shop.Cutoff(n.StartsAt).After(now) {
		return problem.Invalidf("starts_at", "starts_at is inside the shop's minimum lead time of %d minutes", int(shop.Policy.MinLead/time.Minute))
	}
	// A checkout shop that charges on its own Stripe account (Connect) needs one that can
	// take payments now: otherwise every taker would hear "yours!" and then that the hold
	// lapsed. shops says whether it can, and what the owner must do if not.
	if err := shop.CheckoutReady(); err != nil {
		return err
	}
	// An opening without a price (a shop with services, no service named) is charged at
	// each booked service's price. What is charged at the YES is the price, or the
	// deposit it gives (a deposit shop), or nothing (a card or none shop).
	if charge := shop.Charge(n.PriceCents); charge > 0 && s.cfg.MinimumCharge != nil {
		minimum := s.cfg.MinimumCharge(shop.Currency)
		switch {
		case charge >= minimum:
		case shop.PaymentMode == shops.PaymentDeposit:
			return problem.Invalidf("price_cents", "price_cents gives a deposit of %d %s, below the %d the payment provider accepts: raise the price or the shop's deposit",
				charge, strings.ToUpper(shop.Currency), minimum)
		default:
			return problem.Invalidf("price_cents", "price_cents must be at least %d %s: the payment provider refuses smaller payments", minimum, strings.ToUpper(shop.Currency))
		}
	}
	return nil
}

// waveWarnings warns of a first wave that the shop's number cannot send before the
// offers' deadline (the cutoff) at its send rate: the last texts of it would be dropped
// (their validity ends at the cutoff) or arrive too late to be taken.
func waveWarnings(shop shops.Shop, startsAt, now time.Time) []string {
	p := shop.Policy
	left := shop.Cutoff(startsAt).Sub(now.Add(p.FirstWaveDelay))
	if need := p.WaveDuration(); need > left {
		return []string{fmt.Sprintf(
			"a wave of %d texts takes %s at %d text(s) a second, but only %s is left before the offers close; "+
				"the last customers of the wave will not be reached in time (lower wave_size or use a faster number)",
			p.WaveSize, need.Round(time.Second), p.SendRate, max(left, 0).Round(time.Second))}
	}
	return nil
}

// Get returns shopID's opening id.
func (s *Service) Get(ctx context.Context, shopID, id uuid.UUID) (Opening, error) {
	rows, err := queries.OpeningListDetailed(ctx, s.pool, db.OpeningListDetailedParams{
		ShopID: shopID, ID: uuid.NullUUID{UUID: id, Valid: true}, MaxRows: 1,
	})
	if err != nil {
		return Opening{}, fmt.Errorf("get opening %s: %w", id, err)
	}
	if len(rows) == 0 {
		return Opening{}, ErrNotFound
	}
	return fromDetailed(rows[0]), nil
}

// List returns shopID's openings, newest start first, optionally only those in status.
func (s *Service) List(ctx context.Context, shopID uuid.UUID, status string, limit int) ([]Opening, error) {
	p := db.OpeningListDetailedParams{ShopID: shopID, MaxRows: int32(limit)}
	if status != "" {
		if !validStatus(status) {
			return nil, problem.Invalidf("status", "status must be one of %s", strings.Join(statuses, ", "))
		}
		p.Status = pgtype.Text{String: status, Valid: true}
	}
	if limit <= 0 || limit > 500 {
		p.MaxRows = 500
	}
	rows, err := queries.OpeningListDetailed(ctx, s.pool, p)
	if err != nil {
		return nil, fmt.Errorf("list openings: %w", err)
	}
	out := make([]Opening, len(rows))
	for i, r := range rows {
		out[i] = fromDetailed(r)
	}
	return out, nil
}

// Cancel cancels an open opening; its pending waves find it cancelled and stop. A filled
// opening cannot be cancelled here: it has a customer and maybe a payment.
func (s *Service) Cancel(ctx context.Context, shopID, id uuid.UUID) (Opening, error) {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		return cancel(ctx, tx, shopID, id, s.cfg.Now())
	})
	if errors.Is(err, pgx.ErrNoRows) {
		o, gerr := s.Get(ctx, shopID, id)
		if gerr != nil {
			return Opening{}, gerr
		}
		if o.Status == StatusCancelled {
			return o, nil // cancelling twice is harmless
		}
		return Opening{}, &problem.Error{Kind: problem.Conflict, Code: "opening_not_open",
			Message: fmt.Sprintf("only an open opening can be cancelled; this one is %s", o.Status)}
	}
	if err != nil {
		return Opening{}, fmt.Errorf("cancel opening %s: %w", id, err)
	}
	return s.Get(ctx, shopID, id)
}

// CancelTx cancels shopID's open opening id in the caller's transaction tx, as Cancel
// does (internal/book withdraws the opening of an appointment booked again). It returns
// ErrNotOpen when the opening is not the shop's or not open (filled already, say).
func CancelTx(ctx context.Context, tx pgx.Tx, shopID, id uuid.UUID, now time.Time) error {
	err := cancel(ctx, tx, shopID, id, now)
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrNotOpen
	}
	return err
}

// ErrNotOpen means the opening is not open, or not the shop's.
var ErrNotOpen = errors.New("slots: opening not open")

// cancel cancels shopID's open opening id in tx, closes its offers not texted yet (the
// send-time claim rechecks the opening too) and records opening.cancelled. It returns
// pgx.ErrNoRows when the opening is not the shop's or not open.
func cancel(ctx context.Context, tx pgx.Tx, shopID, id uuid.UUID, now time.Time) error {
	if _, err := queries.OpeningCancel(ctx, tx, db.OpeningCancelParams{ID: id, ShopID: shopID, Now: now.UTC()}); err != nil {
		return err
	}
	if err := offers.CloseQueued(ctx, tx, id); err != nil {
		return err
	}
	return hooks.RecordOpening(ctx, tx, shopID, hooks.OpeningCancelled, now, id, uuid.Nil)
}

func validStatus(s string) bool {
	for _, v := range statuses {
		if v == s {
			return true
		}
	}
	return false
}

func fromDetailed(r db.OpeningListDetailedRow) Opening {
	o := Opening{
		ID: r.ID, ShopID: r.ShopID, StartsAt: r.StartsAt.UTC(), DurationMinutes: int(r.DurationMinutes),
		Service: r.Service, PriceCents: r.PriceCents, Status: r.Status, Generation: int(r.Generation),
		OffersSent: int(r.OffersSent), CreatedAt: r.CreatedAt, FilledAt: r.FilledAt,
	}
	if r.FilledByID.Valid {
		o.FilledBy = &Filler{CustomerID: r.FilledByID.UUID, Phone: r.FilledPhone, Name: r.FilledName}
	}
	if id, err := uuid.Parse(r.BookingID); err == nil { // "" when there is no booking
		o.Booking = &Booking{
			ID: id, Status: r.BookingStatus, AmountCents: r.BookingAmountCents,
			PaymentURL: r.BookingPaymentUrl, StripeCheckoutSessionID: r.BookingSessionID,
			ApplicationFeeCents: r.BookingApplicationFeeCents,
			Service:             r.BookingService, DurationMinutes: int(r.BookingDurationMinutes),
		}
	}
	if r.StaffID.Valid {
		o.StaffID, o.StaffName = r.StaffID.UUID, r.StaffName
	}
	if r.ParentID.Valid {
		o.ParentID = r.ParentID.UUID
	}
	if r.Source.Valid {
		o.Source, o.SourceID = r.Source.String, r.SourceID.UUID
	}
	if r.ChainID.Valid {
		o.Chain = &Chain{ID: r.ChainID.UUID, Position: int(r.ChainPosition.Int32), MovedFrom: r.ChainMovedFrom.UUID}
	}
	return o
}

// CompletePast marks filled openings whose appointment has ended, with a confirmed
// booking, completed, and says how many.
func (s *Service) CompletePast(ctx context.Context) (int64, error) {
	n, err := queries.OpeningCompletePast(ctx, s.pool, s.cfg.Now().UTC())
	if err != nil {
		return 0, fmt.Errorf("complete past openings: %w", err)
	}
	return n, nil
}

// CompleteWorker runs jobs.Complete.
type CompleteWorker struct {
	river.WorkerDefaults[jobs.Complete]
	Service *Service
}

// Work implements river.Worker.
func (w *CompleteWorker) Work(ctx context.Context, _ *river.Job[jobs.Complete]) error {
	_, err := w.Service.CompletePast(ctx)
	return err
}
