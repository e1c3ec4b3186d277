package shops_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/api"
	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/testkit/customertest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
)

// TestOptOutAndInAreEvents: a STOP records customer.opted_out and a START
// customer.opted_in, in the change's transaction, once per change (a second STOP changes
// nothing and records nothing), each with the customer as it is after the change.
func TestOptOutAndInAreEvents(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	svc := shops.New(pool, shops.Config{Now: func() time.Time { return now }})
	cs := customertest.NewWith(t, pool, customers.Config{Now: func() time.Time { return now }})
	shop, _, err := svc.Create(ctx, shops.NewShop{Name: "A", Timezone: "UTC", SMSNumber: "+15555550100", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	bea, err := cs.Add(ctx, shop.ID, customers.NewCustomer{Phone: "+15555550111", Name: "Bea", SMSOptIn: true, Language: language.Spanish})
	require.NoError(t, err)

	// No endpoint yet: nothing is recorded.
	require.NoError(t, cs.OptOut(ctx, bea.ID))
	require.NoError(t, cs.OptIn(ctx, bea.ID))

	queue, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	require.NoError(t, err)
	hs := hooks.New(pool, queue, hooks.Config{})
	_, _, err = hs.CreateEndpoint(ctx, shop.ID, hooks.NewEndpoint{URL: "https://crm.example.com/hooks",
		EnabledEvents: []string{hooks.CustomerOptedOut, hooks.CustomerOptedIn}})
	require.NoError(t, err)

	require.NoError(t, cs.OptIn(ctx, bea.ID), "already opted in: no change")
	require.NoError(t, cs.OptOut(ctx, bea.ID))
	require.NoError(t, cs.OptOut(ctx, bea.ID), "opted out already: no change")
	now = now.Add(time.Hour)
	require.NoError(t, cs.OptIn(ctx, bea.ID))
	require.NoError(t, cs.MarkUnreachable(ctx, bea.ID, 21610))
	require.NoError(t, cs.OptIn(ctx, bea.ID), "a START clears unreachable: a change")

	rows, err := pool.Query(ctx, `SELECT type, created_at, subject FROM webhook_events ORDER BY seq`)
	require.NoError(t, err)
	defer rows.Close()
	var types []string
	var got []api.Customer
	var times []time.Time
	for rows.Next() {
		var typ string
		var at time.Time
		var raw []byte
		require.NoError(t, rows.Scan(&typ, &at, &raw))
		var c api.Customer
		require.NoError(t, json.Unmarshal(raw, &c), "the data is the customer as the API shows it")
		types, got, times = append(types, typ), append(got, c), append(times, at.UTC())
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{hooks.CustomerOptedOut, hooks.CustomerOptedIn, hooks.CustomerOptedIn}, types)
	require.Equal(t, bea.ID, got[0].ID)
	require.Equal(t, customers.StatusOptedOut, got[0].Status)
	require.Equal(t, now.Add(-time.Hour), times[0])
	require.Equal(t, customers.StatusOptedIn, got[1].Status)
	require.Equal(t, "+15555550111", got[1].Phone)
	require.Equal(t, customers.StatusOptedIn, got[2].Status)
	for i, c := range got {
		require.NotNil(t, c.Language, "event %d carries the customer's language", i)
		require.Equal(t, string(language.Spanish), *c.Language, "event %d carries the customer's language", i)
	}

	// Unknown customers are no error, as before.
	require.NoError(t, cs.OptOut(ctx, shop.ID))
}

// TestCalendarToken: every shop has a feed token; it finds its shop until it is rotated,
// and from then on only the new one does.
func TestCalendarToken(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	svc := shops.New(pool, shops.Config{})
	a, _, err := svc.Create(ctx, shops.NewShop{Name: "A", Timezone: "UTC", SMSNumber: "+15555550100", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	b, _, err := svc.Create(ctx, shops.NewShop{Name: "B", Timezone: "UTC", SMSNumber: "+15555550101", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	require.Regexp(t, `^cal_[0-9a-f]{64}$`, a.CalendarToken)
	require.NotEqual(t, a.CalendarToken, b.CalendarToken)
	got, err := svc.ByCalendarToken(ctx, a.CalendarToken)
	require.NoError(t, err)
	require.Equal(t, a.ID, got.ID)

	rotated, err := svc.RotateCalendarToken(ctx, a.ID)
	require.NoError(t, err)
	require.NotEqual(t, a.CalendarToken, rotated.CalendarToken)
	_, err = svc.ByCalendarToken(ctx, a.CalendarToken)
	require.ErrorIs(t, err, shops.ErrCalendarNotFound, "the old token is dead at once")
	got, err = svc.ByCalendarToken(ctx, rotated.CalendarToken)
	require.NoError(t, err)
	require.Equal(t, a.ID, got.ID)
	got, err = svc.ByCalendarToken(ctx, b.CalendarToken)
	require.NoError(t, err)
	require.Equal(t, b.ID, got.ID, "another shop's token is untouched")
	for _, bad := range []string{"", "cal_", "cal_00", a.CalendarToken + "x", "shop_" + rotated.CalendarToken[4:]} {
		_, err := svc.ByCalendarToken(ctx, bad)
		require.ErrorIs(t, err, shops.ErrCalendarNotFound, bad)
	}

	on := true
	changed, err := svc.Update(ctx, a.ID, shops.ShopChange{CalendarFullDetails: &on})
	require.NoError(t, err)
	require.True(t, changed.CalendarFullDetails)
	changed, err = svc.Update(ctx, a.ID, shops.ShopChange{})
	require.NoError(t, err)
	require.True(t, changed.CalendarFullDetails, "an edit that does not name it keeps it")
}

// TestNULRefused: a name with a NUL character (JSON's \u0000 decodes to one) is refused
// as bad input; Postgres's text cannot hold it, and it answered 500.
func TestNULRefused(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	svc := shops.New(pool, shops.Config{})
	cs := customertest.New(t, pool)
	_, _, err := svc.Create(ctx, shops.NewShop{Name: "A\x00", Timezone: "UTC", SMSNumber: "+15555550100", Currency: "usd", PaymentMode: shops.PaymentNone})
	requireInvalid(t, err, "name")
	shop, _, err := svc.Create(ctx, shops.NewShop{Name: "A", Timezone: "UTC", SMSNumber: "+15555550100", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	_, err = cs.Add(ctx, shop.ID, customers.NewCustomer{Phone: "+15555550111", Name: "Bea\x00"})
	requireInvalid(t, err, "name")
	c, err := cs.Add(ctx, shop.ID, customers.NewCustomer{Phone: "+15555550111", Name: "Bea"})
	require.NoError(t, err)
	bad := "B\x00"
	_, err = cs.Update(ctx, shop.ID, c.ID, customers.Change{Name: &bad})
	requireInvalid(t, err, "name")
}

func requireInvalid(t *testing.T, err error, field string) {
	t.Helper()
	p, ok := problem.As(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, problem.Invalid, p.Kind)
	require.Equal(t, field, p.Field)
}
