package inbound_test

import (
	"context"
	"encoding/xml"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
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
	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/redislock"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/sms/twilio"
	"github.com/slotrecovery/slotrecovery/internal/testkit/customertest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/redistest"
	"github.com/slotrecovery/slotrecovery/internal/webhooks"
)

// cancelToken signs the test's texts as Twilio would.
const cancelToken = "cancelbytexttoken0123456789abcde"

// smsWorld is a payment-free shop answering texts over real HTTP (the Twilio webhook,
// signed), with the real services and the ledger on the test's own database and Redis
// prefix. River does not run: the tests read the jobs the changes enqueue.
type smsWorld struct {
	t         *testing.T
	pool      *pgxpool.Pool
	queue     *river.Client[pgx.Tx]
	shops     *shops.Service
	customers *customers.Service
	slots     *slots.Service
	in        *inbound.Service
	shop      shops.Shop
	srv       *httptest.Server
	phones    int
}

func newSMSWorld(t *testing.T, cfg inbound.Config) *smsWorld {
	t.Helper()
	ctx := context.Background()
	w := &smsWorld{t: t}
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
	led := ledger.New(w.pool, w.queue, nil, ledger.Config{})
	w.in = inbound.New(w.pool, w.queue, w.shops, w.customers, w.slots, led, cfg)
	w.shop, _, err = w.shops.Create(ctx, shops.NewShop{Name: "Ana's Salon", Timezone: "Europe/London", SMSNumber: "+447700900001",
		Currency: "gbp", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	h := &webhooks.Twilio{Inbound: w.in, Validator: twilio.NewValidator(cancelToken), Logger: slog.New(slog.DiscardHandler)}
	e := echo.New()
	e.HTTPErrorHandler = httperr.Handler(nil)
	e.POST(webhooks.TwilioPath, h.Handle)
	w.srv = httptest.NewServer(e)
	t.Cleanup(w.srv.Close)
	h.PublicURL = w.srv.URL
	return w
}

// sms is one text's answer over HTTP.
type sms struct{ outcome, message string }

// text sends one signed text to the shop's number and returns its answer. It may run on
// any goroutine: a failure is returned, not fatal.
func (w *smsWorld) text(sid, from, body string) (sms, error) {
	form := url.Values{"MessageSid": {sid}, "From": {from}, "To": {w.shop.SMSNumber}, "Body": {body}}
	u := w.srv.URL + webhooks.TwilioPath
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		return sms{}, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set(webhooks.SignatureHeader, twilio.Signature(cancelToken, u, form))
	res, err := w.srv.Client().Do(req)
	if err != nil {
		return sms{}, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return sms{}, fmt.Errorf("%s: status %d", sid, res.StatusCode)
	}
	var twiml struct {
		Message struct {
			Text string `xml:",chardata"`
		}
	}
	if err := xml.NewDecoder(res.Body).Decode(&twiml); err != nil {
		return sms{}, fmt.Errorf("%s: %w", sid, err)
	}
	return sms{outcome: res.Header.Get(webhooks.OutcomeHeader), message: strings.TrimSpace(twiml.Message.Text)}, nil
}

func (w *smsWorld) must(sid, from, body string) sms {
	w.t.Helper()
	a, err := w.text(sid, from, body)
	require.NoError(w.t, err)
	return a
}

// customer adds a customer, in lang when given ("" for the shop's).
func (w *smsWorld) customer(lang string) (uuid.UUID, string) {
	w.t.Helper()
	w.phones++
	c, err := w.customers.Add(context.Background(), w.shop.ID, customers.NewCustomer{Phone: fmt.Sprintf("+4477009%05d", w.phones), SMSOptIn: true})
	require.NoError(w.t, err)
	if lang != "" {
		_, err = w.pool.Exec(context.Background(), `UPDATE customers SET language = $1 WHERE id = $2`, lang, c.ID)
		require.NoError(w.t, err)
	}
	return c.ID, c.Phone
}

// offer gives the customer a sent offer of the opening's generation.
func (w *smsWorld) offer(opening, customer uuid.UUID, generation int) {
	w.t.Helper()
	_, err := w.pool.Exec(context.Background(), `INSERT INTO slot_offers (opening_id, customer_id, shop_id, generation, wave, status, created_at, sent_at)
		VALUES ($1, $2, $3, $4, 1, 'sent', now(), now())`, opening, customer, w.shop.ID, generation)
	require.NoError(w.t, err)
}

// booked declares an opening after hours from now and has a new customer (in lang) book
// it by text; it returns the opening, the customer's phone and the booking.
func (w *smsWorld) booked(hours int, lang string) (uuid.UUID, string, uuid.UUID) {
	w.t.Helper()
	op, err := w.slots.Declare(context.Background(), w.shop, slots.NewOpening{
		StartsAt: time.Now().Add(time.Duration(hours) * time.Hour).Truncate(time.Minute), DurationMinutes: 30, Service: "Cut", PriceCents: 2500})
	require.NoError(w.t, err)
	id, phone := w.customer(lang)
	w.offer(op.ID, id, 1)
	require.Equal(w.t, "booked", w.must("SMbook-"+phone, phone, "YES").outcome)
	return op.ID, phone, w.bookingOf(op.ID)
}

func (w *smsWorld) bookingOf(opening uuid.UUID) uuid.UUID {
	w.t.Helper()
	var id uuid.UUID
	require.NoError(w.t, w.pool.QueryRow(context.Background(), `SELECT id FROM bookings WHERE opening_id = $1 ORDER BY created_at LIMIT 1`, opening).Scan(&id))
	return id
}

func (w *smsWorld) count(sql string, args ...any) int {
	w.t.Helper()
	var n int
	require.NoError(w.t, w.pool.QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}

func (w *smsWorld) str(sql string, args ...any) string {
	w.t.Helper()
	var s string
	require.NoError(w.t, w.pool.QueryRow(context.Background(), sql, args...).Scan(&s))
	return s
}

// TestBookedCustomerCancelsByText: a booked customer's "can't make it", "no puedo ir" or
// "je dois annuler" cancels the booking (outcome cancel_request), confirms it in the
// customer's language, and offers the opening again at once: a new generation with its
// first wave, which another customer's YES then books. The text and its confirmation are
// kept in the conversation.
func TestBookedCustomerCancelsByText(t *testing.T) {
	t.Parallel()
	w := newSMSWorld(t, inbound.Config{})
	for i, c := range []struct{ lang, body, confirms string }{
		{"", "Sorry, can't make it", "is cancelled"},
		{"en", "I need to cancel my appointment", "is cancelled"},
		{"es", "no puedo ir", "cancelada"},
		{"fr", "je dois annuler", "est annulé"},
	} {
		op, phone, booking := w.booked(5+i, c.lang)
		got := w.must(fmt.Sprintf("SMcancel%d", i), phone, c.body)
		require.Equal(t, "cancel_request", got.outcome, c.body)
		require.Contains(t, got.message, c.confirms, c.body)
		require.True(t, strings.HasPrefix(got.message, w.shop.Name), got.message)
		require.Equal(t, ledger.BookingCancelled, w.str(`SELECT status FROM bookings WHERE id = $1`, booking))
		require.Equal(t, "open", w.str(`SELECT status FROM slot_openings WHERE id = $1`, op))
		require.Equal(t, 1, w.count(`SELECT count(*) FROM river_job WHERE kind = 'offer_wave' AND args->>'opening_id' = $1
			AND (args->>'generation')::int = 2`, op.String()), "the reopened opening's first wave")
		require.Equal(t, 2, w.count(`SELECT count(*) FROM conversation_messages m JOIN conversations v ON v.id = m.conversation_id
			WHERE v.shop_id = $1 AND v.phone = $2 AND m.message_sid IS DISTINCT FROM 'SMbook-'||$2 AND (m.message_sid = $3 OR m.send_key = 'answer:'||$3)`,
			w.shop.ID, phone, fmt.Sprintf("SMcancel%d", i)), "the text and its confirmation in the conversation")

		// The reopened slot goes to the next customer.
		next, nextPhone := w.customer("")
		w.offer(op, next, 2)
		require.Equal(t, "booked", w.must("SMnext-"+nextPhone, nextPhone, "YES").outcome)
		require.Equal(t, 1, w.count(`SELECT count(*) FROM bookings WHERE opening_id = $1 AND status IN ('pending_payment', 'confirmed')`, op))

		// Said again, it cancels nothing more: the customer has no live booking now.
		again := w.must(fmt.Sprintf("SMagain%d", i), phone, c.body)
		require.NotEqual(t, "cancel_request", again.outcome, "nothing left to cancel: %+v", again)
		require.Equal(t, 1, w.count(`SELECT count(*) FROM bookings WHERE opening_id = $1 AND status IN ('pending_payment', 'confirmed')`, op))
	}
}

// TestCannotComeWithoutABookingIsAsBefore: "can't make it" from a customer without a
// live booking declines (their live offer, if any); "cancel my booking" without one is
// for a person; a booked customer who also holds a live offer declines the offer with
// "can't make it" and keeps the booking, while "cancel my booking" still cancels it.
func TestCannotComeWithoutABookingIsAsBefore(t *testing.T) {
	t.Parallel()
	w := newSMSWorld(t, inbound.Config{})
	op, err := w.slots.Declare(context.Background(), w.shop, slots.NewOpening{StartsAt: time.Now().Add(7 * time.Hour), DurationMinutes: 30, Service: "Cut", PriceCents: 2500})
	require.NoError(t, err)
	offered, offeredPhone := w.customer("")
	w.offer(op.ID, offered, 1)
	require.Equal(t, "declined", w.must("SMno1", offeredPhone, "can't make it").outcome)
	require.Equal(t, "declined", w.str(`SELECT status FROM slot_offers WHERE customer_id = $1`, offered))
	_, nobody := w.customer("")
	require.Equal(t, "declined", w.must("SMno2", nobody, "can't make it").outcome)
	require.Equal(t, "unrecognized", w.must("SMno3", nobody, "cancel my booking").outcome)

	bookedOp, phone, booking := w.booked(5, "")
	id := uuid.MustParse(w.str(`SELECT customer_id::text FROM bookings WHERE id = $1`, booking))
	w.offer(op.ID, id, 1)
	require.Equal(t, "declined", w.must("SMboth1", phone, "can't make it").outcome, "the live offer is what it answers")
	require.Equal(t, ledger.BookingConfirmed, w.str(`SELECT status FROM bookings WHERE id = $1`, booking))
	// The offer is taken by someone else: "can't make it" may still answer it. A person
	// asks; the booking stands.
	_, err = w.pool.Exec(context.Background(), `UPDATE slot_offers SET status = 'lost' WHERE opening_id = $1 AND customer_id = $2`, op.ID, id)
	require.NoError(t, err)
	unsure := w.must("SMboth-lost", phone, "can't make it")
	require.Equal(t, "cancel_request", unsure.outcome)
	require.Contains(t, unsure.message, "passed your cancellation on to the team")
	require.Equal(t, ledger.BookingConfirmed, w.str(`SELECT status FROM bookings WHERE id = $1`, booking))
	require.Equal(t, "cancel_request", w.must("SMboth2", phone, "cancel my booking").outcome)
	require.Equal(t, ledger.BookingCancelled, w.str(`SELECT status FROM bookings WHERE id = $1`, booking))
	require.Equal(t, "open", w.str(`SELECT status FROM slot_openings WHERE id = $1`, bookedOp))
}

// TestBareCancelFromABookedCustomerOptsOut: the whole reply CANCEL is the carriers'
// opt-out keyword: a booked customer is opted out, the booking stands, and the answer
// says so and how to cancel it.
func TestBareCancelFromABookedCustomerOptsOut(t *testing.T) {
	t.Parallel()
	w := newSMSWorld(t, inbound.Config{})
	_, phone, booking := w.booked(5, "")
	got := w.must("SMcancel", phone, "CANCEL")
	require.Equal(t, "opted_out", got.outcome)
	require.Contains(t, got.message, "still stands")
	require.Contains(t, got.message, "cancel my booking")
	require.Equal(t, ledger.BookingConfirmed, w.str(`SELECT status FROM bookings WHERE id = $1`, booking))
	require.Equal(t, 1, w.count(`SELECT count(*) FROM customers WHERE phone = $1 AND opted_out_at IS NOT NULL`, phone))
	_, stranger := w.customer("")
	require.NotContains(t, w.must("SMstop", stranger, "STOP").message, "cancel", "a customer without a booking gets the plain answer")
}

// TestCancelByTextStorm: over real HTTP and concurrently, round after round: a booked
// customer's "can't make it" (the same text delivered three times at once, and a second
// text saying it again) and two other customers' YES to the reopened slot, each saying
// YES again until they hear booked or the slot is someone's. At the end of each round:
// exactly one live booking on the opening, held by one of the two; the first booking
// cancelled once (one reopening, one new generation, one wave); the cancellation
// confirmed by one text only, and the booking by one text only; no text queued on top
// of the answers.
func TestCancelByTextStorm(t *testing.T) {
	t.Parallel()
	w := newSMSWorld(t, inbound.Config{})
	const rounds = 6
	for r := range rounds {
		op, aPhone, booking := w.booked(5+r, "")
		var others []string
		for range 2 {
			id, phone := w.customer("")
			w.offer(op, id, 2)
			others = append(others, phone)
		}
		start := make(chan struct{})
		var wg sync.WaitGroup
		var mu sync.Mutex
		answers := map[string][]sms{} // by MessageSid
		var errs []error
		record := func(sid string, a sms, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			answers[sid] = append(answers[sid], a)
		}
		cant := fmt.Sprintf("SMcant-%d", r)
		for range 3 {
			wg.Go(func() {
				<-start
				a, err := w.text(cant, aPhone, "can't make it")
				record(cant, a, err)
			})
		}
		wg.Go(func() {
			<-start
			sid := fmt.Sprintf("SMcant-again-%d", r)
			a, err := w.text(sid, aPhone, "I can't make it, sorry")
			record(sid, a, err)
		})
		held := func() bool {
			var n int
			err := w.pool.QueryRow(context.Background(), `SELECT count(*) FROM bookings WHERE opening_id = $1 AND id <> $2
				AND status IN ('pending_payment', 'confirmed')`, op, booking).Scan(&n)
			return err == nil && n > 0
		}
		for i, phone := range others {
			wg.Go(func() {
				<-start
				for try := 0; try < 500; try++ {
					sid := fmt.Sprintf("SMyes-%d-%d-%d", r, i, try)
					a, err := w.text(sid, phone, "YES")
					record(sid, a, err)
					if err != nil || a.outcome == "booked" || held() {
						return
					}
				}
			})
		}
		close(start)
		wg.Wait()
		require.Empty(t, errs, "round %d", r)

		require.Equal(t, 1, w.count(`SELECT count(*) FROM bookings WHERE opening_id = $1 AND status IN ('pending_payment', 'confirmed')`, op),
			"round %d: one live booking on the opening", r)
		holder := w.str(`SELECT c.phone FROM bookings b JOIN customers c ON c.id = b.customer_id
			WHERE b.opening_id = $1 AND b.status IN ('pending_payment', 'confirmed')`, op)
		require.Contains(t, others, holder, "round %d: the slot went to one of the others", r)
		require.Equal(t, ledger.BookingCancelled, w.str(`SELECT status FROM bookings WHERE id = $1`, booking), "round %d", r)
		require.Equal(t, 2, w.count(`SELECT generation FROM slot_openings WHERE id = $1`, op), "round %d: reopened once", r)
		require.Equal(t, 1, w.count(`SELECT count(*) FROM river_job WHERE kind = 'offer_wave' AND args->>'opening_id' = $1
			AND (args->>'generation')::int = 2`, op.String()), "round %d: one wave for the new generation", r)

		confirmations, bookedSIDs := 0, 0
		for sid, as := range answers {
			for _, a := range as[1:] {
				require.Equal(t, as[0], a, "round %d: %s answered two ways", r, sid)
			}
			if strings.Contains(as[0].message, "is cancelled") {
				confirmations++
			}
			if as[0].outcome == "booked" {
				bookedSIDs++
			}
		}
		require.Equal(t, 1, confirmations, "round %d: the cancellation confirmed once: %v", r, answers)
		require.Equal(t, 1, bookedSIDs, "round %d: the slot booked once: %v", r, answers)
		require.Zero(t, w.count(`SELECT count(*) FROM river_job WHERE kind = 'sms_text' AND args->>'to' = $1`, aPhone),
			"round %d: the answers were all the cancelling customer heard", r)
	}
}

// TestAStrangerOverTheHourlyCap: 25 texts in an hour from a number that is nobody's are
// all kept in the conversation, but only the first HourlyCap (20) raise a
// message.received event, and past it none is acknowledged; another number is not held
// to the stranger's count; and a customer over the cap (texting on and on) still books
// their live offer with YES: the cap holds back texts for a person, never a booking
// (issue 49).
func TestAStrangerOverTheHourlyCap(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newSMSWorld(t, inbound.Config{})
	require.Equal(t, 20, inbound.NumberHourlyCap, "the default cap")
	_, err := w.pool.Exec(ctx, `UPDATE shops SET notify_phone = '+447700900998' WHERE id = $1`, w.shop.ID)
	require.NoError(t, err)
	_, err = w.pool.Exec(ctx, `INSERT INTO webhook_endpoints (shop_id, url, enabled_events, secret, created_at, updated_at)
		VALUES ($1, 'https://hooks.example.com/in', '{message.received}', 'whsec_dGVzdHNlY3JldHRlc3RzZWNyZXR0ZXN0c2VjcmV0', now(), now())`, w.shop.ID)
	require.NoError(t, err)
	events := func(phone string) int {
		return w.count(`SELECT count(*) FROM webhook_events WHERE shop_id = $1 AND type = 'message.received' AND subject->>'phone' = $2`, w.shop.ID, phone)
	}
	kept := func(phone string) int {
		return w.count(`SELECT count(*) FROM conversation_messages m JOIN conversations c ON c.id = m.conversation_id
			WHERE c.shop_id = $1 AND c.phone = $2 AND m.direction = 'in'`, w.shop.ID, phone)
	}

	const stranger, flood = "+447700955555", 25
	var wg sync.WaitGroup
	answers := make([]sms, flood)
	errs := make([]error, flood)
	for i := range flood {
		wg.Go(func() {
			answers[i], errs[i] = w.text(fmt.Sprintf("SMflood%02d", i), stranger, fmt.Sprintf("hello? %d", i))
		})
	}
	wg.Wait()
	answered := 0
	for i := range flood {
		require.NoError(t, errs[i])
		require.Equal(t, "unrecognized", answers[i].outcome)
		if answers[i].message != "" {
			answered++
		}
	}
	require.Equal(t, flood, kept(stranger), "every text kept")
	require.Equal(t, inbound.NumberHourlyCap, events(stranger), "events: the cap's")
	require.LessOrEqual(t, answered, 1, "acknowledged once a day at most, and never past the cap")
	require.Equal(t, 1, w.count(`SELECT count(*) FROM river_job WHERE kind = 'sms_text' AND args->>'to' = '+447700900998'`), "one alert")
	require.Equal(t, flood, w.count(`SELECT count(*) FROM inbound_messages WHERE from_phone = $1`, stranger), "every text stored")

	// Another number is not held to the stranger's count.
	other := w.must("SMother", "+447700966666", "hi, is this the salon?")
	require.NotEmpty(t, other.message, "another number is acknowledged")
	require.Equal(t, 1, events("+447700966666"))

	// A customer over the cap still books with YES.
	op, err := w.slots.Declare(ctx, w.shop, slots.NewOpening{StartsAt: time.Now().Add(6 * time.Hour), DurationMinutes: 30, Service: "Cut", PriceCents: 2500})
	require.NoError(t, err)
	id, phone := w.customer("")
	for i := range flood {
		w.must(fmt.Sprintf("SMchatty%02d", i), phone, fmt.Sprintf("are you open on sunday? %d", i))
	}
	require.Equal(t, inbound.NumberHourlyCap, events(phone), "the customer is over the cap")
	w.offer(op.ID, id, 1)
	require.Equal(t, "booked", w.must("SMchatty-yes", phone, "YES").outcome, "a YES is never capped out of booking")
	require.Equal(t, 1, w.count(`SELECT count(*) FROM bookings WHERE opening_id = $1 AND status IN ('pending_payment', 'confirmed')`, op.ID))
}

// TestHourlyCapIsConfigured: Config.HourlyCap replaces the default.
func TestHourlyCapIsConfigured(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newSMSWorld(t, inbound.Config{HourlyCap: 3})
	_, err := w.pool.Exec(ctx, `INSERT INTO webhook_endpoints (shop_id, url, enabled_events, secret, created_at, updated_at)
		VALUES ($1, 'https://hooks.example.com/in', '{message.received}', 'whsec_dGVzdHNlY3JldHRlc3RzZWNyZXR0ZXN0c2VjcmV0', now(), now())`, w.shop.ID)
	require.NoError(t, err)
	for i := range 5 {
		w.must(fmt.Sprintf("SMcap%d", i), "+447700977777", "hello")
	}
	require.Equal(t, 3, w.count(`SELECT count(*) FROM webhook_events WHERE shop_id = $1 AND type = 'message.received'`, w.shop.ID))
}

// TestCancelByTextOffGoesToTheOwner: with the shop's customers_cancel_by_text off, a
// booked customer's "can't make it" cancels nothing: it waits in the owner's inbox as a
// cancellation (its conversation opens unread, the message.received event's outcome is
// cancel_request, the owner's alert says who asks to cancel what), and the customer is
// told the shop will get back to them. Two live bookings go to the owner too, even with
// the setting on: which one is meant is for a person to ask.
func TestCancelByTextOffGoesToTheOwner(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newSMSWorld(t, inbound.Config{})
	require.True(t, w.shop.CustomersCancelByText, "on by default")
	_, err := w.pool.Exec(ctx, `UPDATE shops SET customers_cancel_by_text = false, notify_phone = '+447700900998' WHERE id = $1`, w.shop.ID)
	require.NoError(t, err)
	_, err = w.pool.Exec(ctx, `INSERT INTO webhook_endpoints (shop_id, url, enabled_events, secret, created_at, updated_at)
		VALUES ($1, 'https://hooks.example.com/in', '{message.received}', 'whsec_dGVzdHNlY3JldHRlc3RzZWNyZXR0ZXN0c2VjcmV0', now(), now())`, w.shop.ID)
	require.NoError(t, err)
	op, phone, booking := w.booked(5, "")
	got := w.must("SMcant", phone, "can't make it")
	require.Equal(t, "cancel_request", got.outcome)
	require.Contains(t, got.message, "passed your cancellation on to the team")
	require.Equal(t, ledger.BookingConfirmed, w.str(`SELECT status FROM bookings WHERE id = $1`, booking), "the booking stands")
	require.Equal(t, "filled", w.str(`SELECT status FROM slot_openings WHERE id = $1`, op))
	require.Equal(t, 1, w.count(`SELECT unread FROM conversations WHERE shop_id = $1 AND phone = $2`, w.shop.ID, phone))
	require.Equal(t, "cancel_request", w.str(`SELECT subject->>'outcome' FROM webhook_events WHERE shop_id = $1 AND type = 'message.received'`, w.shop.ID))
	alert := w.str(`SELECT args->>'body' FROM river_job WHERE kind = 'sms_text' AND args->>'to' = '+447700900998'`)
	require.Contains(t, alert, "asks to cancel Cut")
	require.Contains(t, alert, "can't make it")

	// The setting on again, two live bookings: for the owner all the same.
	_, err = w.pool.Exec(ctx, `UPDATE shops SET customers_cancel_by_text = true WHERE id = $1`, w.shop.ID)
	require.NoError(t, err)
	second, err := w.slots.Declare(ctx, w.shop, slots.NewOpening{StartsAt: time.Now().Add(9 * time.Hour), DurationMinutes: 30, Service: "Colour", PriceCents: 2500})
	require.NoError(t, err)
	id := uuid.MustParse(w.str(`SELECT customer_id::text FROM bookings WHERE id = $1`, booking))
	w.offer(second.ID, id, 1)
	require.Equal(t, "booked", w.must("SMsecond", phone, "YES").outcome)
	got = w.must("SMcant2", phone, "I need to cancel my appointment")
	require.Equal(t, "cancel_request", got.outcome)
	require.Contains(t, got.message, "passed your cancellation on to the team")
	require.Equal(t, 2, w.count(`SELECT count(*) FROM bookings WHERE customer_id = $1 AND status = 'confirmed'`, id))
}
