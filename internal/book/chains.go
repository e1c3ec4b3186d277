package book

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

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
			Status: r.Status, Holder: r.Holder, LeftAt: r.LeftAt, PriceCents: r.PriceCents})
		if r.LeftAt != nil {
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
