package customers

import (
	"github.com/slotrecovery/slotrecovery/api"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// API returns the customer as the owners' API shows it and the customer.* webhook
// events carry it (api.Customer): the one rendering of a customer.
func (c Customer) API() api.Customer {
	out := api.Customer{
		ID: c.ID, Phone: c.Phone, Name: c.Name, SMSOptIn: c.SMSOptIn, Priority: c.Priority,
		OptedOut: c.OptedOutAt != nil, CreatedAt: c.CreatedAt.UTC(), Status: c.Status(), MoveUp: c.MoveUp,
		Preferences: api.Preferences{Days: []string{}, Windows: []api.Window{}, Services: []string{}},
	}
	if c.OptedOutAt != nil {
		t := c.OptedOutAt.UTC()
		out.OptedOutAt = &t
	}
	if c.Language != "" {
		l := string(c.Language)
		out.Language = &l
	}
	if c.PausedUntil != nil {
		t := c.PausedUntil.UTC()
		out.PausedUntil = &t
	}
	if c.PossiblyReassignedAt != nil {
		t := c.PossiblyReassignedAt.UTC()
		out.PossiblyReassignedAt = &t
	}
	for _, d := range c.Preferences.Days {
		out.Preferences.Days = append(out.Preferences.Days, DayName(d))
	}
	for _, w := range c.Preferences.Windows {
		out.Preferences.Windows = append(out.Preferences.Windows, api.Window{Start: shops.FormatClock(w.Start), End: shops.FormatClock(w.End)})
	}
	out.Preferences.Services = append(out.Preferences.Services, c.Preferences.Services...)
	out.Preferences.StaffIDs = append(out.Preferences.StaffIDs, c.Preferences.StaffIDs...)
	return out
}
