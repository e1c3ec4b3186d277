package slots_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/catalog"
	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/slots"
)

// TestPostgresRefusesOverlappingTimeOfOnePerson: eight openings of one person, an hour
// each, ten minutes apart (each overlaps its neighbours, and they have their own lock
// keys), each offered to four customers who all reply at once with a lock that lets
// everyone in. Postgres alone decides: the person's live bookings never overlap, at most
// two fit, and every other claim is told the slot is taken.
func TestPostgresRefusesOverlappingTimeOfOnePerson(t *testing.T) {
	t.Parallel()
	svc, f := setup(t, 0, noLock{}, "")
	ctx := context.Background()
	ana, err := catalog.New(f.pool, nil).AddStaff(ctx, f.shop.ID, "Ana")
	require.NoError(t, err)
	start := time.Now().Add(6 * time.Hour).UTC().Truncate(time.Hour)
	var who []uuid.UUID
	for i := range 8 {
		op, err := svc.Declare(ctx, f.shop, slots.NewOpening{StartsAt: start.Add(time.Duration(i) * 10 * time.Minute),
			DurationMinutes: 60, Service: "Cut", PriceCents: 1000, StaffID: ana.ID})
		require.NoError(t, err)
		require.Equal(t, "Ana", op.StaffName)
		for j := range 4 {
			c, err := f.customers.Add(ctx, f.shop.ID, customers.NewCustomer{Phone: fmt.Sprintf("+1555200%02d%02d", i, j), SMSOptIn: true})
			require.NoError(t, err)
			_, err = f.pool.Exec(ctx, `INSERT INTO slot_offers (opening_id, customer_id, shop_id, generation, wave, status, created_at, sent_at)
				VALUES ($1, $2, $3, 1, 1, 'sent', now(), now())`, op.ID, c.ID, f.shop.ID)
			require.NoError(t, err)
			who = append(who, c.ID)
		}
	}
	outcomes := make([]slots.Outcome, len(who))
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i, id := range who {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			c, err := svc.Book(ctx, &f.shop, id)
			if err != nil {
				t.Errorf("book: %v", err)
				return
			}
			outcomes[i] = c.Outcome
		}()
	}
	close(gate)
	wg.Wait()
	counts := map[slots.Outcome]int{}
	for _, o := range outcomes {
		counts[o]++
	}
	var overlaps, live int
	require.NoError(t, f.pool.QueryRow(ctx, `SELECT count(*) FROM bookings a JOIN bookings b ON a.id < b.id
		WHERE a.staff_id = $1 AND b.staff_id = $1 AND a.status IN ('pending_payment', 'confirmed')
		  AND b.status IN ('pending_payment', 'confirmed') AND tstzrange(a.starts_at, a.ends_at) && tstzrange(b.starts_at, b.ends_at)`,
		ana.ID).Scan(&overlaps))
	require.NoError(t, f.pool.QueryRow(ctx, `SELECT count(*) FROM bookings WHERE staff_id = $1 AND status IN ('pending_payment', 'confirmed')`,
		ana.ID).Scan(&live))
	require.Zero(t, overlaps, "outcomes %v", counts)
	require.Equal(t, live, counts[slots.Booked], "outcomes %v", counts)
	require.GreaterOrEqual(t, live, 1)
	require.LessOrEqual(t, live, 2, "an hour each, ten minutes apart: at most two fit")
	require.Equal(t, len(who), counts[slots.Booked]+counts[slots.Taken], "outcomes %v", counts)

	// And straight in SQL: an overlapping live booking of the person, on another of their
	// openings, is refused.
	_, err = f.pool.Exec(ctx, `INSERT INTO bookings (opening_id, customer_id, shop_id, status, amount_cents, currency,
		created_at, updated_at, staff_id, starts_at, ends_at)
		SELECT o.id, b.customer_id, b.shop_id, 'confirmed', 1, 'usd', now(), now(), b.staff_id,
			b.starts_at + interval '5 minutes', b.ends_at + interval '5 minutes'
		FROM bookings b, slot_openings o
		WHERE b.staff_id = $1 AND o.staff_id = $1 AND o.status = 'open' LIMIT 1`, ana.ID)
	require.ErrorContains(t, err, "bookings_staff_no_overlap")
}
