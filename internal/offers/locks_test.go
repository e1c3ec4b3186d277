package offers_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/offers"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/sms"
)

// A wave's claim and its mark of the texts sent each lock many offers. Another statement
// that locks the same opening's offers in another order (a YES losing the others, a
// cancel closing the queued ones) must not deadlock with them: Postgres would abort one,
// and a YES or a wave would fail. These tests hold one offer in a transaction, let the
// wave reach it, then lock every offer of the opening from that transaction, as a YES
// does; with the wave holding any of them while it waits, that is a deadlock.

// TestWaveClaimDoesNotDeadlock: an offer held by another statement when the wave claims
// its chunk is claimed once it is free, and the wave holds nothing while it waits.
func TestWaveClaimDoesNotDeadlock(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	shop := w.shop(t, shops.Policy{WaveSize: 30, WaveInterval: time.Minute, MinLead: time.Hour, Cooldown: time.Hour})
	cs := w.customers(t, shop, 30)
	op := w.declare(t, shop, 5*time.Hour)
	ctx := context.Background()
	wave := jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 1}

	// Record the wave's offers and leave them queued: every send fails for now.
	w.twilio.FailNext(30, 20500, 500)
	_, err := w.offers.RunWave(ctx, wave)
	require.Error(t, err)
	require.Equal(t, map[string]int{"queued": 30}, w.offerStatuses(t, op.ID))

	holder := w.holdOne(t, op.ID)
	done := make(chan waveRun, 1)
	go func() {
		res, err := w.offers.RunWave(ctx, wave)
		done <- waveRun{res, err}
	}()
	waitForLockWaiter(t, w.pool, holder.pid, done)

	holder.lockAll(t, op.ID)
	r := <-done
	require.NoError(t, r.err, "the wave failed while another statement held its offers")
	require.Equal(t, 30, r.res.Texted, "the held offer is texted once it is free")
	require.Equal(t, map[string]int{"sent": 30}, w.offerStatuses(t, op.ID))
	for _, c := range cs {
		require.Len(t, w.twilio.MessagesTo(c.Phone), 1, "exactly one text for %s", c.Name)
	}
}

// TestWaveMarkDoesNotDeadlock: an offer held by another statement when the wave marks
// its chunk's texts sent is marked once it is free, with its message id.
func TestWaveMarkDoesNotDeadlock(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	shop := w.shop(t, shops.Policy{WaveSize: 30, WaveInterval: time.Minute, MinLead: time.Hour, Cooldown: time.Hour})
	cs := w.customers(t, shop, 30)
	op := w.declare(t, shop, 5*time.Hour)
	ctx := context.Background()

	// The texts wait at the fake until the test has taken its offer, so the wave has
	// claimed them all and not yet marked any.
	release := w.twilio.Hold()
	t.Cleanup(release)
	done := make(chan waveRun, 1)
	go func() {
		res, err := w.offers.RunWave(ctx, jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 1})
		done <- waveRun{res, err}
	}()
	deadline := time.Now().Add(20 * time.Second)
	for w.twilio.Held() < 30 {
		require.True(t, time.Now().Before(deadline), "the wave sent %d of 30 texts in 20 s", w.twilio.Held())
		time.Sleep(5 * time.Millisecond)
	}
	require.Equal(t, map[string]int{"sending": 30}, w.offerStatuses(t, op.ID))

	holder := w.holdOne(t, op.ID)
	release()
	waitForLockWaiter(t, w.pool, holder.pid, done)

	holder.lockAll(t, op.ID)
	r := <-done
	require.NoError(t, r.err, "the wave failed while another statement held its offers")
	require.Equal(t, 30, r.res.Texted)
	require.Equal(t, map[string]int{"sent": 30}, w.offerStatuses(t, op.ID))
	for _, c := range cs {
		require.Len(t, w.twilio.MessagesTo(c.Phone), 1, "exactly one text for %s", c.Name)
		require.NotEmpty(t, w.sidTo(t, c.Phone))
	}
	var noSID int
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT count(*) FROM slot_offers WHERE opening_id = $1 AND twilio_sid IS NULL`, op.ID).Scan(&noSID))
	require.Zero(t, noSID, "every offer marked sent keeps its message id")
}

// TestEarlyDeliveryReportsDoNotDeadlock: reports that came before the wave stored its
// texts' ids are applied by the wave once it has; an offer held by another statement
// then gets its report once it is free, and the wave holds none of the others while it
// waits.
func TestEarlyDeliveryReportsDoNotDeadlock(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	shop := w.shop(t, shops.Policy{WaveSize: 30, WaveInterval: time.Minute, MinLead: time.Hour, Cooldown: time.Hour})
	w.customers(t, shop, 30)
	op := w.declare(t, shop, 5*time.Hour)
	ctx := context.Background()
	res, err := w.offers.RunWave(ctx, jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 1})
	require.NoError(t, err)
	require.Equal(t, 30, res.Texted)

	// Every text's report stored, none applied yet: as if they had all come before the
	// wave stored the ids.
	rows, err := w.pool.Query(ctx, `SELECT twilio_sid FROM slot_offers WHERE opening_id = $1 AND delivery IS NULL`, op.ID)
	require.NoError(t, err)
	sids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Len(t, sids, 30)
	_, err = w.pool.Exec(ctx, `INSERT INTO delivery_reports (message_sid, status, reason, received_at)
		SELECT unnest($1::text[]), 'delivered', '', now()`, sids)
	require.NoError(t, err)

	holder := w.holdOne(t, op.ID)
	done := make(chan error, 1)
	go func() { done <- w.offers.ApplyDeliveries(ctx, sids) }()
	waitForLockWaiter(t, w.pool, holder.pid, done)
	holder.lockAll(t, op.ID)
	require.NoError(t, <-done, "applying the reports failed while another statement held an offer")
	var delivered int
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT count(*) FROM slot_offers WHERE opening_id = $1 AND delivery = 'delivered'`, op.ID).Scan(&delivered))
	require.Equal(t, 30, delivered, "every stored report is applied")
}

// waveRun is what a RunWave in the background returned.
type waveRun struct {
	res offers.WaveResult
	err error
}

// offerHolder is a transaction holding one offer of an opening.
type offerHolder struct {
	tx  pgx.Tx
	pid uint32
}

// holdOne starts a transaction on its own connection and locks the opening's offer in
// the middle of the id order, so that a statement going through the offers in any
// order is likely to have locked some before it reaches this one.
func (w *world) holdOne(t *testing.T, openingID uuid.UUID) *offerHolder {
	t.Helper()
	ctx := context.Background()
	conn, err := w.pool.Acquire(ctx)
	require.NoError(t, err)
	t.Cleanup(conn.Release)
	tx, err := conn.Begin(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	var ids []uuid.UUID
	rows, err := tx.Query(ctx, `SELECT id FROM slot_offers WHERE opening_id = $1`, openingID)
	require.NoError(t, err)
	for rows.Next() {
		var id uuid.UUID
		require.NoError(t, rows.Scan(&id))
		ids = append(ids, id)
	}
	require.NoError(t, rows.Err())
	require.NotEmpty(t, ids)
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	_, err = tx.Exec(ctx, `SELECT id FROM slot_offers WHERE id = $1 FOR UPDATE`, ids[len(ids)/2])
	require.NoError(t, err)
	return &offerHolder{tx: tx, pid: conn.Conn().PgConn().PID()}
}

// lockAll locks every offer of the opening, as a YES does when it loses the others, and
// commits; Postgres's deadlock detector aborts it or the wave if the wave holds any of
// them while it waits for the held one.
func (h *offerHolder) lockAll(t *testing.T, openingID uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	_, err := h.tx.Exec(ctx, `SELECT id FROM slot_offers WHERE opening_id = $1 FOR UPDATE`, openingID)
	require.NoError(t, err, "locking the opening's offers while the wave waits for the held one")
	require.NoError(t, h.tx.Commit(ctx))
}

// waitForLockWaiter waits until a connection of the test's database other than the
// holder's waits for a lock (the wave has reached the held offer). A wave that ends
// without waiting fails the test with what it returned.
func waitForLockWaiter[T any](t *testing.T, pool *pgxpool.Pool, holderPID uint32, done <-chan T) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var waiting int
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> $1`, int32(holderPID)).Scan(&waiting))
		if waiting > 0 {
			return
		}
		select {
		case r := <-done:
			t.Fatalf("the wave ended without waiting for the held offer: %+v", r)
		default:
		}
		require.True(t, time.Now().Before(deadline), "no statement waited for the held offer within 20 s")
		time.Sleep(5 * time.Millisecond)
	}
}

// TestDeliveriesRacingClaimsDoNotDeadlock: status callbacks for an opening's texts
// arrive while its customers reply YES. A YES locks the opening, then the winner's offer,
// then loses the others; a report applied to an offer must never wait for one offer while
// holding another, or Postgres aborts one of the two (40P01) and a YES or a report
// fails. Many goroutines race reports (delivered, undelivered, repeated) against claims
// on several openings, round after round.
func TestDeliveriesRacingClaimsDoNotDeadlock(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	const openings, customers = 4, 24
	shop := w.shop(t, shops.Policy{WaveSize: customers, WaveInterval: time.Minute, MinLead: time.Hour, Cooldown: time.Hour})
	cs := w.customers(t, shop, customers)
	ctx := context.Background()
	var ops []uuid.UUID
	for i := range openings {
		// One start for all: every customer holds an offer for each, and a YES tries them
		// in turn while others are claimed and reported on.
		op := w.declare(t, shop, 5*time.Hour+time.Duration(i)*time.Minute)
		res, err := w.offers.RunWave(ctx, jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 1})
		require.NoError(t, err)
		require.Equal(t, customers, res.Texted)
		ops = append(ops, op.ID)
	}
	rows, err := w.pool.Query(ctx, `SELECT twilio_sid FROM slot_offers WHERE twilio_sid IS NOT NULL ORDER BY twilio_sid`)
	require.NoError(t, err)
	sids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Len(t, sids, openings*customers)

	var wg sync.WaitGroup
	errs := make(chan error, len(sids)*2+len(cs))
	for i, sid := range sids {
		report := sms.DeliveryReport{MessageID: sid, Status: sms.DeliveryDelivered}
		if i%3 == 0 {
			report = sms.DeliveryReport{MessageID: sid, Status: sms.DeliveryUndelivered, Reason: sms.ReasonOther, ErrorCode: 30003}
		}
		wg.Go(func() {
			for range 2 { // reports repeat
				if err := w.reports.RecordDelivery(ctx, report); err != nil {
					errs <- fmt.Errorf("report %s: %w", sid, err)
				}
			}
		})
	}
	for _, c := range cs {
		wg.Go(func() {
			if _, err := w.slots.Book(ctx, &shop, c.ID); err != nil {
				errs <- fmt.Errorf("yes from %s: %w", c.Name, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err, "a report or a YES failed while racing the others")
	}
	var booked int
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT count(*) FROM bookings WHERE opening_id = ANY($1)`, ops).Scan(&booked))
	require.Positive(t, booked, "some YES booked")
	require.LessOrEqual(t, booked, openings)
}
