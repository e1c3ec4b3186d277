package ledger_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/metrics"
	"github.com/slotrecovery/slotrecovery/internal/payments"
	"github.com/slotrecovery/slotrecovery/internal/payments/stripe"
	"github.com/slotrecovery/slotrecovery/internal/testkit/stripetest"
)

// refundScene is a world whose refunds go to stripe-mock through a recording proxy
// (which can answer with Stripe's errors instead), with the metrics on a registry.
type refundScene struct {
	*world
	rec    *stripetest.Recorder
	reg    *prometheus.Registry
	refund *ledger.Service
	worker *ledger.RefundWorker
}

func newRefundScene(t *testing.T) *refundScene {
	t.Helper()
	w := newWorld(t, worldOpts{})
	rec := stripetest.NewRecorder(t, stripetest.Mock(t))
	client, err := stripe.New(stripe.Config{SecretKey: "sk_test_refunds", APIURL: rec.URL})
	require.NoError(t, err)
	reg := prometheus.NewRegistry()
	refund := ledger.New(w.pool, w.queue, client, ledger.Config{Now: w.clk.Now, Metrics: metrics.New(reg)})
	return &refundScene{world: w, rec: rec, reg: reg, refund: refund, worker: &ledger.RefundWorker{Service: refund}}
}

// latePayment books an opening for Alice, lets her hold lapse and gives the slot to Bob;
// then Alice's payment arrives. It returns Alice's booking and her payment, whose refund
// job the event enqueued.
func (s *refundScene) latePayment() (uuid.UUID, string) {
	s.t.Helper()
	op, alice := s.book()
	require.Equal(s.t, ledger.ResultReopened, s.handle(s.event("evt_expired_"+alice.String(), payments.EventExpired, alice, "")).Result)
	s.claim(op.ID, 2)
	pi := "pi_late_" + alice.String()[:8]
	require.Equal(s.t, ledger.ResultRefunded, s.handle(s.event("evt_paid_"+alice.String(), payments.EventPaid, alice, pi)).Result)
	return alice, pi
}

// work runs the refund job of (booking, payment) as its attempt-th try of max.
func (s *refundScene) work(booking uuid.UUID, pi string, attempt, maxAttempts int) error {
	return s.worker.Work(context.Background(), &river.Job[jobs.Refund]{
		JobRow: &rivertype.JobRow{Kind: jobs.Refund{}.Kind(), Attempt: attempt, MaxAttempts: maxAttempts},
		Args:   jobs.Refund{BookingID: booking, PaymentIntentID: pi},
	})
}

// failure is what the booking records of a failed refund.
type failure struct {
	at            *time.Time
	paymentIntent string
	reason        string
}

func (s *refundScene) failure(booking uuid.UUID) failure {
	s.t.Helper()
	var f failure
	require.NoError(s.t, s.pool.QueryRow(context.Background(), `SELECT refund_failed_at, COALESCE(refund_failed_payment_intent, ''),
		COALESCE(refund_error, '') FROM bookings WHERE id = $1`, booking).Scan(&f.at, &f.paymentIntent, &f.reason))
	return f
}

func (s *refundScene) failedCount(reason string) float64 {
	s.t.Helper()
	mfs, err := s.reg.Gather()
	require.NoError(s.t, err)
	for _, mf := range mfs {
		if mf.GetName() != "slotrecovery_refunds_failed_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if len(m.GetLabel()) == 1 && m.GetLabel()[0].GetValue() == reason {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// TestRefundRefusedIsRecorded: Stripe refuses a late payment's
// refund for good. The job stops (retrying cannot help), and the refusal is not lost:
// the booking records when, which payment and Stripe's reason, and the metric counts
// it. A later refund of the same payment that succeeds (a redelivered event queues
// another job) clears it.
func TestRefundRefusedIsRecorded(t *testing.T) {
	t.Parallel()
	s := newRefundScene(t)
	alice, pi := s.latePayment()

	s.rec.FailNext(1, http.StatusBadRequest) // invalid_request_error: permanent
	err := s.work(alice, pi, 1, jobs.RefundMaxAttempts)
	require.Error(t, err)
	require.ErrorAs(t, err, new(*river.JobCancelError), "retrying cannot help: the job stops")
	require.Equal(t, 1, s.rec.Count(http.MethodPost, "/v1/refunds"))

	f := s.failure(alice)
	require.NotNil(t, f.at, "the booking records the failed refund")
	require.Equal(t, s.clk.Now().UTC(), f.at.UTC())
	require.Equal(t, pi, f.paymentIntent)
	require.Contains(t, f.reason, "Stripe refused the refund (parameter_invalid_empty)")
	require.Contains(t, f.reason, "stripetest: injected 400", "Stripe's own message, for the owner")
	require.Equal(t, 1.0, s.failedCount(ledger.RefundFailedRefused))
	require.Equal(t, "0", s.query(`SELECT count(*)::text FROM bookings WHERE id = $1 AND refund_id IS NOT NULL`, alice))
	require.Equal(t, "0", s.query(`SELECT count(*)::text FROM river_job WHERE kind = 'sms_text' AND args->>'key' LIKE 'refunded:%'`),
		"the customer is not told of a refund that did not happen")

	// Refunded after all (stripe-mock answers this time): nothing is left to do by hand.
	require.NoError(t, s.work(alice, pi, 1, jobs.RefundMaxAttempts))
	require.Nil(t, s.failure(alice).at)
	require.Equal(t, "1", s.query(`SELECT count(*)::text FROM bookings WHERE id = $1 AND refund_id IS NOT NULL`, alice))
	require.Equal(t, 1.0, s.failedCount(ledger.RefundFailedRefused), "counted once")
}

// TestRefundLastAttemptIsRecorded: a refund that fails with a
// transient error is retried by River, and nothing is recorded while attempts remain;
// when its last attempt fails too, the booking records the failure (the duplicate
// payment of a confirmed booking here) and the metric counts it as retries_exhausted.
func TestRefundLastAttemptIsRecorded(t *testing.T) {
	t.Parallel()
	s := newRefundScene(t)
	_, b := s.book()
	require.Equal(t, ledger.ResultConfirmed, s.handle(s.event("evt_paid", payments.EventPaid, b, "pi_first")).Result)
	orphan := s.event("evt_orphan_paid", payments.EventPaid, b, "pi_second")
	orphan.SessionID = "cs_orphan"
	require.Equal(t, ledger.ResultRefundedDuplicate, s.handle(orphan).Result)

	s.rec.FailNext(2, http.StatusServiceUnavailable)
	err := s.work(b, "pi_second", jobs.RefundMaxAttempts-1, jobs.RefundMaxAttempts)
	require.Error(t, err)
	require.NotErrorAs(t, err, new(*river.JobCancelError), "a transient error is retried")
	require.Nil(t, s.failure(b).at, "attempts remain: nothing to record yet")
	require.Zero(t, s.failedCount(ledger.RefundFailedRetriesExhausted))

	err = s.work(b, "pi_second", jobs.RefundMaxAttempts, jobs.RefundMaxAttempts)
	require.Error(t, err)
	f := s.failure(b)
	require.NotNil(t, f.at, "the last attempt failed: the booking records it")
	require.Equal(t, "pi_second", f.paymentIntent)
	require.Contains(t, f.reason, "api_error")
	require.Equal(t, 1.0, s.failedCount(ledger.RefundFailedRetriesExhausted))
	require.Equal(t, ledger.BookingConfirmed, s.bookingStatus(b), "the booking itself stands")
}

// TestRefundNotDueIsNotAFailure: the refund job of a pending booking is cancelled (its
// payment will confirm it): nothing is owed, so nothing is recorded or counted.
func TestRefundNotDueIsNotAFailure(t *testing.T) {
	t.Parallel()
	s := newRefundScene(t)
	_, b := s.book()
	err := s.work(b, "pi_pending", 1, jobs.RefundMaxAttempts)
	require.ErrorAs(t, err, new(*river.JobCancelError))
	require.Nil(t, s.failure(b).at)
	require.Zero(t, s.failedCount(ledger.RefundFailedRefused))
	require.Zero(t, s.rec.Count(http.MethodPost, "/v1/refunds"))
}

// TestRefundJobDiscardedByRiverIsRecorded runs the refund job the late payment enqueued
// through a real River client: with its attempts lowered to one, its first failure is
// its last, River discards it, and the booking still records the failure. This is what
// River's Attempt and MaxAttempts mean, not what the test assumes they mean.
func TestRefundJobDiscardedByRiverIsRecorded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newRefundScene(t)
	alice, pi := s.latePayment()
	_, err := s.pool.Exec(ctx, `UPDATE river_job SET max_attempts = 1 WHERE kind = 'booking_refund'`)
	require.NoError(t, err)

	s.rec.FailNext(1, http.StatusBadGateway)
	workers := river.NewWorkers()
	river.AddWorker(workers, s.worker)
	rc, err := river.NewClient(riverpgxv5.New(s.pool), &river.Config{
		Queues:            map[string]river.QueueConfig{jobs.QueuePayments: {MaxWorkers: 1}},
		Workers:           workers,
		FetchCooldown:     20 * time.Millisecond,
		FetchPollInterval: 50 * time.Millisecond,
		TestOnly:          true,
	})
	require.NoError(t, err)
	events, cancel := rc.Subscribe(river.EventKindJobFailed)
	defer cancel()
	require.NoError(t, rc.Start(ctx))
	t.Cleanup(func() {
		sctx, c := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer c()
		_ = rc.Stop(sctx)
	})

	select {
	case ev := <-events:
		require.Equal(t, rivertype.JobStateDiscarded, ev.Job.State)
	case <-time.After(20 * time.Second):
		t.Fatal("the refund job did not fail")
	}
	f := s.failure(alice)
	require.NotNil(t, f.at, "River discarded the job: the booking records the failed refund")
	require.Equal(t, pi, f.paymentIntent)
	require.Equal(t, 1.0, s.failedCount(ledger.RefundFailedRetriesExhausted))
}

// TestRefundLostWithItsProcessIsRecorded: a refund job whose last attempt died with its
// process never reaches the worker's record: River's rescuer discards it. The
// reconciliation finds it and records the refund as failed, for the owner, once.
func TestRefundLostWithItsProcessIsRecorded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newRefundScene(t)
	alice, pi := s.latePayment()
	n, err := s.refund.RecordLostRefunds(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "a refund job still to run is not lost")

	// What River's rescuer does to a job whose last attempt was running on a killed
	// process: it discards it without running it again.
	tag, err := s.pool.Exec(ctx, `UPDATE river_job SET state = 'discarded', finalized_at = now(), attempt = max_attempts
		WHERE kind = 'booking_refund' AND args->>'booking_id' = $1`, alice.String())
	require.NoError(t, err)
	require.EqualValues(t, 1, tag.RowsAffected())

	n, err = s.refund.RecordLostRefunds(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	f := s.failure(alice)
	require.NotNil(t, f.at, "the owner is told to refund by hand")
	require.Equal(t, pi, f.paymentIntent)
	require.Contains(t, f.reason, "check the payment there")
	require.Equal(t, 1.0, s.failedCount(ledger.RefundFailedLost))

	n, err = s.refund.RecordLostRefunds(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "recorded once")
}
