package book

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/slotrecovery/slotrecovery/internal/connectors"
	"github.com/slotrecovery/slotrecovery/internal/db"
)

// Chain is a chain of moves as the owner follows it: the opening that started it, then
// each time a move-up freed, in order ("Tue 11:00 Kim (from Thu 16:00) → Thu 16:00 Lou
// (from Fri 10:00) → Fri 10:00 Ana").
type Chain struct {
	ID    uuid.UUID
	Links []ChainLink
	// Moves is how many customers moved up in it; RecoveredCents what its filled links
	// are priced at together.
	Moves          int
	RecoveredCents int64
}

// ChainLink is one opening of a chain.
type ChainLink struct {
	OpeningID uuid.UUID
	Position  int
	StartsAt  time.Time
	Service   string
	// Status is the opening's (open, filled, ...); Holder who filled it ("" while open
	// or erased); LeftAt the time the holder moved up from, nil when the holder came
	// from the waitlist.
	Status     string
	Holder     string
	LeftAt     *time.Time
	PriceCents int64
}

// Chains returns the shop's chains of moves with a link that starts in [from, to),
// each whole, in the order they started.
func (s *Service) Chains(ctx context.Context, shopID uuid.UUID, from, to time.Time) ([]Chain, error) {
	rows, err := queries.BookChains(ctx, s.pool, db.BookChainsParams{ShopID: shopID, FromAt: from, ToAt: to})
	if err != nil {
		return nil, fmt.Errorf("read chains: %w", err)
	}
	var out []Chain
	for _, r := range rows {
		if len(out) == 0 || out[len(out)-1].ID != r.ChainID {
			out = append(out, Chain{ID: r.ChainID})
		}
		c := &out[len(out)-1]
		c.Links = append(c.Links, ChainLink{OpeningID: r.ID, Position: int(r.Position), StartsAt: r.StartsAt, Service: r.Service,
			Status: r.Status, Holder: r.Holder, LeftAt: cmp.Or(r.LeftAt, r.LeftBookingAt), PriceCents: r.PriceCents})
		if c.Links[len(c.Links)-1].LeftAt != nil {
			c.Moves++
		}
		if r.Status == "filled" || r.Status == "completed" {
			c.RecoveredCents += r.PriceCents
		}
	}
	// A chain starts with its first opening: order them by it.
	slices.SortStableFunc(out, func(a, b Chain) int { return a.Links[0].StartsAt.Compare(b.Links[0].StartsAt) })
	return out, nil
}

// MoveToCopy is a move-up of an appointment another system keeps (cal.com, Square, a
// calendar feed): the owner copies it there, as nothing writes it back for them.
type MoveToCopy struct {
	AppointmentID uuid.UUID
	Source        connectors.Source
	Name, Service string
	From, To      time.Time
	// Problem is why the vendor did not take the move written back through its API, in
	// words for the owner ("" when it was never written back).
	Problem string
}

// MovesToCopy returns the shop's moves still to copy into the system their appointment
// came from, soonest new time first: those whose new time is after now and which the
// owner has not marked copied (at most 100). A move being written back through the
// vendor's API is not among them; one the vendor refused is, with its Problem.
func (s *Service) MovesToCopy(ctx context.Context, shopID uuid.UUID, now time.Time) ([]MoveToCopy, error) {
	rows, err := queries.AppointmentMovesToCopy(ctx, s.pool, db.AppointmentMovesToCopyParams{ShopID: shopID, Now: now})
	if err != nil {
		return nil, fmt.Errorf("read moves to copy: %w", err)
	}
	out := make([]MoveToCopy, 0, len(rows))
	for _, r := range rows {
		out = append(out, MoveToCopy{AppointmentID: r.ID, Source: connectors.Source(r.Source), Name: r.Name, Service: r.Service,
			From: r.OldStartsAt, To: r.NewStartsAt, Problem: r.WriteBackError})
	}
	return out, nil
}

// MarkCopied records that the owner copied the shop's moved appointment into its own
// system: it leaves MovesToCopy. False when there was no such move to copy (another
// shop's, not moved, or marked already).
func (s *Service) MarkCopied(ctx context.Context, shopID, appointmentID uuid.UUID, now time.Time) (bool, error) {
	n, err := queries.AppointmentMarkCopied(ctx, s.pool, db.AppointmentMarkCopiedParams{ID: appointmentID, ShopID: shopID, Now: &now})
	if err != nil {
		return false, fmt.Errorf("mark move copied: %w", err)
	}
	return n == 1, nil
}
