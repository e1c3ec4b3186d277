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

// TestSettingsMoveUps: the settings page shows the move-ups' two settings with their
// defaults, saves them, refuses one out of range next to its field (changing nothing),
// and a form from before them keeps them.
func TestSettingsMoveUps(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{})
	ctx := context.Background()
	ck := en.login(t, en.keyA)
	body, csrf := en.page(t, ck, "/dashboard/settings")
	require.Regexp(t, `id="set-move-up-days" name="move_up_days"[^>]*value="14"`, body)
	require.Regexp(t, `id="set-chain-max" name="chain_max"[^>]*value="5"`, body)
	base := func() url.Values {
		return url.Values{"csrf": {csrf}, "name": {"Ada's Barbers"}, "timezone": {"America/New_York"}, "currency": {"USD"},
			"payment_mode": {"checkout"}, "wave_size": {"10"}, "wave_interval_seconds": {"600"}, "min_lead_minutes": {"60"},
			"cooldown_seconds": {"86400"}}
	}
	form := base()
	form.Set("move_up_days", "7")
	form.Set("chain_max", "3")
	rec := en.post("/dashboard/settings", form, ck)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	shop, err := en.shops.Get(ctx, en.shopA.ID)
	require.NoError(t, err)
	require.Equal(t, []int{7, 3}, []int{shop.MoveUpDays, shop.ChainMax})

	bad := base()
	bad.Set("move_up_days", "95")
	bad.Set("chain_max", "3")
	rec = en.post("/dashboard/settings", bad, ck)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	require.NotEmpty(t, fieldError(rec.Body.String(), "set-move-up-days-error"))
	kept, err := en.shops.Get(ctx, en.shopA.ID)
	require.NoError(t, err)
	require.Equal(t, 7, kept.MoveUpDays, "a refused form changes nothing")

	rec = en.post("/dashboard/settings", base(), ck)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	kept, err = en.shops.Get(ctx, en.shopA.ID)
	require.NoError(t, err)
	require.Equal(t, []int{7, 3}, []int{kept.MoveUpDays, kept.ChainMax}, "a form from before the fields keeps them")
}
