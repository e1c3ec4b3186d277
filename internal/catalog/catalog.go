// Package catalog holds a shop's people (staff) and what they do (services, each with
// a duration, a price and the people who do it). An opening may be one person's freed
// time; the offer loop matches each customer to the first service of theirs that fits
// it (internal/offers), and the claim books that service at its price (internal/slots).
// A shop without services books openings as declared.
package catalog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/money"
	"github.com/slotrecovery/slotrecovery/internal/pgcode"
	"github.com/slotrecovery/slotrecovery/internal/problem"
)

// queries is this package's one way to its SQL: sqlc's Queries holds no state, and
// each call is given the pool or the transaction it runs on.
var queries = db.New()

// Durations a service may last, in minutes.
const (
	MinDuration = 5
	MaxDuration = 480
)

// ErrStaffNotFound means no person with that id works at the shop.
var ErrStaffNotFound = problem.New(problem.NotFound, "staff_not_found", "no such person")

// ErrServiceNotFound means no service with that id is the shop's.
var ErrServiceNotFound = problem.New(problem.NotFound, "service_not_found", "no such service")

// Staff is a person who works at a shop. An inactive one keeps their history.
type Staff struct {
	ID     uuid.UUID
	ShopID uuid.UUID
	Name   string
	Active bool
}

// Service is something a shop does: how long it takes, what it costs, and who does it
// (StaffIDs empty: anyone).
type Service struct {
	ID              uuid.UUID
	ShopID          uuid.UUID
	Name            string
	DurationMinutes int
	PriceCents      int64
	StaffIDs        []uuid.UUID
	Active          bool
}

// MaxStaff and MaxServices bound a shop's catalogue: lists, pickers and the import's
// matching read all of it, and no shop has more people or services than this.
const (
	MaxStaff    = 500
	MaxServices = 500
)

// Catalog reads and changes shops' staff and services.
type Catalog struct {
	pool db.DBTX
	now  func() time.Time
}

// New returns a Catalog over pool; now is the clock (nil: time.Now).
func New(pool db.DBTX, now func() time.Time) *Catalog {
	if now == nil {
		now = time.Now
	}
	return &Catalog{pool: pool, now: now}
}

func staffFrom(r db.Staff) Staff {
	return Staff{ID: r.ID, ShopID: r.ShopID, Name: r.Name, Active: r.Active}
}

func serviceFrom(r db.Service) Service {
	ids := r.StaffIds
	if ids == nil {
		ids = []uuid.UUID{}
	}
	return Service{ID: r.ID, ShopID: r.ShopID, Name: r.Name, DurationMinutes: int(r.DurationMinutes),
		PriceCents: r.PriceCents, StaffIDs: ids, Active: r.Active}
}

func name(field, s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 100 {
		return "", problem.Invalidf(field, "%s is required (at most 100 characters)", field)
	}
	return s, nil
}

// taken translates a duplicate name into a Conflict problem.
func taken(err error, what, n string) error {
	if pgcode.Unique(err) {
		return &problem.Error{Kind: problem.Conflict, Code: "name_taken", Field: "name",
			Message: fmt.Sprintf("the shop already has a %s named %q", what, n)}
	}
	return err
}

// capped runs insert in a transaction that holds shopID's row and counts what the shop
// has (count) first: a shop at max gets a conflict, and two adds at the cap at once
// count each other. Without a pool to begin on (the caller's transaction), it runs in
// that transaction.
func (c *Catalog) capped(ctx context.Context, shopID uuid.UUID, what string, max int64,
	count func(context.Context, db.DBTX, uuid.UUID) (int64, error), insert func(db.DBTX) error) error {
	run := func(q db.DBTX) error {
		if err := queries.CatalogLockShop(ctx, q, shopID); err != nil {
			return fmt.Errorf("catalog: lock the shop: %w", err)
		}
		n, err := count(ctx, q, shopID)
		if err != nil {
			return fmt.Errorf("catalog: count %s: %w", what, err)
		}
		if n >= max {
			return &problem.Error{Kind: problem.Conflict, Code: "too_many_" + what,
				Message: fmt.Sprintf("a shop has at most %d %s, inactive ones included: reuse or rename one", max, what)}
		}
		return insert(q)
	}
	if b, ok := c.pool.(interface {
		Begin(context.Context) (pgx.Tx, error)
	}); ok {
		return pgx.BeginFunc(ctx, b, func(tx pgx.Tx) error { return run(tx) })
	}
	return run(c.pool)
}

// AddStaff adds a person to shopID.
func (c *Catalog) AddStaff(ctx context.Context, shopID uuid.UUID, n string) (Staff, error) {
	n, err := name("name", n)
	if err != nil {
		return Staff{}, err
	}
	var r db.Staff
	err = c.capped(ctx, shopID, "staff", MaxStaff, queries.StaffCount, func(q db.DBTX) error {
		var err error
		r, err = queries.StaffInsert(ctx, q, db.StaffInsertParams{ShopID: shopID, Name: n, Now: c.now().UTC()})
		return taken(err, "person", n)
	})
	if err != nil {
		return Staff{}, err
	}
	return staffFrom(r), nil
}

// Staff lists shopID's people, oldest first.
func (c *Catalog) Staff(ctx context.Context, shopID uuid.UUID) ([]Staff, error) {
	rows, err := queries.StaffList(ctx, c.pool, shopID)
	if err != nil {
		return nil, fmt.Errorf("list staff: %w", err)
	}
	out := make([]Staff, len(rows))
	for i, r := range rows {
		out[i] = staffFrom(r)
	}
	return out, nil
}

// Person returns shopID's person id.
func (c *Catalog) Person(ctx context.Context, shopID, id uuid.UUID) (Staff, error) {
	r, err := queries.StaffGet(ctx, c.pool, db.StaffGetParams{ID: id, ShopID: shopID})
	if errors.Is(err, pgx.ErrNoRows) {
		return Staff{}, ErrStaffNotFound
	}
	if err != nil {
		return Staff{}, fmt.Errorf("get person %s: %w", id, err)
	}
	return staffFrom(r), nil
}

// StaffChange is a change of a person: nil fields stay as they are.
type StaffChange struct {
	Name   *string
	Active *bool
}

// UpdateStaff changes shopID's person id.
func (c *Catalog) UpdateStaff(ctx context.Context, shopID, id uuid.UUID, ch StaffChange) (Staff, error) {
	p := db.StaffUpdateParams{ID: id, ShopID: shopID, Now: c.now().UTC()}
	if ch.Name != nil {
		n, err := name("name", *ch.Name)
		if err != nil {
			return Staff{}, err
		}
		p.Name = pgtype.Text{String: n, Valid: true}
	}
	if ch.Active != nil {
		p.Active = pgtype.Bool{Bool: *ch.Active, Valid: true}
	}
	r, err := queries.StaffUpdate(ctx, c.pool, p)
	if errors.Is(err, pgx.ErrNoRows) {
		return Staff{}, ErrStaffNotFound
	}
	if err != nil {
		return Staff{}, taken(err, "person", p.Name.String)
	}
	return staffFrom(r), nil
}

// CheckStaff refuses ids that are not shopID's people (field names the input), in q.
func CheckStaff(ctx context.Context, q db.DBTX, shopID uuid.UUID, field string, ids []uuid.UUID) error {
	if len(ids) == 0 {
		return nil
	}
	unknown, err := queries.StaffUnknown(ctx, q, db.StaffUnknownParams{ShopID: shopID, Ids: ids})
	if err != nil {
		return fmt.Errorf("check staff: %w", err)
	}
	if len(unknown) > 0 {
		return &problem.Error{Kind: problem.Invalid, Code: "unknown_staff", Field: field,
			Message: fmt.Sprintf("%s names no person of the shop: %s", field, unknown[0])}
	}
	return nil
}

// NewService is a service to add.
type NewService struct {
	Name            string
	DurationMinutes int
	PriceCents      int64
	StaffIDs        []uuid.UUID
}

func checkDuration(m int) error {
	if m < MinDuration || m > MaxDuration {
		return problem.Invalidf("duration_minutes", "duration_minutes must be between %d and %d", MinDuration, MaxDuration)
	}
	return nil
}

func checkPrice(p int64) error {
	if p <= 0 || p > money.MaxAmount {
		return problem.Invalidf("price_cents", "price_cents must be a positive amount in the smallest currency unit, at most %d", money.MaxAmount)
	}
	return nil
}

func unique(ids []uuid.UUID) []uuid.UUID {
	out := []uuid.UUID{}
	for _, id := range ids {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// AddService adds a service to shopID.
func (c *Catalog) AddService(ctx context.Context, shopID uuid.UUID, n NewService) (Service, error) {
	nm, err := name("name", n.Name)
	if err != nil {
		return Service{}, err
	}
	if err := checkDuration(n.DurationMinutes); err != nil {
		return Service{}, err
	}
	if err := checkPrice(n.PriceCents); err != nil {
		return Service{}, err
	}
	ids := unique(n.StaffIDs)
	if err := CheckStaff(ctx, c.pool, shopID, "staff_ids", ids); err != nil {
		return Service{}, err
	}
	var r db.Service
	err = c.capped(ctx, shopID, "services", MaxServices, queries.ServiceCount, func(q db.DBTX) error {
		var err error
		r, err = queries.ServiceInsert(ctx, q, db.ServiceInsertParams{ShopID: shopID, Name: nm,
			DurationMinutes: int32(n.DurationMinutes), PriceCents: n.PriceCents, StaffIds: ids, Now: c.now().UTC()})
		return taken(err, "service", nm)
	})
	if err != nil {
		return Service{}, err
	}
	return serviceFrom(r), nil
}

// Services lists shopID's services, oldest first.
func (c *Catalog) Services(ctx context.Context, shopID uuid.UUID) ([]Service, error) {
	rows, err := queries.ServiceList(ctx, c.pool, shopID)
	if err != nil {
		return nil, fmt.Errorf("list services: %w", err)
	}
	out := make([]Service, len(rows))
	for i, r := range rows {
		out[i] = serviceFrom(r)
	}
	return out, nil
}

// ServiceChange is a change of a service: nil fields stay as they are (StaffIDs empty,
// not nil: anyone).
type ServiceChange struct {
	Name            *string
	DurationMinutes *int
	PriceCents      *int64
	StaffIDs        *[]uuid.UUID
	Active          *bool
}

// UpdateService changes shopID's service id.
func (c *Catalog) UpdateService(ctx context.Context, shopID, id uuid.UUID, ch ServiceChange) (Service, error) {
	p := db.ServiceUpdateParams{ID: id, ShopID: shopID, Now: c.now().UTC()}
	if ch.Name != nil {
		n, err := name("name", *ch.Name)
		if err != nil {
			return Service{}, err
		}
		p.Name = pgtype.Text{String: n, Valid: true}
	}
	if ch.DurationMinutes != nil {
		if err := checkDuration(*ch.DurationMinutes); err != nil {
			return Service{}, err
		}
		p.DurationMinutes = pgtype.Int4{Int32: int32(*ch.DurationMinutes), Valid: true}
	}
	if ch.PriceCents != nil {
		if err := checkPrice(*ch.PriceCents); err != nil {
			return Service{}, err
		}
		p.PriceCents = pgtype.Int8{Int64: *ch.PriceCents, Valid: true}
	}
	if ch.StaffIDs != nil {
		p.StaffIds = unique(*ch.StaffIDs)
		if err := CheckStaff(ctx, c.pool, shopID, "staff_ids", p.StaffIds); err != nil {
			return Service{}, err
		}
	}
	if ch.Active != nil {
		p.Active = pgtype.Bool{Bool: *ch.Active, Valid: true}
	}
	r, err := queries.ServiceUpdate(ctx, c.pool, p)
	if errors.Is(err, pgx.ErrNoRows) {
		return Service{}, ErrServiceNotFound
	}
	if err != nil {
		return Service{}, taken(err, "service", p.Name.String)
	}
	return serviceFrom(r), nil
}

// HasServices reports whether shopID has any service: it then books by them.
func HasServices(ctx context.Context, q db.DBTX, shopID uuid.UUID) (bool, error) {
	has, err := queries.ServiceShopHas(ctx, q, shopID)
	if err != nil {
		return false, fmt.Errorf("check services: %w", err)
	}
	return has, nil
}

// ServiceNamed returns shopID's active service called n (case aside), or
// ErrServiceNotFound.
func ServiceNamed(ctx context.Context, q db.DBTX, shopID uuid.UUID, n string) (Service, error) {
	r, err := queries.ServiceGetByName(ctx, q, db.ServiceGetByNameParams{ShopID: shopID, Name: n})
	if errors.Is(err, pgx.ErrNoRows) {
		return Service{}, ErrServiceNotFound
	}
	if err != nil {
		return Service{}, fmt.Errorf("get service %q: %w", n, err)
	}
	return serviceFrom(r), nil
}

// UnknownServices returns those of names that are none of shopID's services.
func UnknownServices(ctx context.Context, q db.DBTX, shopID uuid.UUID, names []string) ([]string, error) {
	if len(names) == 0 {
		return nil, nil
	}
	out, err := queries.ServiceUnknownNames(ctx, q, db.ServiceUnknownNamesParams{ShopID: shopID, Names: names})
	if err != nil {
		return nil, fmt.Errorf("check services: %w", err)
	}
	return out, nil
}

// Shortest returns how long the shortest active service staffID does lasts (uuid.Nil:
// anyone), 0 when there is none.
func Shortest(ctx context.Context, q db.DBTX, shopID, staffID uuid.UUID) (time.Duration, error) {
	m, err := queries.ServiceShortestFor(ctx, q, db.ServiceShortestForParams{ShopID: shopID,
		StaffID: uuid.NullUUID{UUID: staffID, Valid: staffID != uuid.Nil}})
	if err != nil {
		return 0, fmt.Errorf("shortest service: %w", err)
	}
	return time.Duration(m) * time.Minute, nil
}
