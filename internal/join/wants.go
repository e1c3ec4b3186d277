package join

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/slotrecovery/slotrecovery/internal/catalog"
	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// MaxWanted bounds how many services, and how many people, a visitor may pick: what a
// customer's preferences may hold.
const MaxWanted = 20

// Wants are what a visitor of the join page says they want, as the form sends it; every
// part is optional, and nothing at all means any opening.
type Wants struct {
	// Services are names of the shop's services.
	Services []string
	// Staff are ids of the shop's people.
	Staff []string
	// Days are days of the week: "mon" … "sun".
	Days []string
	// From and To are a time of day range, "HH:MM" each, both or neither.
	From, To string
}

// Choices are what the join page offers to pick from: the shop's active services and
// people, oldest first.
type Choices struct {
	Services []string
	Staff    []catalog.Staff
}

// Choices reads what shop's join page offers to pick from (internal/catalog, read only).
func (s *Service) Choices(ctx context.Context, shop shops.Shop) (Choices, error) {
	cat := catalog.New(s.pool, nil)
	services, err := cat.Services(ctx, shop.ID)
	if err != nil {
		return Choices{}, fmt.Errorf("read services of shop %s: %w", shop.ID, err)
	}
	staff, err := cat.Staff(ctx, shop.ID)
	if err != nil {
		return Choices{}, fmt.Errorf("read staff of shop %s: %w", shop.ID, err)
	}
	var out Choices
	for _, sv := range services {
		if sv.Active {
			out.Services = append(out.Services, sv.Name)
		}
	}
	for _, p := range staff {
		if p.Active {
			out.Staff = append(out.Staff, p)
		}
	}
	return out, nil
}

// preferences reads w as a customer's preferences against what shop offers, writing the
// message id of each wrong part into errs ("services", "staff", "days", "times").
func (s *Service) preferences(ctx context.Context, shop shops.Shop, w Wants, errs FieldErrors) (customers.Preferences, error) {
	var p customers.Preferences
	if len(w.Services) == 0 && len(w.Staff) == 0 && len(w.Days) == 0 && w.From == "" && w.To == "" {
		return p, nil
	}
	var ch Choices
	if len(w.Services) > 0 || len(w.Staff) > 0 {
		var err error
		if ch, err = s.Choices(ctx, shop); err != nil {
			return p, err
		}
	}
	if len(w.Services) > MaxWanted {
		errs["services"] = "error_services"
	}
	for _, name := range w.Services {
		i := slices.IndexFunc(ch.Services, func(n string) bool { return strings.EqualFold(n, name) })
		if i < 0 {
			errs["services"] = "error_services"
			break
		}
		if !slices.Contains(p.Services, ch.Services[i]) {
			p.Services = append(p.Services, ch.Services[i])
		}
	}
	if len(w.Staff) > MaxWanted {
		errs["staff"] = "error_staff"
	}
	for _, v := range w.Staff {
		id, err := uuid.Parse(v)
		if err != nil || !slices.ContainsFunc(ch.Staff, func(st catalog.Staff) bool { return st.ID == id }) {
			errs["staff"] = "error_staff"
			break
		}
		if !slices.Contains(p.StaffIDs, id) {
			p.StaffIDs = append(p.StaffIDs, id)
		}
	}
	if len(w.Days) > 7 {
		errs["days"] = "error_days"
	}
	for _, d := range w.Days {
		n := slices.IndexFunc([]int{1, 2, 3, 4, 5, 6, 7}, func(i int) bool { return customers.DayName(i) == d })
		if n < 0 {
			errs["days"] = "error_days"
			break
		}
		if !slices.Contains(p.Days, n+1) {
			p.Days = append(p.Days, n+1)
		}
	}
	slices.Sort(p.Days)
	if w.From != "" || w.To != "" {
		from, ok1 := shops.ParseClock(w.From)
		to, ok2 := shops.ParseClock(w.To)
		if !ok1 || !ok2 || from >= to {
			errs["times"] = "error_times"
		} else {
			p.Windows = []customers.Window{{Start: from, End: to}}
		}
	}
	return p, nil
}

// storedPreferences is the join request's preferences column: its JSON outlives the
// process, so its names are fixed here, not by customers.Preferences' fields.
type storedPreferences struct {
	Days     []int         `json:"days,omitempty"`
	Windows  []storedRange `json:"windows,omitempty"`
	Services []string      `json:"services,omitempty"`
	StaffIDs []uuid.UUID   `json:"staff_ids,omitempty"`
}

type storedRange struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// storePreferences is p as the join request keeps it; nil when there are none.
func storePreferences(p customers.Preferences) ([]byte, error) {
	if p.IsZero() {
		return nil, nil
	}
	sp := storedPreferences{Days: p.Days, Services: p.Services, StaffIDs: p.StaffIDs}
	for _, w := range p.Windows {
		sp.Windows = append(sp.Windows, storedRange{Start: w.Start, End: w.End})
	}
	return json.Marshal(sp)
}

// loadPreferences reads what storePreferences kept; ok is false when nothing was.
func loadPreferences(b []byte) (customers.Preferences, bool, error) {
	if len(b) == 0 {
		return customers.Preferences{}, false, nil
	}
	var sp storedPreferences
	if err := json.Unmarshal(b, &sp); err != nil {
		return customers.Preferences{}, false, fmt.Errorf("read a join request's preferences: %w", err)
	}
	p := customers.Preferences{Days: sp.Days, Services: sp.Services, StaffIDs: sp.StaffIDs}
	for _, w := range sp.Windows {
		p.Windows = append(p.Windows, customers.Window{Start: w.Start, End: w.End})
	}
	return p, !p.IsZero(), nil
}
