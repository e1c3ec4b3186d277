package customers_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/testkit/customertest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
)

// TestListByStatusMatchesStatus: the list filtered by a status holds exactly the
// customers whose Status reads so, each under one status only. A customer whose texts
// failed (unreachable) and who then said STOP reads opted_out, and is listed there and
// not as unreachable; one who never opted in and whose number failed reads unreachable.
func TestListByStatusMatchesStatus(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	cs := customertest.New(t, pool)
	shop, _, err := shops.New(pool, shops.Config{}).Create(ctx, shops.NewShop{Name: "A", Timezone: "UTC", SMSNumber: "+15555550100",
		Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	add := func(phone string, optIn bool) customers.Customer {
		t.Helper()
		c, err := cs.Add(ctx, shop.ID, customers.NewCustomer{Phone: phone, Name: phone, SMSOptIn: optIn})
		require.NoError(t, err)
		return c
	}
	add("+15557310001", true)                // opted in
	add("+15557310002", false)               // not opted in
	unreachable := add("+15557310003", true) // texts fail for good
	both := add("+15557310004", true)        // fails, then says STOP
	neverIn := add("+15557310005", false)    // never opted in, texts fail
	stopped := add("+15557310006", true)     // says STOP
	require.NoError(t, cs.MarkUnreachable(ctx, unreachable.ID, 30006))
	require.NoError(t, cs.MarkUnreachable(ctx, both.ID, 30006))
	require.NoError(t, cs.OptOut(ctx, both.ID))
	require.NoError(t, cs.MarkUnreachable(ctx, neverIn.ID, 30006))
	require.NoError(t, cs.OptOut(ctx, stopped.ID))

	all, err := cs.List(ctx, shop.ID, customers.Query{})
	require.NoError(t, err)
	require.Len(t, all.Customers, 6)
	want := map[string][]string{}
	for _, c := range all.Customers {
		want[c.Status()] = append(want[c.Status()], c.Phone)
	}
	require.Equal(t, []string{"+15557310003", "+15557310005"}, want[customers.StatusUnreachable], "the statuses as read")
	listed := 0
	for _, status := range []string{customers.StatusOptedIn, customers.StatusNotOptedIn, customers.StatusOptedOut, customers.StatusUnreachable} {
		page, err := cs.List(ctx, shop.ID, customers.Query{Status: status})
		require.NoError(t, err)
		var got []string
		for _, c := range page.Customers {
			got = append(got, c.Phone)
		}
		require.Equal(t, want[status], got, "status=%s", status)
		listed += len(got)
	}
	require.Equal(t, 6, listed, "each customer under one status")
}
