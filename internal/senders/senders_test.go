package senders_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/pacing"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/senders"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/sms"
	"github.com/slotrecovery/slotrecovery/internal/sms/twilio"
	"github.com/slotrecovery/slotrecovery/internal/testkit/customertest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/redistest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/twiliofake"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const (
	inboundURL = "https://slots.example.com/webhooks/twilio/sms"
	statusURL  = "https://slots.example.com/webhooks/twilio/status"
)

type world struct {
	pool      *pgxpool.Pool
	queue     *river.Client[pgx.Tx]
	fake      *twiliofake.Server
	twilio    *twilio.Sender
	pacer     *pacing.Pacer
	shops     *shops.Service
	customers *customers.Service
	cfg       senders.Config
}

func newWorld(t *testing.T) *world {
	t.Helper()
	pool, _ := pgtest.New(t)
	rdb, prefix := redistest.New(t)
	queue, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	require.NoError(t, err)
	fake := twiliofake.New(t)
	tw, err := twilio.New(twilio.Config{AccountSID: twiliofake.TestAccountSID, AuthToken: twiliofake.TestAuthToken, APIURL: fake.URL()})
	require.NoError(t, err)
	return &world{pool: pool, queue: queue, fake: fake, twilio: tw, pacer: pacing.New(rdb, prefix), shops: shops.New(pool, shops.Config{}), customers: customertest.New(t, pool),
		cfg: senders.Config{InboundURL: inboundURL, StatusCallbackURL: statusURL, PerSecond: 1000,
			PollMin: 5 * time.Millisecond, PollMax: 20 * time.Millisecond}}
}

func (w *world) service(p senders.Provider, r senders.Registrar) *senders.Service {
	return senders.New(w.pool, w.queue, p, r, w.pacer, w.cfg)
}

func (w *world) shop(t *testing.T, number string) shops.Shop {
	t.Helper()
	s, _, err := w.shops.Create(t.Context(), shops.NewShop{
		Name: "Ana's Salon", Timezone: "America/Chicago", SMSNumber: number, Currency: "usd",
		PaymentMode: shops.PaymentNone,
	})
	require.NoError(t, err)
	return s
}

func problemCode(t *testing.T, err error) (string, string) {
	t.Helper()
	p, ok := problem.As(err)
	require.True(t, ok, "want a problem, got %v", err)
	return p.Code, p.Field
}

func TestProvisionBuysANumberAndItsService(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	svc := w.service(w.twilio, w.twilio)
	shop := w.shop(t, "+15555550100")

	got, err := svc.Provision(t.Context(), shop.ID, senders.NumberRequest{AreaCode: "512"})
	require.NoError(t, err)
	require.Regexp(t, `^\+1512555`, got.Number)
	require.Regexp(t, `^MG[0-9a-f]{32}$`, got.MessagingServiceSID)

	services := w.fake.Services()
	require.Len(t, services, 1)
	require.Equal(t, got.MessagingServiceSID, services[0].SID)
	require.Equal(t, inboundURL, services[0].InboundRequestURL)
	require.Equal(t, statusURL, services[0].StatusCallback)
	require.True(t, services[0].StickySender)
	numbers := w.fake.Numbers()
	require.Len(t, numbers, 1)
	require.Equal(t, []string{numbers[0].SID}, services[0].Numbers)

	after, err := w.shops.Get(t.Context(), shop.ID)
	require.NoError(t, err)
	require.Equal(t, got.Number, after.SMSNumber, "the shop texts from its new number")
	view, err := svc.Get(t.Context(), after)
	require.NoError(t, err)
	require.Equal(t, got, view)

	_, err = svc.Provision(t.Context(), shop.ID, senders.NumberRequest{AreaCode: "512"})
	require.ErrorIs(t, err, senders.ErrSenderExists)
	require.Equal(t, 1, w.fake.CallCount("CreateIncomingPhoneNumber"), "bought once")
}

func TestProvisionAdoptsANumberOfTheAccount(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	svc := w.service(w.twilio, w.twilio)
	shop := w.shop(t, "+15555550101")
	sid := w.fake.AddNumber("+18885550123")

	_, err := svc.Provision(t.Context(), shop.ID, senders.NumberRequest{PhoneNumber: "+18885550999"})
	code, field := problemCode(t, err)
	require.Equal(t, "invalid_phone_number", code)
	require.Equal(t, "phone_number", field)

	other := w.shop(t, "+18885550124")
	w.fake.AddNumber("+18885550124")
	_, err = svc.Provision(t.Context(), shop.ID, senders.NumberRequest{PhoneNumber: other.SMSNumber})
	require.ErrorIs(t, err, shops.ErrNumberTaken, "another shop texts from it")

	got, err := svc.Provision(t.Context(), shop.ID, senders.NumberRequest{PhoneNumber: "+18885550123"})
	require.NoError(t, err)
	require.Equal(t, "+18885550123", got.Number)
	require.Equal(t, []string{sid}, w.fake.Services()[0].Numbers)
	require.Zero(t, w.fake.CallCount("CreateIncomingPhoneNumber"), "nothing bought")
}

func TestProvisionRefusesBadRequests(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	svc := w.service(w.twilio, w.twilio)
	shop := w.shop(t, "+15555550102")
	w.fake.NoNumbersIn("907")
	for _, tc := range []struct {
		name        string
		req         senders.NumberRequest
		code, field string
	}{
		{"both", senders.NumberRequest{AreaCode: "512", PhoneNumber: "+15125550100"}, "invalid_phone_number", "phone_number"},
		{"bad area code", senders.NumberRequest{AreaCode: "12"}, "invalid_area_code", "area_code"},
		{"bad number", senders.NumberRequest{PhoneNumber: "5125550100"}, "invalid_phone_number", "phone_number"},
		{"none to buy", senders.NumberRequest{AreaCode: "907"}, "invalid_area_code", "area_code"},
	} {
		_, err := svc.Provision(t.Context(), shop.ID, tc.req)
		code, field := problemCode(t, err)
		require.Equal(t, tc.code, code, tc.name)
		require.Equal(t, tc.field, field, tc.name)
	}
}

// flaky wraps the provider: its hooks run before (fail) or after (lose) a call.
type flaky struct {
	senders.Provider
	mu          sync.Mutex
	failService int  // CreateService calls to fail before calling
	loseBuy     bool // the first purchase is made, then its answer lost
}

var errLost = errors.New("connection reset")

func (f *flaky) BuyNumber(ctx context.Context, code int, name string) (sms.PhoneNumber, error) {
	n, err := f.Provider.BuyNumber(ctx, code, name)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.loseBuy {
		f.loseBuy = false
		return sms.PhoneNumber{}, errLost
	}
	return n, err
}

func (f *flaky) CreateService(ctx context.Context, spec sms.ServiceSpec) (string, error) {
	f.mu.Lock()
	fail := f.failService > 0
	f.failService--
	f.mu.Unlock()
	if fail {
		return "", errLost
	}
	return f.Provider.CreateService(ctx, spec)
}

// TestProvisionRetryBuysNothingTwice: an attempt whose purchase answer was lost, then one
// that failed at the service, then one that finishes: one number, one service.
func TestProvisionRetryBuysNothingTwice(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	p := &flaky{Provider: w.twilio, failService: 1, loseBuy: true}
	svc := w.service(p, w.twilio)
	shop := w.shop(t, "+15555550103")

	_, err := svc.Provision(t.Context(), shop.ID, senders.NumberRequest{AreaCode: "512"})
	require.ErrorIs(t, err, errLost)
	_, err = svc.Provision(t.Context(), shop.ID, senders.NumberRequest{AreaCode: "512"})
	require.ErrorIs(t, err, errLost)
	got, err := svc.Provision(t.Context(), shop.ID, senders.NumberRequest{AreaCode: "512"})
	require.NoError(t, err)

	require.Equal(t, 1, w.fake.CallCount("CreateIncomingPhoneNumber"))
	require.Len(t, w.fake.Numbers(), 1)
	require.Len(t, w.fake.Services(), 1)
	require.Equal(t, w.fake.Numbers()[0].PhoneNumber, got.Number)
}

// TestProvisionConcurrentRequestsMakeOneSender: requests for one shop run one at a time.
func TestProvisionConcurrentRequestsMakeOneSender(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	svc := w.service(w.twilio, w.twilio)
	shop := w.shop(t, "+15555550104")
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			_, err := svc.Provision(context.Background(), shop.ID, senders.NumberRequest{})
			errs <- err
		}()
	}
	ok := 0
	for range 4 {
		if err := <-errs; err == nil {
			ok++
		} else {
			require.ErrorIs(t, err, senders.ErrSenderExists)
		}
	}
	require.Equal(t, 1, ok)
	require.Equal(t, 1, w.fake.CallCount("CreateIncomingPhoneNumber"))
	require.Equal(t, 1, w.fake.CallCount("CreateService"))
}

func TestTexterSendsThroughTheShopsService(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	svc := w.service(w.twilio, w.twilio)
	own := w.shop(t, "+15555550105")
	plain := w.shop(t, "+15555550106")
	sender, err := svc.Provision(t.Context(), own.ID, senders.NumberRequest{})
	require.NoError(t, err)

	texter := senders.NewTexter(w.twilio, w.pool)
	_, err = texter.Text(t.Context(), sms.Message{From: sender.Number, To: "+15555550199", Body: "A slot opened"})
	require.NoError(t, err)
	_, err = texter.Text(t.Context(), sms.Message{From: plain.SMSNumber, To: "+15555550199", Body: "A slot opened"})
	require.NoError(t, err)
	msgs := w.fake.Messages()
	require.Len(t, msgs, 2)
	require.Equal(t, sender.MessagingServiceSID, msgs[0].MessagingServiceSID)
	require.Empty(t, msgs[0].From)
	require.Empty(t, msgs[1].MessagingServiceSID)
	require.Equal(t, plain.SMSNumber, msgs[1].From, "a shop without its own sender texts as before")
}

func TestUSLocal(t *testing.T) {
	t.Parallel()
	for number, want := range map[string]bool{
		"+15125550100": true, "+18005550100": false, "+18885550100": false, "+447700900001": false, "+1512555010": false,
	} {
		require.Equal(t, want, senders.USLocal(number), number)
	}
}
