package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/cooldown"
	"github.com/slotrecovery/slotrecovery/internal/sms"
	"github.com/slotrecovery/slotrecovery/internal/sms/twilio"
	"github.com/slotrecovery/slotrecovery/internal/testkit/twiliofake"
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
	// The wave recorded every offer before texting anyone and its job ended after the
	// last text: what is there now is all the wave did.
	e.waveDone(op.ID, 1, 1)
	sort.Strings(eligible)
	offered := make([]string, 0, len(eligible))
	rows, err := e.pool.Query(context.Background(), `
		SELECT c.phone FROM slot_offers o JOIN customers c ON c.id = o.customer_id
		WHERE o.opening_id = $1 ORDER BY c.phone`, op.ID)
	require.NoError(t, err)
	for rows.Next() {
		var p string
		require.NoError(t, rows.Scan(&p))
		offered = append(offered, p)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, eligible, offered, "an offer for exactly the eligible customers, once each")
	require.Equal(t, len(eligible), e.count(`SELECT count(*) FROM slot_offers WHERE opening_id = $1 AND status = 'sent'`, op.ID))
	msgs := e.twilio.Messages()
	require.Len(t, msgs, len(eligible))
	var got []string
	for _, m := range msgs {
		got = append(got, m.To)
		require.Equal(t, shop.SMSNumber, m.From)
		require.Contains(t, m.Body, "Joe's Barbers")
		require.Contains(t, m.Body, "Haircut")
		require.Contains(t, m.Body, "$45.00")
		require.Contains(t, m.Body, "First to reply YES gets it")
		require.Contains(t, m.Body, "STOP")
		require.True(t, sms.IsGSM7(m.Body), m.Body)
		require.Equal(t, 1, sms.Segments(m.Body), "offer must fit one segment: %q (%d chars)", m.Body, len(m.Body))
		require.Greater(t, m.ValidityPeriod, time.Duration(0), "offers carry a validity period")
	}
	sort.Strings(got)
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
	var bookingIDs []string
	for round := range rounds {
		shop := e.newShop(e.servers[0], "checkout", nil)
		phones := e.bulkCustomers(shop, n, round*1000)
		before := e.twilio.Count()
		op := e.newOpening(e.servers[round%3], shop, 3*time.Hour)
		e.until(bigWave, "offers texted", func() bool { return e.twilio.Count()-before >= n })
		stripeBefore := len(e.stripe.Requests())

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
		bookingIDs = append(bookingIDs, got.Booking.ID)
		// The winner's offer is accepted and every other offer of the opening is lost.
		require.Equal(t, "accepted", e.offerStatus(got.FilledBy.CustomerID, op.ID), "round %d", round)
		require.Equal(t, 1, e.count(`SELECT count(*) FROM slot_offers WHERE opening_id = $1 AND status = 'accepted'`, op.ID), "round %d", round)
		require.Equal(t, n-1, e.count(`SELECT count(*) FROM slot_offers WHERE opening_id = $1 AND status = 'lost'`, op.ID), "round %d: the others' offers are lost", round)
		// One Checkout Session: one idempotency key, derived from the one booking. (The
		// booking sweep may repeat the request with the same key, which Stripe answers
		// with the same session; it may post meanwhile for an earlier round's booking.)
		sessionKeys := map[string]bool{}
		for _, q := range e.stripe.Requests()[stripeBefore:] {
			if q.Method != http.MethodPost || q.Path != "/v1/checkout/sessions" {
				continue
			}
			require.Contains(t, bookingIDs, checkoutKeyBooking(q.IdempotencyKey), "round %d: a session for a booking of this test: %s", round, q.IdempotencyKey)
			if strings.HasPrefix(q.IdempotencyKey, "checkout:"+got.Booking.ID+":") {
				sessionKeys[q.IdempotencyKey] = true
			}
		}
		require.Len(t, sessionKeys, 1, "round %d: one Checkout Session key: %v", round, sessionKeys)
		ttl, err := e.redis.PTTL(context.Background(), e.prefix+"offer_cooldown:"+got.FilledBy.CustomerID).Result()
		require.NoError(t, err)
		require.InDelta(t, (24 * time.Hour).Seconds(), ttl.Seconds(), 120, "winner cools down ~24h")
		keys, err := e.redis.Keys(context.Background(), e.prefix+"slot_lock:*").Result()
		require.NoError(t, err)
		require.Empty(t, keys, "no lock left behind")
	}
	require.Zero(t, e.count(`SELECT count(*) FROM (SELECT opening_id FROM bookings GROUP BY opening_id HAVING count(*) > 1) d`))
	// Once the booking sweep has run, still one session key per booking and no other.
	e.swept()
	keysOf := map[string]map[string]bool{}
	for _, q := range e.stripe.Requests() {
		if q.Method == http.MethodPost && q.Path == "/v1/checkout/sessions" {
			b := checkoutKeyBooking(q.IdempotencyKey)
			if keysOf[b] == nil {
				keysOf[b] = map[string]bool{}
			}
			keysOf[b][q.IdempotencyKey] = true
		}
	}
	require.Len(t, keysOf, rounds, "sessions for the %d bookings only", rounds)
	for _, b := range bookingIDs {
		require.Len(t, keysOf[b], 1, "booking %s: one Checkout Session key", b)
	}
	sort.Slice(durations, func(i, j int) bool { return durations[i] < durations[j] })
	t.Logf("300 concurrent YES over 3 instances, %d rounds: min %s, median %s, max %s",
		rounds, durations[0], durations[len(durations)/2], durations[len(durations)-1])
}

// checkoutKeyBooking returns the booking id a Checkout Session idempotency key
// ("checkout:<booking id>:<expiry>") was derived from, or "" for another key.
func checkoutKeyBooking(key string) string {
	parts := strings.Split(key, ":")
	if len(parts) < 3 || parts[0] != "checkout" {
		return ""
	}
	return parts[1]
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

	// Bob says STOP; a new opening texts Alice only. Once its wave is done, nothing more
	// comes of it: no offer for Bob was recorded, so none can be texted.
	require.Equal(t, "opted_out", e.text(base, bob.Phone, shop.SMSNumber, "STOP").Outcome)
	op := e.newOpening(base, shop, 3*time.Hour)
	e.waveDone(op.ID, 1, 1)
	require.Len(t, e.twilio.MessagesTo(alice.Phone), 1, "offer to alice")
	require.Equal(t, "sent", e.offerStatus(alice.ID, op.ID))
	require.Zero(t, e.count(`SELECT count(*) FROM slot_offers WHERE opening_id = $1 AND customer_id = $2`, op.ID, bob.ID), "no offer after STOP")
	require.Empty(t, e.twilio.MessagesTo(bob.Phone), "no text after STOP")

	// Bob opts back in (START); the next opening reaches him, and Alice too.
	require.Equal(t, "opted_in", e.text(base, bob.Phone, shop.SMSNumber, "Start").Outcome)
	op2 := e.newOpening(base, shop, 4*time.Hour)
	e.waveDone(op2.ID, 1, 1)
	require.Len(t, e.twilio.MessagesTo(bob.Phone), 1, "offer to bob")
	require.Len(t, e.twilio.MessagesTo(alice.Phone), 2, "second offer to alice")
	require.Equal(t, "sent", e.offerStatus(alice.ID, op2.ID))

	// Alice says NO: it declines her newest claimable offer (the second opening's) and
	// no other. A redelivery repeats the answer and declines nothing more.
	declined := func() int { return e.count(`SELECT count(*) FROM slot_offers WHERE status = 'declined'`) }
	sid := "SM0000000000000000000000000000decl"
	first := e.textSID(base, sid, alice.Phone, shop.SMSNumber, "No thanks")
	require.Equal(t, "declined", first.Outcome)
	require.Equal(t, "declined", e.offerStatus(alice.ID, op2.ID), "the newest offer is declined")
	require.Equal(t, "sent", e.offerStatus(alice.ID, op.ID), "the older offer stands")
	require.Equal(t, 1, declined())
	again := e.textSID(base, sid, alice.Phone, shop.SMSNumber, "No thanks")
	require.Equal(t, first, again, "a redelivered MessageSid gets the same answer")
	require.Equal(t, 1, declined(), "a redelivery declines nothing more")
	require.Equal(t, "sent", e.offerStatus(alice.ID, op.ID))

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
	got2 := e.opening(base, shop, op2.ID)
	require.Equal(t, "filled", got2.Status)
	require.Equal(t, bob.Phone, got2.FilledBy.Phone)
	require.Equal(t, "declined", e.offerStatus(alice.ID, op2.ID), "a declined offer is not also lost")
	require.Equal(t, 1, declined())
	require.Equal(t, "open", e.opening(base, shop, op.ID).Status, "nobody claimed the first opening")

	// Alice's NO did not touch her first offer: her YES books that opening.
	aliceYes := e.text(base, alice.Phone, shop.SMSNumber, "yes")
	require.Equal(t, "booked", aliceYes.Outcome, aliceYes.Body)
	got1 := e.opening(base, shop, op.ID)
	require.Equal(t, "filled", got1.Status)
	require.Equal(t, alice.Phone, got1.FilledBy.Phone)
	require.Equal(t, "confirmed", got1.Booking.Status)

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
		"other url": twilio.Signature(twiliofake.TestAuthToken, "https://evil.example/webhooks/twilio/sms", form),
		"other key": twilio.Signature("someoneelsestoken0000000000000000", publicURL+"/webhooks/twilio/sms", form),
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
	shop := e.newShop(healthy, "checkout", nil)
	c := e.newCustomer(healthy, shop, "+15550000021", true)
	op := e.newOpening(healthy, shop, 3*time.Hour)
	e.eventually("offer texted", func() bool { return e.twilio.Count() == 1 })
	// Started only now: its workers share River's jobs, and a wave run there fails
	// (cooldowns live in Redis) and is retried with a growing backoff, which made the
	// wait above flaky.
	broken := e.start(map[string]string{"REDIS_URL": "redis://127.0.0.1:1/0"}, fastTune)

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
// the customer is told the link is coming, and the booking sweep makes one session and
// texts the link once.
func TestStripeFailingThenRecovering(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(nil, fastTune)
	shop := e.newShop(base, "checkout", nil)
	c := e.newCustomer(base, shop, "+15550000031", true)
	op := e.newOpening(base, shop, 3*time.Hour)
	e.eventually("offer texted", func() bool { return e.twilio.Count() == 1 })

	e.stripe.FailNext(1, http.StatusInternalServerError)
	a := e.text(base, c.Phone, shop.SMSNumber, "YES")
	require.Equal(t, "booked", a.Outcome)
	require.Contains(t, a.Body, "on its way")
	got := e.opening(base, shop, op.ID)
	require.Equal(t, "filled", got.Status)
	require.Equal(t, "pending_payment", got.Booking.Status)

	e.eventually("payment link texted", func() bool { return len(e.twilio.MessagesTo(c.Phone)) == 2 })
	// Once the booking sweep has run again and the texts it queued have all finished,
	// any second link text or session request would be in.
	e.swept()
	e.settle("sms_text")
	msgs := e.twilio.MessagesTo(c.Phone)
	require.Len(t, msgs, 2, "offer, then the link once")
	require.Contains(t, msgs[1].Body, "http")
	got = e.opening(base, shop, op.ID)
	require.NotEmpty(t, got.Booking.PaymentURL)
	// The text carries the short link on our own domain, which sends the customer on to
	// the booking's Checkout page while the hold lasts.
	require.NotContains(t, msgs[1].Body, got.Booking.PaymentURL, "the provider's long address is not texted")
	short := regexp.MustCompile(`https?://\S+/p/[A-Za-z0-9_-]{22}`).FindString(msgs[1].Body)
	require.NotEmpty(t, short, "a short link in %q", msgs[1].Body)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	u, err := url.Parse(short)
	require.NoError(t, err)
	resp, err := noFollow.Get(base + u.Path) // PUBLIC_URL's host is the test's own name for the server

	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusFound, resp.StatusCode)
	require.Equal(t, got.Booking.PaymentURL, resp.Header.Get("Location"))

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
	e.eventually("offer texted", func() bool { return e.twilio.Count() == 1 })

	first := e.text(base, c.Phone, shop.SMSNumber, "Yes")
	require.Equal(t, "booked", first.Outcome)
	again := e.text(base, c.Phone, shop.SMSNumber, "YES!!")
	require.Equal(t, "booked", again.Outcome)
	require.Equal(t, twimlMessage(t, first.Body), twimlMessage(t, again.Body), "the same link again")
	require.Equal(t, 1, e.count(`SELECT count(*) FROM bookings`))
	require.Equal(t, 1, e.stripe.Count(http.MethodPost, "/v1/checkout/sessions"))
	n, err := e.redis.Exists(context.Background(), e.prefix+"offer_cooldown:"+c.ID).Result()
	require.NoError(t, err)
	require.Zero(t, n, "cooldown_seconds 0 means no cooldown")
}

// TestConcurrentRedeliveredYes: Twilio delivers one YES (one MessageSid) many times at
// once. It books once, and every delivery gets the same answer: the redeliveries wait
// for the first one's. Nothing is done twice.
func TestConcurrentRedeliveredYes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(nil, fastTune)
	shop := e.newShop(base, "checkout", nil)
	c := e.newCustomer(base, shop, "+15550000051", true)
	op := e.newOpening(base, shop, 3*time.Hour)
	e.waveDone(op.ID, 1, 1)
	require.Equal(t, "sent", e.offerStatus(c.ID, op.ID))

	const n = 20
	sid := "SM00000000000000000000000000concyes"
	answers := make([]smsAnswer, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			answers[i] = e.textSID(base, sid, c.Phone, shop.SMSNumber, "YES")
		})
	}
	close(start)
	wg.Wait()

	var booked []smsAnswer
	for i, a := range answers {
		require.Equal(t, http.StatusOK, a.Status, "delivery %d: %s", i, a.Body)
		switch a.Outcome {
		case "booked":
			booked = append(booked, a)
		default:
			t.Fatalf("delivery %d: unexpected outcome %q: %s", i, a.Outcome, a.Body)
		}
	}
	require.Len(t, booked, n, "every delivery gets the first delivery's answer")
	for _, a := range booked[1:] {
		require.Equal(t, booked[0], a, "every booked answer is the same")
	}
	require.Contains(t, booked[0].Body, "http", "the answer carries the payment link")
	// Once handled, a redelivery gets the stored answer.
	require.Equal(t, booked[0], e.textSID(base, sid, c.Phone, shop.SMSNumber, "YES"))

	require.Equal(t, 1, e.count(`SELECT count(*) FROM bookings`))
	require.Equal(t, 1, e.count(`SELECT count(*) FROM inbound_messages WHERE message_sid = $1 AND outcome = 'booked'`, sid))
	got := e.opening(base, shop, op.ID)
	require.Equal(t, "filled", got.Status)
	require.Equal(t, c.Phone, got.FilledBy.Phone)
	require.Equal(t, "accepted", e.offerStatus(c.ID, op.ID))
	sessionKeys := map[string]bool{}
	for _, q := range e.stripe.Requests() {
		if q.Method == http.MethodPost && q.Path == "/v1/checkout/sessions" {
			sessionKeys[q.IdempotencyKey] = true
		}
	}
	require.Len(t, sessionKeys, 1, "one Checkout Session: %v", sessionKeys)
	for k := range sessionKeys {
		require.Equal(t, got.Booking.ID, checkoutKeyBooking(k), k)
	}
}

// TestOffersStayClaimableAcrossWaves: an offer from the first wave can still be taken
// after the next wave has texted someone else; the later customer is then told it is
// taken.
func TestOffersStayClaimableAcrossWaves(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(nil, fastTune)
	shop := e.newShop(base, "none", map[string]any{"wave_size": 1, "wave_interval_seconds": 10})
	first := e.newCustomer(base, shop, "+15550000061", true) // created first: wave 1
	second := e.newCustomer(base, shop, "+15550000062", true)
	op := e.newOpening(base, shop, 3*time.Hour)

	e.waveDone(op.ID, 1, 1)
	require.Len(t, e.twilio.MessagesTo(first.Phone), 1)
	require.Empty(t, e.twilio.MessagesTo(second.Phone), "wave 1 texts one customer")
	// Wave 2 is due 10 s later; River's scheduler makes a scheduled job available
	// within a few seconds of its time.
	e.until(asyncStep, "wave 2 done", func() bool {
		return e.count(`SELECT count(*) FROM river_job WHERE kind = 'offer_wave' AND args->>'opening_id' = $1
			AND (args->>'wave')::int = 2 AND state = 'completed'`, op.ID) == 1
	})
	require.Len(t, e.twilio.MessagesTo(second.Phone), 1, "wave 2 texts the next customer")
	require.Len(t, e.twilio.MessagesTo(first.Phone), 1, "and not the first again")
	require.Equal(t, "sent", e.offerStatus(first.ID, op.ID))
	require.Equal(t, "sent", e.offerStatus(second.ID, op.ID))

	a := e.text(base, first.Phone, shop.SMSNumber, "YES")
	require.Equal(t, "booked", a.Outcome, a.Body)
	got := e.opening(base, shop, op.ID)
	require.Equal(t, "filled", got.Status)
	require.Equal(t, first.Phone, got.FilledBy.Phone)
	require.Equal(t, "confirmed", got.Booking.Status)
	require.Equal(t, "accepted", e.offerStatus(first.ID, op.ID))
	require.Equal(t, "lost", e.offerStatus(second.ID, op.ID))
	require.Equal(t, "taken", e.text(base, second.Phone, shop.SMSNumber, "YES").Outcome)
	require.Equal(t, 1, e.count(`SELECT count(*) FROM bookings`))
}
