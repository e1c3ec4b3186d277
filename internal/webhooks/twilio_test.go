package webhooks_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/cooldown"
	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/httperr"
	"github.com/slotrecovery/slotrecovery/internal/inbound"
	"github.com/slotrecovery/slotrecovery/internal/redislock"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/sms/twilio"
	"github.com/slotrecovery/slotrecovery/internal/testkit/customertest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/redistest"
	"github.com/slotrecovery/slotrecovery/internal/webhooks"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// twilioWorld is the Twilio webhook over real HTTP, with the real services on the
// test's own database and Redis prefix, and one shop.
type twilioWorld struct {
	pool      *pgxpool.Pool
	queue     *river.Client[pgx.Tx]
	shops     *shops.Service
	customers *customers.Service
	slots     *slots.Service
	in        *inbound.Service
	shop      shops.Shop
	srv       *httptest.Server
}

func newTwilioWorld(t *testing.T) twilioWorld {
	t.Helper()
	ctx := context.Background()
	var w twilioWorld
	w.pool, _ = pgtest.New(t)
	rdb, prefix := redistest.New(t)
	var err error
	w.queue, err = river.NewClient(riverpgxv5.New(w.pool), &river.Config{})
	require.NoError(t, err)
	cool, err := cooldown.New(rdb, cooldown.Config{Prefix: prefix})
	require.NoError(t, err)
	watcher := redislock.NewWatcher(rdb, prefix+slots.LockChannel)
	t.Cleanup(func() { _ = watcher.Close() })
	w.shops = shops.New(w.pool, shops.Config{})
	w.customers = customertest.New(t, w.pool)
	w.slots = slots.New(w.pool, w.queue, slots.RedisLocker(redislock.New(rdb), watcher, prefix+slots.LockChannel, nil), cool, slots.Config{KeyPrefix: prefix})
	w.in = inbound.New(w.pool, w.queue, w.shops, w.customers, w.slots, nil, inbound.Config{})
	w.shop, _, err = w.shops.Create(ctx, shops.NewShop{Name: "Ana's Salon", Timezone: "Europe/London", SMSNumber: "+447700900001",
		Currency: "gbp", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	h := &webhooks.Twilio{Inbound: w.in, Validator: twilio.NewValidator(testToken), Logger: slog.New(slog.DiscardHandler)}
	e := echo.New()
	e.HTTPErrorHandler = httperr.Handler(nil)
	e.POST(webhooks.TwilioPath, h.Handle)
	w.srv = httptest.NewServer(e)
	t.Cleanup(w.srv.Close)
	h.PublicURL = w.srv.URL
	return w
}

// TestWrittenBackAnswersAreMarked: over real HTTP, with the real services on the test's
// own database and Redis prefix, every answer the handler writes back is marked as
// such, whatever its outcome (the booked one also tells its booking), so the sweeper
// texts none of them again.
func TestWrittenBackAnswersAreMarked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newTwilioWorld(t)
	pool, queue, shopsSvc, slotsSvc, in, shop, srv := w.pool, w.queue, w.shops, w.slots, w.in, w.shop, w.srv
	op, err := slotsSvc.Declare(ctx, shop, slots.NewOpening{StartsAt: time.Now().Add(5 * time.Hour), DurationMinutes: 30, Service: "Cut", PriceCents: 2500})
	require.NoError(t, err)
	var phones []string
	for _, phone := range []string{"+447700900101", "+447700900102"} {
		c, err := w.customers.Add(ctx, shop.ID, customers.NewCustomer{Phone: phone, SMSOptIn: true})
		require.NoError(t, err)
		_, err = pool.Exec(ctx, `INSERT INTO slot_offers (opening_id, customer_id, shop_id, generation, wave, status, created_at, sent_at)
			VALUES ($1, $2, $3, 1, 1, 'sent', now(), now())`, op.ID, c.ID, shop.ID)
		require.NoError(t, err)
		phones = append(phones, phone)
	}

	text := func(sid, from, body string) string {
		t.Helper()
		form := url.Values{"MessageSid": {sid}, "From": {from}, "To": {shop.SMSNumber}, "Body": {body}}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+webhooks.TwilioPath, strings.NewReader(form.Encode()))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set(webhooks.SignatureHeader, twilio.Signature(testToken, srv.URL+webhooks.TwilioPath, form))
		res, err := srv.Client().Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		_, err = io.ReadAll(res.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, res.StatusCode)
		return res.Header.Get(webhooks.OutcomeHeader)
	}

	require.Equal(t, "booked", text("SMbooked", phones[0], "YES"))
	require.Equal(t, "taken", text("SMtaken", phones[1], "YES"))
	require.Equal(t, "help", text("SMhelp", phones[1], "HELP"))
	require.Equal(t, "no_offer", text("SMstranger", "+447700900999", "YES"))
	require.Equal(t, "booked", text("SMbooked", phones[0], "YES"), "a redelivery replays the answer")

	// The marks are written in the background after the answers are flushed: wait for them.
	require.NoError(t, in.Drain(ctx))
	var unmarked int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM inbound_messages WHERE answered_at IS NULL`).Scan(&unmarked))
	require.Zero(t, unmarked, "every answer written back is marked")
	var marked int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM inbound_messages WHERE answered_at IS NOT NULL AND outcome IS NOT NULL`).Scan(&marked))
	require.Equal(t, 4, marked)
	var told *time.Time
	require.NoError(t, pool.QueryRow(ctx, `SELECT customer_told_at FROM bookings WHERE opening_id = $1`, op.ID).Scan(&told))
	require.NotNil(t, told, "the booked answer reached the customer: no notice")

	later := inbound.New(pool, queue, shopsSvc, w.customers, slotsSvc, nil, inbound.Config{Now: func() time.Time { return time.Now().Add(time.Minute) }})
	n, err := later.Sweep(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "nothing to text again")
}

// TestAMarkNeverHoldsUpTheConnection: Twilio sends its next text on the same kept-alive
// connection, and Go's server reads it only once the handler before has returned. The
// mark of an answer written back (here held up by a row lock, as by a slow Postgres)
// must not keep the next text waiting: it is answered while the mark still waits, and
// both are marked once the lock goes.
func TestAMarkNeverHoldsUpTheConnection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newTwilioWorld(t)
	pool, in, shop, srv := w.pool, w.in, w.shop, w.srv

	// One connection, kept alive; a request that waits for the mark fails, not hangs.
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxConnsPerHost: 1}}
	t.Cleanup(client.CloseIdleConnections)
	text := func(sid, body string) (outcome string, reused bool) {
		t.Helper()
		form := url.Values{"MessageSid": {sid}, "From": {"+447700900101"}, "To": {shop.SMSNumber}, "Body": {body}}
		trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }}
		req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodPost, srv.URL+webhooks.TwilioPath, strings.NewReader(form.Encode()))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set(webhooks.SignatureHeader, twilio.Signature(testToken, srv.URL+webhooks.TwilioPath, form))
		res, err := client.Do(req)
		require.NoError(t, err, "text %s not answered", sid)
		defer res.Body.Close()
		_, err = io.ReadAll(res.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, res.StatusCode)
		return res.Header.Get(webhooks.OutcomeHeader), reused
	}

	outcome, _ := text("SMfirst", "HELP")
	require.Equal(t, "help", outcome)
	require.NoError(t, in.Drain(ctx))
	// Twilio redelivers SMfirst (its first answer was late, say) while something holds
	// the stored text's row: the replayed answer's mark waits for the lock.
	_, err := pool.Exec(ctx, `UPDATE inbound_messages SET answered_at = NULL WHERE message_sid = 'SMfirst'`)
	require.NoError(t, err)
	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	_, err = tx.Exec(ctx, `SELECT 1 FROM inbound_messages WHERE message_sid = 'SMfirst' FOR UPDATE`)
	require.NoError(t, err)
	outcome, reused := text("SMfirst", "HELP")
	require.Equal(t, "help", outcome)
	require.True(t, reused, "the redelivery came on the first text's connection")
	require.Eventually(t, func() bool {
		var waiting int
		err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%InboundMarkAnswered%'`).Scan(&waiting)
		return err == nil && waiting == 1
	}, 10*time.Second, 10*time.Millisecond, "the replayed answer's mark never waited for the lock")

	outcome, reused = text("SMnext", "HELP")
	require.Equal(t, "help", outcome, "the next text was answered while the mark waited")
	require.True(t, reused, "the next text came on the same connection")

	require.NoError(t, tx.Rollback(ctx))
	require.NoError(t, in.Drain(ctx))
	var unmarked int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM inbound_messages WHERE answered_at IS NULL`).Scan(&unmarked))
	require.Zero(t, unmarked, "both answers marked once the lock went")
}
