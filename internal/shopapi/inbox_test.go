package shopapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/api"
	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/inbox"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/shopapi"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/testkit/hookstest"
)

// textIn records an inbound text that needs the owner, as the inbound path does (in a
// transaction of its own), and returns what was recorded.
func (e *env) textIn(shopID, phone, customerID, sid, body string, at time.Time) inbox.Recorded {
	e.t.Helper()
	in := inbox.InboundText{ShopID: uuid.MustParse(shopID), Phone: phone, MessageSID: sid, Body: body, At: at, NeedsOwner: true}
	if customerID != "" {
		in.CustomerID = uuid.MustParse(customerID)
	}
	var rec inbox.Recorded
	require.NoError(e.t, pgx.BeginFunc(context.Background(), e.pool, func(tx pgx.Tx) error {
		var err error
		rec, err = inbox.RecordIn(context.Background(), tx, in)
		return err
	}))
	return rec
}

// TestConversationsAPI: the list (newest activity first, by status, in cursor pages),
// a thread (oldest first), the owner's reply (201, queued as a text from the shop's
// number), read and open/close; bad input is a 4xx naming its field.
func TestConversationsAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	shopID, key := e.shop("+15555550100")
	ada := e.customer(key, map[string]any{"phone": "+15557310001", "name": "Ada Lovelace", "sms_opt_in": true})
	t0 := time.Now().UTC().Truncate(time.Second).Add(-time.Hour)
	adaConv := e.textIn(shopID, "+15557310001", ada, "SM-a1", "can I come at 4 instead?", t0).ConversationID
	e.textIn(shopID, "+15557310001", ada, "SM-a2", "or 5?", t0.Add(time.Minute))
	stranger := e.textIn(shopID, "+15557310002", "", "SM-s1", "who is this?", t0.Add(2*time.Minute)).ConversationID

	r := e.do(http.MethodGet, "/api/conversations", key, nil)
	require.Equal(t, http.StatusOK, r.status, r.raw)
	list := r.body["conversations"].([]any)
	require.Len(t, list, 2)
	require.Nil(t, r.body["next_cursor"])
	first, second := list[0].(map[string]any), list[1].(map[string]any)
	require.Equal(t, stranger.String(), first["id"], "newest activity first")
	require.Nil(t, first["customer"])
	require.Equal(t, map[string]any{"id": ada, "name": "Ada Lovelace"}, second["customer"])
	require.Equal(t, "open", second["status"])
	require.EqualValues(t, 2, second["unread"])
	require.Equal(t, map[string]any{"direction": "in", "body": "or 5?", "at": t0.Add(time.Minute).Format(time.RFC3339)}, second["last_message"])

	// Pages of one, by cursor.
	r = e.do(http.MethodGet, "/api/conversations?limit=1", key, nil)
	require.Len(t, r.body["conversations"], 1)
	cursor := r.body["next_cursor"].(string)
	r = e.do(http.MethodGet, "/api/conversations?limit=1&cursor="+cursor, key, nil)
	require.Equal(t, adaConv.String(), r.body["conversations"].([]any)[0].(map[string]any)["id"])
	require.Nil(t, r.body["next_cursor"])

	// The thread, oldest first.
	r = e.do(http.MethodGet, "/api/conversations/"+adaConv.String(), key, nil)
	require.Equal(t, http.StatusOK, r.status, r.raw)
	msgs := r.body["messages"].([]any)
	require.Len(t, msgs, 2)
	m0 := msgs[0].(map[string]any)
	require.Equal(t, "can I come at 4 instead?", m0["body"])
	require.Equal(t, "in", m0["direction"])
	require.Equal(t, "customer", m0["author"])
	require.Equal(t, "received", m0["status"])
	require.Contains(t, r.body, "older_cursor")
	require.Nil(t, r.body["older_cursor"], "a short thread is one page")
	r = e.do(http.MethodGet, "/api/conversations/"+adaConv.String()+"?before=nope", key, nil)
	require.Equal(t, http.StatusUnprocessableEntity, r.status, r.raw)
	require.Contains(t, r.raw, "invalid_before")

	// The owner replies: 201, the message queued, and one text job to the number from the
	// shop's number.
	r = e.do(http.MethodPost, "/api/conversations/"+adaConv.String()+"/messages", key, map[string]any{"body": "4 is fine, see you then"})
	require.Equal(t, http.StatusCreated, r.status, r.raw)
	require.Equal(t, "out", r.body["direction"])
	require.Equal(t, "owner", r.body["author"])
	require.Equal(t, "queued", r.body["status"])
	require.Equal(t, "4 is fine, see you then", r.body["body"])
	require.Equal(t, "/api/conversations/"+adaConv.String(), r.header.Get("Location"))
	var args jobs.Text
	require.NoError(t, json.Unmarshal([]byte(e.queryString(`SELECT args::text FROM river_job WHERE kind = $1`, jobs.Text{}.Kind())), &args))
	require.Equal(t, jobs.Text{Key: "inbox_reply:" + r.body["id"].(string), ShopID: uuid.MustParse(shopID),
		From: "+15555550100", To: "+15557310001", Body: "4 is fine, see you then"}, args)
	r = e.do(http.MethodGet, "/api/conversations/"+adaConv.String(), key, nil)
	require.Len(t, r.body["messages"], 3)
	require.Equal(t, "owner", r.body["messages"].([]any)[2].(map[string]any)["author"])
	require.Equal(t, adaConv.String(), e.do(http.MethodGet, "/api/conversations", key, nil).body["conversations"].([]any)[0].(map[string]any)["id"],
		"a reply moves the conversation up")

	// Read, then close: the open list no longer has it; closed and all do.
	r = e.do(http.MethodPost, "/api/conversations/"+adaConv.String()+"/read", key, nil)
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.EqualValues(t, 0, r.body["unread"])
	r = e.do(http.MethodPatch, "/api/conversations/"+adaConv.String(), key, map[string]any{"status": "closed"})
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Equal(t, "closed", r.body["status"])
	require.Len(t, e.do(http.MethodGet, "/api/conversations", key, nil).body["conversations"], 1, "open by default")
	require.Len(t, e.do(http.MethodGet, "/api/conversations?status=closed", key, nil).body["conversations"], 1)
	require.Len(t, e.do(http.MethodGet, "/api/conversations?status=all", key, nil).body["conversations"], 2)
	r = e.do(http.MethodPatch, "/api/conversations/"+adaConv.String(), key, map[string]any{"status": "open"})
	require.Equal(t, "open", r.body["status"])
	r = e.do(http.MethodPatch, "/api/conversations/"+adaConv.String(), key, map[string]any{})
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Equal(t, "open", r.body["status"], "nothing asked, nothing changed")

	// Bad input: 4xx with {error:{code,message}} naming the field.
	for _, tc := range []struct {
		name, method, path string
		body               any
		status             int
		code, field        string
	}{
		{"empty body", http.MethodPost, "/messages", map[string]any{"body": ""}, 422, "invalid_body", "body"},
		{"only spaces", http.MethodPost, "/messages", map[string]any{"body": "   "}, 422, "invalid_body", "body"},
		{"no body", http.MethodPost, "/messages", map[string]any{}, 422, "invalid_body", "body"},
		{"too long", http.MethodPost, "/messages", map[string]any{"body": strings.Repeat("é", 641)}, 422, "invalid_body", "body"},
		{"body not text", http.MethodPost, "/messages", `{"body": 5}`, 400, "bad_json", "body"},
		{"not JSON", http.MethodPost, "/messages", `{`, 400, "bad_json", ""},
		{"bad status", http.MethodPatch, "", map[string]any{"status": "archived"}, 422, "invalid_status", "status"},
		{"null status", http.MethodPatch, "", map[string]any{"status": nil}, 422, "invalid_status", "status"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := e.sub(t)
			r := e.do(tc.method, "/api/conversations/"+adaConv.String()+tc.path, key, tc.body)
			requireError(t, r, tc.status, tc.code)
			require.Equal(t, tc.field, r.errFieldName(), r.raw)
		})
	}
	require.Len(t, e.do(http.MethodGet, "/api/conversations/"+adaConv.String(), key, nil).body["messages"], 3, "nothing recorded")
	r = e.do(http.MethodPost, "/api/conversations/"+adaConv.String()+"/messages", key, map[string]any{"body": strings.Repeat("é", 640)})
	require.Equal(t, http.StatusCreated, r.status, "640 characters (not bytes) fit: %s", r.raw)
	for _, q := range []string{"?status=archived", "?limit=0", "?limit=201", "?cursor=not-ours"} {
		r := e.do(http.MethodGet, "/api/conversations"+q, key, nil)
		require.Equal(t, http.StatusUnprocessableEntity, r.status, "%s: %s", q, r.raw)
		require.NotEmpty(t, r.errCode())
	}
	requireError(t, e.do(http.MethodGet, "/api/conversations", "", nil), http.StatusUnauthorized, "unauthorized")
	requireError(t, e.do(http.MethodGet, "/api/conversations/not-a-uuid", key, nil), http.StatusNotFound, "conversation_not_found")
	requireError(t, e.do(http.MethodGet, "/api/conversations/"+uuid.NewString(), key, nil), http.StatusNotFound, "conversation_not_found")
}

// TestConversationsAreTenantIsolated: another shop's conversation answers 404 to every
// route, and nothing of it changes or is sent.
func TestConversationsAreTenantIsolated(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	shopA, _ := e.shop("+15555550100")
	_, b := e.shop("+15555550101")
	conv := e.textIn(shopA, "+15557310001", "", "SM-1", "hello?", time.Now()).ConversationID
	path := "/api/conversations/" + conv.String()
	for _, tc := range []struct {
		method, path string
		body         any
	}{
		{http.MethodGet, path, nil},
		{http.MethodPatch, path, map[string]any{"status": "closed"}},
		{http.MethodPost, path + "/messages", map[string]any{"body": "mine now"}},
		{http.MethodPost, path + "/read", nil},
	} {
		r := e.do(tc.method, tc.path, b, tc.body)
		requireError(t, r, http.StatusNotFound, "conversation_not_found")
	}
	require.Empty(t, e.do(http.MethodGet, "/api/conversations?status=all", b, nil).body["conversations"])
	require.Zero(t, e.queryInt(`SELECT count(*) FROM river_job`), "nothing queued")
	require.Equal(t, 1, e.queryInt(`SELECT unread FROM conversations WHERE id = $1`, conv), "still unread")
	require.Equal(t, "open", e.queryString(`SELECT status FROM conversations WHERE id = $1`, conv))
}

// TestReplyToOptedOutNumber: a number that said STOP (a customer's, or a stranger's) or
// whose customer the shop erased is refused with 422 opted_out; nothing is recorded or
// queued.
func TestReplyToOptedOutNumber(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	shopID, key := e.shop("+15555550100")
	shop := uuid.MustParse(shopID)
	ctx := context.Background()
	ada := e.customer(key, map[string]any{"phone": "+15557310001", "name": "Ada", "sms_opt_in": true})
	bea := e.customer(key, map[string]any{"phone": "+15557310003", "name": "Bea", "sms_opt_in": true})
	adaConv := e.textIn(shopID, "+15557310001", ada, "SM-1", "hm", time.Now()).ConversationID
	strangerConv := e.textIn(shopID, "+15557310002", "", "SM-2", "hm", time.Now()).ConversationID
	require.NoError(t, e.h.Customers.OptOut(ctx, uuid.MustParse(ada)))
	require.NoError(t, e.h.Customers.OptOutNumber(ctx, shop, "+15557310002"))
	beaConv := e.textIn(shopID, "+15557310003", bea, "SM-3", "hm", time.Now()).ConversationID
	for name, conv := range map[string]uuid.UUID{"customer": adaConv, "stranger": strangerConv} {
		r := e.do(http.MethodPost, "/api/conversations/"+conv.String()+"/messages", key, map[string]any{"body": "still there?"})
		requireError(t, r, http.StatusUnprocessableEntity, "opted_out")
		require.Len(t, e.do(http.MethodGet, "/api/conversations/"+conv.String(), key, nil).body["messages"], 1, name)
	}
	// START opts the stranger's number back in.
	require.NoError(t, e.h.Customers.OptInNumber(ctx, shop, "+15557310002"))
	r := e.do(http.MethodPost, "/api/conversations/"+strangerConv.String()+"/messages", key, map[string]any{"body": "welcome back"})
	require.Equal(t, http.StatusCreated, r.status, r.raw)
	require.Equal(t, 1, e.queryInt(`SELECT count(*) FROM river_job`))
	// Bea is erased: her conversation goes with her.
	require.Equal(t, http.StatusNoContent, e.do(http.MethodDelete, "/api/customers/"+bea, key, nil).status)
	requireError(t, e.do(http.MethodPost, "/api/conversations/"+beaConv.String()+"/messages", key, map[string]any{"body": "x"}),
		http.StatusNotFound, "conversation_not_found")
	optedOut, err := e.h.Customers.OptedOut(ctx, shop, "+15557310003")
	require.NoError(t, err)
	require.True(t, optedOut, "an erased number counts as opted out")
	require.Equal(t, 1, e.queryInt(`SELECT count(*) FROM river_job`), "nothing more queued")
}

// TestReplyIdempotencyKey: a retried reply with its Idempotency-Key gets the first
// answer again and sends nothing more; another body with the same key is refused.
func TestReplyIdempotencyKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	shopID, key := e.shop("+15555550100")
	conv := e.textIn(shopID, "+15557310001", "", "SM-1", "hello?", time.Now()).ConversationID
	path := "/api/conversations/" + conv.String() + "/messages"
	first := e.doKeyed(key, "reply-1", http.MethodPost, path, map[string]any{"body": "hi there"})
	require.Equal(t, http.StatusCreated, first.status, first.raw)
	again := e.doKeyed(key, "reply-1", http.MethodPost, path, map[string]any{"body": "hi there"})
	require.Equal(t, http.StatusCreated, again.status, again.raw)
	require.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
	require.Equal(t, first.body, again.body)
	require.Equal(t, 1, e.queryInt(`SELECT count(*) FROM river_job`), "one text")
	require.Equal(t, 1, e.queryInt(`SELECT count(*) FROM conversation_messages WHERE author = 'owner'`))
	other := e.doKeyed(key, "reply-1", http.MethodPost, path, map[string]any{"body": "something else"})
	requireError(t, other, http.StatusUnprocessableEntity, "idempotency_key_reused")
}

// TestNotifyPhone: the owner's alert number is confirmed before it is used (issue 49).
// A number given at creation or by PATCH waits, with a code texted to it, until the
// code comes back through POST /api/shop/notify_phone/confirm; the confirmed number
// keeps the alerts meanwhile; wrong codes count and end the code; null ends the alerts.
// Numbers are checked as E.164 with a 422 naming the field.
func TestNotifyPhone(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	body := validShop("+15555550100")
	body["notify_phone"] = "+15555550199"
	r := e.do(http.MethodPost, "/api/shops", adminToken, body)
	require.Equal(t, http.StatusCreated, r.status, r.raw)
	require.Nil(t, r.body["notify_phone"], "not confirmed yet: no alerts")
	require.Equal(t, "+15555550199", r.body["notify_phone_pending"].(map[string]any)["phone"], r.raw)
	key := r.body["api_key"].(string)
	code := notifyCode(t, e, "+15555550199")

	for _, wrong := range []string{"000000", "12345"} {
		if wrong == code {
			continue
		}
		r = e.do(http.MethodPost, shopapi.NotifyPhoneConfirmPath, key, map[string]any{"code": wrong})
		requireError(t, r, http.StatusUnprocessableEntity, "invalid_code")
	}
	r = e.do(http.MethodPost, shopapi.NotifyPhoneConfirmPath, key, map[string]any{"code": code[:3] + " " + code[3:]})
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Equal(t, "+15555550199", r.body["notify_phone"])
	require.Nil(t, r.body["notify_phone_pending"])
	r = e.do(http.MethodPost, shopapi.NotifyPhoneConfirmPath, key, map[string]any{"code": code})
	requireError(t, r, http.StatusConflict, "no_pending_notify_phone")
	require.Equal(t, "+15555550199", e.do(http.MethodGet, "/api/shop", key, nil).body["notify_phone"])

	r = e.do(http.MethodPatch, "/api/shop", key, map[string]any{"name": "Renamed"})
	require.Equal(t, "+15555550199", r.body["notify_phone"], "left out: kept")
	r = e.do(http.MethodPatch, "/api/shop", key, map[string]any{"notify_phone": "+15555550199"})
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Nil(t, r.body["notify_phone_pending"], "the confirmed number again: nothing to confirm")

	// A new number: the old one keeps the alerts until the new one's code comes back.
	r = e.do(http.MethodPatch, "/api/shop", key, map[string]any{"notify_phone": "+15555550198"})
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Equal(t, "+15555550199", r.body["notify_phone"])
	require.Equal(t, "+15555550198", r.body["notify_phone_pending"].(map[string]any)["phone"], r.raw)
	code2 := notifyCode(t, e, "+15555550198")
	r = e.do(http.MethodPatch, "/api/shop", key, map[string]any{"notify_phone": "+15555550197"})
	requireError(t, r, http.StatusTooManyRequests, "code_recently_sent")
	require.NotEmpty(t, r.header.Get("Retry-After"), "a limited answer says when")
	// Five wrong codes end it: the right one no longer works.
	for i := 0; i < shops.NotifyCodeAttempts; i++ {
		wrong := fmt.Sprintf("%06d", i)
		if wrong == code2 {
			wrong = "999999x"
		}
		requireError(t, e.do(http.MethodPost, shopapi.NotifyPhoneConfirmPath, key, map[string]any{"code": wrong}),
			http.StatusUnprocessableEntity, "invalid_code")
	}
	requireError(t, e.do(http.MethodPost, shopapi.NotifyPhoneConfirmPath, key, map[string]any{"code": code2}),
		http.StatusUnprocessableEntity, "code_expired")
	require.Equal(t, "+15555550199", e.do(http.MethodGet, "/api/shop", key, nil).body["notify_phone"])

	r = e.do(http.MethodPatch, "/api/shop", key, map[string]any{"notify_phone": nil})
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Nil(t, r.body["notify_phone"], "null clears it")
	for _, bad := range []any{"", "5555550199", "+1555", "call me", 15555550199, "+15555550100"} {
		r := e.do(http.MethodPatch, "/api/shop", key, map[string]any{"notify_phone": bad, "name": "Not this"})
		require.Contains(t, []int{http.StatusBadRequest, http.StatusUnprocessableEntity}, r.status, r.raw)
		require.Equal(t, "notify_phone", r.errFieldName(), r.raw)
		b := validShop("+15555550100") // refused before its number is found taken
		b["notify_phone"] = bad
		r = e.do(http.MethodPost, "/api/shops", adminToken, b)
		require.Contains(t, []int{http.StatusBadRequest, http.StatusUnprocessableEntity}, r.status, r.raw)
		require.Equal(t, "notify_phone", r.errFieldName(), r.raw)
	}
	got := e.do(http.MethodGet, "/api/shop", key, nil).body
	require.Nil(t, got["notify_phone"])
	require.Equal(t, "Renamed", got["name"], "a refused alert number changes nothing else")
}

// notifyCode is the code in the newest text queued to number (the insert-only queue
// keeps it), failing when there is none.
func notifyCode(t *testing.T, e *env, number string) string {
	t.Helper()
	var args jobs.Text
	raw := e.queryString(`SELECT args::text FROM river_job WHERE kind = $1 AND args->>'to' = $2 ORDER BY id DESC LIMIT 1`, jobs.Text{}.Kind(), number)
	require.NoError(t, json.Unmarshal([]byte(raw), &args))
	m := regexp.MustCompile(`\b(\d{6})\b`).FindStringSubmatch(args.Body)
	require.NotNil(t, m, "no code in the text to %s: %q", number, args.Body)
	require.Contains(t, args.Body, "inbox alerts")
	return m[1]
}

// TestMessageReceivedEvent: a message.received event reaches a real receiver, verifies,
// matches the document's webhooks section, and carries the text as the conversation
// holds it (conversation, number, customer's id, words, outcome).
func TestMessageReceivedEvent(t *testing.T) {
	t.Parallel()
	var svc *hooks.Service
	e := newEnvWith(t, func(h *shopapi.Handlers, pool *pgxpool.Pool, queue jobs.Inserter) {
		h.Hooks = hooks.New(pool, queue, hooks.Config{DevMode: true, AllowPrivate: true, PollEvery: 20 * time.Millisecond})
		svc = h.Hooks
	})
	shopID, key := e.shop("+15555550100")
	rcv := hookstest.NewReceiver(t)
	r := e.do(http.MethodPost, "/api/webhook_endpoints", key, map[string]any{"url": rcv.URL(), "enabled_events": []string{"message.received"}})
	require.Equal(t, http.StatusCreated, r.status, r.raw)
	rcv.SetSecrets(r.body["secret"].(string))
	hookstest.Deliver(t, e.pool, svc, hookstest.RiverConfig{})
	ada := e.customer(key, map[string]any{"phone": "+15557310001", "name": "Ada", "sms_opt_in": true})
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	ctx := context.Background()
	record := func(phone, cust, sid, outcome string) inbox.Recorded {
		in := inbox.InboundText{ShopID: uuid.MustParse(shopID), Phone: phone, MessageSID: sid, Body: "can I come at 4 instead?", At: at, NeedsOwner: true}
		if cust != "" {
			in.CustomerID = uuid.MustParse(cust)
		}
		var rec inbox.Recorded
		require.NoError(t, pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
			var err error
			if rec, err = inbox.RecordIn(ctx, tx, in); err != nil {
				return err
			}
			return hooks.Record(ctx, tx, in.ShopID, hooks.MessageReceived, at, rec.Event(in, outcome))
		}))
		return rec
	}
	a := record("+15557310001", ada, "SM-1", "unrecognized")
	s := record("+15557310002", "", "SM-2", "clarify")
	got := hookstest.InRecordedOrder(t, e.pool, rcv.WaitFor(t, 2, 30*time.Second))
	require.Empty(t, rcv.Unverified())
	require.Equal(t, []string{hooks.MessageReceived, hooks.MessageReceived}, hookstest.Types(got))
	for _, ev := range got {
		checkEvent(t, ev)
	}
	require.JSONEq(t, `{"conversation_id":"`+a.ConversationID.String()+`","message_id":"`+a.MessageID.String()+`",
		"phone":"+15557310001","customer_id":"`+ada+`","body":"can I come at 4 instead?","outcome":"unrecognized",
		"at":"2026-11-27T09:00:00Z"}`, string(got[0].Data))
	require.JSONEq(t, `{"conversation_id":"`+s.ConversationID.String()+`","message_id":"`+s.MessageID.String()+`",
		"phone":"+15557310002","customer_id":null,"body":"can I come at 4 instead?","outcome":"clarify",
		"at":"2026-11-27T09:00:00Z"}`, string(got[1].Data))

	// Data that names no conversation is refused, not recorded as an empty event.
	err := hooks.Record(ctx, e.pool, uuid.MustParse(shopID), hooks.MessageReceived, at, api.MessageReceived{})
	require.Error(t, err)
}
