package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// TestSettingsCancelAndRanking: the settings page has "customers may cancel by text"
// (ticked by default), who is texted first and the no-shows that stop offers; each is
// kept, a form from before them leaves them as they were, and a bad value is shown next
// to its field.
func TestSettingsCancelAndRanking(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{})
	ck := en.login(t, en.keyA)
	body, csrf := en.page(t, ck, "/dashboard/settings")
	require.Regexp(t, `id="set-cancel-by-text"[^>]*checked`, body, "on by default")
	require.Contains(t, body, `id="set-ranking"`)
	require.Contains(t, body, `id="set-skip-no-shows"`)
	form := func(extra ...string) url.Values {
		f := url.Values{"csrf": {csrf}, "name": {"Ada's Barbers"}, "timezone": {"America/New_York"}, "currency": {"USD"},
			"payment_mode": {"checkout"}, "wave_size": {"10"}, "wave_interval_seconds": {"600"}, "min_lead_minutes": {"60"},
			"cooldown_seconds": {"86400"}}
		for i := 0; i+1 < len(extra); i += 2 {
			f.Set(extra[i], extra[i+1])
		}
		return f
	}
	shop := func() shops.Shop {
		t.Helper()
		s, err := en.shops.Get(context.Background(), en.shopA.ID)
		require.NoError(t, err)
		return s
	}
	rec := en.post("/dashboard/settings", form("cancel_by_text_shown", "1", "ranking", "reliable", "skip_after_no_shows", "2"), ck)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	s := shop()
	require.False(t, s.CustomersCancelByText, "unticked")
	require.Equal(t, shops.RankingReliable, s.Ranking)
	require.NotNil(t, s.SkipAfterNoShows)
	require.Equal(t, 2, *s.SkipAfterNoShows)
	body, _ = en.page(t, ck, "/dashboard/settings")
	require.NotRegexp(t, `id="set-cancel-by-text"[^>]*checked`, body)
	require.Regexp(t, `value="reliable"[^>]*selected`, body)

	require.Equal(t, http.StatusSeeOther, en.post("/dashboard/settings", form(), ck).Code, "a form from before the fields")
	s = shop()
	require.False(t, s.CustomersCancelByText)
	require.Equal(t, shops.RankingReliable, s.Ranking)
	require.Equal(t, 2, *s.SkipAfterNoShows, "left as they were")

	rec = en.post("/dashboard/settings", form("ranking", "lottery"), ck)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	require.Contains(t, fieldError(rec.Body.String(), "set-ranking-error"), "priority, fair, reliable, value")
	rec = en.post("/dashboard/settings", form("skip_after_no_shows", "0"), ck)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	require.Contains(t, fieldError(rec.Body.String(), "set-skip-no-shows-error"), "between 1 and 20")

	rec = en.post("/dashboard/settings", form("cancel_by_text_shown", "1", "customers_cancel_by_text", "on", "skip_after_no_shows", ""), ck)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	s = shop()
	require.True(t, s.CustomersCancelByText)
	require.Nil(t, s.SkipAfterNoShows, "empty: never")
}

// TestSettingsJoinRefusals: the join card says what the join page refused in the last
// week, by reason in the order they are checked, and when the hourly budget was last
// spent; older refusals and another shop's are left out.
func TestSettingsJoinRefusals(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: time.Date(2026, 11, 29, 17, 0, 0, 0, time.UTC)})
	ctx := context.Background()
	for _, r := range []struct {
		shop   uuid.UUID
		day    string
		reason string
		n      int
	}{
		{en.shopA.ID, "2026-11-28", "shape", 2}, {en.shopA.ID, "2026-11-29", "honeypot", 3},
		{en.shopA.ID, "2026-11-29", "shape", 1}, {en.shopA.ID, "2026-11-01", "ip", 9}, {en.shopB.ID, "2026-11-29", "number", 4},
	} {
		_, err := en.pool.Exec(ctx, `INSERT INTO join_refusals (shop_id, day, reason, count, last_at) VALUES ($1, $2, $3, $4, now())`,
			r.shop, r.day, r.reason, r.n)
		require.NoError(t, err)
	}
	_, err := en.pool.Exec(ctx, `INSERT INTO join_budget_spent (shop_id, hour, at) VALUES ($1, '2026-11-29 15:00Z', '2026-11-29 15:20Z')`, en.shopA.ID)
	require.NoError(t, err)
	ck := en.login(t, en.keyA)
	body, _ := en.page(t, ck, "/dashboard/settings")
	require.Contains(t, body, "3 filled by a bot, 3 not a mobile number.")
	require.NotContains(t, body, "too many from one address", "older than a week")
	require.NotContains(t, body, "already sent a text today", "another shop's")
	require.Contains(t, body, "last spent Sun 29 Nov 10:20", "in the shop's zone")
}
