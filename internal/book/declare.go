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

// settle declares claim c's opening, or ends it skipped, in tx, which holds c's
// appointment's row lock (the change that made the release, or AppointmentLock): the
// checks, the opening (slots.Service.DeclareTx, with its first wave and its event) and
// the claim's record commit together or not at all, and no other change of the
// appointment runs between them. A waiting claim is left for Offer. The work runs in a
// savepoint: a failure a retry may cure rolls back to it, leaving c as it was (pending)
// for DeclarePending, and the caller's own change can still commit; the error says why.
func (s *Service) settle(ctx context.Context, tx pgx.Tx, shop shops.Shop, c db.AppointmentOpening) (Declaration, error) {
	if c.State == string(DeclarationWaiting) {
		return fromClaim(c), nil
	}
	now := s.cfg.Now().UTC()
	sp, err := tx.Begin(ctx)
	if err != nil {
		return fromClaim(c), fmt.Errorf("savepoint: %w", err)
	}
	d, err := s.decide(ctx, sp, shop, c, now)
	if err == nil {
		err = sp.Commit(ctx)
	}
	if err != nil {
		return fromClaim(c), errors.Join(err, sp.Rollback(ctx))
	}
	return d, nil
}

// decide takes c (pending, or an attempt of an earlier version of this package that
// never finished: state declaring since before Config.StaleAfter) and records what its
// declaration came to, in tx.
func (s *Service) decide(ctx context.Context, tx pgx.Tx, shop shops.Shop, c db.AppointmentOpening, now time.Time) (Declaration, error) {
	taken, err := queries.AppointmentOpeningStart(ctx, tx, db.AppointmentOpeningStartParams{
		ShopID: c.ShopID, AppointmentID: c.AppointmentID, ReleaseNo: c.ReleaseNo, Now: now,
		StaleBefore: now.Add(-s.cfg.StaleAfter),
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return s.current(ctx, tx, c) // done already (declared, skipped), or still waiting
	}
	if err != nil {
		return fromClaim(c), fmt.Errorf("start declaring: %w", err)
	}
	state, opening, reason, err := s.declareOpening(ctx, tx, shop, taken, now)
	if err != nil {
		return fromClaim(c), err
	}
	done, err := queries.AppointmentOpeningFinish(ctx, tx, db.AppointmentOpeningFinishParams{
		ShopID: c.ShopID, AppointmentID: c.AppointmentID, ReleaseNo: c.ReleaseNo, State: string(state),
		OpeningID: uuid.NullUUID{UUID: opening, Valid: opening != uuid.Nil}, Reason: reason,
		Now: now, AttemptedAt: *taken.AttemptedAt,
	})
	if err != nil {
		return fromClaim(c), fmt.Errorf("record declaration: %w", err)
	}
	return fromClaim(done), nil
}

// current is claim c as tx sees it now.
func (s *Service) current(ctx context.Context, tx pgx.Tx, c db.AppointmentOpening) (Declaration, error) {
	claims, err := queries.AppointmentOpeningsOf(ctx, tx, db.AppointmentOpeningsOfParams{ShopID: c.ShopID, AppointmentID: c.AppointmentID})
	if err != nil {
		return fromClaim(c), fmt.Errorf("read declarations: %w", err)
	}
	for _, l := range claims {
		if l.ReleaseNo == c.ReleaseNo {
			return fromClaim(l), nil
		}
	}
	return fromClaim(c), nil
}

// declareOpening decides whether the claim's opening is declared and declares it in tx.
func (s *Service) declareOpening(ctx context.Context, tx pgx.Tx, shop shops.Shop, c db.AppointmentOpening, now time.Time) (DeclarationState, uuid.UUID, string, error) {
	r, err := queries.AppointmentGet(ctx, tx, db.AppointmentGetParams{ShopID: c.ShopID, ID: c.AppointmentID})
	if err != nil {
		return "", uuid.Nil, "", fmt.Errorf("read appointment: %w", err)
	}
	a := fromRow(r.Appointment, r.StaffName, r.KnownName)
	// The time the release freed, not where the appointment stands now (a move's former
	// time).
	start, minutes, staffID := c.StartsAt.UTC(), int(c.DurationMinutes), c.StaffID.UUID
	if a.Releases != int(c.ReleaseNo) {
		later, err := s.supersededBy(ctx, tx, c)
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
	t, err := queries.AppointmentTimeTaken(ctx, tx, db.AppointmentTimeTakenParams{
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
	n, skip, err := s.newOpening(ctx, tx, a, start, minutes, staffID)
	if err != nil || skip != "" {
		return DeclarationSkipped, uuid.Nil, skip, err
	}
	// In tx: the opening exists only with this claim's record of it, and the appointment
	// stays locked until both commit (a crash in between loses both; a redelivery or
	// DeclarePending then finds the claim as it was).
	id, err := s.openings.DeclareTx(ctx, tx, shop, n)
	if p, ok := problem.As(err); ok {
		return DeclarationSkipped, uuid.Nil, p.Code, nil
	}
	if err != nil {
		return "", uuid.Nil, "", fmt.Errorf("declare opening: %w", err)
	}
	return DeclarationDeclared, id, "", nil
}

// supersededBy reports whether a later release of c's appointment claimed a time that
// overlaps c's: that claim declares it (a cancellation undone and made again, delivered
// while this one waited), so declaring this one too would offer the time twice.
func (s *Service) supersededBy(ctx context.Context, tx pgx.Tx, c db.AppointmentOpening) (bool, error) {
	claims, err := queries.AppointmentOpeningsOf(ctx, tx, db.AppointmentOpeningsOfParams{ShopID: c.ShopID, AppointmentID: c.AppointmentID})
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
func (s *Service) newOpening(ctx context.Context, tx pgx.Tx, a Appointment, start time.Time, minutes int, staffID uuid.UUID) (slots.NewOpening, string, error) {
	n := slots.NewOpening{StartsAt: start, DurationMinutes: minutes, StaffID: staffID, PriceCents: a.PriceCents,
		Source: slots.SourceAppointment, SourceID: a.ID}
	if a.MovedTo != uuid.Nil {
		// Freed by a move-up: the next link of the chain the earlier opening is in.
		c, err := queries.AppointmentChainOf(ctx, tx, a.MovedTo)
		if err != nil {
			return n, "", fmt.Errorf("read chain: %w", err)
		}
		n.Chain = &slots.Chain{ID: c.ChainID, Position: int(c.Position) + 1, MovedFrom: a.ID}
	}
	withServices, err := catalog.HasServices(ctx, tx, a.ShopID)
	if err != nil {
		return n, "", err
	}
	if withServices {
		sv, err := catalog.ServiceNamed(ctx, tx, a.ShopID, a.Service)
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
// same fence and checks as a declaration by itself, in one transaction holding the
// appointment's row lock: asking twice declares once. An appointment that freed no time
// still ahead is a Conflict problem.
func (s *Service) Offer(ctx context.Context, shop shops.Shop, id uuid.UUID) (Declaration, error) {
	now := s.cfg.Now().UTC()
	var (
		d       Declaration
		declErr error
	)
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		row, err := queries.AppointmentLock(ctx, tx, db.AppointmentLockParams{ShopID: shop.ID, ID: id})
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("lock appointment %s: %w", id, err)
		}
		claims, err := queries.AppointmentOpeningsOf(ctx, tx, db.AppointmentOpeningsOfParams{ShopID: shop.ID, AppointmentID: id})
		if err != nil {
			return fmt.Errorf("read declarations: %w", err)
		}
		var c *db.AppointmentOpening
		for i := range claims {
			if claims[i].ReleaseNo == row.Releases {
				c = &claims[i]
			}
		}
		switch {
		case c != nil && c.State == string(DeclarationWaiting):
			offered, err := queries.AppointmentOpeningOffer(ctx, tx, db.AppointmentOpeningOfferParams{
				ShopID: shop.ID, AppointmentID: id, ReleaseNo: c.ReleaseNo, Now: now,
			})
			if err != nil {
				return fmt.Errorf("offer declaration: %w", err)
			}
			c = &offered
		case c == nil && connectors.Status(row.Status).Frees():
			// A release that claimed nothing (its time was past, then moved ahead): its time now.
			if c, err = claimRelease(ctx, tx, row, freedOf(row), DeclarationPending, now); err != nil {
				return err
			}
		}
		if c == nil || !c.StartsAt.After(now) {
			return problem.New(problem.Conflict, "appointment_holds_time",
				"only an appointment that freed a time still ahead (cancelled or moved) has a time to offer")
		}
		// A failure a retry may cure is the owner's to see, and the claim commits pending
		// (the owner asked for it): DeclarePending declares it if they do not ask again.
		d, declErr = s.settle(ctx, tx, shop, *c)
		return nil
	})
	if err != nil {
		if _, ok := problem.As(err); ok {
			return Declaration{}, err
		}
		return Declaration{}, fmt.Errorf("offer appointment %s: %w", id, err)
	}
	if declErr != nil {
		return d, fmt.Errorf("offer appointment %s: %w", id, declErr)
	}
	return d, nil
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

// Latest returns, for each of shopID's appointments ids that has one, what its latest
// release declared (or where that stands), by appointment id: what the owners' views show
// beside each appointment, in one query for a whole page.
func (s *Service) Latest(ctx context.Context, shopID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]Declaration, error) {
	out := make(map[uuid.UUID]Declaration)
	if len(ids) == 0 {
		return out, nil
	}
	claims, err := queries.AppointmentOpeningsLatest(ctx, s.pool, db.AppointmentOpeningsLatestParams{ShopID: shopID, Ids: ids})
	if err != nil {
		return nil, fmt.Errorf("read latest declarations: %w", err)
	}
	for _, c := range claims {
		out[c.AppointmentID] = fromClaim(c)
	}
	return out, nil
}

// DeclarePending declares up to limit claims left behind: pending ones (a declaration
// whose failure a retry may cure put it back, or one the owner offered whose attempt
// failed) and attempts older than Config.StaleAfter that never finished (left by an
// earlier version of this package, which declared after its transaction committed).
// Each is settled in its own transaction holding its appointment's row lock, as the
// change that made it was. It returns how many it took. Run it periodically (every
// minute or so, DeclarePendingWorker) from one place or many: a claim taken twice at
// once is declared by the first and found done by the second.
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
		err = s.inTx(ctx, func(tx pgx.Tx) error {
			if _, err := queries.AppointmentLock(ctx, tx, db.AppointmentLockParams{ShopID: c.ShopID, ID: c.AppointmentID}); err != nil {
				return fmt.Errorf("lock appointment: %w", err)
			}
			_, err := s.settle(ctx, tx, shop, c)
			return err
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("appointment %s release %d: %w", c.AppointmentID, c.ReleaseNo, err))
		}
	}
	return len(due), errors.Join(errs...)
}

// withdraw cancels, in tx (the change that booked row again, holding its row lock), the
// openings row's releases declared that row, booked, now overlaps, while they are still
// open: the customer took their time back (a cancellation undone, a rebooking or a move
// back in the source), so offering it would book it twice. An opening filled meanwhile
// stays (the shop has two customers for one time, which its own system shows); one the
// appointment does not overlap stays too (its time is still free). A later release of
// row waits for tx's lock, so it finds the opening withdrawn and declares the time anew.
// It returns the last opening cancelled, or uuid.Nil.
func (s *Service) withdraw(ctx context.Context, tx pgx.Tx, shop shops.Shop, row db.Appointment, now time.Time) (uuid.UUID, error) {
	claims, err := queries.AppointmentOpeningsOf(ctx, tx, db.AppointmentOpeningsOfParams{ShopID: row.ShopID, AppointmentID: row.ID})
	if err != nil {
		return uuid.Nil, fmt.Errorf("read declarations: %w", err)
	}
	end := row.StartsAt.Add(time.Duration(row.DurationMinutes) * time.Minute)
	var withdrawn uuid.UUID
	for _, c := range claims {
		if c.State != string(DeclarationDeclared) || !c.OpeningID.Valid {
			continue
		}
		// The opening offers the claim's time (declareOpening), read here from the claim:
		// tx reads nothing through the pool (inTx).
		cEnd := c.StartsAt.Add(time.Duration(c.DurationMinutes) * time.Minute)
		if !row.StartsAt.Before(cEnd) || !c.StartsAt.Before(end) {
			continue
		}
		// Conditional on the opening being open: one filled (or withdrawn) stays as it is.
		err = slots.CancelTx(ctx, tx, shop.ID, c.OpeningID.UUID, now)
		if errors.Is(err, slots.ErrNotOpen) {
			continue
		}
		if err != nil {
			return withdrawn, fmt.Errorf("withdraw opening %s: %w", c.OpeningID.UUID, err)
		}
		withdrawn = c.OpeningID.UUID
	}
	return withdrawn, nil
}
