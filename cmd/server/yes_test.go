package main

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/offers"
	"github.com/slotrecovery/slotrecovery/internal/slots"
)

// openingAt declares an opening starting exactly at startsAt.
func (e *env) openingAt(base string, shop shopInfo, startsAt time.Time, service string) openingInfo {
	e.t.Helper()
	var o openingInfo
	status := e.api(base, http.MethodPost, "/api/openings", shop.APIKey, map[string]any{
		"starts_at": startsAt.UTC().Format(time.RFC3339), "duration_minutes": 30, "service": service, "price_cents": 4500,
	}, &o)
	require.Equal(e.t, http.StatusCreated, status)
	return o
}

// yesAll sends YES from every phone at once, round robin over the instances.
func (e *env) yesAll(shop shopInfo, phones []string) []smsAnswer {
	answers := make([]smsAnswer, len(phones))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, phone := range phones {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			answers[i] = e.text(e.servers[i%len(e.servers)], phone, shop.SMSNumber, "YES")
		}()
	}
	close(start)
	wg.Wait()
	return answers
}

func outcomeCounts(answers []smsAnswer) map[string]int {
	got := map[string]int{}
	for _, a := range answers {
		got[a.Outcome]++
	}
	return got
}

// TestFourChairsOverHTTP: four chairs free at 15:00 share one slot lock key. Four
// customers, each offered all four, reply YES at once through three instances: four
// bookings, one chair each; nobody is told "taken" while a chair is free.
func TestFourChairsOverHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for range 3 {
		e.start(nil, fastTune)
	}
	shop := e.newShop(e.servers[0], "checkout", nil)
	phones := e.bulkCustomers(shop, 4, 0)
	at := time.Now().Add(3 * time.Hour).UTC().Truncate(time.Hour)
	var ops []openingInfo
	for i := range 4 {
		ops = append(ops, e.openingAt(e.servers[i%3], shop, at, "Chair"))
	}
	e.eventually("16 offers texted", func() bool { return e.twilio.Count() >= 16 })

	answers := e.yesAll(shop, phones)
	require.Equal(t, map[string]int{"booked": 4}, outcomeCounts(answers), "answers: %+v", answers)
	for _, op := range ops {
		got := e.opening(e.servers[0], shop, op.ID)
		require.Equal(t, "filled", got.Status)
		require.NotNil(t, got.Booking)
	}
	require.Equal(t, 4, e.count(`SELECT count(DISTINCT customer_id) FROM bookings WHERE shop_id = $1 AND status = 'pending_payment'`, shop.ID))
	keys, err := e.redis.Keys(context.Background(), e.prefix+"slot_lock:*").Result()
	require.NoError(t, err)
	require.Empty(t, keys, "no lock left behind")
}

// TestADeadHoldersLockOverHTTP: an instance that took the slot lock and died leaves its
// key until the TTL. A YES meanwhile is still booked (after a bounded wait, by Postgres),
// the dead holder's token is neither deleted nor overwritten, and later YES are told
// "taken" at once from the decided opening.
func TestADeadHoldersLockOverHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// The wait is production's: the second YES must be answered well inside it without
	// waiting, which a busy 2-core machine did not always manage within 500 ms.
	const wait = 3 * time.Second
	tune := func(s *slots.Config, l *ledger.Config, o *offers.Config) { fastTune(s, l, o); s.LockWait = wait }
	for range 2 {
		e.start(nil, tune)
	}
	shop := e.newShop(e.servers[0], "none", nil)
	phones := e.bulkCustomers(shop, 3, 0)
	at := time.Now().Add(3 * time.Hour).UTC().Truncate(time.Second)
	op := e.openingAt(e.servers[0], shop, at, "Haircut")
	e.eventually("offers texted", func() bool { return e.twilio.Count() >= 3 })

	key := e.prefix + slots.LockKey(uuidOf(t, shop.ID), at)
	require.NoError(t, e.redis.Set(context.Background(), key, "token-of-a-dead-instance", 30*time.Second).Err())

	start := time.Now()
	a := e.text(e.servers[1], phones[0], shop.SMSNumber, "YES")
	require.Equal(t, "booked", a.Outcome, a.Body)
	require.GreaterOrEqual(t, time.Since(start), wait)
	require.Equal(t, "filled", e.opening(e.servers[0], shop, op.ID).Status)
	require.Equal(t, "token-of-a-dead-instance", e.redis.Get(context.Background(), key).Val(), "another holder's token is left alone")

	start = time.Now()
	a = e.text(e.servers[0], phones[1], shop.SMSNumber, "YES")
	require.Equal(t, "taken", a.Outcome, a.Body)
	require.Less(t, time.Since(start), wait, "a decided opening is answered without waiting for the lock")
	require.Equal(t, 1, e.count(`SELECT count(*) FROM bookings WHERE opening_id = $1`, op.ID))
}

// TestOptedOutYesDoesNotBook: a customer who texted STOP and then YES (without Twilio
// marking it START) is not booked and is told how to opt back in; the slot stays free
// for the others.
func TestOptedOutYesDoesNotBook(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.start(nil, fastTune)
	shop := e.newShop(e.servers[0], "none", nil)
	phones := e.bulkCustomers(shop, 2, 0)
	op := e.newOpening(e.servers[0], shop, 3*time.Hour)
	e.eventually("offers texted", func() bool { return e.twilio.Count() >= 2 })

	require.Equal(t, "opted_out", e.text(e.servers[0], phones[0], shop.SMSNumber, "STOP").Outcome)
	a := e.text(e.servers[0], phones[0], shop.SMSNumber, "YES")
	require.Equal(t, "no_offer", a.Outcome, a.Body)
	require.Contains(t, a.Body, "START")
	require.Zero(t, e.count(`SELECT count(*) FROM bookings WHERE opening_id = $1`, op.ID))
	require.Equal(t, "booked", e.text(e.servers[0], phones[1], shop.SMSNumber, "YES").Outcome)
}

func uuidOf(t *testing.T, s string) uuid.UUID {
	t.Helper()
	id, err := uuid.Parse(s)
	require.NoError(t, err)
	return id
}
