package senders_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/senders"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/sms"
)

// runJobsWith works the registration jobs with n workers until the test ends.
func (w *world) runJobsWith(t *testing.T, svc *senders.Service, n int) {
	t.Helper()
	workers := river.NewWorkers()
	river.AddWorker(workers, &senders.RegistrationWorker{Service: svc})
	c, err := river.NewClient(riverpgxv5.New(w.pool), &river.Config{
		Queues:            map[string]river.QueueConfig{jobs.QueueSenders: {MaxWorkers: n}},
		Workers:           workers,
		FetchPollInterval: 20 * time.Millisecond, FetchCooldown: 5 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	require.NoError(t, c.Start(context.Background()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = c.Stop(ctx)
	})
}

// ownSender is a shop (named name, with its own number) with its own sender.
func (w *world) ownSender(t *testing.T, svc *senders.Service, name, number, payment string) shops.Shop {
	t.Helper()
	s, _, err := w.shops.Create(t.Context(), shops.NewShop{Name: name, Timezone: "America/Chicago",
		SMSNumber: number, Currency: "usd", PaymentMode: payment})
	require.NoError(t, err)
	_, err = svc.Provision(t.Context(), s.ID, senders.NumberRequest{AreaCode: "512"})
	require.NoError(t, err)
	s, err = w.shops.Get(t.Context(), s.ID)
	require.NoError(t, err)
	return s
}

// logged records, in order, whose business each registration step reached the provider
// for.
type logged struct {
	senders.Registrar
	mu    sync.Mutex
	calls []string
}

func (l *logged) NextBusinessStep(b sms.Business, done sms.Done) (sms.Step, bool) {
	step, ok := l.Registrar.NextBusinessStep(b, done)
	run := step.Run
	step.Run = func(ctx context.Context) (string, error) {
		l.mu.Lock()
		l.calls = append(l.calls, b.Name)
		l.mu.Unlock()
		return run(ctx)
	}
	return step, ok
}

func (l *logged) log() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.calls...)
}

// TestShopsTakeTurns: one worker, two shops, turns of one step each. Shop A's registration (some fifteen calls
// before its brand) is under way when shop B submits: B's first call comes right after
// A's next one, and from then on the two alternate, instead of B waiting for A's whole
// flow (as it did when a job walked its flow in one run).
func TestShopsTakeTurns(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.cfg.PerSecond, w.cfg.Turn = 50, time.Nanosecond // a turn of one step
	reg := &logged{Registrar: w.twilio}
	svc := w.service(w.twilio, reg)
	shopA := w.ownSender(t, svc, "Shop A", "+15555550161", shops.PaymentNone)
	shopB := w.ownSender(t, svc, "Shop B", "+15555550162", shops.PaymentNone)
	w.runJobsWith(t, svc, 1)
	a, b := company(), company()
	a.BusinessName, b.BusinessName = "Shop A LLC", "Shop B LLC"

	_, err := svc.Register(t.Context(), shopA, a)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(reg.log()) >= 3 }, 20*time.Second, 5*time.Millisecond)
	_, err = svc.Register(t.Context(), shopB, b)
	require.NoError(t, err)
	atSubmit := len(reg.log())
	w.status(t, svc, shopA, senders.StatusBrandPending)
	w.status(t, svc, shopB, senders.StatusBrandPending)

	calls := reg.log()
	t.Logf("calls in order: %s", strings.Join(calls, ", "))
	firstB := -1
	for i, c := range calls {
		if c == b.BusinessName {
			firstB = i
			break
		}
	}
	require.GreaterOrEqual(t, firstB, 0)
	require.LessOrEqual(t, firstB-atSubmit, 2, "B's first call waits for at most A's call under way and one more")
	lastA, lastB := 0, 0
	for i, c := range calls {
		if c == a.BusinessName {
			lastA = i
		} else {
			lastB = i
		}
	}
	// While both have steps left, neither makes two calls in a row.
	for i := firstB + 1; i <= min(lastA, lastB); i++ {
		require.NotEqual(t, calls[i-1], calls[i], "call %d: %s twice in a row while the other shop waited", i, calls[i])
	}
}

// TestEveryRegistrationCallIsPaced: from the first profile call to the campaign's
// creation, no two of the flow's calls to the provider (lists, finds and creates
// included) come closer than the configured rate allows.
func TestEveryRegistrationCallIsPaced(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.cfg.PerSecond = 10
	svc := w.service(w.twilio, w.twilio)
	shop := w.ownSender(t, svc, "Ana's Salon", "+15555550163", shops.PaymentNone)
	w.runJobs(t, svc)
	before := len(w.fake.Calls())
	_, err := svc.Register(t.Context(), shop, company())
	require.NoError(t, err)
	w.fake.SetBrandStatus(onlyBrand(t, w.fake).SID, "APPROVED", "")
	w.status(t, svc, shop, senders.StatusCampaignPending)
	calls := w.fake.Calls()[before:]
	ops := map[string]bool{}
	for _, c := range calls {
		ops[c.Operation] = true
	}
	for _, op := range []string{"ListBrandRegistrations", "CreateBrandRegistrations", "ListUsAppToPerson", "CreateUsAppToPerson"} {
		require.True(t, ops[op], "the flow called %s", op)
	}
	// The pacer grants each call its 100 ms; the fake sees a call when it arrives, which
	// on a busy machine can be some milliseconds after its grant (one came 93 ms after
	// the one before it while both were granted on time). So the span holds the rate
	// whole, and no gap is short enough to be two calls granted together: an unpaced
	// flow makes its calls a millisecond or two apart.
	for i := 1; i < len(calls); i++ {
		gap := calls[i].At.Sub(calls[i-1].At)
		require.GreaterOrEqual(t, gap, 50*time.Millisecond, "%s came %s after %s", calls[i].Operation, gap, calls[i-1].Operation)
	}
	span := calls[len(calls)-1].At.Sub(calls[0].At)
	require.GreaterOrEqual(t, span, time.Duration(len(calls)-1)*100*time.Millisecond-30*time.Millisecond,
		"%d calls in %s: faster than 10 a second", len(calls), span)
}

// TestCampaignDeclaresTheLinksAShopMaySend: a checkout shop's campaign declares links;
// so does a shop without payments on a server that takes them (it may switch to
// checkout after registering); only a shop that can never send one declares none. The
// message flow says how this product's customers opt in, with the shop's number for
// START and the confirmation they get.
func TestCampaignDeclaresTheLinksAShopMaySend(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		payment         string
		paymentsEnabled bool
		links           string
	}{
		"checkout":                         {shops.PaymentCheckout, true, "true"},
		"no payments, server takes them":   {shops.PaymentNone, true, "true"},
		"no payments, server without them": {shops.PaymentNone, false, "false"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			w.cfg.PaymentsEnabled = tc.paymentsEnabled
			svc := w.service(w.twilio, w.twilio)
			if tc.payment == shops.PaymentCheckout {
				w.shops = shops.New(w.pool, shops.Config{PaymentsEnabled: true})
			}
			shop := w.ownSender(t, svc, "Ana's Salon", "+15555550164", tc.payment)
			_, err := svc.Register(t.Context(), shop, company())
			require.NoError(t, err)
			_, err = svc.Advance(t.Context(), shop.ID, 1)
			require.NoError(t, err)
			w.fake.SetBrandStatus(onlyBrand(t, w.fake).SID, "APPROVED", "")
			_, err = svc.Advance(t.Context(), shop.ID, 1)
			require.NoError(t, err)
			form := onlyCampaign(t, w.fake).Form
			require.Equal(t, tc.links, form.Get("HasEmbeddedLinks"))
			flow := form.Get("MessageFlow")
			require.Contains(t, flow, "START to "+shop.SMSNumber)
			require.Contains(t, flow, form.Get("OptInMessage"), "the confirmation a START gets")
			require.Contains(t, flow, "STOP")
			require.NotContains(t, flow, "ticking a box", "no box the product does not have")
			if tc.links == "true" {
				require.Contains(t, form["MessageSamples"][1], "https://", "a sample shows the link")
			}
		})
	}
}

// TestSubmissionsAreLimitedPerShop: a shop may submit 3 registrations in 24 hours; the
// 4th is refused with the code and the time the next may go, another shop is not
// affected, and a day after the first the shop may submit again.
func TestSubmissionsAreLimitedPerShop(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	var now atomic.Int64
	now.Store(time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC).UnixNano())
	w.cfg.Now = func() time.Time { return time.Unix(0, now.Load()).UTC() }
	svc := w.service(w.twilio, w.twilio)
	shop := w.ownSender(t, svc, "Ana's Salon", "+15555550165", shops.PaymentNone)
	other := w.ownSender(t, svc, "Ben's Barbers", "+15555550166", shops.PaymentNone)

	fail := func(s shops.Shop, submission int) {
		t.Helper()
		_, err := svc.Advance(t.Context(), s.ID, submission)
		require.NoError(t, err)
		brands := w.fake.Brands()
		w.fake.SetBrandStatus(brands[len(brands)-1].SID, "FAILED", "TCR: the EIN does not match")
		_, err = svc.Advance(t.Context(), s.ID, submission)
		require.NoError(t, err)
		got, err := svc.Get(t.Context(), s)
		require.NoError(t, err)
		require.Equal(t, senders.StatusFailed, got.Registration.Status)
	}
	for i := 1; i <= 3; i++ {
		_, err := svc.Register(t.Context(), shop, company())
		require.NoError(t, err, "submission %d", i)
		fail(shop, i)
		now.Add(int64(time.Hour))
	}
	_, err := svc.Register(t.Context(), shop, company())
	p, ok := problem.As(err)
	require.True(t, ok, "a problem the API answers: %v", err)
	require.Equal(t, problem.Conflict, p.Kind)
	require.Equal(t, senders.CodeSubmissionLimit, p.Code)
	require.Contains(t, p.Message, "2026-11-30T10:00:00Z", "when the first leaves the 24 hours")

	_, err = svc.Register(t.Context(), other, company())
	require.NoError(t, err, "another shop submits as usual")

	now.Store(time.Date(2026, 11, 30, 10, 0, 1, 0, time.UTC).UnixNano())
	_, err = svc.Register(t.Context(), shop, company())
	require.NoError(t, err, "a day after the first, a 4th may go")
}

// TestPollsBackOffWhileNothingChanges: a brand under review is polled after 1 minute,
// then after as long again as its status has stood (2, 4 minutes...), up to an hour; a
// change starts over. (The job's attempt, which the backoff counted, stays 1 across
// River's snoozes: the polls came every minute for as long as carriers took.)
func TestPollsBackOffWhileNothingChanges(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	var now atomic.Int64
	now.Store(time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC).UnixNano())
	w.cfg.Now = func() time.Time { return time.Unix(0, now.Load()).UTC() }
	w.cfg.PollMin, w.cfg.PollMax = time.Minute, time.Hour
	svc := w.service(w.twilio, w.twilio)
	shop := w.ownSender(t, svc, "Ana's Salon", "+15555550167", shops.PaymentNone)
	_, err := svc.Register(t.Context(), shop, company())
	require.NoError(t, err)

	advance := func(by time.Duration) time.Duration {
		t.Helper()
		now.Add(int64(by))
		wait, err := svc.Advance(t.Context(), shop.ID, 1)
		require.NoError(t, err)
		return wait
	}
	require.Equal(t, time.Minute, advance(0), "the brand was just made")
	require.Equal(t, time.Minute, advance(time.Minute))
	require.Equal(t, 2*time.Minute, advance(time.Minute))
	require.Equal(t, 4*time.Minute, advance(2*time.Minute))
	require.Equal(t, time.Hour, advance(3*time.Hour), "at most an hour")
	w.fake.SetBrandStatus(onlyBrand(t, w.fake).SID, "APPROVED", "")
	require.Equal(t, time.Minute, advance(time.Hour), "the campaign was just made: from the start again")
	require.Equal(t, 5*time.Minute, advance(5*time.Minute))
}

// TestCampaignDescribesTheJoinPage: with the join flow wired, the campaign's message
// flow names the shop's public join page and its keywords, quotes the confirmation a
// joining number answers YES to, and the samples and opt-in keywords include them.
func TestCampaignDescribesTheJoinPage(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.cfg.Join = func(shop shops.Shop) senders.JoinFlow {
		return senders.JoinFlow{PageURL: "https://slots.example.com/join/anas-salon",
			Confirmation: shop.Name + ": reply YES to get texts when a slot opens (about 2/week). Msg & data rates may apply. HELP for help, STOP to cancel.",
			Keywords:     []string{"JOIN", "UNIRME", "INSCRIRE"}}
	}
	svc := w.service(w.twilio, w.twilio)
	shop := w.ownSender(t, svc, "Ana's Salon", "+15555550165", shops.PaymentNone)
	_, err := svc.Register(t.Context(), shop, company())
	require.NoError(t, err)
	_, err = svc.Advance(t.Context(), shop.ID, 1)
	require.NoError(t, err)
	w.fake.SetBrandStatus(onlyBrand(t, w.fake).SID, "APPROVED", "")
	_, err = svc.Advance(t.Context(), shop.ID, 1)
	require.NoError(t, err)
	form := onlyCampaign(t, w.fake).Form
	flow := form.Get("MessageFlow")
	confirmation := "Ana's Salon: reply YES to get texts when a slot opens (about 2/week). Msg & data rates may apply. HELP for help, STOP to cancel."
	require.Contains(t, flow, "https://slots.example.com/join/anas-salon")
	require.Contains(t, flow, confirmation)
	require.Contains(t, flow, "JOIN, UNIRME, INSCRIRE to "+shop.SMSNumber)
	require.Contains(t, form["MessageSamples"], confirmation)
	require.Subset(t, form["OptInKeywords"], []string{"START", "JOIN", "UNIRME", "INSCRIRE"})
}
