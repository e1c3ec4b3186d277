package ledger_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/payments"
	"github.com/slotrecovery/slotrecovery/internal/slots"
)

// sweepAt runs one booking sweep at the world's start plus at.
func (w *world) sweepAt(at time.Duration) ledger.SweepResult {
	w.t.Helper()
	w.clk.Set(w.start.Add(at))
	res, err := w.pay.SweepBookings(context.Background())
	require.NoError(w.t, err)
	return res
}

// TestSweepMakesTheLinkTheYESPathCouldNot: Stripe was down for the YES, so the winner
// heard "the link follows". The sweep leaves the booking alone until CheckoutRetryDelay
// (the YES path's own attempt is over by then), then makes the link, stores it and
// texts it, once; later sweeps leave it.
func TestSweepMakesTheLinkTheYESPathCouldNot(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{})
	w.co.fail(errors.New("stripe: 503"))
	op := w.open()
	claim, _ := w.claim(op.ID, 1)
	require.True(t, claim.LinkFollows)
	require.Equal(t, 1, w.co.count())
	w.co.fail(nil)

	require.Zero(t, w.sweepAt(14*time.Second).Links, "too early: the YES path may still be at it")
	require.Equal(t, 1, w.co.count())

	res := w.sweepAt(15 * time.Second)
	require.Equal(t, ledger.SweepResult{Links: 1}, res)
	require.Equal(t, 2, w.co.count())
	require.Equal(t, "https://pay.example/"+claim.BookingID.String(), w.query(`SELECT payment_url FROM bookings WHERE id = $1`, claim.BookingID))
	require.Equal(t, "1", w.query(`SELECT count(*)::text FROM river_job WHERE kind = 'sms_text' AND args->>'key' = $1`, "checkout_link:"+claim.BookingID.String()))
	require.Equal(t, "true", w.query(`SELECT (customer_told_at IS NOT NULL)::text FROM bookings WHERE id = $1`, claim.BookingID),
		"the link text told the customer: no notice follows")

	res = w.sweepAt(2 * time.Minute)
	require.Equal(t, ledger.SweepResult{}, res, "nothing is owed any more")
	require.Equal(t, 2, w.co.count())
	require.Equal(t, "1", w.query(`SELECT count(*)::text FROM river_job WHERE kind = 'sms_text'`))
}

// TestSweepBacksOffWhileTheProviderIsDown: while Stripe fails, the sweep tries a link
// again after CheckoutRetryDelay at first and at most every two minutes later on (half
// the booking's age), not at every run.
func TestSweepBacksOffWhileTheProviderIsDown(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{})
	w.co.fail(errors.New("stripe: 503"))
	op := w.open()
	w.claim(op.ID, 1)

	tries := func(at time.Duration) int {
		t.Helper()
		before := w.co.count()
		res := w.sweepAt(at)
		require.Equal(t, res.Links, res.LinkErrors, "every attempt failed")
		require.Equal(t, before+res.Links, w.co.count(), "one provider call per attempt")
		return res.Links
	}
	require.Equal(t, 1, tries(15*time.Second))
	require.Equal(t, 0, tries(25*time.Second), "retried no sooner than 15 s later")
	require.Equal(t, 1, tries(30*time.Second))
	require.Equal(t, 1, tries(4*time.Minute))
	require.Equal(t, 0, tries(5*time.Minute+50*time.Second), "two minutes apart by now")
	require.Equal(t, 1, tries(6*time.Minute))
	require.Equal(t, ledger.BookingPendingPayment, w.bookingStatus(w.bookingOf(op.ID)), "still held, within its bound")
}

// TestConcurrentSweepsMakeOneLink: sweeps running at once (a slow one and the next, on
// several instances) make one payment link per booking and text it once.
func TestConcurrentSweepsMakeOneLink(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOpts{})
	w.co.fail(errors.New("stripe: 503"))
	var bookings []string
	for range 5 {
		claim, _ := w.claim(w.open().ID, 1)
		bookings = append(bookings, claim.BookingID.String())
	}
	w.co.fail(nil)
	w.clk.Set(w.start.Add(time.Minute))

	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Go(func() {
			_, err := w.pay.SweepBookings(context.Background())
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, 10, w.co.count(), "one call per booking on the YES path and one from the sweeps")
	for _, id := range bookings {
		require.Equal(t, "1", w.query(`SELECT count(*)::text FROM river_job WHERE kind = 'sms_text' AND args->>'key' = $1`, "checkout_link:"+id), id)
	}
}

// TestAKilledSweepDoesNotHoldTheNextUp: a sweep running elsewhere holds the sweep's
// advisory lock, and another run returns at once without work; once that holder's
// connection ends (its process was killed), the next run does the work. A unique River
// job would have held every later run up until River rescued the dead one.
func TestAKilledSweepDoesNotHoldTheNextUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, worldOpts{})
	w.co.fail(errors.New("stripe: 503"))
	w.claim(w.open().ID, 1)
	w.co.fail(nil)

	other := w.otherSession()
	var held bool
	require.NoError(t, other.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", ledger.SweepLockKey).Scan(&held))
	require.True(t, held)
	require.Equal(t, ledger.SweepResult{Skipped: true}, w.sweepAt(time.Minute), "another sweep is running")
	require.Equal(t, 1, w.co.count())

	require.NoError(t, other.Close(ctx)) // the holder dies with its connection
	w.awaitUnlocked(ledger.SweepLockKey)
	require.Equal(t, ledger.SweepResult{Links: 1}, w.sweepAt(time.Minute))
	require.Equal(t, 2, w.co.count())
}

// TestSweepTellsAnUntoldCustomerOnce: a booking whose answer was never recorded as
// delivered gets its news by text NoticeDelay (30 s) after it was made, once; a booking
// whose answer was delivered gets none. With the sweep every 10 s, the customer knows
// within a minute.
func TestSweepTellsAnUntoldCustomerOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, worldOpts{})
	lost, _ := w.claim(w.open().ID, 1)
	delivered, _ := w.claim(w.open().ID, 1)
	require.NotEmpty(t, lost.PaymentURL)
	require.NoError(t, ledger.MarkTold(ctx, w.pool, w.clk.Now(), delivered.BookingID))
	notices := func(id string) string {
		return w.query(`SELECT count(*)::text FROM river_job WHERE kind = 'sms_text' AND args->>'key' = $1`, "booking_notice:"+id)
	}

	require.Zero(t, w.sweepAt(29*time.Second).Notices, "the answer may still be on its way")
	require.Equal(t, "0", notices(lost.BookingID.String()))
	require.Equal(t, 1, w.sweepAt(30*time.Second).Notices)
	require.Equal(t, "1", notices(lost.BookingID.String()))
	require.Contains(t, w.query(`SELECT args->>'body' FROM river_job WHERE kind = 'sms_text' AND args->>'key' = $1`, "booking_notice:"+lost.BookingID.String()), lost.PaymentURL)
	require.Zero(t, w.sweepAt(40*time.Second).Notices, "told: nothing more is owed")
	require.Equal(t, "1", notices(lost.BookingID.String()))
	require.Equal(t, "0", notices(delivered.BookingID.String()))
	require.LessOrEqual(t, 30*time.Second+w.pay.SweepEvery(), time.Minute)
}

// bookingOf returns the id of the opening's latest booking.
func (w *world) bookingOf(openingID uuid.UUID) uuid.UUID {
	w.t.Helper()
	return uuid.MustParse(w.query(`SELECT id::text FROM bookings WHERE opening_id = $1 ORDER BY created_at DESC LIMIT 1`, openingID))
}

// TestAKilledReconciliationDoesNotHoldTheNextUp: while another run holds the
// reconciliation's advisory lock, a run returns at once without asking Stripe; once
// that holder's connection ends (its process was killed), the next run reconciles. (As
// a River job unique while it ran, a killed run made every later one a skipped
// duplicate until River's rescue.)
func TestAKilledReconciliationDoesNotHoldTheNextUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, worldOpts{})
	op, bookingID := w.book()
	session := "cs_" + bookingID.String()
	w.stripe.set(session, payments.SessionExpired)
	w.clk.Set(w.start.Add(37 * time.Minute)) // past the hold and the grace
	worker := &ledger.ReconcileWorker{Service: w.pay}
	job := &river.Job[jobs.Reconcile]{JobRow: &rivertype.JobRow{Kind: jobs.Reconcile{}.Kind()}}

	other := w.otherSession()
	var held bool
	require.NoError(t, other.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", ledger.ReconcileLockKey).Scan(&held))
	require.True(t, held)
	require.NoError(t, worker.Work(ctx, job))
	require.Zero(t, w.stripe.readCount(session), "another run is reconciling")
	require.Equal(t, ledger.BookingPendingPayment, w.bookingStatus(bookingID))

	require.NoError(t, other.Close(ctx)) // the holder dies with its connection
	w.awaitUnlocked(ledger.ReconcileLockKey)
	require.NoError(t, worker.Work(ctx, job))
	require.Equal(t, 1, w.stripe.readCount(session))
	require.Equal(t, ledger.BookingPaymentFailed, w.bookingStatus(bookingID))
	require.Equal(t, slots.StatusOpen, w.openingStatus(op.ID))
}

// awaitUnlocked waits until Postgres has ended the session of a closed connection that
// held the advisory lock key (it notices the close a moment later), by taking the lock
// and giving it back.
func (w *world) awaitUnlocked(key int64) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := w.pool.Acquire(ctx)
	require.NoError(w.t, err)
	defer conn.Release()
	_, err = conn.Exec(ctx, "SELECT pg_advisory_lock($1)", key)
	require.NoError(w.t, err, "the dead holder's lock was never released")
	_, err = conn.Exec(ctx, "SELECT pg_advisory_unlock($1)", key)
	require.NoError(w.t, err)
}

// otherSession is a connection of its own to the world's database, as another
// instance's would be; it is closed at the end of the test if the test has not.
func (w *world) otherSession() *pgx.Conn {
	w.t.Helper()
	conn, err := pgx.ConnectConfig(context.Background(), w.pool.Config().ConnConfig.Copy())
	require.NoError(w.t, err)
	w.t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}
