package outbox_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/inbox"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/outbox"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/sms"
)

// slowFrom holds each text from one number for a while, as pacing to a long code's
// rate (about one a second) holds a worker.
type slowFrom struct {
	next   outbox.Texter
	number string
	hold   time.Duration
	sent   atomic.Int32
}

func (s *slowFrom) Text(ctx context.Context, m sms.Message) (string, error) {
	if m.From == s.number {
		select {
		case <-time.After(s.hold):
		case <-ctx.Done():
			return "", ctx.Err()
		}
		s.sent.Add(1)
	}
	return s.next.Text(ctx, m)
}

// TestOwnersFloodNeverHoldsAnotherShopsLink: one shop's owner queues 2,000 replies,
// each holding its worker for 5 s (its number's pace, exaggerated); another shop's
// payment link, queued after them, goes out within 3 s, through the queues as the
// server configures them (jobs.Queues). On the texts' own queue it would wait at least
// until a worker of the flood let go, 5 s.
func TestOwnersFloodNeverHoldsAnotherShopsLink(t *testing.T) {
	t.Parallel()
	var slow *slowFrom
	w := newWorld(t, func(next outbox.Texter) outbox.Texter {
		slow = &slowFrom{next: next, hold: 5 * time.Second}
		return slow
	})
	ctx := context.Background()
	busy, _, err := w.shops.Create(ctx, shops.NewShop{Name: "Busy Barbers", Timezone: "Europe/London", SMSNumber: "+447700900002",
		Currency: "gbp", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	slow.number = busy.SMSNumber

	workers := river.NewWorkers()
	river.AddWorker(workers, &outbox.TextWorker{Service: w.svc})
	rc, err := river.NewClient(riverpgxv5.New(w.pool), &river.Config{
		Queues: jobs.Queues(), Workers: workers,
		FetchCooldown: 20 * time.Millisecond, FetchPollInterval: 50 * time.Millisecond,
	})
	require.NoError(t, err)

	const flood = 2000
	require.NoError(t, pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		for i := range flood {
			if _, err := inbox.Queue(ctx, tx, rc, inbox.Outgoing{Key: "inbox_reply:" + uuid.NewString(), ShopID: busy.ID,
				From: busy.SMSNumber, To: fmt.Sprintf("+4477009%05d", i), Body: "Thanks for your message!",
				Shown: inbox.ShownAlready, ByOwner: true}); err != nil {
				return err
			}
		}
		return nil
	}))
	linkExpires := time.Now().Add(30 * time.Minute)
	require.NoError(t, pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		_, err := inbox.Queue(ctx, tx, rc, inbox.Outgoing{Key: "checkout_link:" + uuid.NewString(), ShopID: w.shop.ID,
			From: w.shop.SMSNumber, To: w.phone, CustomerID: w.customerID, Body: "Pay here: https://pay.example/x",
			NotAfter: linkExpires, At: time.Now()})
		return err
	}))

	start := time.Now()
	require.NoError(t, rc.Start(ctx))
	t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = rc.StopAndCancel(stopCtx)
	})
	require.Eventually(t, func() bool { return len(w.fake.MessagesTo(w.phone)) == 1 }, 3*time.Second, 20*time.Millisecond,
		"the other shop's payment link was not sent within 3 s; the busy shop's replies sent meanwhile: %d", slow.sent.Load())
	took := time.Since(start)
	require.Less(t, int(slow.sent.Load()), flood/2, "the flood was still going when the link went out")
	require.True(t, time.Now().Before(linkExpires), "the link was still valid")
	t.Logf("link sent %v after the workers started, with %d of the busy shop's %d replies sent", took.Round(time.Millisecond), slow.sent.Load(), flood)
}
