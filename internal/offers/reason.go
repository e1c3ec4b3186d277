package offers

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/slotrecovery/slotrecovery/internal/money"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// ReliabilityWindow is how far back no-shows and lapsed holds count, for the reliable ranking
// and for a shop's skip_after_no_shows.
const ReliabilityWindow = 180 * 24 * time.Hour

// rankingOr is r, or shops.RankingPriority when r is not a ranking (a wave recorded
// before rankings).
func rankingOr(r shops.Ranking) shops.Ranking {
	if slices.Contains(shops.Rankings, r) {
		return r
	}
	return shops.RankingPriority
}

// Skip is why a wave left a customer out: one of Skips.
type Skip string

// The reasons a wave leaves a customer out, in the order they are judged (the first
// that holds is the one kept).
const (
	SkipNoConsent Skip = "no_consent"
	SkipOptedOut  Skip = "opted_out"
	// SkipPaused: the customer texted PAUSE and it still holds.
	SkipPaused         Skip = "paused"
	SkipAlreadyOffered Skip = "already_offered"
	SkipNoFitStaff     Skip = "no_fit_staff"
	SkipNoFitWindow    Skip = "no_fit_window"
	SkipNoFitService   Skip = "no_fit_service"
	SkipDailyCap       Skip = "daily_cap"
	SkipNoShows        Skip = "no_shows"
	SkipCooldown       Skip = "cooldown"
	// SkipQuietHours: the wave waits for the end of the shop's quiet hours instead of
	// recording anyone, so a recorded wave counts none; an explanation says so when the
	// opening's next wave waits for them.
	SkipQuietHours Skip = "quiet_hours"
)

// Skips are the reasons, in the order they are judged.
var Skips = []Skip{SkipNoConsent, SkipOptedOut, SkipPaused, SkipAlreadyOffered, SkipNoFitStaff, SkipNoFitWindow,
	SkipNoFitService, SkipDailyCap, SkipNoShows, SkipCooldown, SkipQuietHours}

// Words says the reason as an owner reads it, after a customer's name ("Maria …").
func (s Skip) Words() string {
	switch s {
	case SkipNoConsent:
		return "has not agreed to receive texts"
	case SkipOptedOut:
		return "opted out of texts, or their number cannot receive them"
	case SkipPaused:
		return "paused offers by text for a while"
	case SkipAlreadyOffered:
		return "was already offered this opening, declined it or held it"
	case SkipNoFitStaff:
		return "wants appointments with other staff"
	case SkipNoFitWindow:
		return "does not want that day or time"
	case SkipNoFitService:
		return "wants other services, or none of theirs fits the time"
	case SkipDailyCap:
		return "had already had the shop's most offers in a day"
	case SkipNoShows:
		return "has too many no-shows in 180 days"
	case SkipCooldown:
		return "was resting after a recent booking (cooldown)"
	case SkipQuietHours:
		return "is not texted during the shop's quiet hours"
	}
	return string(s)
}

// Reason is what put a texted customer where they stand in their wave: the facts the
// wave's ranking read, kept with the offer (slot_offers.reason, so the json names are
// stored and never renamed) and put in words by Words. Which facts are there follows
// the ranking: priority reads none beyond the tier; fair the last offer and booking
// (nil: never); reliable also the no-shows and lapsed holds; value also
// the price.
type Reason struct {
	Ranking shops.Ranking `json:"ranking"`
	// Priority is the customer's waitlist priority, the tier above the ranking.
	Priority int `json:"priority"`
	// MoveUp: offered first, ahead of the ranking, to move an existing booking earlier.
	MoveUp        bool       `json:"move_up,omitempty"`
	LastOfferedAt *time.Time `json:"last_offered_at,omitempty"`
	LastBookedAt  *time.Time `json:"last_booked_at,omitempty"`
	NoShows       int        `json:"no_shows,omitempty"`
	LapsedHolds   int        `json:"lapsed_holds,omitempty"`
	PriceCents    int64      `json:"price_cents,omitempty"`
	Currency      string     `json:"currency,omitempty"`
}

// Words says the reason as an owner reads it, relative to now: "priority 2, last
// offered 12 days ago, never booked".
func (r Reason) Words(now time.Time) string {
	if r.MoveUp {
		return "asked to move an existing booking earlier"
	}
	parts := []string{fmt.Sprintf("priority %d", r.Priority)}
	fair := func() {
		if r.LastOfferedAt == nil {
			parts = append(parts, "never offered before")
		} else {
			parts = append(parts, "last offered "+ago(now, *r.LastOfferedAt))
		}
		if r.LastBookedAt == nil {
			parts = append(parts, "never booked")
		} else {
			parts = append(parts, "last booked "+ago(now, *r.LastBookedAt))
		}
	}
	switch rankingOr(r.Ranking) {
	case shops.RankingPriority:
		parts = append(parts, "in list order")
	case shops.RankingFair:
		fair()
	case shops.RankingReliable:
		if r.NoShows == 0 && r.LapsedHolds == 0 {
			parts = append(parts, "no no-shows or lapsed holds in 180 days")
		} else {
			parts = append(parts, fmt.Sprintf("%s and %s in 180 days", plural(r.NoShows, "no-show"), plural(r.LapsedHolds, "lapsed hold")))
		}
		fair()
	case shops.RankingValue:
		parts = append(parts, "service price "+money.Format(r.PriceCents, r.Currency))
		fair()
	}
	return strings.Join(parts, ", ")
}

// ago says how long before now t was, in the largest whole unit.
func ago(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Hour:
		return "less than an hour ago"
	case d < 24*time.Hour:
		return plural(int(d/time.Hour), "hour") + " ago"
	}
	return plural(int(d/(24*time.Hour)), "day") + " ago"
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
