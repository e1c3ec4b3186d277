package book_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/book"
	"github.com/slotrecovery/slotrecovery/internal/connectors"
	"github.com/slotrecovery/slotrecovery/internal/connectors/calcom"
	"github.com/slotrecovery/slotrecovery/internal/connectors/square"
	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/testkit/customertest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
)

const (
	calKey   = "cal_test_9f8e7d6c5b4a"
	sqToken  = "EAAAl-sandbox-token-1234567890"
	sqSigKey = "sq-signature-key"
	// sqURL is the notification URL Square signs over (PUBLIC_URL + the connector's path).
	sqURLBase = "https://slots.example.test"
)

// wbFixture is a shop whose book writes moves back through the two fake vendors, with a
// River client working the write-back jobs for real.
type wbFixture struct {
	fixture
	cal   *fakeCalcom
	sq    *fakeSquare
	river *river.Client[pgx.Tx]
}

func setupWriteBack(t *testing.T) wbFixture {
	t.Helper()
	pool, _ := pgtest.New(t)
	workers := river.NewWorkers()
	worker := &book.WriteBackWorker{}
	river.AddWorker(workers, worker)
	rc, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Queues:            map[string]river.QueueConfig{jobs.QueueOffers: {MaxWorkers: 4}},
		Workers:           workers,
		FetchCooldown:     20 * time.Millisecond,
		FetchPollInterval: 50 * time.Millisecond,
		// The waves the openings enqueue have no worker here: they fail and wait.
		SkipUnknownJobCheck: true,
		Logger:              slog.New(slog.DiscardHandler),
		// Retries a second apart: the backoff's shape is River's, not the test's.
		RetryPolicy: fastRetry{},
	})
	require.NoError(t, err)
	shopsSvc := shops.New(pool, shops.Config{})
	openings := slots.New(pool, rc, noLock{}, noCooldown{}, slots.Config{})
	shop, _, err := shopsSvc.Create(context.Background(), shops.NewShop{Name: "Book", Timezone: "UTC",
		SMSNumber: "+15550001000", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	f := wbFixture{cal: newFakeCalcom(t, calKey), sq: newFakeSquare(t, sqToken), river: rc}
	b := book.New(pool, shopsSvc, openings, book.Config{StaleAfter: time.Minute, Queue: rc, Movers: map[connectors.Source]book.Mover{
		connectors.SourceCalcom: calcom.NewClient(f.cal.URL, nil),
		connectors.SourceSquare: square.NewClient(f.sq.URL, nil),
	}})
	worker.Service = b
	f.fixture = fixture{pool: pool, shops: shopsSvc, openings: openings, shop: shop, book: b}
	require.NoError(t, rc.Start(context.Background()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = rc.Stop(ctx)
	})
	return f
}

type fastRetry struct{}

func (fastRetry) NextRetry(job *rivertype.JobRow) time.Time {
	return time.Now().Add(time.Duration(job.Attempt) * 200 * time.Millisecond)
}

// vendorMover adds a customer (move_up on) with phone and a booked 45-minute Cut at at,
// kept by source under extID, as its connector's webhook records it.
func (f wbFixture) vendorMover(t *testing.T, source connectors.Source, extID, phone string, at time.Time) mover {
	t.Helper()
	ctx := context.Background()
	c, err := customertest.New(t, f.pool).Add(ctx, f.shop.ID, customers.NewCustomer{Phone: phone, Name: "C" + phone[len(phone)-3:],
		SMSOptIn: true, MoveUp: true})
	require.NoError(t, err)
	in := appt(extID, 1, connectors.StatusBooked)
	in.Source, in.Phone, in.StartsAt = source, phone, at
	res, err := f.book.Upsert(ctx, f.shop, in)
	require.NoError(t, err)
	return mover{id: c.ID, appointment: res.Appointment}
}

// moveUp declares an opening at at and moves m into it by their YES.
func (f wbFixture) moveUp(t *testing.T, m mover, at time.Time) uuid.UUID {
	t.Helper()
	ctx := context.Background()
	op, err := f.openings.Declare(ctx, f.shop, slots.NewOpening{StartsAt: at, DurationMinutes: 45, Service: "Cut", PriceCents: 2500})
	require.NoError(t, err)
	mv, err := f.book.MoveUp(ctx, f.shop, m.id, f.moveUpOffer(t, op.ID, m))
	require.NoError(t, err)
	require.Equal(t, slots.Booked, mv.Claim.Outcome)
	return op.ID
}

// settled waits until the appointment's write-back is no longer pending and its job
// finished.
func (f wbFixture) settled(t *testing.T, appointment uuid.UUID) book.WriteBack {
	t.Helper()
	var w book.WriteBack
	require.Eventually(t, func() bool {
		var err error
		w, err = f.book.WriteBackOf(context.Background(), f.shop.ID, appointment)
		require.NoError(t, err)
		return w.State != book.WriteBackPending && f.count(t, `SELECT count(*) FROM river_job WHERE kind = 'appointment_write_back'
			AND args->>'appointment_id' = $1 AND state NOT IN ('completed', 'discarded', 'cancelled')`, appointment.String()) == 0
	}, 20*time.Second, 50*time.Millisecond)
	return w
}

func (f wbFixture) calConnector(t *testing.T, key string) book.Created {
	t.Helper()
	c, err := f.book.CreateConnector(context.Background(), f.shop.ID, book.NewConnector{Kind: connectors.SourceCalcom})
	require.NoError(t, err)
	if key != "" {
		conn, err := f.book.SetAPIKey(context.Background(), f.shop.ID, c.Connector.ID, key)
		require.NoError(t, err)
		require.True(t, conn.HasAPIKey)
	}
	return c
}

// deliverCal delivers body to the cal.com connector as cal.com does: signed with the
// connector's secret, verified and read as the webhook handler does.
func (f wbFixture) deliverCal(t *testing.T, c book.Created, body []byte) book.ApplyResult {
	t.Helper()
	ctx := context.Background()
	r, err := f.book.Receiver(ctx, connectors.SourceCalcom, c.Connector.ID)
	require.NoError(t, err)
	d, err := calcom.Read(r.Secret, body, calcom.Sign(c.Secret, body))
	require.NoError(t, err)
	res, err := f.book.Apply(ctx, r, d)
	require.NoError(t, err)
	return res
}

func (f wbFixture) deliverSquare(t *testing.T, id uuid.UUID, body []byte) book.ApplyResult {
	t.Helper()
	ctx := context.Background()
	r, err := f.book.Receiver(ctx, connectors.SourceSquare, id)
	require.NoError(t, err)
	url := sqURLBase + connectors.WebhookPath(connectors.SourceSquare, id.String())
	d, err := square.Read(r.Secret, url, body, square.Sign(sqSigKey, url, body))
	require.NoError(t, err)
	res, err := f.book.Apply(ctx, r, d)
	require.NoError(t, err)
	return res
}

// bookState is what must not change when an echo arrives: the shop's appointments (by
// status), its openings and its appointment events.
func (f wbFixture) bookState(t *testing.T) [4]int {
	return [4]int{
		f.count(t, `SELECT count(*) FROM appointments WHERE shop_id = $1`, f.shop.ID),
		f.count(t, `SELECT count(*) FROM appointments WHERE shop_id = $1 AND status = 'booked'`, f.shop.ID),
		f.count(t, `SELECT count(*) FROM slot_openings WHERE shop_id = $1`, f.shop.ID),
		f.count(t, `SELECT count(*) FROM appointment_openings WHERE shop_id = $1`, f.shop.ID),
	}
}

// TestWriteBackCalcom: a move-up of a cal.com appointment, its connector holding an API
// key, is rescheduled in cal.com exactly once, though the first request fails (503) and
// the second's answer is lost after cal.com made the move (the retry finds the booking
// rescheduled and takes the new one); the job enqueued again changes nothing. The move
// leaves the list to copy, copied by "cal.com API". cal.com's BOOKING_RESCHEDULED for the
// new booking, signed and delivered twice, records nothing: no appointment for the new
// uid, no second opening of the old time.
func TestWriteBackCalcom(t *testing.T) {
	t.Parallel()
	f := setupWriteBack(t)
	ctx := context.Background()
	day := time.Now().Add(24 * time.Hour).Truncate(time.Hour).UTC()
	conn := f.calConnector(t, calKey)
	kim := f.vendorMover(t, connectors.SourceCalcom, "calKim0001", "+15555550301", day.Add(48*time.Hour))
	f.cal.Add("calKim0001", kim.appointment.StartsAt, 45, "+15555550301")
	f.cal.mu.Lock()
	f.cal.Fail, f.cal.FailTimes, f.cal.Lose = 503, 1, true
	f.cal.mu.Unlock()

	f.moveUp(t, kim, day)
	w := f.settled(t, kim.appointment.ID)
	require.Equal(t, book.WriteBackWritten, w.State, w.Error)
	require.Equal(t, "cal.com API", w.By)
	require.True(t, w.To.Equal(day))
	require.Equal(t, 1, f.cal.count(&f.cal.Reschedules), "rescheduled once through the failure and the lost answer")
	old := f.cal.Booking("calKim0001")
	require.Equal(t, "cancelled", old.Status)
	require.Equal(t, old.RescheduledToUID, w.NewExternalID, "the new booking is known")
	require.True(t, sameInstant(f.cal.Booking(w.NewExternalID).Start, day))
	moves, err := f.book.MovesToCopy(ctx, f.shop.ID, time.Now())
	require.NoError(t, err)
	require.Empty(t, moves, "written: nothing to copy")

	// The job again (a redelivery of the enqueue) and WriteBack again do nothing.
	requests := f.cal.count(&f.cal.Requests)
	_, err = f.river.Insert(ctx, jobs.AppointmentWriteBack{ShopID: f.shop.ID, AppointmentID: kim.appointment.ID}, nil)
	require.NoError(t, err)
	out, err := f.book.WriteBack(ctx, f.shop.ID, kim.appointment.ID, false)
	require.NoError(t, err)
	require.Equal(t, book.OutcomeDone, out)
	time.Sleep(300 * time.Millisecond)
	require.Equal(t, requests, f.cal.count(&f.cal.Requests))
	require.Equal(t, 1, f.count(t, `SELECT count(*) FROM river_job WHERE kind = 'appointment_write_back'`), "unique per move")

	// cal.com's webhook of our reschedule, delivered twice.
	before := f.bookState(t)
	echo := f.cal.echoes()
	require.Len(t, echo, 1)
	res := f.deliverCal(t, conn, echo[0])
	require.Equal(t, book.ResultDuplicate, f.deliverCal(t, conn, echo[0]).Result)
	require.Equal(t, before, f.bookState(t))
	require.Equal(t, 0, f.count(t, `SELECT count(*) FROM appointments WHERE external_id = $1`, w.NewExternalID))
	require.Equal(t, book.ResultApplied, res.Result)
	require.Equal(t, 2, res.Echoes, "the new booking and the old one, both ours")
	require.Empty(t, res.Results)
	a, err := f.book.Get(ctx, f.shop.ID, kim.appointment.ID)
	require.NoError(t, err)
	require.Equal(t, connectors.StatusMoved, a.Status)
	require.Equal(t, 1, a.Releases, "the old time was declared once")
}

// TestWriteBackCalcomEchoFirst: cal.com's webhook for our reschedule arrives before the
// answer to it: it is known as ours all the same (by the booking it replaces and the
// time written), and the write-back completes with the uid it named.
func TestWriteBackCalcomEchoFirst(t *testing.T) {
	t.Parallel()
	f := setupWriteBack(t)
	day := time.Now().Add(24 * time.Hour).Truncate(time.Hour).UTC()
	conn := f.calConnector(t, calKey)
	lou := f.vendorMover(t, connectors.SourceCalcom, "calLou0001", "+15555550302", day.Add(72*time.Hour))
	f.cal.Add("calLou0001", lou.appointment.StartsAt, 45, "+15555550302")
	echoes := make(chan book.ApplyResult, 1)
	f.cal.mu.Lock()
	f.cal.BeforeAnswer = func(body []byte) { echoes <- f.deliverCal(t, conn, body) }
	f.cal.mu.Unlock()
	before := f.bookState(t)

	f.moveUp(t, lou, day)
	w := f.settled(t, lou.appointment.ID)
	require.Equal(t, book.WriteBackWritten, w.State)
	require.Equal(t, 2, (<-echoes).Echoes)
	require.Equal(t, f.cal.Booking("calLou0001").RescheduledToUID, w.NewExternalID)
	after := f.bookState(t)
	// The move itself: one opening more (the time Lou left) and its claim, Lou's
	// appointment no longer booked; the echo added nothing to it.
	require.Equal(t, [4]int{before[0], before[1] - 1, before[2] + 2, before[3] + 1}, after)
}

// TestWriteBackSquare: a move-up of a Square appointment updates the booking with its
// version; someone else's change in between (409 VERSION_MISMATCH) is read again and
// the update made once. Square's booking.updated of our update, signed over the
// notification URL and delivered twice, changes nothing; delivered before the answer
// (another move), it is known as ours too.
func TestWriteBackSquare(t *testing.T) {
	t.Parallel()
	f := setupWriteBack(t)
	ctx := context.Background()
	day := time.Now().Add(24 * time.Hour).Truncate(time.Hour).UTC()
	c, err := f.book.CreateConnector(ctx, f.shop.ID, book.NewConnector{Kind: connectors.SourceSquare, SignatureKey: sqSigKey})
	require.NoError(t, err)
	_, err = f.book.SetAPIKey(ctx, f.shop.ID, c.Connector.ID, sqToken)
	require.NoError(t, err)
	ana := f.vendorMover(t, connectors.SourceSquare, "sqAna0001", "+15555550303", day.Add(48*time.Hour))
	f.sq.Add("sqAna0001", ana.appointment.StartsAt, 45, 1)
	f.sq.mu.Lock()
	f.sq.Bump = 1
	f.sq.mu.Unlock()

	f.moveUp(t, ana, day)
	w := f.settled(t, ana.appointment.ID)
	require.Equal(t, book.WriteBackWritten, w.State, w.Error)
	require.Equal(t, "Square API", w.By)
	require.Equal(t, 1, f.sq.count(&f.sq.Conflicts), "the version changed under us once")
	require.Equal(t, 1, f.sq.count(&f.sq.Updates))
	b := f.sq.Booking("sqAna0001")
	require.True(t, sameInstant(b.StartAt, day))
	require.Equal(t, int64(3), b.Version, "1, someone's change, our update")

	before := f.bookState(t)
	echo := f.sq.echoes()
	require.Len(t, echo, 1)
	res := f.deliverSquare(t, c.Connector.ID, echo[0])
	require.Equal(t, book.ResultDuplicate, f.deliverSquare(t, c.Connector.ID, echo[0]).Result)
	a, err := f.book.Get(ctx, f.shop.ID, ana.appointment.ID)
	require.NoError(t, err)
	require.Equal(t, connectors.StatusMoved, a.Status, "not booked again at its new time: the YES's booking holds it")
	require.Equal(t, 1, a.Releases)
	require.Equal(t, before, f.bookState(t))
	require.Equal(t, 1, res.Echoes)

	// The echo before the answer.
	bo := f.vendorMover(t, connectors.SourceSquare, "sqBo0001", "+15555550304", day.Add(96*time.Hour))
	f.sq.Add("sqBo0001", bo.appointment.StartsAt, 45, 4)
	echoes := make(chan book.ApplyResult, 1)
	f.sq.mu.Lock()
	f.sq.BeforeAnswer = func(body []byte) { echoes <- f.deliverSquare(t, c.Connector.ID, body) }
	f.sq.mu.Unlock()
	f.moveUp(t, bo, day.Add(2*time.Hour))
	w = f.settled(t, bo.appointment.ID)
	require.Equal(t, book.WriteBackWritten, w.State, w.Error)
	require.Equal(t, 1, (<-echoes).Echoes)
	bb, err := f.book.Get(ctx, f.shop.ID, bo.appointment.ID)
	require.NoError(t, err)
	require.Equal(t, connectors.StatusMoved, bb.Status)
	require.Equal(t, 2, f.sq.count(&f.sq.Updates))
}

// TestWriteBackRevokedKey: cal.com refusing the key (401) stops the job at once and
// leaves the move on the list to copy, with the reason in words; Square's booking gone
// (404) likewise. A key cleared while a move waits leaves it to the owner too.
func TestWriteBackRevokedKey(t *testing.T) {
	t.Parallel()
	f := setupWriteBack(t)
	ctx := context.Background()
	day := time.Now().Add(24 * time.Hour).Truncate(time.Hour).UTC()
	f.calConnector(t, "cal_live_revoked000")
	kim := f.vendorMover(t, connectors.SourceCalcom, "calKim0002", "+15555550311", day.Add(48*time.Hour))
	f.cal.Add("calKim0002", kim.appointment.StartsAt, 45, "")

	f.moveUp(t, kim, day)
	w := f.settled(t, kim.appointment.ID)
	require.Equal(t, book.WriteBackFailed, w.State)
	require.Contains(t, w.Error, "cal.com refused the connector's API key")
	require.Contains(t, w.Error, "Invalid API Key")
	require.NotContains(t, w.Error, "cal_live_revoked000", "never the key")
	require.Equal(t, 1, f.cal.count(&f.cal.Requests), "no retry of a refused key")
	require.Equal(t, "accepted", f.cal.Booking("calKim0002").Status)
	moves, err := f.book.MovesToCopy(ctx, f.shop.ID, time.Now())
	require.NoError(t, err)
	require.Len(t, moves, 1)
	require.Equal(t, kim.appointment.ID, moves[0].AppointmentID)
	require.Equal(t, w.Error, moves[0].Problem)
	ok, err := f.book.MarkCopied(ctx, f.shop.ID, kim.appointment.ID, time.Now())
	require.NoError(t, err)
	require.True(t, ok, "the owner copies it by hand")

	c, err := f.book.CreateConnector(ctx, f.shop.ID, book.NewConnector{Kind: connectors.SourceSquare, SignatureKey: sqSigKey})
	require.NoError(t, err)
	_, err = f.book.SetAPIKey(ctx, f.shop.ID, c.Connector.ID, sqToken)
	require.NoError(t, err)
	gone := f.vendorMover(t, connectors.SourceSquare, "sqGone0001", "+15555550312", day.Add(50*time.Hour))
	f.moveUp(t, gone, day.Add(time.Hour))
	w = f.settled(t, gone.appointment.ID)
	require.Equal(t, book.WriteBackFailed, w.State)
	require.Contains(t, w.Error, "Square has no such booking any more")

	// The key cleared before the job runs: the move is the owner's, told why.
	_, err = f.book.ClearAPIKey(ctx, f.shop.ID, c.Connector.ID)
	require.NoError(t, err)
	cleared := f.vendorMover(t, connectors.SourceSquare, "sqCleared01", "+15555550313", day.Add(52*time.Hour))
	f.moveUp(t, cleared, day.Add(3*time.Hour))
	_, err = f.book.WriteBackOf(ctx, f.shop.ID, cleared.appointment.ID)
	require.ErrorIs(t, err, book.ErrNoWriteBack, "no key when it moved: listed to copy as before")
}

// TestNoKeyListsMovesToCopy: without a key (or without a queue), a move is not written
// back, no job is enqueued, and it is listed to copy as before.
func TestNoKeyListsMovesToCopy(t *testing.T) {
	t.Parallel()
	f := setupWriteBack(t)
	ctx := context.Background()
	day := time.Now().Add(24 * time.Hour).Truncate(time.Hour).UTC()
	f.calConnector(t, "")
	kim := f.vendorMover(t, connectors.SourceCalcom, "calKim0003", "+15555550321", day.Add(48*time.Hour))
	f.moveUp(t, kim, day)
	_, err := f.book.WriteBackOf(ctx, f.shop.ID, kim.appointment.ID)
	require.ErrorIs(t, err, book.ErrNoWriteBack)
	require.Equal(t, 0, f.count(t, `SELECT count(*) FROM river_job WHERE kind = 'appointment_write_back'`))
	moves, err := f.book.MovesToCopy(ctx, f.shop.ID, time.Now())
	require.NoError(t, err)
	require.Len(t, moves, 1)
	require.Empty(t, moves[0].Problem)
	require.Zero(t, f.cal.count(&f.cal.Requests))
}

// TestAPIKeys: a key is taken by cal.com and Square connectors only, cal.com's by its
// prefix, and is never shown; another shop's connector is not found.
func TestAPIKeys(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	cal, err := f.book.CreateConnector(ctx, f.shop.ID, book.NewConnector{Kind: connectors.SourceCalcom})
	require.NoError(t, err)
	feed, err := f.book.CreateConnector(ctx, f.shop.ID, book.NewConnector{Kind: connectors.SourceICS, URL: "https://calendar.example.test/basic.ics"})
	require.NoError(t, err)
	for name, c := range map[string]struct {
		id  uuid.UUID
		key string
	}{
		"not cal.com's":     {cal.Connector.ID, "sk_live_123"},
		"empty":             {cal.Connector.ID, "  "},
		"two words":         {cal.Connector.ID, "cal_live_1 2"},
		"a feed takes none": {feed.Connector.ID, "cal_live_123"},
	} {
		_, err := f.book.SetAPIKey(ctx, f.shop.ID, c.id, c.key)
		require.Error(t, err, name)
	}
	conn, err := f.book.SetAPIKey(ctx, f.shop.ID, cal.Connector.ID, " cal_live_abc123 ")
	require.NoError(t, err)
	require.True(t, conn.HasAPIKey)
	var stored string
	require.NoError(t, f.pool.QueryRow(ctx, `SELECT api_key FROM connectors WHERE id = $1`, cal.Connector.ID).Scan(&stored))
	require.NotContains(t, stored, "cal_live_abc123", "sealed")
	_, err = f.book.SetAPIKey(ctx, uuid.New(), cal.Connector.ID, "cal_live_abc123")
	require.ErrorIs(t, err, book.ErrConnectorNotFound)
	conn, err = f.book.ClearAPIKey(ctx, f.shop.ID, cal.Connector.ID)
	require.NoError(t, err)
	require.False(t, conn.HasAPIKey)
	require.NoError(t, f.book.CheckConnectorKeys(ctx))
}

func sameInstant(s string, t time.Time) bool {
	v, err := time.Parse(time.RFC3339Nano, s)
	return err == nil && v.Equal(t)
}

// TestWriteBackGivesUpAfterItsAttempts: cal.com failing every attempt (503) is retried
// on River's schedule up to jobs.WriteBackAttempts, then the move is left to the owner
// with the last reason; nothing was rescheduled.
func TestWriteBackGivesUpAfterItsAttempts(t *testing.T) {
	t.Parallel()
	f := setupWriteBack(t)
	ctx := context.Background()
	day := time.Now().Add(24 * time.Hour).Truncate(time.Hour).UTC()
	f.calConnector(t, calKey)
	kim := f.vendorMover(t, connectors.SourceCalcom, "calKim0004", "+15555550331", day.Add(48*time.Hour))
	f.cal.Add("calKim0004", kim.appointment.StartsAt, 45, "")
	f.cal.mu.Lock()
	f.cal.Fail, f.cal.FailTimes = 503, 1000
	f.cal.mu.Unlock()

	f.moveUp(t, kim, day)
	w := f.settled(t, kim.appointment.ID)
	require.Equal(t, book.WriteBackFailed, w.State)
	require.Equal(t, "cal.com failed to answer (503).", w.Error)
	require.Equal(t, jobs.WriteBackAttempts-1, w.Attempts, "every attempt but the last counted as passing")
	f.cal.mu.Lock()
	require.Equal(t, jobs.WriteBackAttempts, f.cal.Requests)
	require.Zero(t, f.cal.Reschedules)
	f.cal.mu.Unlock()
	moves, err := f.book.MovesToCopy(ctx, f.shop.ID, time.Now())
	require.NoError(t, err)
	require.Len(t, moves, 1)
	require.Equal(t, w.Error, moves[0].Problem)
}
