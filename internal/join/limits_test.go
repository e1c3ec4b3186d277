package join_test

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/join"
	"github.com/slotrecovery/slotrecovery/internal/ratelimit"
	"github.com/slotrecovery/slotrecovery/internal/testkit/redistest"
)

// TestPumpingBurstFromOneIP: a burst of submissions from one address with many numbers
// sends no more than the address's allowance; each refusal is an Outcome, counted, and
// stores nothing.
func TestPumpingBurstFromOneIP(t *testing.T) {
	t.Parallel()
	f := setup(t, join.Limits{PerIP: ratelimit.Limit{Burst: 3, Every: time.Hour}})
	ctx := context.Background()
	sent := 0
	for i := range 20 {
		out, err := f.join.Request(ctx, f.shop, sub(fmt.Sprintf("+1555555%04d", 1000+i)))
		require.NoError(t, err)
		if out.Sent {
			sent++
		} else {
			require.Equal(t, "ip", out.Refused)
		}
	}
	require.Equal(t, 3, sent)
	require.Equal(t, 3, f.count(t, `SELECT count(*) FROM river_job WHERE kind = 'sms_text'`))
	require.Equal(t, 3, f.count(t, `SELECT count(*) FROM join_requests`))
	require.Equal(t, 17, f.refused["ip"])
}

// TestPumpingShopBudget: many addresses and numbers together spend no more than the
// shop's budget.
func TestPumpingShopBudget(t *testing.T) {
	t.Parallel()
	f := setup(t, join.Limits{PerShop: ratelimit.Limit{Burst: 4, Every: time.Hour}})
	ctx := context.Background()
	sent := 0
	for i := range 12 {
		s := sub(fmt.Sprintf("+1555555%04d", 2000+i))
		s.IP = netip.AddrFrom4([4]byte{198, 51, 100, byte(i + 1)})
		out, err := f.join.Request(ctx, f.shop, s)
		require.NoError(t, err)
		if out.Sent {
			sent++
		}
	}
	require.Equal(t, 4, sent)
	require.Equal(t, 8, f.refused["shop_budget"])
	require.Equal(t, 4, f.count(t, `SELECT count(*) FROM river_job WHERE kind = 'sms_text'`))
}

// TestPumpingOneNumberADay: a number is sent one confirmation a day, whoever asks; the
// honeypot and a number abroad are refused without spending anything.
func TestPumpingOneNumberADay(t *testing.T) {
	t.Parallel()
	f := setup(t, join.Limits{})
	ctx := context.Background()
	for i, want := range []string{"", "number", "number"} {
		s := sub("+15555550150")
		s.IP = netip.AddrFrom4([4]byte{198, 51, 100, byte(i + 1)})
		out, err := f.join.Request(ctx, f.shop, s)
		require.NoError(t, err)
		require.Equal(t, want, out.Refused, "request %d", i)
	}
	bot := sub("+15555550151")
	bot.Honeypot = "http://spam.example"
	out, err := f.join.Request(ctx, f.shop, bot)
	require.NoError(t, err)
	require.Equal(t, "honeypot", out.Refused)
	for _, abroad := range []string{"+447700900123", "+88213123456", "+2348031234567"} {
		out, err = f.join.Request(ctx, f.shop, sub(abroad))
		require.NoError(t, err)
		require.Equal(t, "country", out.Refused, abroad)
	}
	out, err = f.join.Request(ctx, f.shop, sub(f.shop.SMSNumber))
	require.NoError(t, err)
	require.Equal(t, "own_number", out.Refused)
	nul := sub("+15555550152")
	nul.UserAgent = "Mozilla\x00/5.0 \xff"
	out, err = f.join.Request(ctx, f.shop, nul)
	require.NoError(t, err)
	require.True(t, out.Sent, "a NUL or a broken byte in the browser's name is dropped, not a failure")
	require.Equal(t, 2, f.count(t, `SELECT count(*) FROM river_job WHERE kind = 'sms_text'`))
	require.Equal(t, map[string]int{"number": 2, "honeypot": 1, "country": 3, "own_number": 1}, f.refused)
	counts, err := f.join.Refusals(ctx, f.shop.ID, f.clock.Now())
	require.NoError(t, err)
	require.Equal(t, map[string]int64{"number": 2, "honeypot": 1, "country": 3, "own_number": 1}, counts.ByReason,
		"every refusal is counted in Postgres for the dashboard as on /metrics")
}

// TestPumpingRedisDown: with Redis unreachable nothing is sent (an unchecked request could
// be a pumper's), and the visitor's answer is the same.
func TestPumpingRedisDown(t *testing.T) {
	t.Parallel()
	f := setup(t, join.Limits{})
	down := join.New(f.pool, nil, f.customers, join.Config{Limits: join.Limits{
		Limiter: ratelimit.New(redistest.Unreachable(t), ratelimit.Config{Timeout: 200 * time.Millisecond})}})
	out, err := down.Request(context.Background(), f.shop, sub("+15555550160"))
	require.NoError(t, err)
	require.Equal(t, "unavailable", out.Refused)
	require.Equal(t, 0, f.count(t, `SELECT count(*) FROM join_requests`))
}
