package join_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/catalog"
	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/join"
)

// TestRequestPreferences: what a visitor picks (the shop's services and people, days,
// a time range) is checked against the shop's catalogue, each wrong part named as its
// field, kept with the request, and saved on the customer by their YES; a request that
// picked nothing leaves a returning customer's preferences as they were.
func TestRequestPreferences(t *testing.T) {
	t.Parallel()
	f := setup(t, join.Limits{})
	ctx := context.Background()
	cat := catalog.New(f.pool, nil)
	ana, err := cat.AddStaff(ctx, f.shop.ID, "Ana")
	require.NoError(t, err)
	_, err = cat.AddStaff(ctx, f.shop.ID, "Ben")
	require.NoError(t, err)
	_, err = cat.AddService(ctx, f.shop.ID, catalog.NewService{Name: "Haircut", DurationMinutes: 30, PriceCents: 3000})
	require.NoError(t, err)
	_, err = cat.AddService(ctx, f.shop.ID, catalog.NewService{Name: "Beard trim", DurationMinutes: 15, PriceCents: 1500})
	require.NoError(t, err)
	ch, err := f.join.Choices(ctx, f.shop)
	require.NoError(t, err)
	require.Equal(t, []string{"Haircut", "Beard trim"}, ch.Services)
	require.Len(t, ch.Staff, 2)

	for name, c := range map[string]struct {
		wants join.Wants
		field string
	}{
		"unknown service":        {join.Wants{Services: []string{"Perm"}}, "services"},
		"another shop's person":  {join.Wants{Staff: []string{uuid.NewString()}}, "staff"},
		"not an id":              {join.Wants{Staff: []string{"Ana"}}, "staff"},
		"not a day":              {join.Wants{Days: []string{"funday"}}, "days"},
		"range backwards":        {join.Wants{From: "18:00", To: "09:00"}, "times"},
		"half a range":           {join.Wants{From: "09:00"}, "times"},
		"not a time":             {join.Wants{From: "9am", To: "17:00"}, "times"},
		"too many services":      {join.Wants{Services: make([]string, join.MaxWanted+1)}, "services"},
		"too many days repeated": {join.Wants{Days: []string{"mon", "mon", "mon", "mon", "mon", "mon", "mon", "mon"}}, "days"},
	} {
		s := sub("+15555550140")
		s.Wants = c.wants
		_, err := f.join.Request(ctx, f.shop, s)
		var fe join.FieldErrors
		require.ErrorAs(t, err, &fe, name)
		require.Equal(t, join.FieldErrors{c.field: "error_" + c.field}, fe, name)
	}
	require.Equal(t, 0, f.count(t, `SELECT count(*) FROM join_requests`))

	s := sub("+15555550141")
	s.Wants = join.Wants{Services: []string{"beard trim", "Haircut"}, Staff: []string{ana.ID.String()},
		Days: []string{"sat", "tue", "sat"}, From: "09:00", To: "12:30"}
	out, err := f.join.Request(ctx, f.shop, s)
	require.NoError(t, err)
	require.True(t, out.Sent, out.Refused)
	handled, err := f.join.Confirm(ctx, f.shop, join.Reply{From: "+15555550141", Body: "YES", MessageSID: "SMp1"})
	require.NoError(t, err)
	require.True(t, handled)
	c, err := f.customers.ByPhone(ctx, f.shop.ID, "+15555550141")
	require.NoError(t, err)
	require.Equal(t, customers.Preferences{Days: []int{2, 6}, Windows: []customers.Window{{Start: 540, End: 750}},
		Services: []string{"Beard trim", "Haircut"}, StaffIDs: []uuid.UUID{ana.ID}}, c.Preferences)

	// A customer with preferences who rejoins picking nothing keeps them.
	bo, err := f.customers.Add(ctx, f.shop.ID, customers.NewCustomer{Phone: "+15555550142", Name: "Bo",
		Preferences: customers.Preferences{Days: []int{1}}})
	require.NoError(t, err)
	out, err = f.join.Request(ctx, f.shop, sub(bo.Phone))
	require.NoError(t, err)
	require.True(t, out.Sent)
	handled, err = f.join.Confirm(ctx, f.shop, join.Reply{From: bo.Phone, Body: "yes", MessageSID: "SMp2"})
	require.NoError(t, err)
	require.True(t, handled)
	got, err := f.customers.ByPhone(ctx, f.shop.ID, bo.Phone)
	require.NoError(t, err)
	require.True(t, got.SMSOptIn)
	require.Equal(t, []int{1}, got.Preferences.Days)
}

// TestConfirmWhenPickLeftCatalogue: a service picked on the page and renamed before the
// YES does not stop the number joining: it joins with the preferences it had (none).
func TestConfirmWhenPickLeftCatalogue(t *testing.T) {
	t.Parallel()
	f := setup(t, join.Limits{})
	ctx := context.Background()
	cat := catalog.New(f.pool, nil)
	sv, err := cat.AddService(ctx, f.shop.ID, catalog.NewService{Name: "Haircut", DurationMinutes: 30, PriceCents: 3000})
	require.NoError(t, err)
	s := sub("+15555550143")
	s.Wants = join.Wants{Services: []string{"Haircut"}, Days: []string{"fri"}}
	out, err := f.join.Request(ctx, f.shop, s)
	require.NoError(t, err)
	require.True(t, out.Sent, out.Refused)
	renamed := "Men's cut"
	_, err = cat.UpdateService(ctx, f.shop.ID, sv.ID, catalog.ServiceChange{Name: &renamed})
	require.NoError(t, err)
	handled, err := f.join.Confirm(ctx, f.shop, join.Reply{From: "+15555550143", Body: "YES", MessageSID: "SMp3"})
	require.NoError(t, err)
	require.True(t, handled)
	c, err := f.customers.ByPhone(ctx, f.shop.ID, "+15555550143")
	require.NoError(t, err)
	require.True(t, c.SMSOptIn)
	require.True(t, c.Preferences.IsZero(), "%+v", c.Preferences)
	require.Len(t, f.texts(t, "+15555550143"), 2, "the confirmation and the welcome")
}
