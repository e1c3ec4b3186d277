package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCustomerMoveUpBox: the customer's page asks whether they are offered earlier
// times; ticking it and unticking it are kept, and a form from before the box existed
// leaves the choice as it was.
func TestCustomerMoveUpBox(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{})
	ck := en.login(t, en.keyA)
	ann := en.addCustomer(t, en.shopA, "+15557310001", "Ann")
	path := "/dashboard/customers/" + ann.ID.String()
	body, csrf := en.page(t, ck, path)
	require.Contains(t, body, `id="move_up"`)
	require.NotRegexp(t, `id="move_up"[^>]*checked`, body, "nobody is asked to move unless they said so")
	moveUp := func() bool {
		t.Helper()
		c, err := en.customers.Get(context.Background(), en.shopA.ID, ann.ID)
		require.NoError(t, err)
		return c.MoveUp
	}
	form := func(extra ...string) url.Values {
		f := url.Values{"csrf": {csrf}, "name": {"Ann"}, "priority": {"0"}, "preferences": {""}, "sms_opt_in": {"yes"}}
		for i := 0; i+1 < len(extra); i += 2 {
			f.Set(extra[i], extra[i+1])
		}
		return f
	}
	require.Equal(t, http.StatusSeeOther, en.post(path, form("move_up_shown", "1", "move_up", "yes"), ck).Code)
	require.True(t, moveUp())
	body, _ = en.page(t, ck, path)
	require.Regexp(t, `id="move_up"[^>]*checked`, body)
	require.Equal(t, http.StatusSeeOther, en.post(path, form(), ck).Code, "a form from before the box")
	require.True(t, moveUp(), "left as it was")
	require.Equal(t, http.StatusSeeOther, en.post(path, form("move_up_shown", "1"), ck).Code)
	require.False(t, moveUp(), "unticked")
}
