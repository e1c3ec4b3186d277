package outbox_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/outbox"
	"github.com/slotrecovery/slotrecovery/internal/pgtest"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/sms"
	"github.com/slotrecovery/slotrecovery/internal/sms/twilio"
	"github.com/slotrecovery/slotrecovery/internal/twiliofake"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

type noBookings struct{}

func (noBookings) BookingStatus(context.Context, uuid.UUID) (string, error) { return "", nil }

// flaky fails its first `fails` sends with err, then sends through next.
type flaky struct {
	next  outbox.Texter
	fails atomic.Int32
	err   error
}

func (f *flaky) Text(ctx context.Context, m sms.Message) (string, error) {
	if f.fails.Add(-1) >= 0 {
		return "", f.err
	}
	return f.next.Text(ctx, m)
}

type world struct {
	svc    *outbox.Service
	fake   *twiliofake.Server
	texter outbox.Texter
	shops  *shops.Service
	shop   shops.Shop
	phone  string
}

func newWorld(t *testing.T, wrap func(outbox.Texter) outbox.Texter) *world {
	t.Helper()
	pool, _ := pgtest.New(t)
	fake := twiliofake.New(t)
	texter, err := twilio.New(twilio.Config{AccountSID: twiliofake.TestAccountSID, AuthToken: twiliofake.TestAuthToken, APIURL: fake.URL()})
	require.NoError(t, err)
	w := &world{fake: fake, texter: texter, shops: shops.New(pool, shops.Config{})}
	if wrap != nil {
		w.texter = wrap(texter)
	}
	w.svc = outbox.New(pool, w.texter, w.shops, noBookings{}, outbox.Config{})
	ctx := context.Background()
	w.shop, _, err = w.shops.Create(ctx, shops.NewShop{Name: "Ana's Salon", Timezone: "Europe/London", SMSNumber: "+447700900001",
		Currency: "gbp", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	c, err := w.shops.AddCustomer(ctx, w.shop.ID, shops.NewCustomer{Phone: "+447700900111", Name: "Bea", SMSOptIn: true})
	require.NoError(t, err)
	w.phone = c.Phone
	return w
}

func (w *world) text(key string) jobs.Text {
	return jobs.Text{Key: key, ShopID: w.shop.ID, From: w.shop.SMSNumber, To: w.phone, Body: "You're booked", NotAfter: time.Now().Add(time.Hour)}
}

// TestTextGoesOutAtMostOnce: River runs a job again when it was killed mid-run (its
// rescue) or when it failed after the send. The second run of the same text finds the
// first one's claim and sends nothing.
func TestTextGoesOutAtMostOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	ctx := context.Background()
	job := w.text("confirmed:" + uuid.NewString())
	require.NoError(t, w.svc.SendText(ctx, job))
	require.NoError(t, w.svc.SendText(ctx, job), "the rescued run")
	require.Len(t, w.fake.MessagesTo(w.phone), 1, "texts for one key")

	// Another text for the same customer is another key: it goes out.
	require.NoError(t, w.svc.SendText(ctx, w.text("lapsed:"+uuid.NewString())))
	require.Len(t, w.fake.MessagesTo(w.phone), 2)
}

// TestTextNotSentGivesItsClaimBack: a send that surely did not happen (the provider
// could not be reached, or refused for now) is retried, and the retry sends it once.
func TestTextNotSentGivesItsClaimBack(t *testing.T) {
	t.Parallel()
	f := &flaky{err: errors.New("dial tcp 127.0.0.1:1: connection refused")}
	f.fails.Store(1)
	w := newWorld(t, func(next outbox.Texter) outbox.Texter { f.next = next; return f })
	ctx := context.Background()
	job := w.text("confirmed:" + uuid.NewString())
	require.Error(t, w.svc.SendText(ctx, job), "nothing went out: River must retry")
	require.Empty(t, w.fake.MessagesTo(w.phone))
	require.NoError(t, w.svc.SendText(ctx, job))
	require.NoError(t, w.svc.SendText(ctx, job))
	require.Len(t, w.fake.MessagesTo(w.phone), 1, "the retry sent it, once")
}

// TestTextWhoseOutcomeIsUnknownIsNotSentAgain: when the request reached the provider
// and no answer came back, the text may have gone out; a retry must not send a second
// copy.
func TestTextWhoseOutcomeIsUnknownIsNotSentAgain(t *testing.T) {
	t.Parallel()
	f := &flaky{err: sms.ErrOutcomeUnknown}
	f.fails.Store(1)
	w := newWorld(t, func(next outbox.Texter) outbox.Texter { f.next = next; return f })
	ctx := context.Background()
	job := w.text("confirmed:" + uuid.NewString())
	require.NoError(t, w.svc.SendText(ctx, job))
	require.NoError(t, w.svc.SendText(ctx, job))
	require.Empty(t, w.fake.MessagesTo(w.phone), "no second copy of a text that may have gone out")
}
