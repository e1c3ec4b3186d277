package idempotency_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/idempotency"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func setup(t *testing.T) (*idempotency.Store, *clock, uuid.UUID, uuid.UUID) {
	store, clk, a, b, _ := setupPool(t)
	return store, clk, a, b
}

func setupPool(t *testing.T) (*idempotency.Store, *clock, uuid.UUID, uuid.UUID, *pgxpool.Pool) {
	t.Helper()
	pool, _ := pgtest.New(t)
	clk := &clock{t: time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)}
	svc := shops.New(pool, shops.Config{})
	a, _, err := svc.Create(context.Background(), shops.NewShop{Name: "A", Timezone: "UTC", SMSNumber: "+15555550100", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	b, _, err := svc.Create(context.Background(), shops.NewShop{Name: "B", Timezone: "UTC", SMSNumber: "+15555550101", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	return idempotency.New(pool, idempotency.Config{Now: clk.Now}), clk, a.ID, b.ID, pool
}

// TestKeyLifecycle: the first request takes the key; a retry while it runs is refused;
// once it answered, the retry gets the answer again; another request with the key is
// refused; another shop's key of the same name is its own; after 24 hours the key is new.
func TestKeyLifecycle(t *testing.T) {
	t.Parallel()
	store, clk, shop, other := setup(t)
	ctx := context.Background()
	fp := idempotency.Fingerprint("POST", "/api/openings", []byte(`{"service":"Cut"}`))
	claim, replay, err := store.Begin(ctx, shop, "k1", fp)
	require.NoError(t, err)
	require.NotNil(t, claim)
	require.Nil(t, replay)

	_, _, err = store.Begin(ctx, shop, "k1", fp)
	require.ErrorIs(t, err, idempotency.ErrInProgress)
	_, _, err = store.Begin(ctx, shop, "k1", idempotency.Fingerprint("POST", "/api/openings", []byte(`{"service":"Colour"}`)))
	require.ErrorIs(t, err, idempotency.ErrKeyReused, "another body, even while the first runs")

	answer := idempotency.Answer{Status: 201, ContentType: "application/json", Location: "/api/openings/x", Body: []byte(`{"id":"x"}`)}
	require.NoError(t, store.Finish(ctx, claim, answer))
	_, replay, err = store.Begin(ctx, shop, "k1", fp)
	require.NoError(t, err)
	require.Equal(t, &answer, replay)
	_, _, err = store.Begin(ctx, shop, "k1", idempotency.Fingerprint("POST", "/api/customers", []byte(`{"service":"Cut"}`)))
	require.ErrorIs(t, err, idempotency.ErrKeyReused, "another path")

	claim2, _, err := store.Begin(ctx, other, "k1", fp)
	require.NoError(t, err)
	require.NotNil(t, claim2, "keys are per shop")

	clk.Add(idempotency.TTL + time.Second)
	claim3, replay, err := store.Begin(ctx, shop, "k1", idempotency.Fingerprint("POST", "/api/openings", []byte(`{"service":"Colour"}`)))
	require.NoError(t, err)
	require.Nil(t, replay)
	require.NotNil(t, claim3, "after 24 hours the key is free for anything")

	_, _, err = store.Begin(ctx, shop, "", fp)
	require.Error(t, err)
	_, _, err = store.Begin(ctx, shop, string(make([]byte, 256)), fp)
	require.Error(t, err)
}

// TestServerErrorIsNotKept: a 5xx gives the key back; the retry runs again.
func TestServerErrorIsNotKept(t *testing.T) {
	t.Parallel()
	store, _, shop, _ := setup(t)
	ctx := context.Background()
	fp := idempotency.Fingerprint("POST", "/api/customers", []byte(`{}`))
	claim, _, err := store.Begin(ctx, shop, "k", fp)
	require.NoError(t, err)
	require.NoError(t, store.Finish(ctx, claim, idempotency.Answer{Status: 503, Body: []byte(`{"error":{}}`)}))
	again, replay, err := store.Begin(ctx, shop, "k", fp)
	require.NoError(t, err)
	require.Nil(t, replay)
	require.NotNil(t, again, "the retry runs afresh")
	require.NoError(t, store.Finish(ctx, again, idempotency.Answer{Status: 422, Body: []byte(`{"error":{"code":"invalid_phone"}}`)}))
	_, replay, err = store.Begin(ctx, shop, "k", fp)
	require.NoError(t, err)
	require.Equal(t, 422, replay.Status, "a 4xx is the request's answer and is kept")
}

// TestDeadHolderIsTakenOver: a request whose process died holding the key is taken over
// once Stale has passed; the dead one's late answer (if it ever comes) is not kept.
func TestDeadHolderIsTakenOver(t *testing.T) {
	t.Parallel()
	store, clk, shop, _ := setup(t)
	ctx := context.Background()
	fp := idempotency.Fingerprint("POST", "/api/openings", []byte(`{}`))
	dead, _, err := store.Begin(ctx, shop, "k", fp)
	require.NoError(t, err)
	clk.Add(30 * time.Second)
	_, _, err = store.Begin(ctx, shop, "k", fp)
	require.ErrorIs(t, err, idempotency.ErrInProgress, "not stale yet")
	clk.Add(31 * time.Second)
	heir, _, err := store.Begin(ctx, shop, "k", fp)
	require.NoError(t, err)
	require.NotNil(t, heir)
	require.NoError(t, store.Finish(ctx, dead, idempotency.Answer{Status: 201, Body: []byte("dead")}))
	require.NoError(t, store.Finish(ctx, heir, idempotency.Answer{Status: 201, Body: []byte("heir")}))
	_, replay, err := store.Begin(ctx, shop, "k", fp)
	require.NoError(t, err)
	require.Equal(t, "heir", string(replay.Body))
}

// TestOneWinner: of many concurrent requests with one key, exactly one runs.
func TestOneWinner(t *testing.T) {
	t.Parallel()
	store, _, shop, _ := setup(t)
	fp := idempotency.Fingerprint("POST", "/api/openings", []byte(`{}`))
	var wg sync.WaitGroup
	var mu sync.Mutex
	winners, busy := 0, 0
	for range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			claim, _, err := store.Begin(context.Background(), shop, "same", fp)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && claim != nil:
				winners++
			case err == idempotency.ErrInProgress:
				busy++
			default:
				t.Errorf("unexpected: %v", err)
			}
		}()
	}
	wg.Wait()
	require.Equal(t, 1, winners)
	require.Equal(t, 39, busy)
}

// TestPurge deletes the keys taken before the cut, and only those.
func TestPurge(t *testing.T) {
	t.Parallel()
	store, clk, shop, _, pool := setupPool(t)
	ctx := context.Background()
	for _, k := range []string{"a", "b"} {
		c, _, err := store.Begin(ctx, shop, k, []byte(k))
		require.NoError(t, err)
		require.NoError(t, store.Finish(ctx, c, idempotency.Answer{Status: 201}))
	}
	clk.Add(25 * time.Hour)
	_, _, err := store.Begin(ctx, shop, "c", []byte("c"))
	require.NoError(t, err)
	n, err := idempotency.Purge(ctx, pool, clk.Now().Add(-idempotency.TTL), 1000)
	require.NoError(t, err)
	require.EqualValues(t, 2, n)
	var left []string
	rows, err := pool.Query(ctx, `SELECT key FROM idempotency_keys`)
	require.NoError(t, err)
	left, err = pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Equal(t, []string{"c"}, left)
}
