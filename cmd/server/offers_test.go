package main

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/cooldown"
	"github.com/slotrecovery/slotrecovery/internal/sms"
	"github.com/slotrecovery/slotrecovery/internal/twiliofake"
)

// TestWaveTextsExactlyTheEligible: a shop with 300 customers declares an opening; the
// first wave texts every eligible customer once, and nobody who did not opt in, opted
// out (by STOP) or is cooling down.
func TestWaveTextsExactlyTheEligible(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(nil, fastTune)
	shop := e.newShop(base, "checkout", nil)

	var eligible, excluded []string
	cool, err := cooldown.New(e.redis, cooldown.Config{Prefix: e.prefix})
	require.NoError(t, err)
	for i := range 300 {
		phone := fmt.Sprintf("+1555%07d", 2000000+i)
		switch {
		case i < 10: // never opted in
			e.newCustomer(base, shop, phone, false)
			excluded = append(excluded, phone)
		case i < 20: // opted out by STOP
			e.newCustomer(base, shop, phone, true)
			a := e.text(base, phone, shop.SMSNumber, "stop")
			require.Equal(t, "opted_out", a.Outcome)
			excluded = append(excluded, phone)
		case i < 30: // booked something recently: cooling down
			c := e.newCustomer(base, shop, phone, true)
			require.NoError(t, cool.Start(context.Background(), c.ID, time.Hour))
			excluded = append(excluded, phone)
		default:
			e.newCustomer(base, shop, phone, true)
			eligible = append(eligible, phone)
		}
	}
	op := e.newOpening(base, shop, 3*time.Hour)
	eventually(t, 30*time.Second, "270 offer texts", func() bool { return e.twilio.Count() >= len(eligible) })
	time.Sleep(300 * time.Millisecond) // nothing more should arrive
	msgs := e.twilio.Messages()
	require.Len(t, msgs, len(eligible))
	var got []string
	for _, m := range msgs {
		got = append(got, m.To)
		require.Equal(t, shop.SMSNumber, m.From)
		require.Contains(t, m.Body, "Joe's Barbers")
		require.Contains(t, m.Body, "Haircut")
		require.Contains(t, m.Body, "$45.00")
		require.Contains(t, m.Body, "Reply YES to book")
		require.Contains(t, m.Body, "STOP")
		require.True(t, sms.IsGSM7(m.Body), m.Body)
		require.Equal(t, 1, sms.Segments(m.Body), "offer must fit one segment: %q (%d chars)", m.Body, len(m.Body))
		require.Greater(t, m.ValidityPeriod, time.Duration(0), "offers carry a validity period")
	}
	sort.Strings(got)
	sort.Strings(eligible)
	require.Equal(t, eligible, got, "exactly the eligible customers, once each")
	require.Equal(t, len(eligible), e.opening(base, shop, op.ID).OffersSent)
}

// TestRaceThreeHundredYes is the product's core promise: 300 customers answer YES at
// once, over real HTTP, across three server instances sharing Postgres and Redis.
// Exactly one gets the slot, every other is told it is taken, one booking exists, one
// Checkout Session was asked of Stripe, the winner cools down for ~24h and no lock is
// left behind. Twenty rounds, never two bookings.
func TestRaceThreeHundredYes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for range 3 {
		e.start(nil, fastTune)
	}
	const rounds, n = 20, 300
	var durations []time.Duration
	for round := range rounds {
		shop := e.newShop(e.servers[0], "checkout", nil)
		phones := e.bulkCustomers(shop, n, round*1000)
		before := e.twilio.Count()
		op := e.newOpening(e.servers[round%3], shop, 3*time.Hour)
		eventually(t, 60*time.Second, "offers texted", func() bool { return e.twilio.Count()-before >= n })
		checkoutsBefore := e.stripe.Count(http.MethodPost, "/v1/checkout/sessions")

		answers := make([]smsAnswer, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, phone := range phones {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				answers[i] = e.text(e.servers[i%3], phone, shop.SMSNumber, "YES")
			}()
		}
		t0 := time.Now()
		close(start)
		wg.Wait()
		durations = append(durations, time.Since(t0))

		booked, taken := 0, 0
		var winner string
		for i, a := range answers {
			require.Equal(t, http.StatusOK, a.Status, "round %d: %s", round, a.Body)
			switch a.Outcome {
			case "booked":
				booked++
				winner = phones[i]
				require.Contains(t, a.Body, "http", "the winner gets the payment link")
			case "taken":
				taken++
				require.Contains(t, a.Body, "taken")
			default:
				t.Fatalf("round %d: unexpected outcome %q: %s", round, a.Outcome, a.Body)
			}
		}
		require.Equal(t, 1, booked, "round %d", round)
		require.Equal(t, n-1, taken, "round %d", round)
		require.Equal(t, 1, e.count(`SELECT count(*) FROM bookings WHERE opening_id = $1`, op.ID), "round %d: one booking row", round)
		got := e.opening(e.servers[0], shop, op.ID)
		require.Equal(t, "filled", got.Status)
		require.NotNil(t, got.FilledBy)
		require.Equal(t, winner, got.FilledBy.Phone)
		require.Equal(t, "pending_payment", got.Booking.Status)
		require.NotEmpty(t, got.Booking.PaymentURL)
		require.Equal(t, 1, e.stripe.Count(http.MethodPost, "/v1/checkout/sessions")-checkoutsBefore, "round %d: one Checkout Session", round)
		ttl, err := e.redis.PTTL(context.Background(), e.prefix+"offer_cooldown:"+got.FilledBy.CustomerID).Result()
		require.NoError(t, err)
		require.InDelta(t, (24 * time.Hour).Seconds(), ttl.Seconds(), 120, "winner cools down ~24h")
		keys, err := e.redis.Keys(context.Background(), e.prefix+"slot_lock:*").Result()
		require.NoError(t, err)
		require.Empty(t, keys, "no lock left behind")
	}
	require.Zero(t, e.count(`SELECT count(*) FROM (SELECT opening_id FROM bookings GROUP BY opening_id HAVING count(*) > 1) d`))
	sort.Slice(durations, func(i, j int) bool { return durations[i] < durations[j] })
	t.Logf("300 concurrent YES over 3 instances, %d rounds: min %s, median %s, max %s",
		rounds, durations[0], durations[len(durations)/2], durations[len(durations)-1])
}

// TestRepliesAndKeywords covers the other replies and the inbound edge cases.
func TestRepliesAndKeywords(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(nil, fastTune)
	shop := e.newShop(base, "none", nil)
	alice := e.newCustomer(base, shop, "+15550000001", true)
	bob := e.newCustomer(base, shop, "+15550000002", true)

	// A YES with no offer behind it.
	a := e.text(base, alice.Phone, shop.SMSNumber, "yes")
	require.Equal(t, "no_offer", a.Outcome)
	// An unknown sender and an unknown shop number.
	require.Equal(t, "no_offer", e.text(base, "+15559999999", shop.SMSNumber, "YES").Outcome)
	require.Equal(t, "unrecognized", e.text(base, alice.Phone, "+15550009999", "YES").Outcome)
	// HELP names the shop and how to stop; gibberish gets a hint.
	a = e.text(base, alice.Phone, shop.SMSNumber, "help")
	require.Equal(t, "help", a.Outcome)
	require.Contains(t, a.Body, "STOP")
	require.Equal(t, "unrecognized", e.text(base, alice.Phone, shop.SMSNumber, "what time?").Outcome)

	// Bob says STOP; a new opening texts Alice only.
	require.Equal(t, "opted_out", e.text(base, bob.Phone, shop.SMSNumber, "STOP").Outcome)
	op := e.newOpening(base, shop, 3*time.Hour)
	eventually(t, 20*time.Second, "offer to alice", func() bool { return len(e.twilio.MessagesTo(alice.Phone)) == 1 })
	time.Sleep(300 * time.Millisecond)
	require.Empty(t, e.twilio.MessagesTo(bob.Phone), "no text after STOP")

	// Bob opts back in (START); the next opening reaches him.
	require.Equal(t, "opted_in", e.text(base, bob.Phone, shop.SMSNumber, "Start").Outcome)
	e.newOpening(base, shop, 4*time.Hour)
	eventually(t, 20*time.Second, "offer to bob", func() bool { return len(e.twilio.MessagesTo(bob.Phone)) == 1 })

	// Alice declines the first; her NO is recorded and a redelivery repeats the answer.
	sid := "SM0000000000000000000000000000decl"
	first := e.textSID(base, sid, alice.Phone, shop.SMSNumber, "No thanks")
	require.Equal(t, "declined", first.Outcome)
	again := e.textSID(base, sid, alice.Phone, shop.SMSNumber, "No thanks")
	require.Equal(t, first, again, "a redelivered MessageSid gets the same answer")

	// A YES (Twilio may flag it as an opt-in) books Bob's newest offer; the shop takes no
	// payment, so it is confirmed at once. Redelivering it changes nothing.
	sid = "SM0000000000000000000000000000book"
	yes := e.textSID(base, sid, bob.Phone, shop.SMSNumber, "Yes!", "OptOutType", "START")
	require.Equal(t, "booked", yes.Outcome, yes.Body)
	require.Contains(t, yes.Body, "booked")
	again = e.textSID(base, sid, bob.Phone, shop.SMSNumber, "Yes!", "OptOutType", "START")
	require.Equal(t, yes, again)
	require.Equal(t, 1, e.count(`SELECT count(*) FROM bookings WHERE customer_id = $1`, bob.ID))
	require.Equal(t, 1, e.count(`SELECT count(*) FROM bookings WHERE status = 'confirmed'`))
	require.Equal(t, "open", e.opening(base, shop, op.ID).Status, "alice declined the first opening")

	// TwiML is escaped XML.
	require.True(t, strings.HasPrefix(yes.Body, "<?xml"), yes.Body)
	require.Contains(t, a.Body, "Joe&#39;s Barbers")
}

// TestTwilioSignature: an unsigned, forged or replayed-to-another-URL text is refused
// with 403 and stores nothing.
func TestTwilioSignature(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(nil, fastTune)
	shop := e.newShop(base, "none", nil)
	c := e.newCustomer(base, shop, "+15550000011", true)
	form := map[string][]string{"MessageSid": {"SMforged"}, "From": {c.Phone}, "To": {shop.SMSNumber}, "Body": {"STOP"}}
	for name, sig := range map[string]string{
		"missing":   "",
		"forged":    "bm90IGEgc2lnbmF0dXJl",
		"other url": sms.Signature(twiliofake.TestAuthToken, "https://evil.example/webhooks/twilio/sms", form),
		"other key": sms.Signature("someoneelsestoken0000000000000000", publicURL+"/webhooks/twilio/sms", form),
	} {
		a := e.postForm(base, form, sig)
		require.Equal(t, http.StatusForbidden, a.Status, name)
	}
	require.Zero(t, e.count(`SELECT count(*) FROM inbound_messages`))
	require.Zero(t, e.count(`SELECT count(*) FROM customers WHERE opted_out_at IS NOT NULL`))
}

// TestRedisUnreachableFailsClosed: an instance that cannot reach Redis makes no booking,
// answers retry_later and keeps the message; a healthy instance then books it.
func TestRedisUnreachableFailsClosed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	healthy := e.start(nil, fastTune)
	broken := e.start(map[string]string{"REDIS_URL": "redis://127.0.0.1:1/0"}, fastTune)
	shop := e.newShop(healthy, "checkout", nil)
	c := e.newCustomer(healthy, shop, "+15550000021", true)
	op := e.newOpening(healthy, shop, 3*time.Hour)
	eventually(t, 20*time.Second, "offer texted", func() bool { return e.twilio.Count() == 1 })

	a := e.text(broken, c.Phone, shop.SMSNumber, "YES")
	require.Equal(t, http.StatusOK, a.Status)
	require.Equal(t, "retry_later", a.Outcome)
	require.Contains(t, a.Body, "again")
	require.Zero(t, e.count(`SELECT count(*) FROM bookings`))
	require.Equal(t, "open", e.opening(healthy, shop, op.ID).Status)
	require.Equal(t, 1, e.count(`SELECT count(*) FROM inbound_messages WHERE outcome = 'retry_later'`), "the message is stored")
	require.Zero(t, e.stripe.Count(http.MethodPost, "/v1/checkout/sessions"))

	var ready map[string]string
	require.Equal(t, http.StatusServiceUnavailable, e.api(broken, http.MethodGet, "/readyz", "", nil, &ready))
	require.Equal(t, "unreachable", ready["redis"])

	require.Equal(t, "booked", e.text(healthy, c.Phone, shop.SMSNumber, "YES").Outcome)
}

// TestStripeFailingThenRecovering: when Stripe errors on the YES path the booking holds,
// the customer is told the link is coming, and the checkout job makes one session and
// texts the link once.
func TestStripeFailingThenRecovering(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(nil, fastTune)
	shop := e.newShop(base, "checkout", nil)
	c := e.newCustomer(base, shop, "+15550000031", true)
	op := e.newOpening(base, shop, 3*time.Hour)
	eventually(t, 20*time.Second, "offer texted", func() bool { return e.twilio.Count() == 1 })

	e.stripe.FailNext(1, http.StatusInternalServerError)
	a := e.text(base, c.Phone, shop.SMSNumber, "YES")
	require.Equal(t, "booked", a.Outcome)
	require.Contains(t, a.Body, "on its way")
	got := e.opening(base, shop, op.ID)
	require.Equal(t, "filled", got.Status)
	require.Equal(t, "pending_payment", got.Booking.Status)

	eventually(t, 30*time.Second, "payment link texted", func() bool { return len(e.twilio.MessagesTo(c.Phone)) == 2 })
	time.Sleep(time.Second) // a second text would show up by now
	msgs := e.twilio.MessagesTo(c.Phone)
	require.Len(t, msgs, 2, "offer, then the link once")
	require.Contains(t, msgs[1].Body, "http")
	got = e.opening(base, shop, op.ID)
	require.NotEmpty(t, got.Booking.PaymentURL)
	require.Contains(t, msgs[1].Body, got.Booking.PaymentURL)

	reqs := e.stripe.Requests()
	var keys []string
	for _, r := range reqs {
		if r.Method == http.MethodPost && r.Path == "/v1/checkout/sessions" {
			keys = append(keys, r.IdempotencyKey)
		}
	}
	require.Len(t, keys, 2, "one failed attempt, one session made")
	require.Equal(t, keys[0], keys[1], "the retry reuses the idempotency key")
	require.True(t, strings.HasPrefix(keys[0], "checkout:"+got.Booking.ID+":"), keys[0])
}

// TestWinnerSaysYesAgain: the customer who holds the slot and texts YES again (the
// first answer was slow) gets the same answer with the same link, and nothing else
// happens. A shop with no cooldown sets none.
func TestWinnerSaysYesAgain(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(nil, fastTune)
	shop := e.newShop(base, "checkout", map[string]any{"cooldown_seconds": 0})
	c := e.newCustomer(base, shop, "+15550000041", true)
	e.newOpening(base, shop, 3*time.Hour)
	eventually(t, 20*time.Second, "offer texted", func() bool { return e.twilio.Count() == 1 })

	first := e.text(base, c.Phone, shop.SMSNumber, "Yes")
	require.Equal(t, "booked", first.Outcome)
	again := e.text(base, c.Phone, shop.SMSNumber, "YES!!")
	require.Equal(t, "booked", again.Outcome)
	require.Equal(t, first.Body, again.Body, "the same link again")
	require.Equal(t, 1, e.count(`SELECT count(*) FROM bookings`))
	require.Equal(t, 1, e.stripe.Count(http.MethodPost, "/v1/checkout/sessions"))
	n, err := e.redis.Exists(context.Background(), e.prefix+"offer_cooldown:"+c.ID).Result()
	require.NoError(t, err)
	require.Zero(t, n, "cooldown_seconds 0 means no cooldown")
}
