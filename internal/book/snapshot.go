package book

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/slotrecovery/slotrecovery/internal/connectors"
	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// ErrEmptySnapshot refuses a snapshot that lists nothing: a calendar feed that comes back
// empty is more likely broken (a revoked address, a bad export) than a shop's days
// cleared, and reading it as such would cancel every appointment at once.
var ErrEmptySnapshot = problem.New(problem.Invalid, "empty_snapshot", "the snapshot lists no appointments; nothing was changed")

// SnapshotResult says what a snapshot changed.
type SnapshotResult struct {
	// Changed counts the appointments the snapshot's own descriptions changed.
	Changed int
	// Gone counts the booked appointments it no longer lists, now cancelled.
	Gone int
	// Declarations are the openings its cancellations claimed.
	Declarations []Declaration
}

// Snapshot applies a source's whole list of its appointments as of at (a calendar feed
// polled then, read by connectors/ics): each is upserted, and the source's booked
// appointments that start after at and before the last start the snapshot lists, and
// that it no longer lists, are cancelled as of at (a deleted one-off event is simply
// gone from a feed). Past the snapshot's last start nothing is read as gone: a feed may
// end its window there. An empty snapshot is ErrEmptySnapshot and changes nothing. Each
// change declares its opening as Upsert does.
func (s *Service) Snapshot(ctx context.Context, shop shops.Shop, source connectors.Source, appts []connectors.Appointment, at time.Time) (SnapshotResult, error) {
	return s.snapshot(ctx, shop, source, appts, at, uuid.Nil)
}

// snapshot is Snapshot of connector's source (uuid.Nil: none), which its appointments
// then record (Appointment.ConnectorID).
func (s *Service) snapshot(ctx context.Context, shop shops.Shop, source connectors.Source, appts []connectors.Appointment, at time.Time, connector uuid.UUID) (SnapshotResult, error) {
	if len(appts) == 0 {
		return SnapshotResult{}, ErrEmptySnapshot
	}
	var (
		out     SnapshotResult
		last    time.Time
		listed  = make(map[string]bool, len(appts))
		errs    []error
		collect = func(res Result) {
			if res.Declaration != nil {
				out.Declarations = append(out.Declarations, *res.Declaration)
			}
		}
	)
	for _, a := range appts {
		if a.Source != source {
			return SnapshotResult{}, problem.Invalidf("source", "a snapshot of %s lists an appointment of %s", source, a.Source)
		}
		listed[a.ExternalID] = true
		if a.StartsAt.After(last) {
			last = a.StartsAt
		}
	}
	for _, a := range appts {
		res, err := s.upsert(ctx, shop, a, connector)
		if err != nil {
			// One unreadable event does not stop the others.
			errs = append(errs, fmt.Errorf("%s: %w", a.ExternalID, err))
			continue
		}
		if res.Changed {
			out.Changed++
		}
		collect(res)
	}
	if !last.After(at) {
		return out, errors.Join(errs...)
	}
	booked, err := queries.AppointmentListBookedFrom(ctx, s.pool, db.AppointmentListBookedFromParams{
		ShopID: shop.ID, Source: string(source), FromTime: at.UTC(), ToTime: last.UTC(),
	})
	if err != nil {
		return out, errors.Join(append(errs, fmt.Errorf("list booked appointments: %w", err))...)
	}
	for _, r := range booked {
		if listed[r.ExternalID.String] {
			continue
		}
		gone := connectors.Appointment{
			Source: source, ExternalID: r.ExternalID.String, Status: connectors.StatusCancelled, StartsAt: r.StartsAt,
			DurationMinutes: int(r.DurationMinutes), Service: r.Service, Phone: r.Phone.String, CustomerName: r.CustomerName,
			ExternalStaff: r.ExternalStaff, StaffID: r.StaffID.UUID, PriceCents: r.PriceCents,
			Version: r.SourceVersion, UpdatedAt: at,
		}
		res, err := s.upsert(ctx, shop, gone, connector)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s gone: %w", gone.ExternalID, err))
			continue
		}
		if res.Changed {
			out.Gone++
		}
		collect(res)
	}
	return out, errors.Join(errs...)
}
