package hooks_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/testkit/hookstest"
)

// TestEndpointLifecycle: create (events normalised, the secret shown once), list, get,
// change, delete; another shop's endpoint is not found; bad input names its field.
func TestEndpointLifecycle(t *testing.T) {
	t.Parallel()
	s := newScene(t, hooks.Config{AllowPrivate: true, DevMode: true})
	ctx := context.Background()
	ep, secret, err := s.svc.CreateEndpoint(ctx, s.shop.ID, hooks.NewEndpoint{
		URL: " https://hooks.example.com/in ", Description: " Zapier ",
		EnabledEvents: []string{hooks.OpeningFilled, hooks.BookingConfirmed, hooks.OpeningFilled},
	})
	require.NoError(t, err)
	require.Len(t, secret, len("whsec_")+44)
	require.Equal(t, "https://hooks.example.com/in", ep.URL)
	require.Equal(t, "Zapier", ep.Description)
	require.Equal(t, []string{hooks.BookingConfirmed, hooks.OpeningFilled}, ep.EnabledEvents)
	require.False(t, ep.Disabled())

	all, _, err := s.svc.CreateEndpoint(ctx, s.shop.ID, hooks.NewEndpoint{URL: "https://b.example.com/", EnabledEvents: []string{"*", hooks.OpeningFilled}})
	require.NoError(t, err)
	require.Equal(t, []string{"*"}, all.EnabledEvents)
	require.True(t, all.Subscribed(hooks.CustomerOptedIn))

	list, err := s.svc.Endpoints(ctx, s.shop.ID)
	require.NoError(t, err)
	require.Len(t, list, 2)
	require.Equal(t, ep.ID, list[0].ID)

	other := s.newShop("+15555550188")
	_, err = s.svc.Endpoint(ctx, other.ID, ep.ID)
	require.ErrorIs(t, err, hooks.ErrEndpointNotFound)
	_, err = s.svc.UpdateEndpoint(ctx, other.ID, ep.ID, hooks.EndpointChange{})
	require.ErrorIs(t, err, hooks.ErrEndpointNotFound)
	require.ErrorIs(t, s.svc.DeleteEndpoint(ctx, other.ID, ep.ID), hooks.ErrEndpointNotFound)
	_, _, err = s.svc.RotateSecret(ctx, other.ID, ep.ID)
	require.ErrorIs(t, err, hooks.ErrEndpointNotFound)
	otherList, err := s.svc.Endpoints(ctx, other.ID)
	require.NoError(t, err)
	require.Empty(t, otherList)

	desc, events := "", []string{hooks.CustomerOptedOut}
	changed, err := s.svc.UpdateEndpoint(ctx, s.shop.ID, ep.ID, hooks.EndpointChange{Description: &desc, EnabledEvents: &events})
	require.NoError(t, err)
	require.Empty(t, changed.Description)
	require.Equal(t, events, changed.EnabledEvents)
	require.Equal(t, ep.URL, changed.URL)

	for name, n := range map[string]hooks.NewEndpoint{
		"url":            {URL: "not a url"},
		"enabled_events": {URL: "https://x.example.com/", EnabledEvents: []string{"opening.exploded"}},
		"description":    {URL: "https://x.example.com/", Description: string(make([]byte, 501))},
	} {
		_, _, err := s.svc.CreateEndpoint(ctx, s.shop.ID, n)
		p, ok := problem.As(err)
		require.True(t, ok, "%s: %v", name, err)
		require.Equal(t, problem.Invalid, p.Kind, name)
		require.Equal(t, name, p.Field)
	}

	require.NoError(t, s.svc.DeleteEndpoint(ctx, s.shop.ID, ep.ID))
	_, err = s.svc.Endpoint(ctx, s.shop.ID, ep.ID)
	require.ErrorIs(t, err, hooks.ErrEndpointNotFound)
}

// TestEndpointCapHoldsUnderConcurrency: many creations at once never make more than
// MaxEndpoints endpoints for a shop.
func TestEndpointCapHoldsUnderConcurrency(t *testing.T) {
	t.Parallel()
	s := newScene(t, hooks.Config{AllowPrivate: true, DevMode: true, MaxEndpoints: 3})
	var wg sync.WaitGroup
	errs := make([]error, 12)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, errs[i] = s.svc.CreateEndpoint(context.Background(), s.shop.ID, hooks.NewEndpoint{URL: "https://x.example.com/"})
		}()
	}
	wg.Wait()
	var ok, refused int
	for _, err := range errs {
		p, isProblem := problem.As(err)
		switch {
		case err == nil:
			ok++
		case isProblem && p.Code == "too_many_webhook_endpoints":
			refused++
		default:
			t.Errorf("unexpected error: %v", err)
		}
	}
	require.Equal(t, 3, ok)
	require.Equal(t, 9, refused)
	require.Equal(t, 3, s.count(`SELECT count(*) FROM webhook_endpoints`))
}

// TestDispatchersShareTheWork: several dispatchers (instances) fan out the same events
// at once; each event gets one delivery per endpoint and is sent once.
func TestDispatchersShareTheWork(t *testing.T) {
	t.Parallel()
	s := newScene(t, hooks.Config{AllowPrivate: true, DevMode: true})
	r := hookstest.NewReceiver(t)
	s.endpoint(r)
	const n = 150
	for i := range n {
		s.record(hooks.CustomerOptedIn, i)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				got, err := s.svc.Dispatch(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				if got == 0 {
					return
				}
			}
		}()
	}
	wg.Wait()
	require.Equal(t, n, s.count(`SELECT count(*) FROM webhook_deliveries`))
	require.Equal(t, n, s.count(`SELECT count(*) FROM river_job WHERE kind = 'webhook_delivery'`))
	require.Zero(t, s.count(`SELECT count(*) FROM webhook_events WHERE dispatched_at IS NULL OR payload IS NULL`))
	hookstest.Deliver(t, s.pool, s.svc, hookstest.RiverConfig{})
	got := r.WaitFor(t, n, 60*time.Second)
	seen := map[string]bool{}
	for _, e := range got {
		require.False(t, seen[e.ID], "sent twice: %s", e.ID)
		seen[e.ID] = true
	}
}

// TestUnrenderableEventIsSetAside: an event whose data cannot be sent (a subject
// recorded before 0050 that the legacy rendering cannot read) is kept with the reason
// and sent to no one; the others go on.
func TestUnrenderableEventIsSetAside(t *testing.T) {
	t.Parallel()
	s := newScene(t, hooks.Config{AllowPrivate: true, DevMode: true})
	svc := hooks.New(s.pool, s.queue, hooks.Config{AllowPrivate: true, DevMode: true, Schedule: fastSchedule, Secrets: testSecrets})
	r := hookstest.NewReceiver(t)
	s.endpoint(r)
	_, err := s.pool.Exec(context.Background(), `INSERT INTO webhook_events (shop_id, type, created_at, subject)
		VALUES ($1, 'customer.opted_out', now(), '{"Name":"no id"}')`, s.shop.ID)
	require.NoError(t, err)
	s.record(hooks.CustomerOptedIn, 2)
	n, err := svc.Dispatch(context.Background())
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Equal(t, 1, s.count(`SELECT count(*) FROM webhook_events
		WHERE dispatch_error = 'hooks: customer subject without a customer' AND payload IS NULL`))
	require.Equal(t, 1, s.count(`SELECT count(*) FROM webhook_deliveries`))
}

// TestPurge: events older than the cut go with their deliveries and attempts.
func TestPurge(t *testing.T) {
	t.Parallel()
	s := newScene(t, hooks.Config{AllowPrivate: true, DevMode: true})
	ctx := context.Background()
	r := hookstest.NewReceiver(t)
	s.endpoint(r)
	hookstest.Deliver(t, s.pool, s.svc, hookstest.RiverConfig{})
	for i := range 3 {
		s.record(hooks.CustomerOptedIn, i)
	}
	s.waitDeliveries(3, hooks.DeliverySucceeded, 20*time.Second)
	_, err := s.pool.Exec(ctx, `UPDATE webhook_events SET created_at = now() - interval '31 days'
		WHERE id IN (SELECT id FROM webhook_events ORDER BY seq LIMIT 2)`)
	require.NoError(t, err)
	n, err := hooks.Purge(ctx, s.pool, time.Now().Add(-hooks.Retention), 1000)
	require.NoError(t, err)
	require.EqualValues(t, 2, n)
	require.Equal(t, 1, s.count(`SELECT count(*) FROM webhook_events`))
	require.Equal(t, 1, s.count(`SELECT count(*) FROM webhook_deliveries`))
	require.Equal(t, 1, s.count(`SELECT count(*) FROM webhook_attempts`))
}

// TestDeliveriesPage: an endpoint's deliveries come newest first, a page at a time,
// filtered by status.
func TestDeliveriesPage(t *testing.T) {
	t.Parallel()
	s := newScene(t, hooks.Config{AllowPrivate: true, DevMode: true})
	ctx := context.Background()
	r := hookstest.NewReceiver(t)
	ep, _ := s.endpoint(r)
	for i := range 5 {
		s.record(hooks.CustomerOptedIn, i)
	}
	_, err := s.svc.Dispatch(ctx)
	require.NoError(t, err)
	var ids []uuid.UUID
	cursor := ""
	for {
		page, err := s.svc.Deliveries(ctx, s.shop.ID, ep.ID, hooks.DeliveryQuery{Limit: 2, Cursor: cursor})
		require.NoError(t, err)
		for _, d := range page.Deliveries {
			ids = append(ids, d.ID)
			require.Equal(t, hooks.DeliveryPending, d.Status)
		}
		if page.Next == "" {
			break
		}
		cursor = page.Next
	}
	require.Len(t, ids, 5)
	page, err := s.svc.Deliveries(ctx, s.shop.ID, ep.ID, hooks.DeliveryQuery{Status: hooks.DeliverySucceeded})
	require.NoError(t, err)
	require.Empty(t, page.Deliveries)
	_, err = s.svc.Deliveries(ctx, s.shop.ID, ep.ID, hooks.DeliveryQuery{Cursor: "garbage!"})
	p, ok := problem.As(err)
	require.True(t, ok)
	require.Equal(t, "cursor", p.Field)
}
