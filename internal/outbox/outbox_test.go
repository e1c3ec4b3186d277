package outbox_test

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/metrics"
	"github.com/slotrecovery/slotrecovery/internal/outbox"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/sms"
	"github.com/slotrecovery/slotrecovery/internal/sms/twilio"
	"github.com/slotrecovery/slotrecovery/internal/testkit/customertest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/twiliofake"
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
	svc        *outbox.Service
	fake       *twiliofake.Server
	texter     outbox.Texter
	shops      *shops.Service
	customers  *customers.Service
	shop       shops.Shop
	phone      string
	customerID uuid.UUID
	pool       *pgxpool.Pool
}

func newWorld(t *testing.T, wrap func(outbox.Texter) outbox.Texter) *world {
	t.Helper()
	return newWorldWith(t, wrap, nil)
}

func newWorldWith(t *testing.T, wrap func(outbox.Texter) outbox.Texter, m *metrics.Metrics) *world {
	t.Helper()
	pool, _ := pgtest.New(t)
	fake := twiliofake.New(t)
	texter, err := twilio.New(twilio.Config{AccountSID: twiliofake.TestAccountSID, AuthToken: twiliofake.TestAuthToken, APIURL: fake.URL()})
	require.NoError(t, err)
	w := &world{fake: fake, texter: texter, shops: shops.New(pool, shops.Config{}), customers: customertest.New(t, pool), pool: pool}
	if wrap != nil {
		w.texter = wrap(texter)
	}
	w.svc = outbox.New(pool, w.texter, w.customers, noBookings{}, outbox.Config{Metrics: m})
	ctx := context.Background()
	w.shop, _, err = w.shops.Create(ctx, shops.NewShop{Name: "Ana's Salon", Timezone: "Europe/London", SMSNumber: "+447700900001",
		Currency: "gbp", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	c, err := w.customers.Add(ctx, w.shop.ID, customers.NewCustomer{Phone: "+447700900111", Name: "Bea", SMSOptIn: true})
	require.NoError(t, err)
	w.phone, w.customerID = c.Phone, c.ID
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

// TestStrangersOptOutStopsQueuedTexts: a number that is no customer of the shop (an
// owner's conversation with a stranger, the owner's own alert phone) says stop after a
// text to it was queued: the text is not sent, whatever words the opt-out used (it is
// kept as a suppression of the number), and the inbox shows it not sent.
func TestStrangersOptOutStopsQueuedTexts(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	ctx := context.Background()
	const stranger = "+447700900222"
	job := jobs.Text{Key: "inbox_reply:" + uuid.NewString(), ShopID: w.shop.ID, From: w.shop.SMSNumber, To: stranger, Body: "Hi, who is this?"}
	require.NoError(t, w.customers.OptOutNumber(ctx, w.shop.ID, stranger)) // "please stop texting me"
	require.NoError(t, w.svc.SendText(ctx, job))
	require.Empty(t, w.fake.MessagesTo(stranger), "a stranger's opt-out is honoured when the text is sent")

	// Another stranger who never said stop is texted.
	other := job
	other.Key, other.To = "inbox_reply:"+uuid.NewString(), "+447700900333"
	require.NoError(t, w.svc.SendText(ctx, other))
	require.Len(t, w.fake.MessagesTo(other.To), 1)
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

// TestRefusedTextIsTreatedLikeAnOffer: a transactional text (a confirmation, a payment
// link) the provider refuses for good is handled as a refused offer text is: counted by
// its error code; a problem with the shop's own number or account (21408 region not
// enabled, 21612 this From cannot reach that To) shows on the owner's banner and leaves
// the customer alone; a number that cannot receive texts (21614 not a mobile, 21610
// opted out at the carrier) marks the customer unreachable. The job gives up (retrying
// cannot help) and nothing went out.
func TestRefusedTextIsTreatedLikeAnOffer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		code            int
		account         bool
		wantUnreachable bool
	}{{21408, true, false}, {21612, true, false}, {21614, false, true}, {21610, false, true}} {
		t.Run(strconv.Itoa(tc.code), func(t *testing.T) {
			t.Parallel()
			reg := prometheus.NewRegistry()
			w := newWorldWith(t, nil, metrics.New(reg))
			ctx := context.Background()
			w.fake.FailNext(1, tc.code, 400)
			err := w.svc.SendText(ctx, w.text("confirmed:"+uuid.NewString()))
			var cancel *river.JobCancelError
			require.ErrorAs(t, err, &cancel, "a refusal retrying cannot fix ends the job")
			require.Empty(t, w.fake.MessagesTo(w.phone))

			got, err := w.shops.Get(ctx, w.shop.ID)
			require.NoError(t, err)
			c, err := w.customers.Get(ctx, w.shop.ID, w.customerID)
			require.NoError(t, err)
			if tc.account {
				require.NotNil(t, got.SMSProblem, "the owner is shown the shop's own problem")
				require.Equal(t, tc.code, got.SMSProblem.Code)
				require.Nil(t, c.UnreachableAt, "not the customer's fault")
			} else {
				require.Nil(t, got.SMSProblem, "the customer's number, not the shop's")
				require.Equal(t, tc.wantUnreachable, c.UnreachableAt != nil, "the customer cannot receive texts")
			}
			require.Equal(t, 1.0, counter(t, reg, "slotrecovery_twilio_send_errors_total", "code", strconv.Itoa(tc.code)))
			wantAccount := 0.0
			if tc.account {
				wantAccount = 1
			}
			require.Equal(t, wantAccount, counter(t, reg, "slotrecovery_sms_account_errors_total", "code", strconv.Itoa(tc.code)))
		})
	}
}

// counter is the value of the counter named name whose label has value (0 when none).
func counter(t *testing.T, g prometheus.Gatherer, name, label, value string) float64 {
	t.Helper()
	mfs, err := g.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// TestCarrierOptOutOfAStrangerIsKept: a text to a number that is not a customer (an
// answer to a stranger's text) refused because the number opted out at the carrier
// (21610) records the number's suppression: adding the number later keeps it
// opted out, as a STOP would. A refused text to a customer opts the customer out too.
func TestCarrierOptOutOfAStrangerIsKept(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	ctx := context.Background()
	const stranger = "+447700900222"
	w.fake.FailNumber(stranger, 21610, 400)
	job := w.text("reply:SM" + uuid.NewString())
	job.To = stranger
	err := w.svc.SendText(ctx, job)
	var cancel *river.JobCancelError
	require.ErrorAs(t, err, &cancel, "retrying cannot help")
	c, err := w.customers.Add(ctx, w.shop.ID, customers.NewCustomer{Phone: stranger, SMSOptIn: true})
	require.NoError(t, err)
	require.Equal(t, customers.StatusOptedOut, c.Status(), "the carrier's opt-out is kept for the number")

	w.fake.FailNumber(w.phone, 21610, 400)
	require.ErrorAs(t, w.svc.SendText(ctx, w.text("confirmed:"+uuid.NewString())), &cancel)
	got, err := w.customers.Get(ctx, w.shop.ID, w.customerID)
	require.NoError(t, err)
	require.Equal(t, customers.StatusOptedOut, got.Status(), "a customer the carrier says opted out")
}
