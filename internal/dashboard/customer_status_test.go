package dashboard_test

import (
	"context"
	"html"
	"regexp"
	"testing"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/stretchr/testify/require"
)

// TestCustomerPageShowsTextingStatus: a customer's own page says whether offers reach
// them, in the list's words, so an owner who opens a customer sees a STOP or a number
// that cannot take texts without going back to the list.
func TestCustomerPageShowsTextingStatus(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{})
	ctx := context.Background()
	in := en.addCustomer(t, en.shopA, "+15555550171", "Ann In")
	out := en.addCustomer(t, en.shopA, "+15555550172", "Otto Out")
	require.NoError(t, en.customers.OptOut(ctx, out.ID))
	gone := en.addCustomer(t, en.shopA, "+15555550173", "Una Gone")
	require.NoError(t, en.customers.MarkUnreachable(ctx, gone.ID, 21614))
	never, err := en.customers.Add(ctx, en.shopA.ID, customers.NewCustomer{Phone: "+15555550174", Name: "Ned Never"})
	require.NoError(t, err)

	ck := en.login(t, en.keyA)
	status := regexp.MustCompile(`<p id="customer-status">Texts: <span class="([^"]+)">([^<]*)</span></p>`)
	for _, tc := range []struct {
		who   customers.Customer
		class string
		label string
	}{
		{in, "badge badge-ok", "Opted in"},
		{out, "badge badge-bad", "Opted out (STOP)"},
		{gone, "badge badge-muted", "Unreachable"},
		{never, "badge badge-muted", "Not opted in"},
	} {
		body, _ := en.page(t, ck, "/dashboard/customers/"+tc.who.ID.String())
		m := status.FindStringSubmatch(body)
		require.NotNil(t, m, "%s's page has no texting status", tc.who.Name)
		require.Equal(t, tc.class, m[1], tc.who.Name)
		require.Equal(t, tc.label, html.UnescapeString(m[2]), tc.who.Name)
	}
}
