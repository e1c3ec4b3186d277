package shops_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
)

// TestEndSession: an ended session is recorded for its shop only, ending it twice
// changes nothing, a shop that does not exist records nothing, and the records of
// sessions whose cookies have expired are purged by the sign-outs that follow, however
// many arrive at once.
func TestEndSession(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	now := time.Date(2026, 11, 18, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	svc := shops.New(pool, shops.Config{Now: clock})
	a, _, err := svc.Create(ctx, shops.NewShop{Name: "A", Timezone: "UTC", SMSNumber: "+15555550100", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	b, _, err := svc.Create(ctx, shops.NewShop{Name: "B", Timezone: "UTC", SMSNumber: "+15555550101", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	ended := func(shopID uuid.UUID, session string) bool {
		t.Helper()
		_, e, err := svc.SessionShop(ctx, shopID, session)
		require.NoError(t, err)
		return e
	}
	count := func() int {
		t.Helper()
		var n int
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM dashboard_session_ends`).Scan(&n))
		return n
	}

	shop, e, err := svc.SessionShop(ctx, a.ID, "s1")
	require.NoError(t, err)
	require.False(t, e)
	require.Equal(t, a.ID, shop.ID)
	require.Equal(t, "A", shop.Name)

	expires := now.Add(12 * time.Hour)
	require.NoError(t, svc.EndSession(ctx, a.ID, "s1", expires))
	require.NoError(t, svc.EndSession(ctx, a.ID, "s1", expires), "twice")
	require.True(t, ended(a.ID, "s1"))
	require.False(t, ended(b.ID, "s1"), "another shop's session of that id")
	require.False(t, ended(a.ID, "s2"), "the shop's other sessions")
	require.NoError(t, svc.EndSession(ctx, uuid.New(), "s3", expires), "a shop that does not exist")
	require.Equal(t, 1, count())

	_, _, err = svc.SessionShop(ctx, uuid.New(), "s1")
	p, ok := problem.As(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, problem.NotFound, p.Kind)

	// Past s1's expiry the sign-outs that follow purge it, and only what has expired.
	mu.Lock()
	now = expires.Add(time.Second)
	mu.Unlock()
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			require.NoError(t, svc.EndSession(ctx, b.ID, "later-"+string(rune('a'+i)), now.Add(12*time.Hour)))
		})
	}
	wg.Wait()
	require.False(t, ended(a.ID, "s1"), "purged once its cookie expired")
	require.Equal(t, 20, count())
	require.True(t, ended(b.ID, "later-a"))
}
