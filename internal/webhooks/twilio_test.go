package webhooks_test

import (
	"context"
	"encoding/xml"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
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
	const overrides = "rc=3&rp=all"
	v := twilio.NewValidatorWithOverrides(testToken, overrides)
	h := &webhooks.Twilio{Inbound: w.in, Validator: v, Overrides: overrides, Logger: slog.New(slog.DiscardHandler)}
	a := &webhooks.TwilioAnswered{Inbound: w.in, Validator: v, Logger: slog.New(slog.DiscardHandler)}
	e := echo.New()
	e.HTTPErrorHandler = httperr.Handler(nil)
	e.POST(webhooks.TwilioPath, h.Handle)
	e.POST(webhooks.TwilioAnsweredPath, a.Handle)
	w.srv = httptest.NewServer(e)
	t.Cleanup(w.srv.Close)
	h.PublicURL, a.PublicURL = w.srv.URL, w.srv.URL
	return w
}

// TestAnswersAreMarkedWhenTwilioTakesThem: over real HTTP, with the real services on
// the test's own database and Redis prefix, every answer goes back in a <Message> whose
// action URL names the text, the outcome and, for a booking, the booking, with the
// connection overrides as its fragment. Nothing is marked by answering: an answer is
// marked heard (the booked one also tells its booking) when Twilio requests the action
// URL, signed, with a status other than failed, and only then; an unsigned request, or
// one signed for another text, marks nothing. The sweeper then texts only the answer
// Twilio reported failed.
func TestAnswersAreMarkedWhenTwilioTakesThem(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newTwilioWorld(t)
	pool, queue, shopsSvc, slotsSvc, shop, srv := w.pool, w.queue, w.shops, w.slots, w.shop, w.srv
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
	post := func(u string, form url.Values, sig string) int {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(form.Encode()))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if sig != "" {
			req.Header.Set(webhooks.SignatureHeader, sig)
		}
		res, err := srv.Client().Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		_, err = io.ReadAll(res.Body)
		require.NoError(t, err)
		return res.StatusCode
	}
	type reply struct {
		outcome, action string
	}
	text := func(sid, from, body string) reply {
		t.Helper()
		form := url.Values{"MessageSid": {sid}, "From": {from}, "To": {shop.SMSNumber}, "Body": {body}}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+webhooks.TwilioPath, strings.NewReader(form.Encode()))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set(webhooks.SignatureHeader, twilio.Signature(testToken, srv.URL+webhooks.TwilioPath, form))
		res, err := srv.Client().Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode)
		var twiml struct {
			Message struct {
				Action string `xml:"action,attr"`
				Method string `xml:"method,attr"`
				Text   string `xml:",chardata"`
			}
		}
		require.NoError(t, xml.NewDecoder(res.Body).Decode(&twiml))
		require.NotEmpty(t, twiml.Message.Text)
		require.Equal(t, http.MethodPost, twiml.Message.Method)
		return reply{res.Header.Get(webhooks.OutcomeHeader), twiml.Message.Action}
	}
	// report requests an answer's action URL as Twilio does: without its fragment, signed
	// over the URL without it, with the answer message's own MessageSid and its status.
	report := func(action, status string) int {
		t.Helper()
		u, _, _ := strings.Cut(action, "#")
		form := url.Values{"MessageSid": {"SMreply" + status}, "SmsSid": {"SMreply" + status}, "MessageStatus": {status},
			"SmsStatus": {status}, "AccountSid": {"AC0123"}, "ApiVersion": {"2010-04-01"}, "From": {shop.SMSNumber}, "To": {phones[0]}}
		return post(u, form, twilio.Signature(testToken, u, form))
	}
	marked := func(sid string) bool {
		t.Helper()
		var m bool
		require.NoError(t, pool.QueryRow(ctx, `SELECT answered_at IS NOT NULL FROM inbound_messages WHERE message_sid = $1`, sid).Scan(&m))
		return m
	}

	booked := text("SMbooked", phones[0], "YES")
	require.Equal(t, "booked", booked.outcome)
	var bookingID string
	require.NoError(t, pool.QueryRow(ctx, `SELECT id::text FROM bookings WHERE opening_id = $1`, op.ID).Scan(&bookingID))
	require.Equal(t, srv.URL+webhooks.TwilioAnsweredPath+"?booking="+bookingID+"&for=SMbooked&outcome=booked#rc=3&rp=all", booked.action)
	taken := text("SMtaken", phones[1], "YES")
	require.True(t, strings.HasPrefix(taken.action, srv.URL+webhooks.TwilioAnsweredPath+"?for=SMtaken&outcome=taken&words=Ana%27s+Salon"),
		"a late YES's answer, stored without its words, carries them: %s", taken.action)
	require.True(t, strings.HasSuffix(taken.action, "#rc=3&rp=all"), taken.action)
	help := text("SMhelp", phones[1], "HELP")
	failed := text("SMfailed", "+447700900999", "YES")
	require.Equal(t, "no_offer", failed.outcome)
	require.Equal(t, booked, text("SMbooked", phones[0], "YES"), "a redelivery replays the answer and its action")
	for _, sid := range []string{"SMbooked", "SMtaken", "SMhelp", "SMfailed"} {
		require.False(t, marked(sid), "%s marked before Twilio reported it", sid)
	}

	// Not Twilio: unsigned, or a signature made for another text's URL.
	u, _, _ := strings.Cut(help.action, "#")
	require.Equal(t, http.StatusForbidden, post(u, url.Values{"MessageSid": {"SMx"}, "MessageStatus": {"sent"}}, ""))
	require.Equal(t, http.StatusForbidden, post(u, url.Values{"MessageSid": {"SMx"}, "MessageStatus": {"sent"}},
		twilio.Signature(testToken, strings.Replace(u, "SMhelp", "SMtaken", 1), url.Values{"MessageSid": {"SMx"}, "MessageStatus": {"sent"}})))
	require.False(t, marked("SMhelp"))

	require.Equal(t, http.StatusOK, report(booked.action, "sent"))
	require.Equal(t, http.StatusOK, report(booked.action, "delivered"), "a second report changes nothing")
	require.Equal(t, http.StatusOK, report(taken.action, "queued"))
	// Signed over the URL with its fragment, as a helper library given the configured URL signs.
	hu, _, _ := strings.Cut(help.action, "#")
	hform := url.Values{"MessageSid": {"SMreplyhelp"}, "MessageStatus": {"sent"}}
	require.Equal(t, http.StatusOK, post(hu, hform, twilio.Signature(testToken, help.action, hform)))
	require.Equal(t, http.StatusOK, report(failed.action, "failed"))
	for sid, want := range map[string]bool{"SMbooked": true, "SMtaken": true, "SMhelp": true, "SMfailed": false} {
		require.Equal(t, want, marked(sid), "%s marked", sid)
	}
	var told *time.Time
	require.NoError(t, pool.QueryRow(ctx, `SELECT customer_told_at FROM bookings WHERE opening_id = $1`, op.ID).Scan(&told))
	require.NotNil(t, told, "the booked answer reached the customer: no notice")

	later := inbound.New(pool, queue, shopsSvc, w.customers, slotsSvc, nil, inbound.Config{Now: func() time.Time { return time.Now().Add(time.Minute) }})
	n, err := later.Sweep(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n, "only the answer Twilio could not send is texted")
}
