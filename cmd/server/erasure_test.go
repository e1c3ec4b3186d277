package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/keyring"
	"github.com/slotrecovery/slotrecovery/internal/payments/stripe"
)

// The person erased in TestErasureLeavesNoTrace, and another who stays: their number
// and name are unlike anything else the test writes, so finding one in the dump means
// it was kept.
const (
	erasedPhone = "+15557319246"
	erasedName  = "Zanzibar Quixote"
	erasedEmail = "zq-erased@example.test"
	keptPhone   = "+15558812034"
	keptName    = "Yolanda Pemberton"
)

// TestErasureLeavesNoTrace: after DELETE /api/customers/{id}, a dump of the whole
// database (pg_dump, River's tables included) holds neither the customer's number, in
// any form a person or a program writes it, nor their name, nor the unkeyed SHA-256 of
// shop and number. The customer had everything that keeps a person: offers,
// a booking paid through Stripe (whose event named them), texts in and out (HELP, YES,
// STOP, START, the confirmation), a thread in the owner's inbox with the owner's reply
// (conversations, conversation_messages, message.received), transactional text jobs (finished, discarded and
// scheduled), outbound webhook events, their payloads and deliveries, whose receiver
// echoed each body in its answer (kept in the attempts' log). A dump taken before the
// erasure finds them (the search works and the scene is real); so does the dump after,
// for the customer who was not erased.
func TestErasureLeavesNoTrace(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(nil, fastTune)
	ctx := context.Background()

	shop := e.newShop(base, "checkout", nil)
	var erased, kept customerInfo
	for _, c := range []struct {
		phone, name string
		out         *customerInfo
	}{{erasedPhone, erasedName, &erased}, {keptPhone, keptName, &kept}} {
		status := e.api(base, http.MethodPost, "/api/customers", shop.APIKey,
			map[string]any{"phone": c.phone, "name": c.name, "sms_opt_in": true}, c.out)
		require.Equal(t, http.StatusCreated, status)
	}

	// Outbound webhooks: an endpoint for every event, delivered to a receiver here that
	// echoes the body in its answer (as request bins and catch-all integrations do), so
	// each attempt's log (the first bytes of the answer) holds what the event said.
	var received struct {
		sync.Mutex
		bodies []string
	}
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		received.Lock()
		received.bodies = append(received.bodies, string(b))
		received.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	}))
	t.Cleanup(receiver.Close)
	rc, err := river.NewClient(riverpgxv5.New(e.pool), &river.Config{})
	require.NoError(t, err)
	// Sealed as the server seals (SECRETS_KEY unset: the admin token is the key).
	secrets, err := keyring.New([]byte(adminToken))
	require.NoError(t, err)
	hooksSvc := hooks.New(e.pool, rc, hooks.Config{DevMode: true, AllowPrivate: true, Secrets: secrets})
	_, _, err = hooksSvc.CreateEndpoint(ctx, uuid.MustParse(shop.ID), hooks.NewEndpoint{URL: receiver.URL, EnabledEvents: []string{"*"}})
	require.NoError(t, err)

	// Offers, texts in and out, a booking paid through Stripe.
	op := e.newOpening(base, shop, 3*time.Hour)
	e.eventually("both offered", func() bool {
		return len(e.twilio.MessagesTo(erasedPhone)) > 0 && len(e.twilio.MessagesTo(keptPhone)) > 0
	})
	require.Equal(t, "help", e.text(base, erasedPhone, shop.SMSNumber, "HELP").Outcome)
	yes := e.text(base, erasedPhone, shop.SMSNumber, "YES")
	require.Equal(t, "booked", yes.Outcome, yes.Body)
	got := e.opening(base, shop, op.ID)
	require.NotNil(t, got.Booking)
	paid := paidEvent(t, got.Booking.ID, got.Booking.SessionID)
	r := e.postStripe(base, paid, stripe.SignedTestPayload(paid, webhookSecret, time.Now()))
	require.Equal(t, "confirmed", r.Result, r.Body)
	e.settle("sms_text")
	require.GreaterOrEqual(t, len(e.twilio.MessagesTo(erasedPhone)), 2, "the offer and the confirmation")

	// A carrier's delivery report of the offer text.
	require.Equal(t, http.StatusNoContent, e.status(base, e.twilio.MessagesTo(erasedPhone)[0].SID, "delivered", 0, ""))

	// A text the server cannot act on goes to the owner's inbox (with its
	// message.received event) and to the owner's alert phone (a text that quotes it),
	// and the owner replies there, by name, with an Idempotency-Key (the answer, the
	// reply's words without the number, is kept for the key).
	require.Equal(t, http.StatusOK, e.api(base, http.MethodPatch, "/api/shop", shop.APIKey,
		map[string]any{"notify_phone": "+15555550188"}, nil))
	// The alert number is confirmed first, with the code texted to it.
	var code string
	require.Eventually(t, func() bool {
		for _, m := range e.twilio.MessagesTo("+15555550188") {
			code = regexp.MustCompile(`\d{6}`).FindString(m.Body)
		}
		return code != ""
	}, 10*time.Second, 20*time.Millisecond, "the code texted to the alert number")
	require.Equal(t, http.StatusOK, e.api(base, http.MethodPost, "/api/shop/notify_phone/confirm", shop.APIKey,
		map[string]any{"code": code}, nil))
	inboxed := e.text(base, erasedPhone, shop.SMSNumber, "Could I bring my friend along next time?")
	require.Contains(t, []string{"unrecognized", "clarify"}, inboxed.Outcome)
	var convs struct {
		Conversations []struct {
			ID string `json:"id"`
		} `json:"conversations"`
	}
	require.Equal(t, http.StatusOK, e.api(base, http.MethodGet, "/api/conversations", shop.APIKey, nil, &convs))
	require.Len(t, convs.Conversations, 1)
	replyBody, err := json.Marshal(map[string]any{"body": "Of course, " + erasedName + "!"})
	require.NoError(t, err)
	replyReq, err := http.NewRequest(http.MethodPost, base+"/api/conversations/"+convs.Conversations[0].ID+"/messages", bytes.NewReader(replyBody))
	require.NoError(t, err)
	replyReq.Header.Set("Content-Type", "application/json")
	replyReq.Header.Set("Authorization", "Bearer "+shop.APIKey)
	replyReq.Header.Set("Idempotency-Key", "reply-1")
	replyRes, err := e.client.Do(replyReq)
	require.NoError(t, err)
	require.NoError(t, replyRes.Body.Close())
	require.Equal(t, http.StatusCreated, replyRes.StatusCode)
	require.Positive(t, e.count(`SELECT count(*) FROM river_job WHERE kind = 'sms_text' AND args->>'key' LIKE 'inbox_alert:%'`),
		"the owner's alert quoting the text was queued")
	e.settle("sms_text")

	// Transactional texts still to go (a reminder an hour on) and one River gave up on.
	for _, state := range []string{"scheduled", "discarded"} {
		tx, err := e.pool.Begin(ctx)
		require.NoError(t, err)
		res, err := rc.InsertTx(ctx, tx, jobs.Text{Key: "test-" + state, ShopID: uuid.MustParse(shop.ID), From: shop.SMSNumber,
			To: erasedPhone, Body: "See you soon, " + erasedName}, &river.InsertOpts{ScheduledAt: time.Now().Add(time.Hour)})
		require.NoError(t, err)
		if state == "discarded" {
			_, err = tx.Exec(ctx, `UPDATE river_job SET state = 'discarded', finalized_at = now(),
				errors = ARRAY[jsonb_build_object('at', now(), 'attempt', 1, 'error', 'send sms to '||$2::text||': refused')]
				WHERE id = $1`, res.Job.ID, erasedPhone)
			require.NoError(t, err)
		}
		require.NoError(t, tx.Commit(ctx))
	}

	// STOP and START: the customer's events, rendered and delivered to the endpoint.
	require.Equal(t, "opted_out", e.text(base, erasedPhone, shop.SMSNumber, "STOP").Outcome)
	require.Equal(t, "opted_in", e.text(base, erasedPhone, shop.SMSNumber, "START").Outcome)
	_, err = hooksSvc.Dispatch(ctx)
	require.NoError(t, err)
	deliveries := e.ids(`SELECT id::text FROM webhook_deliveries`)
	require.NotEmpty(t, deliveries, "the customer's events were recorded and dispatched")
	for _, id := range deliveries {
		// The server's own delivery workers may hold the endpoint's attempt slots (two
		// across the instances): then this attempt waits its turn, as a job would.
		require.Eventually(t, func() bool {
			err := hooksSvc.Attempt(ctx, uuid.MustParse(id), false)
			if errors.Is(err, hooks.ErrEndpointBusy) {
				return false
			}
			require.NoError(t, err)
			return true
		}, 10*time.Second, 20*time.Millisecond, "delivery %s: its endpoint stayed busy", id)
	}
	received.Lock()
	require.Contains(t, strings.Join(received.bodies, "\n"), erasedPhone, "the endpoint was told of the customer")
	received.Unlock()

	needles := personNeedles(erasedPhone, erasedName, erasedEmail, shop.ID)
	before := dumpTables(t, e.dbURL)
	var holders []string
	for table, text := range before {
		if len(findNeedles(text, needles)) > 0 {
			holders = append(holders, table)
		}
	}
	slices.Sort(holders)
	t.Logf("before the erasure, the person is in: %s", strings.Join(holders, ", "))
	for _, table := range []string{"customers", "inbound_messages", "river_job", "webhook_events", "webhook_attempts",
		"conversations", "conversation_messages", "idempotency_keys"} {
		require.Contains(t, holders, table, "the scene puts the person in %s", table)
	}

	// The erasure.
	require.Equal(t, http.StatusNoContent, e.api(base, http.MethodDelete, "/api/customers/"+erased.ID, shop.APIKey, nil, nil))
	// What runs now has run (a text being sent, the erasure's follow-up); what is
	// scheduled later is for the dump to show.
	e.eventually("texts and erasure jobs run", func() bool {
		return e.count(`SELECT count(*) FROM river_job WHERE kind IN ('sms_text', 'customer_erasure_jobs')
			AND state IN ('available', 'running', 'retryable', 'pending')`) == 0
	})

	after := dumpTables(t, e.dbURL)
	var found []string
	for table, text := range after {
		for _, n := range findNeedles(text, needles) {
			found = append(found, table+": "+n)
		}
	}
	slices.Sort(found)
	require.Empty(t, found, "the dump after the erasure still holds the person")
	t.Logf("after the erasure, %d tables dumped; none holds any of %d forms of the number, name and email, nor the unkeyed hash",
		len(after), len(needles))

	// The search finds what is there: the other customer, untouched.
	require.NotEmpty(t, findNeedles(after["customers"], personNeedles(keptPhone, keptName, "", shop.ID)))
	require.Contains(t, after["customers"], kept.ID)
}

// ids runs a query returning one text column.
func (e *env) ids(query string, args ...any) []string {
	e.t.Helper()
	rows, err := e.pool.Query(context.Background(), query, args...)
	require.NoError(e.t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		require.NoError(e.t, rows.Scan(&s))
		out = append(out, s)
	}
	require.NoError(e.t, rows.Err())
	return out
}

// paidEvent is a checkout.session.completed event as Stripe sends it for a customer who
// paid: with what Checkout collected of them (customer_details).
func paidEvent(t *testing.T, bookingID, sessionID string) []byte {
	t.Helper()
	var ev map[string]any
	require.NoError(t, json.Unmarshal(stripe.TestEventPayload(evtID(), stripe.EventCheckoutCompleted, bookingID, sessionID,
		"pi_test_erasure", stripe.PaymentPaid, time.Now()), &ev))
	obj := ev["data"].(map[string]any)["object"].(map[string]any)
	obj["customer_details"] = map[string]any{"email": erasedEmail, "name": erasedName, "phone": erasedPhone,
		"address": map[string]any{"country": "US", "postal_code": "10001"}, "tax_exempt": "none", "tax_ids": []any{}}
	obj["customer_email"] = erasedEmail
	b, err := json.Marshal(ev)
	require.NoError(t, err)
	return b
}

// personNeedles are the forms in which a person's number, name and email may be kept:
// the number in E.164, without its +, its national digits, spaced, dashed, dotted and
// bracketed; the name whole and in parts; any case; each also as the hex that a bytea
// column dumps as; and the unkeyed SHA-256 of shop id and number, which no erasure may
// keep.
func personNeedles(phone, name, email, shopID string) []string {
	national := phone[2:] // +1 and ten digits
	a, b, c := national[:3], national[3:6], national[6:]
	forms := []string{phone, phone[1:], national, a + "-" + b + "-" + c, a + " " + b + " " + c, a + "." + b + "." + c,
		"(" + a + ") " + b + "-" + c, "+1 " + a + " " + b + " " + c, "+1-" + a + "-" + b + "-" + c, "1-" + a + "-" + b + "-" + c}
	forms = append(forms, name)
	forms = append(forms, strings.Fields(name)...)
	if email != "" {
		forms = append(forms, email)
	}
	// The search ignores case; a bytea dumps as hex, in which case matters.
	var out []string
	for _, f := range forms {
		out = append(out, strings.ToLower(f))
		for _, v := range []string{f, strings.ToLower(f), strings.ToUpper(f)} {
			out = append(out, hex.EncodeToString([]byte(v)))
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	sum := sha256.Sum256([]byte(shopID + ":" + phone))
	return append(out, hex.EncodeToString(sum[:]))
}

// findNeedles returns the needles text holds, ignoring case.
func findNeedles(text string, needles []string) []string {
	text = strings.ToLower(text)
	var out []string
	for _, n := range needles {
		if strings.Contains(text, strings.ToLower(n)) {
			out = append(out, n)
		}
	}
	return out
}

// dumpTables dumps the whole database with pg_dump (schema and data, every table,
// River's too) and returns each table's data section by table name; "" holds what is
// outside any table's data (the schema, functions, sequences).
func dumpTables(t *testing.T, dbURL string) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "pg_dump", "--no-owner", "--no-privileges", "--dbname="+dbURL)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	require.NoError(t, cmd.Run(), "pg_dump: %s", stderr.String())
	tables := map[string]string{}
	current := ""
	sc := bufio.NewScanner(&out)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "COPY "):
			name, _, _ := strings.Cut(strings.TrimPrefix(line, "COPY "), " ")
			current = strings.TrimPrefix(name, "public.")
			continue
		case line == `\.`:
			current = ""
			continue
		}
		tables[current] += line + "\n"
	}
	require.NoError(t, sc.Err())
	require.Contains(t, tables, "river_job", "the dump has River's tables")
	return tables
}
