package dashboard_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/customers"
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

// TestCustomerPossiblyReassigned: a customer whose number answered "wrong number" shows
// so on the list and on their page, with a button that clears it (CSRF-guarded; another
// shop's owner gets 404); an unmarked customer shows neither.
func TestCustomerPossiblyReassigned(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{})
	ctx := context.Background()
	moved := en.addCustomer(t, en.shopA, "+15555550181", "Mo Ved")
	stays := en.addCustomer(t, en.shopA, "+15555550182", "Stay Put")
	require.NoError(t, pgx.BeginFunc(ctx, en.pool, func(tx pgx.Tx) error {
		return en.customers.MarkPossiblyReassigned(ctx, tx, en.shopA.ID, moved.Phone, time.Date(2026, 11, 20, 15, 30, 0, 0, time.UTC))
	}))

	ck := en.login(t, en.keyA)
	list, _ := en.page(t, ck, "/dashboard/customers")
	row := func(id string) string {
		m := regexp.MustCompile(`(?s)<tr class="customer-row" data-customer="` + id + `">.*?</tr>`).FindString(list)
		require.NotEmpty(t, m, "row of %s", id)
		return m
	}
	require.Contains(t, row(moved.ID.String()), "Number may have changed hands")
	require.NotContains(t, row(stays.ID.String()), "changed hands")

	body, csrf := en.page(t, ck, "/dashboard/customers/"+moved.ID.String())
	require.Contains(t, body, `id="customer-reassigned"`)
	require.Contains(t, body, "Fri 20 Nov 2026 10:30", "the answer's time in the shop's zone (New York)")
	plain, _ := en.page(t, ck, "/dashboard/customers/"+stays.ID.String())
	require.NotContains(t, plain, `id="customer-reassigned"`)

	path := "/dashboard/customers/" + moved.ID.String() + "/reassigned_checked"
	require.Equal(t, http.StatusForbidden, en.post(path, url.Values{}, ck).Code, "no CSRF token")
	ckB := en.login(t, en.keyB)
	_, csrfB := en.page(t, ckB, "/dashboard/customers")
	require.Equal(t, http.StatusNotFound, en.post(path, url.Values{"csrf": {csrfB}}, ckB).Code, "another shop's customer")
	got, err := en.customers.Get(ctx, en.shopA.ID, moved.ID)
	require.NoError(t, err)
	require.NotNil(t, got.PossiblyReassignedAt, "still marked after the refused tries")

	rec := en.post(path, url.Values{"csrf": {csrf}}, ck)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	require.Equal(t, "/dashboard/customers?notice=checked", rec.Header().Get("Location"))
	got, err = en.customers.Get(ctx, en.shopA.ID, moved.ID)
	require.NoError(t, err)
	require.Nil(t, got.PossiblyReassignedAt)
	after, _ := en.page(t, ck, "/dashboard/customers/"+moved.ID.String())
	require.NotContains(t, after, `id="customer-reassigned"`)
}
