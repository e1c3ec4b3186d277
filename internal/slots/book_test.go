package slots_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/redislock"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/testkit/customertest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/redistest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// noLock grants every caller: it stands for a Redis lock that failed open (expired under
// a slow holder, lost in a failover). Postgres alone must still allow one booking.
type noLock struct{}

func (noLock) TryLock(context.Context, string, time.Duration) (func(string), error) {
	return func(string) {}, nil
}

func (noLock) Watch(string) (<-chan string, func()) { return nil, func() {} }

func (noLock) Recent(string) []string { return nil }

// redisLocker is the real lock on the test's Redis, with its own release channel.
func redisLocker(t testing.TB, rdb redis.UniversalClient, prefix string) slots.Locker {
	w := redislock.NewWatcher(rdb, prefix+slots.LockChannel)
	t.Cleanup(func() { _ = w.Close() })
	select {
	case <-w.Ready():
	case <-time.After(5 * time.Second):
		t.Fatal("redis did not confirm the release channel's subscription within 5s")
	}
	return slots.RedisLocker(redislock.New(rdb), w, prefix+slots.LockChannel, nil)
}

type noCooldown struct{}

func (noCooldown) Start(context.Context, string, time.Duration) error { return nil }

type fixture struct {
	pool      *pgxpool.Pool
	shops     *shops.Service
	customers *customers.Service
	shop      shops.Shop
	op        slots.Opening
	cust      []uuid.UUID
}

// setup makes a payment-free shop with n customers who each hold a sent offer for one
// opening.
func setup(t testing.TB, n int, locker slots.Locker, keyPrefix string, tune ...func(*slots.Config)) (*slots.Service, fixture) {
	t.Helper()
	pool, _ := pgtest.New(t)
	queue, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	require.NoError(t, err)
	shopsSvc := shops.New(pool, shops.Config{})
	cfg := slots.Config{KeyPrefix: keyPrefix}
	for _, f := range tune {
		f(&cfg)
	}
	svc := slots.New(pool, queue, locker, noCooldown{}, cfg)
	ctx := context.Background()
	shop, _, err := shopsSvc.Create(ctx, shops.NewShop{Name: "Fence", Timezone: "UTC", SMSNumber: "+15550001000",
		Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	op, err := svc.Declare(ctx, shop, slots.NewOpening{StartsAt: time.Now().Add(5 * time.Hour), DurationMinutes: 30, Service: "Cut", PriceCents: 1000})
	require.NoError(t, err)
	f := fixture{pool: pool, shops: shopsSvc, customers: customertest.New(t, pool), shop: shop, op: op}
	for i := range n {
		c, err := f.customers.Add(ctx, shop.ID, customers.NewCustomer{Phone: fmt.Sprintf("+1555100%04d", i), SMSOptIn: true})
		require.NoError(t, err)
		_, err = pool.Exec(ctx, `INSERT INTO slot_offers (opening_id, customer_id, shop_id, generation, wave, status, created_at, sent_at)
			VALUES ($1, $2, $3, 1, 1, 'sent', now(), now())`, op.ID, c.ID, shop.ID)
		require.NoError(t, err)
		f.cust = append(f.cust, c.ID)
	}
	return svc, f
}

// TestPostgresIsTheLastFence: with a lock that lets everyone in, 64 concurrent claims
// still produce exactly one booking, the others are told the slot is taken, and their
// offers are lost.
func TestPostgresIsTheLastFence(t *testing.T) {
	t.Parallel()
	svc, f := setup(t, 64, noLock{}, "")
	var booked, taken atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, id := range f.cust {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			c, err := svc.Book(context.Background(), &f.shop, id)
			if err != nil {
				t.Errorf("book: %v", err)
				return
			}
			switch c.Outcome {
			case slots.Booked:
				booked.Add(1)
			case slots.Taken:
				taken.Add(1)
			default:
				t.Errorf("unexpected outcome %s", c.Outcome)
			}
		}()
	}
	close(start)
	wg.Wait()
	require.EqualValues(t, 1, booked.Load())
	require.EqualValues(t, 63, taken.Load())
	var n int
	require.NoError(t, f.pool.QueryRow(context.Background(), `SELECT count(*) FROM bookings`).Scan(&n))
	require.Equal(t, 1, n)
	require.NoError(t, f.pool.QueryRow(context.Background(), `SELECT count(*) FROM slot_offers WHERE status = 'accepted'`).Scan(&n))
	require.Equal(t, 1, n)
	require.NoError(t, f.pool.QueryRow(context.Background(), `SELECT count(*) FROM slot_offers WHERE status = 'lost'`).Scan(&n))
	require.Equal(t, 63, n, "every other offer is lost")
	got, err := svc.Get(context.Background(), f.shop.ID, f.op.ID)
	require.NoError(t, err)
	require.Equal(t, slots.StatusFilled, got.Status)
	require.Equal(t, ledger.BookingConfirmed, got.Booking.Status)
	var winner, booker uuid.UUID
	require.NoError(t, f.pool.QueryRow(context.Background(), `SELECT customer_id FROM slot_offers WHERE status = 'accepted'`).Scan(&winner))
	require.NoError(t, f.pool.QueryRow(context.Background(), `SELECT customer_id FROM bookings`).Scan(&booker))
	require.Equal(t, winner, booker, "the booking is the accepted offer's customer's")
}

// TestUniqueIndexRefusesASecondLiveBooking checks the fence itself, below the service.
func TestUniqueIndexRefusesASecondLiveBooking(t *testing.T) {
	t.Parallel()
	_, f := setup(t, 2, noLock{}, "")
	ctx := context.Background()
	ins := `INSERT INTO bookings (opening_id, customer_id, shop_id, status, amount_cents, currency, created_at, updated_at)
		VALUES ($1, $2, $3, $4, 1000, 'usd', now(), now())`
	_, err := f.pool.Exec(ctx, ins, f.op.ID, f.cust[0], f.shop.ID, "pending_payment")
	require.NoError(t, err)
	_, err = f.pool.Exec(ctx, ins, f.op.ID, f.cust[1], f.shop.ID, "confirmed")
	require.ErrorContains(t, err, "bookings_one_live_per_opening")
	_, err = f.pool.Exec(ctx, ins, f.op.ID, f.cust[1], f.shop.ID, "payment_failed")
	require.NoError(t, err, "failed bookings do not count")
}

// lockAttempts counts the attempts to obtain a lock on key: each attempt of redislock
// sends exactly one EVALSHA on it (followed by an EVAL if Redis lacks the script).
type lockAttempts struct {
	key string
	n   atomic.Int32
}

func (h *lockAttempts) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *lockAttempts) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if slices.Contains(cmd.Args(), any(h.key)) && cmd.Name() == "evalsha" {
			h.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (h *lockAttempts) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestLockKey pins the lock key format, slot_lock:<shop_id>:<starts_at>, which other
// instances (and operators reading Redis) rely on.
func TestLockKey(t *testing.T) {
	t.Parallel()
	id := uuid.MustParse("6b0f2a52-8f55-4a39-9d4c-0a4f6c1b2a10")
	at := time.Date(2026, 11, 22, 10, 0, 0, 500, time.FixedZone("EST", -5*3600))
	require.Equal(t, "slot_lock:6b0f2a52-8f55-4a39-9d4c-0a4f6c1b2a10:2026-11-22T15:00:00Z", slots.LockKey(id, at))
}

// BenchmarkBook measures one YES → booking on the domain path: the Redis lock, the
// booking transaction and the release (no Stripe: payment mode none). Each iteration
// books a fresh opening.
func BenchmarkBook(b *testing.B) {
	rdb, prefix := redistest.New(b)
	svc, f := setup(b, 1, redisLocker(b, rdb, prefix), prefix)
	ctx := context.Background()
	openings := make([]uuid.UUID, b.N)
	for i := range b.N {
		op, err := svc.Declare(ctx, f.shop, slots.NewOpening{StartsAt: time.Now().Add(5*time.Hour + time.Duration(i)*time.Minute), DurationMinutes: 30, Service: "Cut", PriceCents: 1000})
		require.NoError(b, err)
		_, err = f.pool.Exec(ctx, `INSERT INTO slot_offers (opening_id, customer_id, shop_id, generation, wave, status, created_at, sent_at)
			VALUES ($1, $2, $3, 1, 1, 'sent', now() + make_interval(secs => $4), now())`, op.ID, f.cust[0], f.shop.ID, i)
		require.NoError(b, err)
		openings[i] = op.ID
	}
	b.ResetTimer()
	for i := range b.N {
		// Newest offer first: each YES claims the next opening.
		c, err := svc.Book(ctx, &f.shop, f.cust[0])
		if err != nil {
			b.Fatalf("book %d: %v", i, err)
		}
		if c.Outcome != slots.Booked {
			b.Fatalf("book %d: %v", i, c.Outcome)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "bookings/s")
}

// TestPricesThePaymentProviderRefusesAreRefused: a shop that takes payments cannot
// declare an opening below the provider's minimum for its currency (its taker would hear
// "yours!" and then "hold lapsed"); a shop without payments can. A deposit shop is held
// to the deposit the price gives, a card shop (nothing charged at the YES) to nothing.
func TestPricesThePaymentProviderRefusesAreRefused(t *testing.T) {
	t.Parallel()
	minimum := func(currency string) int64 { return map[string]int64{"gbp": 30, "jpy": 50}[currency] }
	svc, f := setup(t, 0, noLock{}, "", func(c *slots.Config) { c.MinimumCharge = minimum })
	ctx := context.Background()
	at := time.Now().Add(5 * time.Hour)
	for i, tc := range []struct {
		currency string
		mode     string
		price    int64
		ok       bool
	}{
		{"gbp", shops.PaymentCheckout, 29, false},
		{"gbp", shops.PaymentCheckout, 30, true},
		{"jpy", shops.PaymentCheckout, 49, false},
		{"gbp", shops.PaymentNone, 1, true},
		{"chf", shops.PaymentCheckout, 1, true},   // no minimum known: the provider decides
		{"gbp", shops.PaymentDeposit, 145, false}, // 20 %: a deposit of 29
		{"gbp", shops.PaymentDeposit, 150, true},  // a deposit of 30
		{"gbp", shops.PaymentCard, 1, true},
	} {
		shopsSvc := shops.New(f.pool, shops.Config{PaymentsEnabled: true})
		shop, _, err := shopsSvc.Create(ctx, shops.NewShop{Name: "Min", Timezone: "UTC", SMSNumber: fmt.Sprintf("+1555200%04d", i),
			Currency: tc.currency, PaymentMode: shops.PaymentCheckout})
		require.NoError(t, err)
		if tc.mode != shops.PaymentCheckout {
			// Straight in SQL: the modes' own checks (Connect for a card) are shops'.
			_, err = f.pool.Exec(ctx, `UPDATE shops SET payment_mode = $2,
				deposit_percent = CASE WHEN $2 = 'deposit' THEN 20 END WHERE id = $1`, shop.ID, tc.mode)
			require.NoError(t, err)
			shop, err = shopsSvc.Get(ctx, shop.ID)
			require.NoError(t, err)
		}
		_, err = svc.Declare(ctx, shop, slots.NewOpening{StartsAt: at, DurationMinutes: 30, Service: "Cut", PriceCents: tc.price})
		if tc.ok {
			require.NoError(t, err, "%+v", tc)
			continue
		}
		var p *problem.Error
		require.ErrorAs(t, err, &p, "%+v", tc)
		require.Equal(t, problem.Invalid, p.Kind)
		require.Equal(t, "price_cents", p.Field)
		require.Contains(t, p.Message, strings.ToUpper(tc.currency))
		if tc.mode == shops.PaymentDeposit {
			require.Contains(t, p.Message, "a deposit of 29 GBP", "the answer names the deposit, not the price")
		}
	}
}

// TestDeclareWarnsOfAWaveTooSlowForItsDeadline: a first wave the shop's number cannot
// send before the offers close (its size at the send rate) is declared with a warning
// saying so; a number fast enough, or more time, gives none.
func TestDeclareWarnsOfAWaveTooSlowForItsDeadline(t *testing.T) {
	t.Parallel()
	svc, f := setup(t, 0, noLock{}, "")
	ctx := context.Background()
	longCode := shops.ShopChange{Policy: shops.PolicyFields{WaveSize: ptr(1000)}}
	shop, err := f.shops.Update(ctx, f.shop.ID, longCode)
	require.NoError(t, err)
	require.Equal(t, 1, shop.Policy.SendRate)
	soon := slots.NewOpening{StartsAt: time.Now().Add(shop.Policy.MinLead + 10*time.Minute), DurationMinutes: 30, Service: "Cut", PriceCents: 1000}

	op, err := svc.Declare(ctx, shop, soon)
	require.NoError(t, err, "declared anyway")
	require.Len(t, op.Warnings, 1)
	require.Contains(t, op.Warnings[0], "a wave of 1000 texts takes 16m40s at 1 text(s) a second")

	later := soon
	later.StartsAt = time.Now().Add(5 * time.Hour)
	op, err = svc.Declare(ctx, shop, later)
	require.NoError(t, err)
	require.Empty(t, op.Warnings, "time enough")

	shortCode, err := f.shops.Update(ctx, f.shop.ID, shops.ShopChange{Policy: shops.PolicyFields{SendRate: ptr(100)}})
	require.NoError(t, err)
	soon.StartsAt = soon.StartsAt.Add(time.Minute)
	op, err = svc.Declare(ctx, shortCode, soon)
	require.NoError(t, err)
	require.Empty(t, op.Warnings, "a short code sends the wave in 10 s")
}

func ptr[T any](v T) *T { return &v }
