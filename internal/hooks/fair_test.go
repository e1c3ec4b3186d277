package hooks_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/testkit/hookstest"
)

// endpoints registers n endpoints of shop pointing at r (the most a shop may have is 10)
// and tells r their secrets.
func (s *scene) endpoints(shop shops.Shop, r *hookstest.Receiver, n int) []hooks.Endpoint {
	s.t.Helper()
	var eps []hooks.Endpoint
	var secrets []string
	for range n {
		ep, secret, err := s.svc.CreateEndpoint(context.Background(), shop.ID, hooks.NewEndpoint{URL: r.URL()})
		require.NoError(s.t, err)
		eps = append(eps, ep)
		secrets = append(secrets, secret)
	}
	r.SetSecrets(secrets...)
	return eps
}

// recordFor records a customer event for shop, in a transaction of its own.
func (s *scene) recordFor(shop shops.Shop, typ string, n int) {
	s.t.Helper()
	err := pgx.BeginFunc(context.Background(), s.pool, func(tx pgx.Tx) error {
		return hooks.Record(context.Background(), tx, shop.ID, typ, time.Now(), testData(typ, n))
	})
	require.NoError(s.t, err)
}

// jobStates describes the delivery jobs, for failure messages: how many in each state,
// and the most snoozes one has had.
func (s *scene) jobStates() string {
	s.t.Helper()
	rows, err := s.pool.Query(context.Background(), `SELECT state || ': ' || count(*) || ' (snoozed up to '
		|| coalesce(max((metadata->>'snoozes')::int), 0) || ' times)'
		FROM river_job WHERE kind = 'webhook_delivery' GROUP BY state ORDER BY state`)
	require.NoError(s.t, err)
	states, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(s.t, err)
	return fmt.Sprint(states)
}

// TestSlowShopDoesNotStarveAnother: a shop with ten endpoints whose receiver hangs on
// every request, and a hundred deliveries queued for them, holds at most PerShop of the
// twenty delivery workers; another shop's event, recorded after all of them, reaches its
// fast receiver within seconds.
func TestSlowShopDoesNotStarveAnother(t *testing.T) {
	t.Parallel()
	s := newScene(t, hooks.Config{AllowPrivate: true, DevMode: true, Timeout: 30 * time.Second})
	slow := hookstest.NewReceiver(t)
	slow.Hold()
	s.endpoints(s.shop, slow, 10)
	other := s.newShop("+15555550188")
	fast := hookstest.NewReceiver(t)
	s.endpoints(other, fast, 1)
	hookstest.Deliver(t, s.pool, s.svc, hookstest.RiverConfig{Workers: 20})

	for i := range 10 {
		s.record(hooks.CustomerOptedOut, i) // ten deliveries each
	}
	// The slow shop's attempts are under way before the other shop's event exists.
	for i := range 4 {
		select {
		case <-slow.Started():
		case <-time.After(20 * time.Second):
			t.Fatalf("only %d of the slow shop's attempts started; jobs: %s", i, s.jobStates())
		}
	}
	start := time.Now()
	s.recordFor(other, hooks.CustomerOptedIn, 1)
	const bound = 5 * time.Second
	select {
	case <-fast.Started():
	case <-time.After(bound):
		t.Fatalf("the other shop's event did not reach its receiver within %s: the slow shop's receiver holds %d "+
			"requests, the fast one saw %d; delivery jobs: %s", bound, slow.Requests(), fast.Requests(), s.jobStates())
	}
	got := fast.WaitFor(t, 1, bound)
	require.Equal(t, hooks.CustomerOptedIn, got[0].Type)
	t.Logf("the other shop's event arrived %s after it was recorded; the slow shop holds %d requests",
		time.Since(start).Round(time.Millisecond), slow.Requests())
	require.LessOrEqual(t, slow.Requests(), 4, "the slow shop holds at most PerShop attempts at once")
}

// TestShopCapHoldsAcrossInstances: two instances (services with a River client each) on
// one database keep, together, at most PerShop attempts in flight to a shop: the count
// is Postgres's, not each process's.
func TestShopCapHoldsAcrossInstances(t *testing.T) {
	t.Parallel()
	cfg := hooks.Config{AllowPrivate: true, DevMode: true, Timeout: 30 * time.Second, Schedule: fastSchedule,
		PollEvery: 20 * time.Millisecond, BusyWait: 20 * time.Millisecond, Secrets: testSecrets}
	s := newScene(t, cfg)
	second := hooks.New(s.pool, s.queue, cfg)
	t.Cleanup(second.Close)
	slow := hookstest.NewReceiver(t)
	slow.Hold()
	s.endpoints(s.shop, slow, 10)
	hookstest.Deliver(t, s.pool, s.svc, hookstest.RiverConfig{Workers: 10})
	hookstest.Deliver(t, s.pool, second, hookstest.RiverConfig{Workers: 10})
	for i := range 10 {
		s.record(hooks.CustomerOptedOut, i)
	}
	// Wait until the jobs over the cap have been turned away again and again, on both
	// instances: every one of them had its chance to start an attempt.
	deadline := time.Now().Add(30 * time.Second)
	for s.count(`SELECT count(*) FROM river_job WHERE kind = 'webhook_delivery' AND (metadata->>'snoozes')::int >= 3`) < 50 ||
		s.count(`SELECT count(DISTINCT attempted_by[cardinality(attempted_by)]) FROM river_job WHERE kind = 'webhook_delivery'`) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the deliveries were not turned away while the shop was busy; the receiver holds %d requests; jobs: %s",
				slow.Requests(), s.jobStates())
		}
		select {
		case <-slow.Started():
		case <-time.After(50 * time.Millisecond): // polling River's table: no event to wait on
		}
	}
	require.LessOrEqual(t, slow.Requests(), 4, "two instances hold at most PerShop attempts to the shop together; jobs: %s", s.jobStates())
	slow.Release()
	s.waitDeliveries(100, hooks.DeliverySucceeded, 60*time.Second)
}

// TestResendsLimitedPerShop: a shop has at most MaxResends "send again" attempts waiting
// or in flight; past it Resend is refused (409 webhook_resends_limited) until they are
// sent. A resend already waiting is not counted twice, and another shop is not limited.
func TestResendsLimitedPerShop(t *testing.T) {
	t.Parallel()
	s := newScene(t, hooks.Config{AllowPrivate: true, DevMode: true, MaxResends: 2})
	ctx := context.Background()
	r := hookstest.NewReceiver(t)
	ep := s.endpoints(s.shop, r, 1)[0]
	other := s.newShop("+15555550177")
	otherEP := s.endpoints(other, r, 1)[0]
	for i := range 3 {
		s.record(hooks.CustomerOptedOut, i)
	}
	s.recordFor(other, hooks.CustomerOptedOut, 9)
	_, err := s.svc.Dispatch(ctx)
	require.NoError(t, err)
	page, err := s.svc.Deliveries(ctx, s.shop.ID, ep.ID, hooks.DeliveryQuery{})
	require.NoError(t, err)
	require.Len(t, page.Deliveries, 3)
	d := page.Deliveries

	// No worker runs yet: the resends wait.
	_, err = s.svc.Resend(ctx, s.shop.ID, ep.ID, d[0].ID)
	require.NoError(t, err)
	_, err = s.svc.Resend(ctx, s.shop.ID, ep.ID, d[1].ID)
	require.NoError(t, err)
	_, err = s.svc.Resend(ctx, s.shop.ID, ep.ID, d[0].ID)
	require.NoError(t, err, "the same delivery again: the waiting resend stands for it")
	_, err = s.svc.Resend(ctx, s.shop.ID, ep.ID, d[2].ID)
	require.ErrorIs(t, err, hooks.ErrResendsLimited, "a third while two wait")
	p, ok := problem.As(err)
	require.True(t, ok)
	require.Equal(t, problem.Conflict, p.Kind)

	otherPage, err := s.svc.Deliveries(ctx, other.ID, otherEP.ID, hooks.DeliveryQuery{})
	require.NoError(t, err)
	_, err = s.svc.Resend(ctx, other.ID, otherEP.ID, otherPage.Deliveries[0].ID)
	require.NoError(t, err, "another shop's resends are its own")

	hookstest.Deliver(t, s.pool, s.svc, hookstest.RiverConfig{})
	s.waitJobsDone(20 * time.Second)
	_, err = s.svc.Resend(ctx, s.shop.ID, ep.ID, d[2].ID)
	require.NoError(t, err, "once they are sent, the shop may send again")
}

// TestEventsPastTheHourlyLimitAreNotSent: a shop's events past MaxEventsPerHour in an
// hour are recorded, but their deliveries are made failed with the reason, not sent;
// the owner can send one again. Another shop's events are not limited by it.
func TestEventsPastTheHourlyLimitAreNotSent(t *testing.T) {
	t.Parallel()
	s := newScene(t, hooks.Config{AllowPrivate: true, DevMode: true, MaxEventsPerHour: 3})
	ctx := context.Background()
	r := hookstest.NewReceiver(t)
	ep := s.endpoints(s.shop, r, 1)[0]
	other := s.newShop("+15555550166")
	otherR := hookstest.NewReceiver(t)
	s.endpoints(other, otherR, 1)
	for i := range 5 {
		s.record(hooks.CustomerOptedOut, i)
	}
	for i := range 3 {
		s.recordFor(other, hooks.CustomerOptedIn, i)
	}
	hookstest.Deliver(t, s.pool, s.svc, hookstest.RiverConfig{})
	r.WaitFor(t, 3, 20*time.Second)
	otherR.WaitFor(t, 3, 20*time.Second)
	s.waitDeliveries(3+3, hooks.DeliverySucceeded, 20*time.Second)
	s.waitDeliveries(2, hooks.DeliveryFailed, 20*time.Second)
	s.waitJobsDone(20 * time.Second)
	require.Len(t, r.Accepted(), 3, "the shop's first three events only")
	require.Equal(t, 2, s.count(`SELECT count(*) FROM webhook_deliveries WHERE status = 'failed' AND attempts = 0
		AND last_error LIKE 'not sent: more than 3 events of the shop in an hour%'`), "the others say why")
	require.Equal(t, 8, s.count(`SELECT count(*) FROM webhook_events`), "every event is recorded")

	page, err := s.svc.Deliveries(ctx, s.shop.ID, ep.ID, hooks.DeliveryQuery{Status: hooks.DeliveryFailed})
	require.NoError(t, err)
	require.Len(t, page.Deliveries, 2)
	_, err = s.svc.Resend(ctx, s.shop.ID, ep.ID, page.Deliveries[0].ID)
	require.NoError(t, err)
	got := r.WaitFor(t, 4, 20*time.Second)
	require.Equal(t, hooks.EventID(page.Deliveries[0].EventID), got[3].ID, "sent again by hand")
}

// TestMessageEventsHaveTheirOwnBudget: message.received (which anyone texting the shop's
// number raises) counts against MaxMessageEventsPerHour only. A stranger's flood past it
// is recorded but not sent, and the shop's other events, recorded after the flood, are
// all sent: the flood spent none of their budget (issue 49).
func TestMessageEventsHaveTheirOwnBudget(t *testing.T) {
	t.Parallel()
	s := newScene(t, hooks.Config{AllowPrivate: true, DevMode: true, MaxEventsPerHour: 3, MaxMessageEventsPerHour: 2})
	r := hookstest.NewReceiver(t)
	s.endpoints(s.shop, r, 1)
	const flood = 6
	for i := range flood {
		s.record(hooks.MessageReceived, i)
	}
	for i := range 3 {
		s.record(hooks.CustomerOptedOut, i)
	}
	hookstest.Deliver(t, s.pool, s.svc, hookstest.RiverConfig{})
	got := r.WaitFor(t, 2+3, 20*time.Second)
	s.waitDeliveries(flood-2, hooks.DeliveryFailed, 20*time.Second)
	s.waitJobsDone(20 * time.Second)
	byType := map[string]int{}
	for _, ev := range r.Accepted() {
		byType[ev.Type]++
	}
	require.Equal(t, map[string]int{hooks.MessageReceived: 2, hooks.CustomerOptedOut: 3}, byType,
		"the messages' budget and the shop's other events, all of them: %d accepted", len(got))
	require.Equal(t, flood-2, s.count(`SELECT count(*) FROM webhook_deliveries WHERE status = 'failed' AND attempts = 0
		AND last_error LIKE 'not sent: more than 2 message.received events of the shop in an hour%'`), "the flood's rest say why")
	require.Equal(t, flood+3, s.count(`SELECT count(*) FROM webhook_events`), "every event is recorded")
}
