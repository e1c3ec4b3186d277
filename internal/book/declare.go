package book

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/catalog"
	"github.com/slotrecovery/slotrecovery/internal/connectors"
	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
)

// DeclarationState is where the declaration of a release's opening stands.
type DeclarationState string

// Declaration states (doc.go draws them).
const (
	DeclarationWaiting   DeclarationState = "waiting"
	DeclarationPending   DeclarationState = "pending"
	DeclarationDeclaring DeclarationState = "declaring"
	DeclarationDeclared  DeclarationState = "declared"
	DeclarationSkipped   DeclarationState = "skipped"
)

// Reasons a claim ends skipped.
const (
	// SkipStarted: the appointment's start has passed.
	SkipStarted = "started"
	// SkipPastCutoff: the start is inside the shop's minimum lead time.
	SkipPastCutoff = "past_cutoff"
	// SkipAlreadyOpen: an opening at that time is open, or was filled.
	SkipAlreadyOpen = "already_open"
	// SkipBookedAgain: an appointment is booked at that time (another, or the same one
	// booked there again).
	SkipBookedAgain = "booked_again"
	// SkipSuperseded: a later release of the appointment frees the same time again; its
	// own claim declares it.
	SkipSuperseded = "superseded"
	// SkipNoPrice: the shop has no services and the appointment no price, so the opening
	// would have nothing to charge; the owner can offer it with a price.
	SkipNoPrice = "no_price"
	// SkipNoService: the shop has no services and the appointment names none.
	SkipNoService = "no_service"
)

// Declaration is the opening one release of an appointment declared, or why not.
type Declaration struct {
	AppointmentID uuid.UUID
	// Release is which release of the appointment it is for, from 1.
	Release int
	State   DeclarationState
	// StartsAt, DurationMinutes and StaffID are the time the release freed (the time the
	// book held: a cancelled appointment's, a moved one's former time); StaffID uuid.Nil
	// for no one's.
	StartsAt        time.Time
	DurationMinutes int
	StaffID         uuid.UUID
	// OpeningID is the opening declared (uuid.Nil until declared).
	OpeningID uuid.UUID
	// Reason says why it was skipped: one of the Skip constants, or the code of the
	// problem slots answered the declaration with.
	Reason    string
	CreatedAt time.Time
	UpdatedAt time.Time
}

func fromClaim(c db.AppointmentOpening) Declaration {
	return Declaration{
		AppointmentID: c.AppointmentID, Release: int(c.ReleaseNo), State: DeclarationState(c.State),
		StartsAt: c.StartsAt.UTC(), DurationMinutes: int(c.DurationMinutes), StaffID: c.StaffID.UUID,
		OpeningID: c.OpeningID.UUID, Reason: c.Reason, CreatedAt: c.CreatedAt.UTC(), UpdatedAt: c.UpdatedAt.UTC(),
	}
}

// freed is the time a release of an appointment frees.
type freed struct {
	startsAt time.Time
	minutes  int32
	staffID  uuid.UUID // uuid.Nil: no one's
}

// freedOf is the time row holds, freed when it is cancelled where it stands.
func freedOf(row db.Appointment) freed {
	return freed{startsAt: row.StartsAt, minutes: row.DurationMinutes, staffID: row.StaffID.UUID}
}

// claim claims, in tx, the declaration of the opening of the time f that row's latest
// release frees, when that time is still ahead: pending in a shop that declares by
// itself, waiting for the owner's Offer otherwise. It returns nil when the time has
// passed or another delivery of the same release claimed it first (the primary key is
// the fence).
func (s *Service) claim(ctx context.Context, tx pgx.Tx, shop shops.Shop, row db.Appointment, f freed, now time.Time) (*db.AppointmentOpening, error) {
	state := DeclarationPending
	if !shop.AutoDeclare {
		state = DeclarationWaiting
	}
	return claimRelease(ctx, tx, row, f, state, now)
}

// claimRelease claims row's latest release, freeing f, in state.
func claimRelease(ctx context.Context, tx db.DBTX, row db.Appointment, f freed, state DeclarationState, now time.Time) (*db.AppointmentOpening, error) {
	if row.Releases < 1 || !f.startsAt.After(now) {
		return nil, nil
	}
	c, err := queries.AppointmentOpeningClaim(ctx, tx, db.AppointmentOpeningClaimParams{
		ShopID: row.ShopID, AppointmentID: row.ID, ReleaseNo: row.Releases, StartsAt: f.startsAt,
		DurationMinutes: f.minutes, StaffID: uuid.NullUUID{UUID: f.staffID, Valid: f.staffID != uuid.Nil},
		State: string(state), Now: now,
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("claim opening of appointment %s release %d: %w", row.ID, row.Releases, err)
	}
	return &c, nil
}

// declare takes the claim and declares its opening, or ends it skipped. It returns the
// claim as it stands; an error means the claim went back to pending for a retry (or is
// left to DeclarePending).
func (s *Service) declare(ctx context.Context, shop shops.Shop, c db.AppointmentOpening) (Declaration, error) {
	now := s.cfg.Now().UTC()
	taken, err := queries.AppointmentOpeningStart(ctx, s.pool, db.AppointmentOpeningStartParams{
		ShopID: c.ShopID, AppointmentID: c.AppointmentID, ReleaseNo: c.ReleaseNo, Now: now,
		StaleBefore: now.Add(-s.cfg.StaleAfter),
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return fromClaim(c), nil // someone else is on it, or it is done
	}
	if err != nil {
		return fromClaim(c), fmt.Errorf("start declaring: %w", err)
	}
	end := func(state DeclarationState, opening uuid.UUID, reason string) (Declaration, error) {
		done, err := queries.AppointmentOpeningFinish(ctx, s.pool, db.AppointmentOpeningFinishParams{
			ShopID: c.ShopID, AppointmentID: c.AppointmentID, ReleaseNo: c.ReleaseNo, State: string(state),
			OpeningID: uuid.NullUUID{UUID: opening, Valid: opening != uuid.Nil}, Reason: reason,
			Now: s.cfg.Now().UTC(), AttemptedAt: *taken.AttemptedAt,
		})
		if errors.Is(err, pgx.ErrNoRows) {
			return fromClaim(taken), nil // taken over as stale meanwhile: the newer attempt records it
		}
		if err != nil {
			return fromClaim(taken), fmt.Errorf("record declaration: %w", err)
		}
		return fromClaim(done), nil
	}
	state, opening, reason, err := s.declareOpening(ctx, shop, c, now)
	if err != nil {
		d, ferr := end(DeclarationPending, uuid.Nil, "")
		return d, errors.Join(err, ferr)
	}
	return end(state, opening, reason)
}

// declareOpening decides whether the claim's opening is declared and declares it.
func (s *Service) declareOpening(ctx context.Context, shop shops.Shop, c db.AppointmentOpening, now time.Time) (DeclarationState, uuid.UUID, string, error) {
	r, err := queries.AppointmentGet(ctx, s.pool, db.AppointmentGetParams{ShopID: c.ShopID, ID: c.AppointmentID})
	if err != nil {
		return "", uuid.Nil, "", fmt.Errorf("read appointment: %w", err)
	}
	a := fromRow(r.Appointment, r.StaffName, r.KnownName)
	// The time the release freed, not where the appointment stands now (a move's former
	// time).
	start, minutes, staffID := c.StartsAt.UTC(), int(c.DurationMinutes), c.StaffID.UUID
	if a.Releases != int(c.ReleaseNo) {
		later, err := s.supersededBy(ctx, c)
		if err != nil || later {
			return DeclarationSkipped, uuid.Nil, SkipSuperseded, err
		}
	}
	switch {
	case !start.After(now):
		return DeclarationSkipped, uuid.Nil, SkipStarted, nil
	case !shop.Cutoff(start).After(now):
		return DeclarationSkipped, uuid.Nil, SkipPastCutoff, nil
	}
	t, err := queries.AppointmentTimeTaken(ctx, s.pool, db.AppointmentTimeTakenParams{
		ShopID: a.ShopID, StaffID: c.StaffID, StartsAt: start, EndsAt: start.Add(time.Duration(minutes) * time.Minute),
	})
	if err != nil {
		return "", uuid.Nil, "", fmt.Errorf("is the time taken: %w", err)
	}
	switch {
	case t.Opening:
		return DeclarationSkipped, uuid.Nil, SkipAlreadyOpen, nil
	case t.Booked:
		return DeclarationSkipped, uuid.Nil, SkipBookedAgain, nil
	}
	n, skip, err := s.newOpening(ctx, a, start, minutes, staffID)
	if err != nil || skip != "" {
		return DeclarationSkipped, uuid.Nil, skip, err
	}
	// slots.Declare runs its own transaction: the claim, taken above, is the fence
	// against a second declaration of this release, and a retry of a declaration that
	// committed unrecorded finds the time open (docs/book.md: what a DeclareTx in slots
	// would close).
	op, err := s.openings.Declare(ctx, shop, n)
	if p, ok := problem.As(err); ok {
		return DeclarationSkipped, uuid.Nil, p.Code, nil
	}
	if err != nil {
		return "", uuid.Nil, "", fmt.Errorf("declare opening: %w", err)
	}
	return DeclarationDeclared, op.ID, "", nil
}

// supersededBy reports whether a later release of c's appointment claimed a time that
// overlaps c's: that claim declares it (a cancellation undone and made again, delivered
// while this one waited), so declaring this one too would offer the time twice.
func (s *Service) supersededBy(ctx context.Context, c db.AppointmentOpening) (bool, error) {
	claims, err := queries.AppointmentOpeningsOf(ctx, s.pool, db.AppointmentOpeningsOfParams{ShopID: c.ShopID, AppointmentID: c.AppointmentID})
	if err != nil {
		return false, fmt.Errorf("read declarations: %w", err)
	}
	end := c.StartsAt.Add(time.Duration(c.DurationMinutes) * time.Minute)
	for _, l := range claims {
		lEnd := l.StartsAt.Add(time.Duration(l.DurationMinutes) * time.Minute)
		if l.ReleaseNo > c.ReleaseNo && l.StartsAt.Before(end) && c.StartsAt.Before(lEnd) {
			return true, nil
		}
	}
	return false, nil
}

// newOpening is the opening of the time a freed, from start for minutes, of person
// staffID: the service and price as the shop declares them. A shop with services offers
// the appointment's service when it is one of them, else each customer's own that fits;
// a shop without needs the appointment's service and price.
func (s *Service) newOpening(ctx context.Context, a Appointment, start time.Time, minutes int, staffID uuid.UUID) (slots.NewOpening, string, error) {
	n := slots.NewOpening{StartsAt: start, DurationMinutes: minutes, StaffID: staffID, PriceCents: a.PriceCents}
	withServices, err := catalog.HasServices(ctx, s.pool, a.ShopID)
	if err != nil {
		return n, "", err
	}
	if withServices {
		sv, err := catalog.ServiceNamed(ctx, s.pool, a.ShopID, a.Service)
		switch {
		case err == nil:
			n.Service = sv.Name
		case errors.Is(err, catalog.ErrServiceNotFound):
			n.Service, n.PriceCents = "", 0
		default:
			return n, "", err
		}
		return n, "", nil
	}
	switch {
	case a.Service == "":
		return n, SkipNoService, nil
	case a.PriceCents <= 0:
		return n, SkipNoPrice, nil
	}
	n.Service = clip(a.Service, maxOpeningService)
	return n, "", nil
}

// Offer declares the opening of the time shop's appointment id's latest release freed
// at the owner's request (the dashboard's "Offer it" when auto_declare is off), with the
// same fence and checks as a declaration by itself: asking twice declares once. An
// appointment that freed no time still ahead is a Conflict problem.
func (s *Service) Offer(ctx context.Context, shop shops.Shop, id uuid.UUID) (Declaration, error) {
	now := s.cfg.Now().UTC()
	r, err := queries.AppointmentGet(ctx, s.pool, db.AppointmentGetParams{ShopID: shop.ID, ID: id})
	if errors.Is(err, pgx.ErrNoRows) {
		return Declaration{}, ErrNotFound
	}
	if err != nil {
		return Declaration{}, fmt.Errorf("get appointment %s: %w", id, err)
	}
	row := r.Appointment
	claims, err := queries.AppointmentOpeningsOf(ctx, s.pool, db.AppointmentOpeningsOfParams{ShopID: shop.ID, AppointmentID: id})
	if err != nil {
		return Declaration{}, fmt.Errorf("read declarations: %w", err)
	}
	var c *db.AppointmentOpening
	for i := range claims {
		if claims[i].ReleaseNo == row.Releases {
			c = &claims[i]
		}
	}
	switch {
	case c != nil && c.State == string(DeclarationWaiting):
		offered, err := queries.AppointmentOpeningOffer(ctx, s.pool, db.AppointmentOpeningOfferParams{
			ShopID: shop.ID, AppointmentID: id, ReleaseNo: c.ReleaseNo, Now: now,
		})
		if err != nil && !errors.Is(err, pgx.ErrNoRows) { // no row: offered meanwhile
			return Declaration{}, fmt.Errorf("offer declaration: %w", err)
		}
		if err == nil {
			c = &offered
		}
	case c == nil && connectors.Status(row.Status).Frees():
		// A release that claimed nothing (its time was past, then moved ahead): its time now.
		if c, err = claimRelease(ctx, s.pool, row, freedOf(row), DeclarationPending, now); err != nil {
			return Declaration{}, err
		}
	}
	if c == nil || !c.StartsAt.After(now) {
		return Declaration{}, problem.New(problem.Conflict, "appointment_holds_time",
			"only an appointment that freed a time still ahead (cancelled or moved) has a time to offer")
	}
	return s.declare(ctx, shop, *c)
}

// Declarations returns what each release of shopID's appointment id declared, oldest
// first.
func (s *Service) Declarations(ctx context.Context, shopID, id uuid.UUID) ([]Declaration, error) {
	claims, err := queries.AppointmentOpeningsOf(ctx, s.pool, db.AppointmentOpeningsOfParams{ShopID: shopID, AppointmentID: id})
	if err != nil {
		return nil, fmt.Errorf("read declarations of appointment %s: %w", id, err)
	}
	out := make([]Declaration, len(claims))
	for i, c := range claims {
		out[i] = fromClaim(c)
	}
	return out, nil
}

// DeclarePending declares up to limit claims left behind: pending ones (a declaration
// whose transient failure put it back, or whose process died before it began) and
// attempts older than Config.StaleAfter that never finished. It returns how many it
// took. Run it periodically (every minute or so) from one place or many: each claim is
// taken by one attempt at a time.
func (s *Service) DeclarePending(ctx context.Context, limit int) (int, error) {
	now := s.cfg.Now().UTC()
	due, err := queries.AppointmentOpeningsDue(ctx, s.pool, db.AppointmentOpeningsDueParams{
		StaleBefore: now.Add(-s.cfg.StaleAfter), MaxRows: int32(max(limit, 1)),
	})
	if err != nil {
		return 0, fmt.Errorf("list claims due: %w", err)
	}
	var errs []error
	for _, c := range due {
		shop, err := s.shops.Get(ctx, c.ShopID)
		if err != nil {
			errs = append(errs, fmt.Errorf("shop %s: %w", c.ShopID, err))
			continue
		}
		if _, err := s.declare(ctx, shop, c); err != nil {
			errs = append(errs, fmt.Errorf("appointment %s release %d: %w", c.AppointmentID, c.ReleaseNo, err))
		}
	}
	return len(due), errors.Join(errs...)
}

// withdraw cancels the openings row's releases declared that row, booked again, now
// overlaps, while they are still open: the customer took their time back (a
// cancellation undone, a rebooking or a move back in the source), so offering it would
// book it twice. An opening filled meanwhile stays (the shop has two customers for one
// time, which its own system shows); one the appointment does not overlap stays too (its
// time is still free). It returns the last opening cancelled, or uuid.Nil.
func (s *Service) withdraw(ctx context.Context, shop shops.Shop, row db.Appointment) (uuid.UUID, error) {
	claims, err := queries.AppointmentOpeningsOf(ctx, s.pool, db.AppointmentOpeningsOfParams{ShopID: row.ShopID, AppointmentID: row.ID})
	if err != nil {
		return uuid.Nil, fmt.Errorf("read declarations: %w", err)
	}
	end := row.StartsAt.Add(time.Duration(row.DurationMinutes) * time.Minute)
	var withdrawn uuid.UUID
	for _, c := range claims {
		if c.State != string(DeclarationDeclared) || !c.OpeningID.Valid {
			continue
		}
		op, err := s.openings.Get(ctx, shop.ID, c.OpeningID.UUID)
		if errors.Is(err, slots.ErrNotFound) {
			continue
		}
		if err != nil {
			return withdrawn, err
		}
		opEnd := op.StartsAt.Add(time.Duration(op.DurationMinutes) * time.Minute)
		if op.Status != slots.StatusOpen || !row.StartsAt.Before(opEnd) || !op.StartsAt.Before(end) {
			continue
		}
		// Still booked as row says? A newer change may have freed it again since.
		if cur, err := s.Get(ctx, shop.ID, row.ID); err != nil || cur.Status != connectors.StatusBooked || cur.Releases != int(row.Releases) ||
			!cur.StartsAt.Equal(row.StartsAt) {
			return withdrawn, err
		}
		if _, err := s.openings.Cancel(ctx, shop.ID, op.ID); err != nil {
			if _, ok := problem.As(err); ok {
				continue // filled just now: it stays
			}
			return withdrawn, fmt.Errorf("withdraw opening %s: %w", op.ID, err)
		}
		withdrawn = op.ID
	}
	return withdrawn, nil
}
