package hooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/api"
	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/keyring"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/testkit/customertest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/hookstest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
)

func TestMain(m *testing.M) {
	if killedChild() {
		return
	}
	pgtest.Main(m)
}

// clock is an injected clock tests move by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// testData is an event's data for these tests of recording and delivering: the api
// object typ's events carry, told apart by n (the API's rendering of each object has
// its own tests).
func testData(typ string, n int) any {
	switch {
	case hooks.IsOpeningType(typ):
		return api.Opening{ID: uuid.New(), Service: fmt.Sprintf("service %d", n), OffersSent: n}
	case hooks.IsMessageType(typ):
		return api.MessageReceived{ConversationID: uuid.New(), MessageID: uuid.New(), Body: fmt.Sprintf("text %d", n)}
	case typ == hooks.SMSSenderUpdated:
		return api.SMSSenderUpdated{ShopID: uuid.New(), Number: fmt.Sprintf("+1555555%04d", n)}
	}
	return api.Customer{ID: uuid.New(), Name: fmt.Sprintf("customer %d", n), Priority: n, Status: "opted_in"}
}

// fastSchedule is DefaultSchedule's shape at test speed.
var fastSchedule = []time.Duration{0, 20 * time.Millisecond, 40 * time.Millisecond, 80 * time.Millisecond,
	100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond}

// testSecrets seal the tests' secrets, alike in every service and process of a test
// (the server's SECRETS_KEY).
var testSecrets = func() *keyring.Ring {
	r, err := keyring.New([]byte("hooks-test-secrets-key-0123456789abcdef"))
	if err != nil {
		panic(err)
	}
	return r
}()

// scene is one database with a shop and a hooks service on it.
type scene struct {
	t         *testing.T
	pool      *pgxpool.Pool
	url       string
	svc       *hooks.Service
	shops     *shops.Service
	customers *customers.Service
	shop      shops.Shop
	queue     *river.Client[pgx.Tx]
}

func newScene(t *testing.T, cfg hooks.Config) *scene {
	t.Helper()
	pool, url := pgtest.New(t)
	// Insert-only: the dispatcher and "send again" enqueue with it; hookstest.Deliver
	// starts the client that works the jobs.
	queue, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	require.NoError(t, err)
	if cfg.Schedule == nil {
		cfg.Schedule = fastSchedule
	}
	if cfg.Secrets == nil {
		cfg.Secrets = testSecrets
	}
	if cfg.PollEvery == 0 {
		cfg.PollEvery = 20 * time.Millisecond
	}
	if cfg.BusyWait == 0 {
		cfg.BusyWait = 20 * time.Millisecond
	}
	s := &scene{t: t, pool: pool, url: url, queue: queue, shops: shops.New(pool, shops.Config{Now: cfg.Now}), customers: customertest.NewWith(t, pool, customers.Config{Now: cfg.Now})}
	s.svc = hooks.New(pool, queue, cfg)
	t.Cleanup(s.svc.Close) // after the workers stop (hookstest.Deliver's cleanup runs first)
	s.shop = s.newShop("+15555550100")
	return s
}

func (s *scene) newShop(number string) shops.Shop {
	s.t.Helper()
	shop, _, err := s.shops.Create(context.Background(), shops.NewShop{Name: "Ana's Salon", Timezone: "Europe/London",
		SMSNumber: number, Currency: "gbp", PaymentMode: shops.PaymentNone})
	require.NoError(s.t, err)
	return shop
}

// endpoint registers an endpoint of the scene's shop pointing at r, tells r its secret
// and returns both.
func (s *scene) endpoint(r *hookstest.Receiver, events ...string) (hooks.Endpoint, string) {
	s.t.Helper()
	ep, secret, err := s.svc.CreateEndpoint(context.Background(), s.shop.ID, hooks.NewEndpoint{URL: r.URL(), EnabledEvents: events})
	require.NoError(s.t, err)
	require.True(s.t, strings.HasPrefix(secret, "whsec_"), secret)
	r.SetSecrets(secret)
	return ep, secret
}

// record records an event for the scene's shop, as a package would in its own
// transaction, and returns its data as JSON decodes it.
func (s *scene) record(typ string, n int) map[string]any {
	s.t.Helper()
	data := testData(typ, n)
	err := pgx.BeginFunc(context.Background(), s.pool, func(tx pgx.Tx) error {
		return hooks.Record(context.Background(), tx, s.shop.ID, typ, time.Now(), data)
	})
	require.NoError(s.t, err)
	b, err := json.Marshal(data)
	require.NoError(s.t, err)
	var out map[string]any
	require.NoError(s.t, json.Unmarshal(b, &out))
	return out
}

func (s *scene) count(sql string, args ...any) int {
	s.t.Helper()
	var n int
	require.NoError(s.t, s.pool.QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}

// waitDeliveries waits until every delivery is in status (none pending any more).
func (s *scene) waitDeliveries(want int, status string, timeout time.Duration) {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		n := s.count(`SELECT count(*) FROM webhook_deliveries WHERE status = $1`, status)
		if n >= want {
			return
		}
		if time.Now().After(deadline) {
			rows, _ := s.pool.Query(context.Background(), `SELECT status || ' ' || attempts || ' ' || coalesce(last_error, '') FROM webhook_deliveries`)
			seen, _ := pgx.CollectRows(rows, pgx.RowTo[string])
			rows, _ = s.pool.Query(context.Background(), `SELECT state || ' ' || coalesce(errors::text, '') FROM river_job`)
			jobErrs, _ := pgx.CollectRows(rows, pgx.RowTo[string])
			s.t.Logf("jobs: %v", jobErrs)
			s.t.Fatalf("%d of %d deliveries %s after %s; deliveries: %v", n, want, status, timeout, seen)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitJobsDone waits until no delivery job is waiting or running (River records a
// job's completion shortly after its Work returns).
func (s *scene) waitJobsDone(timeout time.Duration) {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		n := s.count(`SELECT count(*) FROM river_job WHERE kind = 'webhook_delivery' AND state NOT IN ('completed', 'cancelled', 'discarded')`)
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%d delivery jobs still waiting or running after %s", n, timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRecordOnlyWhenSubscribed: an event is written only for a shop with an enabled
// endpoint subscribed to its type; otherwise recording writes nothing.
func TestRecordOnlyWhenSubscribed(t *testing.T) {
	t.Parallel()
	s := newScene(t, hooks.Config{AllowPrivate: true, DevMode: true})
	ctx := context.Background()
	events := func() int { return s.count(`SELECT count(*) FROM webhook_events`) }

	s.record(hooks.CustomerOptedOut, 1)
	require.Zero(t, events(), "no endpoint: nothing recorded")

	r := hookstest.NewReceiver(t)
	ep, _ := s.endpoint(r, hooks.CustomerOptedIn)
	s.record(hooks.CustomerOptedOut, 2)
	require.Zero(t, events(), "an endpoint subscribed to another type only")
	s.record(hooks.CustomerOptedIn, 3)
	require.Equal(t, 1, events())

	off := true
	_, err := s.svc.UpdateEndpoint(ctx, s.shop.ID, ep.ID, hooks.EndpointChange{Disabled: &off})
	require.NoError(t, err)
	s.record(hooks.CustomerOptedIn, 4)
	require.Equal(t, 1, events(), "a disabled endpoint gets nothing")

	// Another shop's endpoint subscribed to everything changes nothing for this shop.
	other := s.newShop("+15555550199")
	_, _, err = s.svc.CreateEndpoint(ctx, other.ID, hooks.NewEndpoint{URL: r.URL()})
	require.NoError(t, err)
	s.record(hooks.CustomerOptedIn, 5)
	require.Equal(t, 1, events())

	// A rolled-back change leaves no event: the event is part of its transaction.
	on := false
	_, err = s.svc.UpdateEndpoint(ctx, s.shop.ID, ep.ID, hooks.EndpointChange{Disabled: &on})
	require.NoError(t, err)
	tx, err := s.pool.Begin(ctx)
	require.NoError(t, err)
	require.NoError(t, hooks.Record(ctx, tx, s.shop.ID, hooks.CustomerOptedIn, time.Now(), testData(hooks.CustomerOptedIn, 6)))
	require.NoError(t, tx.Rollback(ctx))
	require.Equal(t, 1, events())

	require.Error(t, hooks.Record(ctx, s.pool, s.shop.ID, "customer.renamed", time.Now(), nil), "unknown types are a bug")
	require.Error(t, hooks.Record(ctx, s.pool, s.shop.ID, hooks.CustomerOptedIn, time.Now(), map[string]int{"n": 6}),
		"an event carries the api type of its object")
	require.Error(t, hooks.Record(ctx, s.pool, s.shop.ID, hooks.CustomerOptedIn, time.Now(), testData(hooks.OpeningFilled, 6)),
		"an event carries the api type of its own object")
	require.Error(t, hooks.Record(ctx, s.pool, s.shop.ID, hooks.CustomerOptedIn, time.Now(), api.Customer{}),
		"data that names no object is a bug")
}

// TestDeliveredAndVerified: an event reaches the endpoint once, signed so that the
// Standard Webhooks library verifies it, with the headers and body of the convention.
func TestDeliveredAndVerified(t *testing.T) {
	t.Parallel()
	s := newScene(t, hooks.Config{AllowPrivate: true, DevMode: true})
	r := hookstest.NewReceiver(t)
	s.endpoint(r) // every type
	hookstest.Deliver(t, s.pool, s.svc, hookstest.RiverConfig{})
	subject := s.record(hooks.CustomerOptedOut, 1)

	got := r.WaitFor(t, 1, 20*time.Second)
	require.Empty(t, r.Unverified())
	ev := got[0]
	require.Equal(t, hooks.CustomerOptedOut, ev.Type)
	require.True(t, strings.HasPrefix(ev.ID, "evt_"), ev.ID)
	require.Equal(t, ev.ID, ev.Header.Get("webhook-id"))
	require.NotEmpty(t, ev.Header.Get("webhook-timestamp"))
	require.True(t, strings.HasPrefix(ev.Header.Get("webhook-signature"), "v1,"))
	require.Equal(t, "application/json", ev.Header.Get("Content-Type"))
	require.WithinDuration(t, time.Now(), ev.CreatedAt, time.Minute)
	require.Equal(t, ev.CreatedAt, ev.Timestamp)
	var data map[string]any
	require.NoError(t, json.Unmarshal(ev.Data, &data))
	require.Equal(t, subject, data)
	var body map[string]any
	require.NoError(t, json.Unmarshal(ev.Body, &body))
	require.ElementsMatch(t, []string{"id", "type", "created_at", "timestamp", "data"}, keys(body))

	s.waitDeliveries(1, hooks.DeliverySucceeded, 10*time.Second)
	require.Equal(t, 1, s.count(`SELECT count(*) FROM webhook_attempts WHERE status_code = 204 AND error IS NULL`))
	require.Equal(t, 1, r.Requests())
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestReceiverDownGetsEverythingOnce: while the receiver answers 503 the attempts fail
// and are retried on the schedule; once it is back it gets every event, and none twice
// after its 2xx.
func TestReceiverDownGetsEverythingOnce(t *testing.T) {
	t.Parallel()
	// A long enough schedule that the receiver's outage spans several attempts.
	schedule := []time.Duration{0, 50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond,
		300 * time.Millisecond, 400 * time.Millisecond, 500 * time.Millisecond, 500 * time.Millisecond}
	const n = 6
	// Every delivery in flight at once: this is about the retry schedule; the caps on
	// attempts in flight have their own tests (fair_test.go), and with the default two
	// per endpoint the last deliveries' second attempts wait behind the first ones'
	// whole schedule.
	s := newScene(t, hooks.Config{AllowPrivate: true, DevMode: true, Schedule: schedule, PerEndpoint: n, PerShop: n})
	r := hookstest.NewReceiver(t)
	r.Answer(http.StatusServiceUnavailable)
	s.endpoint(r)
	hookstest.Deliver(t, s.pool, s.svc, hookstest.RiverConfig{})
	for i := range n {
		s.record(hooks.CustomerOptedOut, i)
	}
	// Down for a while: every event is tried more than once, and none gets through.
	deadline := time.Now().Add(20 * time.Second)
	for s.count(`SELECT count(*) FROM webhook_deliveries WHERE attempts >= 2`) < n {
		require.True(t, time.Now().Before(deadline), "the deliveries were not retried while the receiver was down")
		time.Sleep(10 * time.Millisecond)
	}
	require.Empty(t, r.Accepted())
	require.Zero(t, s.count(`SELECT count(*) FROM webhook_deliveries WHERE status <> 'pending'`), "still within the schedule")

	r.Answer(http.StatusNoContent)
	got := r.WaitFor(t, n, 20*time.Second)
	s.waitDeliveries(n, hooks.DeliverySucceeded, 10*time.Second)
	ids := hookstest.IDs(got)
	require.Len(t, slices.Compact(slices.Sorted(slices.Values(ids))), n, "every event once: %v", ids)
	// Nothing is left to run: no job waits for another attempt.
	s.waitJobsDone(10 * time.Second)
	require.Len(t, r.Accepted(), n, "none twice after its 2xx")
	require.Equal(t, n, s.count(`SELECT count(*) FROM webhook_attempts WHERE status_code = 204`))
	require.GreaterOrEqual(t, s.count(`SELECT count(*) FROM webhook_attempts WHERE status_code = 503`), 2*n)
	require.Empty(t, r.Unverified())
}

// TestScheduleRunsOut: a receiver that never answers 2xx gets the schedule's attempts,
// then the delivery fails and its job ends; each attempt is logged.
func TestScheduleRunsOut(t *testing.T) {
	t.Parallel()
	s := newScene(t, hooks.Config{AllowPrivate: true, DevMode: true})
	r := hookstest.NewReceiver(t)
	r.Answer(http.StatusInternalServerError)
	s.endpoint(r)
	hookstest.Deliver(t, s.pool, s.svc, hookstest.RiverConfig{})
	s.record(hooks.CustomerOptedIn, 1)
	s.waitDeliveries(1, hooks.DeliveryFailed, 20*time.Second)
	require.Equal(t, len(fastSchedule), s.count(`SELECT count(*) FROM webhook_attempts WHERE status_code = 500`))
	require.Equal(t, len(fastSchedule), r.Requests())
	require.Equal(t, len(fastSchedule), s.count(`SELECT attempts FROM webhook_deliveries`))
	var head string
	require.NoError(t, s.pool.QueryRow(context.Background(), `SELECT response_head FROM webhook_attempts LIMIT 1`).Scan(&head))
	require.Contains(t, head, "down", "the first bytes of the answer are kept")
}
