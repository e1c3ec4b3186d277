package slots_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/redislock"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/testkit/redistest"
)

// outcomes books for every customer at once and counts the outcomes, each claim settled
// (Claim.Settle) as the reply path settles it before answering.
func outcomes(t *testing.T, svc *slots.Service, shop shops.Shop, customers []uuid.UUID) map[slots.Outcome]int {
	t.Helper()
	var mu sync.Mutex
	got := map[slots.Outcome]int{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, id := range customers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			c, err := svc.Book(context.Background(), &shop, id)
			c.Settle() // as every caller does before it answers: the lock's release is done
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				got["error: "+slots.Outcome(err.Error())]++
				return
			}
			got[c.Outcome]++
		}()
	}
	close(start)
	wg.Wait()
	return got
}

func count(t *testing.T, f fixture, query string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, f.pool.QueryRow(context.Background(), query, args...).Scan(&n))
	return n
}

// TestWaitersLearnTheHoldersDecision: 50 claims on one slot through the real lock: one
// books; the others wait for its release notice and are told "taken" from it, long
// before their wait would have run out.
func TestWaitersLearnTheHoldersDecision(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	const wait = 20 * time.Second
	svc, f := setup(t, 50, redisLocker(t, rdb, prefix), prefix, func(c *slots.Config) { c.LockWait = wait })
	start := time.Now()
	got := outcomes(t, svc, f.shop, f.cust)
	took := time.Since(start)
	require.Equal(t, map[slots.Outcome]int{slots.Booked: 1, slots.Taken: 49}, got)
	require.Less(t, took, wait/2, "the waiters were woken by the release, not by their deadline")
	require.Equal(t, 1, count(t, f, `SELECT count(*) FROM bookings`))
	require.Zero(t, rdb.Exists(context.Background(), prefix+slots.LockKey(f.shop.ID, f.op.StartsAt)).Val(), "no lock left behind")
}

// TestAStormAsksRedisOnce: 50 claims of one instance on one slot take turns to ask
// Redis: the first obtains the lock and books, and the others learn its decision
// without a round trip of their own (each asked Redis before, 50 lock attempts for one
// decision).
func TestAStormAsksRedisOnce(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	svc, f := setup(t, 50, redisLocker(t, rdb, prefix), prefix, func(c *slots.Config) { c.LockWait = 20 * time.Second })
	key := prefix + slots.LockKey(f.shop.ID, f.op.StartsAt)
	h := &lockAttempts{key: key}
	rdb.AddHook(h)
	got := outcomes(t, svc, f.shop, f.cust)
	require.Equal(t, map[slots.Outcome]int{slots.Booked: 1, slots.Taken: 49}, got)
	require.EqualValues(t, 2, h.n.Load(), "scripts run on the lock key: one obtain and one release")
	require.Zero(t, slots.Contending(svc, key), "nothing is left of the turns")
	require.Equal(t, 1, count(t, f, `SELECT count(*) FROM bookings`))
}

// deafLocker is a Redis locker whose release notices never arrive (a notice can be
// dropped, or still be on its way back from Redis).
type deafLocker struct{ slots.Locker }

func (deafLocker) Watch(string) (<-chan string, func()) { return make(chan string), func() {} }
func (deafLocker) Recent(string) []string               { return nil }

// TestALateReplyLearnsWhatThisInstanceDecided: a reply that comes after the storm is
// over on this instance (the winner gone, its release notice not heard) is told
// "taken" from the decision this instance kept, without asking Redis for the lock.
func TestALateReplyLearnsWhatThisInstanceDecided(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	svc, f := setup(t, 3, deafLocker{redisLocker(t, rdb, prefix)}, prefix, func(c *slots.Config) { c.LockWait = 20 * time.Second })
	ctx := context.Background()
	key := prefix + slots.LockKey(f.shop.ID, f.op.StartsAt)
	h := &lockAttempts{key: key}
	rdb.AddHook(h)
	// The late replies were read (their offers live) before the winner booked.
	var late []slots.Claimable
	for _, id := range f.cust[1:] {
		c, err := svc.Claimable(ctx, &f.shop, id)
		require.NoError(t, err)
		require.Len(t, c.Live, 1)
		late = append(late, c)
	}
	first, err := svc.Book(ctx, &f.shop, f.cust[0])
	require.NoError(t, err)
	require.Equal(t, slots.Booked, first.Outcome)
	first.Settle()
	require.EqualValues(t, 2, h.n.Load(), "the winner obtains and releases the lock")
	for i, id := range f.cust[1:] {
		c, err := svc.BookClaimable(ctx, &f.shop, id, late[i])
		require.NoError(t, err)
		require.Equal(t, slots.Taken, c.Outcome)
	}
	require.EqualValues(t, 2, h.n.Load(), "late replies asked Redis for the lock (scripts on the key: %d)", h.n.Load())
	require.Zero(t, slots.Contending(svc, key))
}

// TestAFailedHolderLeavesTheSlotToItsWaiters: when the holder of the lock decides
// nothing (its own claim failed), the claims it kept waiting try again and one of them
// books: nobody is told "taken" for a slot that stayed free.
func TestAFailedHolderLeavesTheSlotToItsWaiters(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	svc, f := setup(t, 10, redisLocker(t, rdb, prefix), prefix, func(c *slots.Config) { c.LockWait = 20 * time.Second })
	ctx := context.Background()
	key := prefix + slots.LockKey(f.shop.ID, f.op.StartsAt)
	holder, err := redislock.New(rdb).Obtain(ctx, key, 30*time.Second)
	require.NoError(t, err)
	h := &lockAttempts{key: key}
	rdb.AddHook(h)

	done := make(chan map[slots.Outcome]int, 1)
	go func() { done <- outcomes(t, svc, f.shop, f.cust) }()
	// Every claim is waiting, and the one whose turn it is has found the lock held.
	require.Eventually(t, func() bool { return slots.Contending(svc, key) == len(f.cust) && h.n.Load() >= 1 }, 10*time.Second, 5*time.Millisecond,
		"claims waiting: %d of %d; attempts at the lock: %d", slots.Contending(svc, key), len(f.cust), h.n.Load())
	require.Zero(t, count(t, f, `SELECT count(*) FROM bookings`), "nobody books while the lock is held")
	// The holder's claim failed: it releases and decided nothing.
	require.NoError(t, holder.ReleaseAndNotify(ctx, prefix+slots.LockChannel, ""))
	select {
	case got := <-done:
		require.Equal(t, map[slots.Outcome]int{slots.Booked: 1, slots.Taken: 9}, got)
	case <-time.After(10 * time.Second):
		t.Fatal("the waiters did not finish within 10s of the release")
	}
	require.Equal(t, 1, count(t, f, `SELECT count(*) FROM bookings`))
}

// TestADeadHoldersLockNeverTurnsAYesAway: a lock left by a holder that died (it is never
// released) only delays the claim by the wait; Postgres then books it. The claim tried
// the lock once and did not poll.
func TestADeadHoldersLockNeverTurnsAYesAway(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	// Long enough that "answered without waiting" below cannot be a busy machine's
	// ordinary slowness (it was 300 ms).
	const wait = 3 * time.Second
	svc, f := setup(t, 3, redisLocker(t, rdb, prefix), prefix, func(c *slots.Config) { c.LockWait = wait })
	ctx := context.Background()
	key := prefix + slots.LockKey(f.shop.ID, f.op.StartsAt)
	_, err := redislock.New(rdb).Obtain(ctx, key, time.Minute)
	require.NoError(t, err)
	h := &lockAttempts{key: key}
	rdb.AddHook(h)

	start := time.Now()
	c, err := svc.Book(ctx, &f.shop, f.cust[0])
	require.NoError(t, err)
	require.Equal(t, slots.Booked, c.Outcome)
	require.GreaterOrEqual(t, time.Since(start), wait, "it waited for the holder's decision first")
	require.EqualValues(t, 1, h.n.Load(), "one attempt at the lock: waiting is not polling")

	// Later claims find the opening decided in Postgres and are told at once.
	start = time.Now()
	c, err = svc.Book(ctx, &f.shop, f.cust[1])
	require.NoError(t, err)
	require.Equal(t, slots.Taken, c.Outcome)
	require.Less(t, time.Since(start), wait, "a decided opening is answered without waiting")
	require.Equal(t, 1, count(t, f, `SELECT count(*) FROM bookings`))
}

// TestFourChairsFourBookings: four openings of one shop at the same start share one
// lock key. Four customers who each hold offers for all four reply at once: all four
// are booked, one chair each.
func TestFourChairsFourBookings(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	svc, f := setup(t, 4, redisLocker(t, rdb, prefix), prefix, func(c *slots.Config) { c.LockWait = 10 * time.Second })
	ctx := context.Background()
	for i := range 3 {
		op, err := svc.Declare(ctx, f.shop, slots.NewOpening{StartsAt: f.op.StartsAt, DurationMinutes: 30, Service: fmt.Sprint("Chair ", i+2), PriceCents: 1000})
		require.NoError(t, err)
		for _, c := range f.cust {
			_, err = f.pool.Exec(ctx, `INSERT INTO slot_offers (opening_id, customer_id, shop_id, generation, wave, status, created_at, sent_at)
				VALUES ($1, $2, $3, 1, 1, 'sent', now(), now())`, op.ID, c, f.shop.ID)
			require.NoError(t, err)
		}
	}
	got := outcomes(t, svc, f.shop, f.cust)
	require.Equal(t, map[slots.Outcome]int{slots.Booked: 4}, got)
	require.Equal(t, 4, count(t, f, `SELECT count(DISTINCT opening_id) FROM bookings WHERE status = 'confirmed'`))
	require.Equal(t, 4, count(t, f, `SELECT count(DISTINCT customer_id) FROM bookings WHERE status = 'confirmed'`))
	require.Equal(t, 4, count(t, f, `SELECT count(*) FROM slot_openings WHERE status = 'filled'`))
}

// TestOptedOutCustomerCannotBook: the booking transaction refuses a customer who said
// STOP, even with a live offer.
func TestOptedOutCustomerCannotBook(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	svc, f := setup(t, 2, redisLocker(t, rdb, prefix), prefix)
	ctx := context.Background()
	require.NoError(t, f.customers.OptOut(ctx, f.cust[0]))
	c, err := svc.Book(ctx, &f.shop, f.cust[0])
	require.NoError(t, err)
	require.Equal(t, slots.NoOffer, c.Outcome)
	require.Zero(t, count(t, f, `SELECT count(*) FROM bookings`))
	c, err = svc.Book(ctx, &f.shop, f.cust[1])
	require.NoError(t, err)
	require.Equal(t, slots.Booked, c.Outcome, "the slot is still free for others")
}

// TestASecondYesDoesNotTakeAnotherChair: a winner whose first answer was slow says YES
// again while still holding an offer for another chair at the same time. The second YES
// repeats the first booking; the other chair stays open for someone else.
func TestASecondYesDoesNotTakeAnotherChair(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	svc, f := setup(t, 2, redisLocker(t, rdb, prefix), prefix, func(c *slots.Config) { c.LockWait = time.Second })
	ctx := context.Background()
	chair2, err := svc.Declare(ctx, f.shop, slots.NewOpening{StartsAt: f.op.StartsAt, DurationMinutes: 30, Service: "Chair 2", PriceCents: 1000})
	require.NoError(t, err)
	for _, c := range f.cust {
		_, err = f.pool.Exec(ctx, `INSERT INTO slot_offers (opening_id, customer_id, shop_id, generation, wave, status, created_at, sent_at)
			VALUES ($1, $2, $3, 1, 1, 'sent', now(), now())`, chair2.ID, c, f.shop.ID)
		require.NoError(t, err)
	}

	first, err := svc.Book(ctx, &f.shop, f.cust[0])
	require.NoError(t, err)
	require.Equal(t, slots.Booked, first.Outcome)
	again, err := svc.Book(ctx, &f.shop, f.cust[0])
	require.NoError(t, err)
	require.Equal(t, slots.Booked, again.Outcome, "the second YES is answered as the booking it repeats")
	require.True(t, again.Repeat, "nothing new is booked")
	require.Equal(t, first.BookingID, again.BookingID)
	require.Equal(t, 1, count(t, f, `SELECT count(*) FROM bookings WHERE customer_id = $1 AND status IN ('pending_payment','confirmed')`, f.cust[0]),
		"one customer, one chair at 15:00")

	// The other chair is still free, and the other customer gets it.
	other, err := svc.Book(ctx, &f.shop, f.cust[1])
	require.NoError(t, err)
	require.Equal(t, slots.Booked, other.Outcome)
	require.NotEqual(t, first.OpeningID, other.OpeningID)
}
