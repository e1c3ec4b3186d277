package dashboard_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/dashboard"
	"github.com/slotrecovery/slotrecovery/internal/inbox"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// textIn records a text that waits for the owner, as the inbound path does.
func (en *env) textIn(t *testing.T, shop shops.Shop, phone string, customer uuid.UUID, sid, body string) uuid.UUID {
	t.Helper()
	var rec inbox.Recorded
	require.NoError(t, pgx.BeginFunc(context.Background(), en.pool, func(tx pgx.Tx) error {
		var err error
		rec, err = inbox.RecordIn(context.Background(), tx, inbox.InboundText{ShopID: shop.ID, Phone: phone, CustomerID: customer,
			MessageSID: sid, Body: body, At: time.Now(), NeedsOwner: true})
		return err
	}))
	return rec.ConversationID
}

// TestInboxPage: the navigation counts the open conversations waiting unread on every
// page; the list filters open, closed and all; a thread shows the texts oldest first and
// viewing it marks it read; a reply (with the CSRF token) is queued as a text from the
// shop's number; close and reopen; a number that said STOP is refused with why.
func TestInboxPage(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{})
	ck := en.login(t, en.keyA)
	ada := en.addCustomer(t, en.shopA, "+15557310001", "Ada Lovelace")
	conv := en.textIn(t, en.shopA, ada.Phone, ada.ID, "SM-1", "can I come at 4 instead?")
	en.textIn(t, en.shopA, ada.Phone, ada.ID, "SM-2", "or <b>5</b>?")
	stranger := en.textIn(t, en.shopA, "+15557310002", uuid.Nil, "SM-3", "who is this?")
	en.textIn(t, en.shopB, "+15557310003", uuid.Nil, "SM-4", "B's customer")

	// Every signed-in page shows the count: two conversations wait.
	for _, path := range []string{"/dashboard", "/dashboard/customers", "/dashboard/settings"} {
		body, _ := en.page(t, ck, path)
		require.Contains(t, body, `id="nav-inbox"`, path)
		require.Contains(t, body, `<span class="nav-badge" id="nav-unread">2<span class="vh"> unread</span></span>`, path)
	}

	body, _ := en.page(t, ck, "/dashboard/inbox")
	require.Contains(t, body, `aria-current="page">Inbox`)
	require.Equal(t, 2, strings.Count(body, `class="conversation-row"`))
	require.Contains(t, body, "Ada Lovelace")
	require.Contains(t, body, "2 unread")
	require.Contains(t, body, "or &lt;b&gt;5&lt;/b&gt;?", "escaped")
	require.NotContains(t, body, "B's customer", "another shop's")
	require.Less(t, strings.Index(body, stranger.String()), strings.Index(body, conv.String()), "newest activity first")

	// The thread: oldest first; viewing it reads it.
	body, csrf := en.page(t, ck, "/dashboard/inbox/"+conv.String())
	require.Less(t, strings.Index(body, "can I come at 4 instead?"), strings.Index(body, "or &lt;b&gt;5&lt;/b&gt;?"))
	require.Contains(t, body, `id="reply-form"`)
	require.Contains(t, body, `<span class="nav-badge" id="nav-unread">1<span`, "read now: one left")
	th, err := en.inbox.Get(context.Background(), en.shopA.ID, conv)
	require.NoError(t, err)
	require.Zero(t, th.Unread)

	// A reply without the token is refused; with it, it is queued from the shop's number.
	rec := en.post("/dashboard/inbox/"+conv.String()+"/reply", url.Values{"body": {"4 works"}}, ck)
	require.Equal(t, http.StatusForbidden, rec.Code)
	rec = en.post("/dashboard/inbox/"+conv.String()+"/reply", url.Values{"csrf": {csrf}, "body": {""}}, ck)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	require.NotEmpty(t, fieldError(rec.Body.String(), "reply-error"))
	rec = en.post("/dashboard/inbox/"+conv.String()+"/reply", url.Values{"csrf": {csrf}, "body": {"4 works, see you"}}, ck)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	require.Equal(t, "/dashboard/inbox/"+conv.String()+"?notice=sent", rec.Header().Get("Location"))
	var n int
	require.NoError(t, en.pool.QueryRow(context.Background(),
		`SELECT count(*) FROM river_job WHERE kind = 'sms_text' AND args->>'to' = $1 AND args->>'from' = $2`, ada.Phone, en.shopA.SMSNumber).Scan(&n))
	require.Equal(t, 1, n)
	body, _ = en.page(t, ck, "/dashboard/inbox/"+conv.String()+"?notice=sent")
	require.Contains(t, body, "Reply queued")
	require.Contains(t, body, "4 works, see you")
	require.Contains(t, body, "You · ")

	// Close, then it is in the closed list, not the open one; reopen.
	rec = en.post("/dashboard/inbox/"+conv.String()+"/status", url.Values{"csrf": {csrf}, "status": {"closed"}}, ck)
	require.Equal(t, http.StatusSeeOther, rec.Code)
	body, _ = en.page(t, ck, "/dashboard/inbox")
	require.NotContains(t, body, conv.String())
	body, _ = en.page(t, ck, "/dashboard/inbox?status=closed")
	require.Contains(t, body, conv.String())
	body, _ = en.page(t, ck, "/dashboard/inbox?status=all")
	require.Equal(t, 2, strings.Count(body, `class="conversation-row"`))
	rec = en.post("/dashboard/inbox/"+conv.String()+"/status", url.Values{"csrf": {csrf}, "status": {"open"}}, ck)
	require.Equal(t, http.StatusSeeOther, rec.Code)
	body, _ = en.page(t, ck, "/dashboard/inbox")
	require.Contains(t, body, conv.String())

	// STOP: the reply is refused, saying why; nothing more is queued.
	require.NoError(t, en.customers.OptOutNumber(context.Background(), en.shopA.ID, "+15557310002"))
	rec = en.post("/dashboard/inbox/"+stranger.String()+"/reply", url.Values{"csrf": {csrf}, "body": {"hello?"}}, ck)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	require.Contains(t, fieldError(rec.Body.String(), "reply-error"), "replied STOP")
	require.Contains(t, rec.Body.String(), "hello?", "the reply as typed")
	require.NoError(t, en.pool.QueryRow(context.Background(), `SELECT count(*) FROM river_job WHERE kind = 'sms_text'`).Scan(&n))
	require.Equal(t, 1, n)

	// The shop's rules (limits, registration, quiet hours) refuse it: not sent, saying
	// why, the reply kept in the form; a limit says when with Retry-After.
	for _, tt := range []struct {
		err    error
		status int
		retry  string
	}{
		{&problem.Error{Kind: problem.Limited, Code: "too_many_replies", Message: "5 replies a minute is the most for this conversation", RetryAfter: 11 * time.Second}, http.StatusTooManyRequests, "11"},
		{problem.New(problem.Conflict, "sender_not_registered", "the shop's US number is not registered"), http.StatusConflict, ""},
		{&problem.Error{Kind: problem.Invalid, Code: "quiet_hours", Message: "it is the shop's quiet hours"}, http.StatusUnprocessableEntity, ""},
	} {
		en.replyRules.set(tt.err)
		rec = en.post("/dashboard/inbox/"+conv.String()+"/reply", url.Values{"csrf": {csrf}, "body": {"see you at 4"}}, ck)
		require.Equal(t, tt.status, rec.Code, "%v", tt.err)
		require.Equal(t, tt.retry, rec.Header().Get("Retry-After"))
		require.Contains(t, strings.ToLower(fieldError(rec.Body.String(), "reply-error")), strings.ToLower(tt.err.(*problem.Error).Message))
		require.Contains(t, rec.Body.String(), "see you at 4", "the reply as typed")
	}
	en.replyRules.set(nil)
	require.NoError(t, en.pool.QueryRow(context.Background(), `SELECT count(*) FROM river_job WHERE kind = 'sms_text'`).Scan(&n))
	require.Equal(t, 1, n, "nothing more was queued")

	// Another shop's conversation, or none, is a 404 page.
	ckB := en.login(t, en.keyB)
	for _, path := range []string{"/dashboard/inbox/" + conv.String(), "/dashboard/inbox/not-a-uuid"} {
		require.Equal(t, http.StatusNotFound, en.get(path, ckB).Code, path)
	}
	_, csrfB := en.page(t, ckB, "/dashboard/inbox")
	rec = en.post("/dashboard/inbox/"+conv.String()+"/reply", url.Values{"csrf": {csrfB}, "body": {"mine"}}, ckB)
	require.Equal(t, http.StatusNotFound, rec.Code)
	rec = en.post("/dashboard/inbox/"+conv.String()+"/status", url.Values{"csrf": {csrfB}, "status": {"closed"}}, ckB)
	require.Equal(t, http.StatusNotFound, rec.Code)
	require.Equal(t, http.StatusSeeOther, en.get("/dashboard/inbox").Code, "signed out: to the sign-in form")
}

// TestSettingsNotifyPhone: a new alert number typed in the settings is texted a code
// and waits for it (the confirmed number keeps the alerts); the code entered on the
// page confirms it, a wrong one is shown next to the code's input; empty removes the
// alerts, and a malformed number is shown next to its input.
func TestSettingsNotifyPhone(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{})
	ck := en.login(t, en.keyA)
	body, csrf := en.page(t, ck, "/dashboard/settings")
	require.Contains(t, body, `id="set-notify-phone"`)
	form := func(notify string) url.Values {
		return url.Values{"csrf": {csrf}, "name": {"Ada's Barbers"}, "timezone": {"America/New_York"}, "currency": {"USD"},
			"payment_mode": {"checkout"}, "wave_size": {"10"}, "wave_interval_seconds": {"600"}, "min_lead_minutes": {"60"},
			"cooldown_seconds": {"86400"}, "notify_phone": {notify}}
	}
	rec := en.post("/dashboard/settings", form("+15555550199"), ck)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	require.Equal(t, "/dashboard/settings?notice=code_sent", rec.Header().Get("Location"))
	shop, err := en.shops.Get(context.Background(), en.shopA.ID)
	require.NoError(t, err)
	require.Empty(t, shop.NotifyPhone, "not confirmed: no alerts yet")
	body, csrf = en.page(t, ck, "/dashboard/settings")
	require.Contains(t, body, `id="notify-code"`)
	require.Contains(t, body, "+15555550199")

	var text jobs.Text
	require.NoError(t, en.pool.QueryRow(context.Background(),
		`SELECT args FROM river_job WHERE kind = $1 AND args->>'to' = '+15555550199'`, jobs.Text{}.Kind()).Scan(&text))
	code := regexp.MustCompile(`\d{6}`).FindString(text.Body)
	require.NotEmpty(t, code, "the text carries the code: %q", text.Body)

	wrong := "000000"
	if code == wrong {
		wrong = "111111"
	}
	rec = en.post(dashboard.NotifyPhoneConfirmPath, url.Values{"csrf": {csrf}, "code": {wrong}}, ck)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	require.Contains(t, fieldError(rec.Body.String(), "notify-code-error"), "not the code")
	rec = en.post(dashboard.NotifyPhoneConfirmPath, url.Values{"csrf": {csrf}, "code": {code}}, ck)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	shop, err = en.shops.Get(context.Background(), en.shopA.ID)
	require.NoError(t, err)
	require.Equal(t, "+15555550199", shop.NotifyPhone)
	body, _ = en.page(t, ck, "/dashboard/settings?notice=notify_confirmed")
	require.Contains(t, body, `value="+15555550199"`)
	require.NotContains(t, body, `id="notify-code"`, "nothing waits")

	rec = en.post("/dashboard/settings", form("call me"), ck)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	require.Contains(t, fieldError(rec.Body.String(), "set-notify-phone-error"), "E.164")

	rec = en.post("/dashboard/settings", form(""), ck)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	shop, err = en.shops.Get(context.Background(), en.shopA.ID)
	require.NoError(t, err)
	require.Empty(t, shop.NotifyPhone, "empty removes it")
}

// TestInboxThreadPages: a long thread shows its newest 200 texts with a link to the
// older ones, which shows the rest with a link back to the newest; a cursor that is not
// ours shows the newest texts.
func TestInboxThreadPages(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{})
	ck := en.login(t, en.keyA)
	ada := en.addCustomer(t, en.shopA, "+15557310001", "Ada Lovelace")
	conv := en.textIn(t, en.shopA, ada.Phone, ada.ID, "SM-0", "text 0")
	_, err := en.pool.Exec(context.Background(), `INSERT INTO inbound_messages (message_sid, shop_id, from_phone, to_phone, body, received_at, outcome, reply, handled_at)
		SELECT 'SMp' || g, $1, $2, $3, 'text ' || g, now() + g * interval '1 second', 'x', '', now() + g * interval '1 second'
		FROM generate_series(1, 249) g`, en.shopA.ID, ada.Phone, en.shopA.SMSNumber)
	require.NoError(t, err)

	body, _ := en.page(t, ck, "/dashboard/inbox/"+conv.String())
	require.Equal(t, 200, strings.Count(body, `<li class="msg `), "the newest 200")
	require.Contains(t, body, `<p class="msg-body">text 249</p>`)
	require.NotContains(t, body, `<p class="msg-body">text 49</p>`)
	require.NotContains(t, body, `id="thread-newest"`)
	older := regexp.MustCompile(`id="thread-older" href="([^"]+)"`).FindStringSubmatch(body)
	require.Len(t, older, 2, "a link to the older texts")
	body, _ = en.page(t, ck, html.UnescapeString(older[1]))
	require.Equal(t, 50, strings.Count(body, `<li class="msg `), "the 50 before them")
	require.Contains(t, body, `<p class="msg-body">text 0</p>`)
	require.Contains(t, body, `<p class="msg-body">text 49</p>`)
	require.NotContains(t, body, `id="thread-older"`, "the first texts")
	require.Contains(t, body, `id="thread-newest"`)

	body, _ = en.page(t, ck, "/dashboard/inbox/"+conv.String()+"?before=nope")
	require.Contains(t, body, `<p class="msg-body">text 249</p>`, "a cursor not ours: the newest texts")
}
