package book

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slotrecovery/slotrecovery/internal/catalog"
	"github.com/slotrecovery/slotrecovery/internal/connectors"
	"github.com/slotrecovery/slotrecovery/internal/cursor"
	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/keyring"
	"github.com/slotrecovery/slotrecovery/internal/money"
	"github.com/slotrecovery/slotrecovery/internal/offers"
	"github.com/slotrecovery/slotrecovery/internal/phone"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
)

// queries is this package's one way to its SQL: sqlc's Queries holds no state, and
// each call is given the pool or the transaction it runs on.
var queries = db.New()

// ErrNotFound means the shop has no such appointment.
var ErrNotFound = problem.New(problem.NotFound, "appointment_not_found", "no such appointment")

// ErrNotBooked refuses the owner's cancellation of an appointment that is not booked
// (it was moved, took place, or was a no-show).
var ErrNotBooked = problem.New(problem.Conflict, "appointment_not_booked", "only a booked appointment can be cancelled")

// ErrBooking refuses the book's cancellation of a booking a YES made (source
// slotrecovery): the ledger owns it, with its payment and its opening.
var ErrBooking = problem.New(problem.Conflict, "appointment_is_booking",
	"a booking made by a YES is kept with its payment and its opening, not cancelled as an appointment")

// Limits of what the book keeps. Longer text from a source is cut, not refused: a
// booking system's description is the truth of the shop's day, whatever its length.
const (
	maxExternalID = 300
	maxName       = 200
	maxService    = 200
	maxStaff      = 300
	// maxOpeningService is the longest service an opening carries (slots).
	maxOpeningService = 100
)

// Page sizes of List.
const (
	DefaultPage = 50
	MaxPage     = 500
)

// External names an appointment in its source.
type External struct {
	Source connectors.Source
	ID     string
}

// Customer is the shop's customer an appointment is matched to.
type Customer struct {
	ID   uuid.UUID
	Name string
}

// Staff is the shop's person an appointment is with.
type Staff struct {
	ID   uuid.UUID
	Name string
}

// Appointment is one appointment of the shop's book, as its source last described it.
type Appointment struct {
	ID     uuid.UUID
	ShopID uuid.UUID
	// External names it in its source; nil for the book's own records.
	External *External
	Source   connectors.Source
	// Customer is the shop's customer with its phone, nil when none is known.
	Customer *Customer
	// Phone is the customer's number in E.164 ("" when the source gave none that reads
	// as one); List masks it (phone.Mask), Get does not.
	Phone string
	// Name is the customer's name as the source gave it.
	Name string
	// Staff is the shop's person it is with (nil: not known); ExternalStaff the source's
	// id of that person, kept for mapping.
	Staff           *Staff
	ExternalStaff   string
	Service         string
	PriceCents      int64
	StartsAt        time.Time
	DurationMinutes int
	Status          connectors.Status
	// Version and UpdatedAt are the order of the description stored (connectors.Appointment).
	Version   int64
	UpdatedAt time.Time
	// Releases counts the times it freed its time (cancelled, moved): each may declare
	// one opening (Declarations).
	Releases int
	// CreatedAt and ChangedAt are when the book first and last recorded it.
	CreatedAt time.Time
	ChangedAt time.Time
	// MovedTo is the opening a move-up moved it to (status moved; uuid.Nil otherwise).
	MovedTo uuid.UUID
	// ConnectorID is the connector that delivered its newest description (uuid.Nil: the
	// owners' API, a YES, an appointment from before connectors were recorded, or one
	// whose connector was removed).
	ConnectorID uuid.UUID
}

// EndsAt is when the appointment ends.
func (a Appointment) EndsAt() time.Time {
	return a.StartsAt.Add(time.Duration(a.DurationMinutes) * time.Minute)
}

// Result is what a change of the book did.
type Result struct {
	// Appointment is the appointment as stored after the change.
	Appointment Appointment
	// Changed is false when the description was not newer than the stored one (a
	// redelivery, or an older one arriving late): nothing changed.
	Changed bool
	// Created is true when this change recorded the appointment for the first time
	// (Upsert only).
	Created bool
	// Declaration is what this change's release claimed and, in the same transaction,
	// declared: nil when it claimed none (it freed no time, the time is past, or another
	// delivery of the same release claimed it first); waiting in a shop with
	// auto_declare off; pending when the declaration failed and is left to
	// DeclarePending.
	Declaration *Declaration
	// Withdrawn is the opening this change cancelled (uuid.Nil: none): the appointment
	// was booked again over the time its last release had declared, while that opening
	// was still open.
	Withdrawn uuid.UUID
}

// Config configures the service. Zero fields mean the defaults.
type Config struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// StaleAfter is how long an attempt to declare a claim may run before
	// DeclarePending takes the claim over (its process is taken to have died); default
	// 2 minutes.
	StaleAfter time.Duration
	// Logger records declarations that failed for a reason a retry may cure; nil
	// discards.
	Logger *slog.Logger
	// AllowHTTPFeeds lets a calendar feed's address be http:// (DEV_MODE), not only
	// https://.
	AllowHTTPFeeds bool
	// Secrets seal the connectors' secrets in the database (the server's SECRETS_KEY;
	// connectors.go). Nil: a random key for this process (tests).
	Secrets *keyring.Ring
	// Queue enqueues the write-back of a move (jobs.AppointmentWriteBack) in the move's
	// transaction, and the first wave of the opening a YES booking's move-up frees; nil:
	// moves are never written back, only listed to copy, and YES bookings are not moved
	// (MoveUp answers NoOffer).
	Queue jobs.Inserter
	// Movers write moves back to each vendor (calcom.Client, square.Client); a vendor
	// without one has its write-backs left to the owner.
	Movers map[connectors.Source]Mover
}

// Service keeps the shops' appointment books.
type Service struct {
	pool     *pgxpool.Pool
	shops    *shops.Service
	openings *slots.Service
	cfg      Config
	// txs holds a place for each of the book's transactions running in this process
	// (inTx).
	txs chan struct{}
}

// New returns a Service on pool that declares openings through openings and reads the
// shops it declares for (DeclarePending) through shopsSvc.
func New(pool *pgxpool.Pool, shopsSvc *shops.Service, openings *slots.Service, cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.StaleAfter <= 0 {
		cfg.StaleAfter = 2 * time.Minute
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Secrets == nil {
		cfg.Secrets = keyring.Random()
	}
	return &Service{pool: pool, shops: shopsSvc, openings: openings, cfg: cfg,
		txs: make(chan struct{}, max(pool.Config().MaxConns-1, 1))}
}

// inTx runs fn in a transaction on the pool, one of at most the pool's size less one of
// the book's at once in this process. A declaration needs a second connection while its
// transaction holds the appointment's row lock (slots.Service.DeclareTx reads the
// catalog through the pool), and every delivery of the same appointment waiting for that
// lock holds a connection: without the bound, a storm of deliveries of one appointment
// takes the whole pool and the lock's holder waits for a connection forever.
func (s *Service) inTx(ctx context.Context, fn func(pgx.Tx) error) error {
	select {
	case s.txs <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-s.txs }()
	return pgx.BeginFunc(ctx, s.pool, fn)
}

// Upsert records a source's description of one of shop's appointments (the owners' API
// with connectors.SourceAPI, or a connector's delivery) and, when it frees a future
// time (cancelled or moved, or booked at another time: the time it held), claims and
// declares its opening; booked again over a time one of its releases declared, it
// withdraws that opening (doc.go). A description of an appointment a move-up moved
// that still holds its former time leaves it moved (keepMove). All of it is one
// transaction holding the appointment's row lock. A description not newer than the
// stored one changes nothing:
// Result.Changed is false and Result.Appointment is what is stored. Bad input is an
// Invalid problem naming the field.
func (s *Service) Upsert(ctx context.Context, shop shops.Shop, in connectors.Appointment) (Result, error) {
	return s.upsert(ctx, shop, in, uuid.Nil)
}

// upsert is Upsert of a description delivered by connector (uuid.Nil: none, or not
// known), which the appointment then records (Appointment.ConnectorID).
func (s *Service) upsert(ctx context.Context, shop shops.Shop, in connectors.Appointment, connector uuid.UUID) (Result, error) {
	now := s.cfg.Now().UTC()
	p, err := s.params(ctx, shop, in, now)
	if err != nil {
		return Result{}, err
	}
	p.ConnectorID = uuid.NullUUID{UUID: connector, Valid: connector != uuid.Nil}
	var res Result
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		res = Result{Changed: true}
		if p.Phone.Valid {
			// A known customer is linked, never made: an appointment opts nobody in.
			c, err := queries.CustomerGetByPhone(ctx, tx, db.CustomerGetByPhoneParams{ShopID: shop.ID, Phone: p.Phone.String})
			switch {
			case err == nil:
				p.CustomerID = uuid.NullUUID{UUID: c.ID, Valid: true}
			case !errors.Is(err, pgx.ErrNoRows):
				return fmt.Errorf("match customer: %w", err)
			}
		}
		// The stored row, locked until the declaration below is recorded: what the upsert
		// compares with, the time a release frees (the time the book held) and what the
		// change's event says it was.
		b, err := s.lockExternal(ctx, tx, p)
		if err != nil {
			return err
		}
		prev := b.row // zero when not known
		if err := keepMove(ctx, tx, b, &p); err != nil {
			return err
		}
		row, err := queries.AppointmentUpsert(ctx, tx, p)
		if err != nil {
			return err
		}
		res.Created = !b.known
		if row.Releases > prev.Releases {
			f := freedOf(row)
			if b.known && prev.Status == string(connectors.StatusBooked) {
				f = freedOf(prev)
			}
			if res.Declaration, err = s.claimAndSettle(ctx, tx, shop, row, f, now); err != nil {
				return err
			}
		}
		if connectors.Status(row.Status) == connectors.StatusBooked && row.Releases > 0 {
			if res.Withdrawn, err = s.withdraw(ctx, tx, shop, row, now); err != nil {
				return err
			}
		}
		if res.Appointment, err = s.get(ctx, tx, shop.ID, row.ID); err != nil {
			return err
		}
		return recordChange(ctx, tx, b, res, now)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		// Not newer than what is stored: a redelivery or a late older description.
		a, err := s.byExternal(ctx, shop.ID, in.Source, p.ExternalID.String)
		return Result{Appointment: a}, err
	}
	if err != nil {
		return Result{}, fmt.Errorf("upsert appointment %s/%s: %w", in.Source, p.ExternalID.String, err)
	}
	return res, nil
}

// lockExternal reads and locks, in tx, the stored appointment p describes. One not
// stored yet is read again under AppointmentLockName: of two first deliveries racing,
// the second then finds the row the first stored (once it commits) and is compared with
// it like any later delivery, so that "first heard of" (Result.Created, the created
// event) is true of exactly one, and the other's release frees the time the book held.
func (s *Service) lockExternal(ctx context.Context, tx pgx.Tx, p db.AppointmentUpsertParams) (before, error) {
	lock := db.AppointmentLockExternalParams{ShopID: p.ShopID, Source: p.Source, ExternalID: p.ExternalID}
	r, err := queries.AppointmentLockExternal(ctx, tx, lock)
	if errors.Is(err, pgx.ErrNoRows) {
		if err := queries.AppointmentLockName(ctx, tx, db.AppointmentLockNameParams{
			ShopID: p.ShopID, Source: p.Source, ExternalID: p.ExternalID.String,
		}); err != nil {
			return before{}, fmt.Errorf("lock appointment's name: %w", err)
		}
		r, err = queries.AppointmentLockExternal(ctx, tx, lock)
	}
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return before{}, nil
	case err != nil:
		return before{}, fmt.Errorf("lock appointment: %w", err)
	}
	return before{known: true, row: r.Appointment, staffName: r.StaffName}, nil
}

// claimAndSettle claims, in tx, the declaration of the opening of the time f that row's
// latest release frees, and declares it (settle). A declaration that failed for a
// reason a retry may cure is logged and left pending for DeclarePending: the change that
// freed the time still commits, since a retry of it by its source would find nothing
// newer to record.
func (s *Service) claimAndSettle(ctx context.Context, tx pgx.Tx, shop shops.Shop, row db.Appointment, f freed, now time.Time) (*Declaration, error) {
	// The booking left the time its move-up offers named (cancelled, moved, or booked
	// at another time): they are withdrawn, so no wave texts them and no YES takes one.
	if err := offers.WithdrawMoves(ctx, tx, row.ID, uuid.Nil); err != nil {
		return nil, err
	}
	c, err := s.claim(ctx, tx, shop, row, f, now)
	if err != nil || c == nil {
		return nil, err
	}
	d, err := s.settle(ctx, tx, shop, *c)
	if err != nil {
		s.cfg.Logger.WarnContext(ctx, "appointment opening not declared yet", "appointment_id", row.ID,
			"release", c.ReleaseNo, "error", err)
	}
	return &d, nil
}

// params checks in and makes it the upsert's parameters.
func (s *Service) params(ctx context.Context, shop shops.Shop, in connectors.Appointment, now time.Time) (db.AppointmentUpsertParams, error) {
	extID := strings.TrimSpace(in.ExternalID)
	switch {
	case !in.Source.Valid() || in.Source == connectors.SourceSlotRecovery:
		return db.AppointmentUpsertParams{}, problem.Invalidf("source", "source must be one of api, calcom, square, ics")
	case extID == "" || len(extID) > maxExternalID || !utf8.ValidString(extID) || strings.ContainsRune(extID, 0):
		return db.AppointmentUpsertParams{}, problem.Invalidf("external_id", "external_id must be text of 1 to %d bytes", maxExternalID)
	case !in.Status.Valid():
		return db.AppointmentUpsertParams{}, problem.Invalidf("status", "status must be one of booked, cancelled, moved, completed, no_show")
	case in.StartsAt.IsZero():
		return db.AppointmentUpsertParams{}, problem.Invalidf("starts_at", "starts_at is required, RFC 3339, e.g. 2026-11-22T15:00:00Z")
	case in.DurationMinutes < 1 || in.DurationMinutes > 1440:
		return db.AppointmentUpsertParams{}, problem.Invalidf("duration_minutes", "duration_minutes must be between 1 and 1440")
	case in.PriceCents < 0 || in.PriceCents > money.MaxAmount:
		return db.AppointmentUpsertParams{}, problem.Invalidf("price_cents", "price_cents must be between 0 and %d", money.MaxAmount)
	case in.Version < 0:
		return db.AppointmentUpsertParams{}, problem.Invalidf("version", "version must not be negative")
	}
	if in.StaffID != uuid.Nil {
		if _, err := catalog.New(s.pool, nil).Person(ctx, shop.ID, in.StaffID); errors.Is(err, catalog.ErrStaffNotFound) {
			return db.AppointmentUpsertParams{}, &problem.Error{Kind: problem.Invalid, Code: "unknown_staff", Field: "staff_id",
				Message: "staff_id names no person of the shop"}
		} else if err != nil {
			return db.AppointmentUpsertParams{}, err
		}
	}
	updated := in.UpdatedAt
	if updated.IsZero() {
		updated = now
	}
	p := db.AppointmentUpsertParams{
		ShopID: shop.ID, Source: string(in.Source), ExternalID: pgtype.Text{String: extID, Valid: true},
		CustomerName: clip(in.CustomerName, maxName), StaffID: uuid.NullUUID{UUID: in.StaffID, Valid: in.StaffID != uuid.Nil},
		ExternalStaff: clip(in.ExternalStaff, maxStaff), Service: clip(in.Service, maxService), PriceCents: in.PriceCents,
		StartsAt: in.StartsAt.UTC().Truncate(time.Second), DurationMinutes: int32(in.DurationMinutes), Status: string(in.Status),
		SourceVersion: in.Version, SourceUpdatedAt: updated.UTC(), Now: now,
	}
	// A number that does not read as one is left out rather than refused: the
	// appointment still frees its time when cancelled.
	if number, ok := phone.Normalize(in.Phone, phone.CallingCode(shop.SMSNumber)); ok {
		p.Phone = pgtype.Text{String: number, Valid: true}
	}
	return p, nil
}

// clip trims s and cuts it to at most n bytes on a rune boundary, dropping NULs and
// invalid UTF-8 (Postgres refuses both).
func clip(s string, n int) string {
	s = strings.ToValidUTF8(strings.ReplaceAll(strings.TrimSpace(s), "\x00", ""), "")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strings.TrimSpace(s[:n])
}

// Cancel cancels shop's booked appointment id in the book (the owner's cancellation),
// and claims and declares its opening as a source's cancellation would, in the same
// transaction. Cancelling a cancelled appointment changes nothing (Result.Changed
// false); one moved, completed or a no-show is ErrNotBooked, and a booking a YES made
// (source slotrecovery) ErrBooking.
func (s *Service) Cancel(ctx context.Context, shop shops.Shop, id uuid.UUID) (Result, error) {
	now := s.cfg.Now().UTC()
	var res Result
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		res = Result{Changed: true}
		// The conditional update locks the row until the declaration is recorded.
		row, err := queries.AppointmentCancel(ctx, tx, db.AppointmentCancelParams{ShopID: shop.ID, ID: id, Now: now})
		if err != nil {
			return err
		}
		if res.Declaration, err = s.claimAndSettle(ctx, tx, shop, row, freedOf(row), now); err != nil {
			return err
		}
		if res.Appointment, err = s.get(ctx, tx, shop.ID, id); err != nil {
			return err
		}
		// Booked before (the update's condition).
		return recordChange(ctx, tx, before{known: true, row: db.Appointment{Status: string(connectors.StatusBooked)}}, res, now)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		a, err := s.Get(ctx, shop.ID, id)
		if err != nil {
			return Result{}, err
		}
		switch {
		case a.Source == connectors.SourceSlotRecovery:
			return Result{}, ErrBooking
		case a.Status == connectors.StatusCancelled:
			return Result{Appointment: a}, nil // cancelling twice is harmless
		}
		return Result{}, ErrNotBooked
	}
	if err != nil {
		return Result{}, fmt.Errorf("cancel appointment %s: %w", id, err)
	}
	return res, nil
}

// Get returns shopID's appointment id: one of its sources' (Upsert), or a booking a YES
// made (source slotrecovery: booked while held or paid, cancelled once it lapsed or was
// cancelled), read from the ledger's row (book_appointments).
func (s *Service) Get(ctx context.Context, shopID, id uuid.UUID) (Appointment, error) {
	return s.getBook(ctx, s.pool, shopID, id)
}

// getBook is Get on q: a YES booking's move-up reads the booking as the book shows it in
// its transaction.
func (s *Service) getBook(ctx context.Context, q db.DBTX, shopID, id uuid.UUID) (Appointment, error) {
	r, err := queries.AppointmentBookGet(ctx, q, db.AppointmentBookGetParams{ShopID: shopID, ID: id})
	if errors.Is(err, pgx.ErrNoRows) {
		return Appointment{}, ErrNotFound
	}
	if err != nil {
		return Appointment{}, fmt.Errorf("get appointment %s: %w", id, err)
	}
	return fromRow(db.Appointment(r.BookAppointment), r.StaffName, r.KnownName), nil
}

// get is one of shopID's sources' appointments, id, on q (the transaction that changed
// it).
func (s *Service) get(ctx context.Context, q db.DBTX, shopID, id uuid.UUID) (Appointment, error) {
	r, err := queries.AppointmentGet(ctx, q, db.AppointmentGetParams{ShopID: shopID, ID: id})
	if errors.Is(err, pgx.ErrNoRows) {
		return Appointment{}, ErrNotFound
	}
	if err != nil {
		return Appointment{}, fmt.Errorf("get appointment %s: %w", id, err)
	}
	return fromRow(r.Appointment, r.StaffName, r.KnownName), nil
}

// GetExternal returns shopID's appointment that source names externalID.
func (s *Service) GetExternal(ctx context.Context, shopID uuid.UUID, source connectors.Source, externalID string) (Appointment, error) {
	return s.byExternal(ctx, shopID, source, externalID)
}

func (s *Service) byExternal(ctx context.Context, shopID uuid.UUID, source connectors.Source, externalID string) (Appointment, error) {
	r, err := queries.AppointmentGetByExternal(ctx, s.pool, db.AppointmentGetByExternalParams{
		ShopID: shopID, Source: string(source), ExternalID: pgtype.Text{String: externalID, Valid: true},
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return Appointment{}, ErrNotFound
	}
	if err != nil {
		return Appointment{}, fmt.Errorf("get appointment %s/%s: %w", source, externalID, err)
	}
	return fromRow(r.Appointment, r.StaffName, r.KnownName), nil
}

// Query selects the appointments List returns. Zero fields select everything.
type Query struct {
	// From (inclusive) and To (exclusive) bound the start.
	From, To time.Time
	StaffID  uuid.UUID
	Status   connectors.Status
	// Cursor is the Next of the page before ("" for the first page).
	Cursor string
	// Limit is the page's size, 1 to MaxPage; 0 means DefaultPage.
	Limit int
}

// Page is one page of appointments by start time; Next is the cursor of the next page,
// "" after the last.
type Page struct {
	Appointments []Appointment
	Next         string
}

var errBadCursor = problem.Invalidf("cursor", "cursor is not one this server gave out; start again without it")

// List returns a page of shopID's appointments by start, then id. Phones are masked
// (phone.Mask): a list is shown to whoever looks at the shop's day.
func (s *Service) List(ctx context.Context, shopID uuid.UUID, q Query) (Page, error) {
	limit := q.Limit
	if limit == 0 {
		limit = DefaultPage
	}
	if limit < 1 || limit > MaxPage {
		return Page{}, problem.Invalidf("limit", "limit must be a whole number from 1 to %d", MaxPage)
	}
	if q.Status != "" && !q.Status.Valid() {
		return Page{}, problem.Invalidf("status", "status must be one of booked, cancelled, moved, completed, no_show")
	}
	if !q.From.IsZero() && !q.To.IsZero() && !q.To.After(q.From) {
		return Page{}, problem.Invalidf("to", "to must be after from")
	}
	p := db.AppointmentListParams{ShopID: shopID, MaxRows: int32(limit + 1),
		StaffID: uuid.NullUUID{UUID: q.StaffID, Valid: q.StaffID != uuid.Nil},
		Status:  pgtype.Text{String: string(q.Status), Valid: q.Status != ""},
	}
	if q.Cursor != "" {
		t, id, err := cursor.Decode(q.Cursor)
		if err != nil {
			return Page{}, errBadCursor
		}
		p.AfterStart, p.AfterID = t, id
	}
	if !q.From.IsZero() {
		from := q.From.UTC()
		p.FromTime = &from
	}
	if !q.To.IsZero() {
		to := q.To.UTC()
		p.ToTime = &to
	}
	rows, err := queries.AppointmentList(ctx, s.pool, p)
	if err != nil {
		return Page{}, fmt.Errorf("list appointments: %w", err)
	}
	var page Page
	if len(rows) > limit {
		rows = rows[:limit]
		last := rows[limit-1].BookAppointment
		page.Next = cursor.Encode(last.StartsAt, last.ID)
	}
	page.Appointments = make([]Appointment, len(rows))
	for i, r := range rows {
		a := fromRow(db.Appointment(r.BookAppointment), r.StaffName, r.KnownName)
		if a.Phone != "" {
			a.Phone = phone.Mask(a.Phone)
		}
		page.Appointments[i] = a
	}
	return page, nil
}

// fromRow maps a row to an Appointment.
func fromRow(r db.Appointment, staffName, customerName string) Appointment {
	a := Appointment{
		ID: r.ID, ShopID: r.ShopID, Source: connectors.Source(r.Source), Phone: r.Phone.String, Name: r.CustomerName,
		ExternalStaff: r.ExternalStaff, Service: r.Service, PriceCents: r.PriceCents, StartsAt: r.StartsAt.UTC(),
		DurationMinutes: int(r.DurationMinutes), Status: connectors.Status(r.Status), Version: r.SourceVersion,
		UpdatedAt: r.SourceUpdatedAt.UTC(), Releases: int(r.Releases), CreatedAt: r.CreatedAt.UTC(), ChangedAt: r.ChangedAt.UTC(),
		MovedTo: r.MovedTo.UUID, ConnectorID: r.ConnectorID.UUID,
	}
	if r.ExternalID.Valid {
		a.External = &External{Source: a.Source, ID: r.ExternalID.String}
	}
	if r.CustomerID.Valid {
		a.Customer = &Customer{ID: r.CustomerID.UUID, Name: customerName}
	}
	if r.StaffID.Valid {
		a.Staff = &Staff{ID: r.StaffID.UUID, Name: staffName}
	}
	return a
}
