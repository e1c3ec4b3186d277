package book_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/book"
	"github.com/slotrecovery/slotrecovery/internal/connectors"
	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/testkit/customertest"
)

// subscribe gives f's shop an endpoint subscribed to every event: without one, nothing
// is recorded.
func subscribe(t *testing.T, f fixture) {
	t.Helper()
	queue, err := river.NewClient(riverpgxv5.New(f.pool), &river.Config{})
	require.NoError(t, err)
	svc := hooks.New(f.pool, queue, hooks.Config{})
	t.Cleanup(svc.Close)
	_, _, err = svc.CreateEndpoint(context.Background(), f.shop.ID, hooks.NewEndpoint{URL: "https://hooks.example.com/in"})
	require.NoError(t, err)
}

type recorded struct {
	typ  string
	data hooks.AppointmentEvent
	raw  string
}

// events are the appointment events recorded for f's shop, oldest first.
func (f fixture) events(t *testing.T) []recorded {
	t.Helper()
	rows, err := f.pool.Query(context.Background(), `SELECT type, subject FROM webhook_events
		WHERE shop_id = $1 AND type LIKE 'appointment.%' ORDER BY seq`, f.shop.ID)
	require.NoError(t, err)
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (recorded, error) {
		var e recorded
		var raw []byte
		if err := r.Scan(&e.typ, &raw); err != nil {
			return e, err
		}
		e.raw = string(raw)
		return e, json.Unmarshal(raw, &e.data)
	})
	require.NoError(t, err)
	return out
}

// storm delivers each of ins from n goroutines, all at once.
func storm(t *testing.T, f fixture, n int, ins ...connectors.Appointment) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n*len(ins))
	for _, in := range ins {
		for range n {
			wg.Go(func() {
				if _, err := f.book.Upsert(context.Background(), f.shop, in); err != nil {
					errs <- err
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

func types(es []recorded) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.typ
	}
	return out
}

// TestAppointmentEventsOncePerChange: each change of an appointment records its event
// once, in the transaction that makes it, however many deliveries of it race; a
// redelivery or an older description records nothing.
func TestAppointmentEventsOncePerChange(t *testing.T) {
	t.Parallel()
	f := setup(t)
	subscribe(t, f)
	ctx := context.Background()
	kim, err := customertest.New(t, f.pool).Add(ctx, f.shop.ID, customers.NewCustomer{Phone: "+15555550123", Name: "Kim L", SMSOptIn: true})
	require.NoError(t, err)
	const n = 16

	v1 := appt("ev", 1, connectors.StatusBooked)
	storm(t, f, n, v1)
	es := f.events(t)
	require.Equal(t, []string{hooks.AppointmentCreated}, types(es), "first heard of by many deliveries at once: created once")
	created := es[0].data
	require.Equal(t, "square", created.Source)
	require.Equal(t, "booked", created.Status)
	require.NotNil(t, created.Phone)
	require.Equal(t, "+15555550123", *created.Phone, "whole, as the customer events show a number")
	require.Equal(t, "Kim", created.CustomerName)
	require.Equal(t, kim.ID, created.Customer.ID)
	require.True(t, v1.StartsAt.Equal(created.StartsAt))
	require.Nil(t, created.Previous)
	require.NotContains(t, es[0].raw, `"previous"`)

	// Booked again an hour later: moved, with both times.
	v2 := appt("ev", 2, connectors.StatusBooked)
	v2.StartsAt, v2.DurationMinutes = v1.StartsAt.Add(time.Hour), 30
	storm(t, f, n, v2)
	// Cancelled.
	v3 := v2
	v3.Version, v3.UpdatedAt, v3.Status = 3, v2.UpdatedAt.Add(time.Minute), connectors.StatusCancelled
	storm(t, f, n, v3)
	// Redeliveries and older descriptions, all at once: nothing.
	storm(t, f, n/2, v1, v2, v3)

	es = f.events(t)
	require.Equal(t, []string{hooks.AppointmentCreated, hooks.AppointmentMoved, hooks.AppointmentCancelled}, types(es))
	moved := es[1].data
	require.True(t, v2.StartsAt.Equal(moved.StartsAt))
	require.Equal(t, 30, moved.DurationMinutes)
	require.NotNil(t, moved.Previous)
	require.True(t, v1.StartsAt.Equal(moved.Previous.StartsAt), "the time it held")
	require.Equal(t, 45, moved.Previous.DurationMinutes)
	require.NotNil(t, moved.Opening, "the move's release and what it declared")
	require.True(t, v1.StartsAt.Equal(moved.Opening.StartsAt))
	cancelled := es[2].data
	require.Equal(t, "cancelled", cancelled.Status)
	require.True(t, v2.StartsAt.Equal(cancelled.StartsAt))
	require.Nil(t, cancelled.Previous)
	require.Equal(t, created.ID, cancelled.ID)

	// A source's own "moved" (cal.com's rescheduled original): moved, from its own time.
	m1 := appt("mv", 1, connectors.StatusBooked)
	m1.StartsAt = m1.StartsAt.Add(3 * time.Hour)
	storm(t, f, n, m1)
	m2 := m1
	m2.Version, m2.UpdatedAt, m2.Status = 2, m1.UpdatedAt.Add(time.Minute), connectors.StatusMoved
	storm(t, f, n, m2)
	// The owner's cancellation, asked for many times at once.
	o, err := f.book.Upsert(ctx, f.shop, func() connectors.Appointment {
		a := appt("own", 1, connectors.StatusBooked)
		a.StartsAt = a.StartsAt.Add(5 * time.Hour)
		return a
	}())
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			if _, err := f.book.Cancel(ctx, f.shop, o.Appointment.ID); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	es = f.events(t)
	require.Equal(t, []string{hooks.AppointmentCreated, hooks.AppointmentMoved, hooks.AppointmentCancelled,
		hooks.AppointmentCreated, hooks.AppointmentMoved, hooks.AppointmentCreated, hooks.AppointmentCancelled}, types(es))
	require.Equal(t, "moved", es[4].data.Status)
	require.True(t, m1.StartsAt.Equal(es[4].data.Previous.StartsAt))
	require.Equal(t, o.Appointment.ID, es[6].data.ID)
	require.Equal(t, "cancelled", es[6].data.Status)
}

// TestAppointmentEventsFirstHeardOf: an appointment first heard of as cancelled records
// appointment.cancelled (its time is freed), one first heard of as completed nothing.
func TestAppointmentEventsFirstHeardOf(t *testing.T) {
	t.Parallel()
	f := setup(t)
	subscribe(t, f)
	storm(t, f, 8, appt("gone", 1, connectors.StatusCancelled))
	done := appt("done", 1, connectors.StatusCompleted)
	done.StartsAt = time.Now().Add(-48 * time.Hour).Truncate(time.Hour)
	storm(t, f, 8, done)
	require.Equal(t, []string{hooks.AppointmentCancelled}, types(f.events(t)))
}

// TestAppointmentEventsForgotten: the customer's erasure (hooks.ForgetCustomer with
// book.Forget, in one transaction, as internal/erasure runs them) leaves neither their
// number nor their name in the appointment events kept, whether the appointment was
// linked to them or matched their number only.
func TestAppointmentEventsForgotten(t *testing.T) {
	t.Parallel()
	f := setup(t)
	subscribe(t, f)
	ctx := context.Background()
	// Heard of before they were a customer: their number only.
	early := appt("early", 1, connectors.StatusBooked)
	early.CustomerName = "Kimberly"
	_, err := f.book.Upsert(ctx, f.shop, early)
	require.NoError(t, err)
	kim, err := customertest.New(t, f.pool).Add(ctx, f.shop.ID, customers.NewCustomer{Phone: "+15555550123", Name: "Kimberly", SMSOptIn: true})
	require.NoError(t, err)
	linked := appt("linked", 1, connectors.StatusBooked)
	linked.StartsAt, linked.CustomerName = linked.StartsAt.Add(time.Hour), "Kimberly"
	_, err = f.book.Upsert(ctx, f.shop, linked)
	require.NoError(t, err)
	linked.Version, linked.UpdatedAt, linked.Status = 2, linked.UpdatedAt.Add(time.Minute), connectors.StatusCancelled
	_, err = f.book.Upsert(ctx, f.shop, linked)
	require.NoError(t, err)
	lou := appt("lou", 1, connectors.StatusBooked)
	lou.StartsAt, lou.Phone, lou.CustomerName = lou.StartsAt.Add(2*time.Hour), "+15555550177", "Lou"
	_, err = f.book.Upsert(ctx, f.shop, lou)
	require.NoError(t, err)
	require.Len(t, f.events(t), 4)

	require.NoError(t, pgx.BeginFunc(ctx, f.pool, func(tx pgx.Tx) error {
		if err := hooks.ForgetCustomer(ctx, tx, f.shop.ID, kim.ID, kim.Phone, time.Now()); err != nil {
			return err
		}
		_, err := book.Forget(ctx, tx, f.shop.ID, kim.ID, kim.Phone, time.Now())
		return err
	}))
	es := f.events(t)
	require.Len(t, es, 4)
	kept := 0
	for _, e := range es {
		require.NotContains(t, e.raw, "5555550123")
		require.NotContains(t, e.raw, "Kimberly")
		if e.raw != "{}" {
			kept++
			require.Equal(t, "Lou", e.data.CustomerName, "another customer's event stays")
		}
	}
	require.Equal(t, 1, kept)
}

// TestAppointmentEventsFirstDeliveryWaits: a first delivery that finds no row while
// another first delivery is storing one (here a transaction that holds the appointment's
// name, AppointmentLockName, and inserts it as that delivery would) waits for it, then
// is compared with what it stored: booked elsewhere, it is moved, not a second created.
func TestAppointmentEventsFirstDeliveryWaits(t *testing.T) {
	t.Parallel()
	f := setup(t)
	subscribe(t, f)
	ctx := context.Background()
	v1 := appt("wait", 1, connectors.StatusBooked)
	v2 := appt("wait", 2, connectors.StatusBooked)
	v2.StartsAt = v1.StartsAt.Add(2 * time.Hour)

	first, err := f.pool.Begin(ctx)
	require.NoError(t, err)
	defer first.Rollback(ctx) //nolint:errcheck // committed below
	_, err = first.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('appointment:' || $1::uuid::text || ':square:wait', 0))`, f.shop.ID)
	require.NoError(t, err)
	_, err = first.Exec(ctx, `INSERT INTO appointments (shop_id, source, external_id, customer_name, service, price_cents,
		starts_at, duration_minutes, status, source_version, source_updated_at, created_at, changed_at)
		VALUES ($1, 'square', 'wait', 'Kim', 'Cut', 2500, $2, 45, 'booked', 1, $3, now(), now())`, f.shop.ID, v1.StartsAt, v1.UpdatedAt)
	require.NoError(t, err)

	done := make(chan error, 1)
	go func() {
		_, err := f.book.Upsert(ctx, f.shop, v2)
		done <- err
	}()
	// Until the second delivery waits on the first's transaction.
	require.Eventually(t, func() bool {
		return f.count(t, `SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
			WHERE NOT l.granted AND a.datname = current_database()`) > 0
	}, 10*time.Second, 5*time.Millisecond)
	require.NoError(t, first.Commit(ctx))
	require.NoError(t, <-done)

	es := f.events(t)
	require.Equal(t, []string{hooks.AppointmentMoved}, types(es), "the first delivery's created is its own to record")
	require.True(t, v1.StartsAt.Equal(es[0].data.Previous.StartsAt))
	require.True(t, v2.StartsAt.Equal(es[0].data.StartsAt))
}
