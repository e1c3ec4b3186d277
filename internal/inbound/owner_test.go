package inbound_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/inbound"
	"github.com/slotrecovery/slotrecovery/internal/texts"
)

// TestTextsThatNeedAPersonReachTheInbox: a text the server cannot act on (with or
// without a live offer) and an unsure one open the shop's conversation with the number,
// unread; an unrecognized one is acknowledged once a day and then left to the owner (no
// answer); an unsure one keeps its question. A redelivery records nothing twice; the
// owner's alert number is texted once per conversation within its window.
func TestTextsThatNeedAPersonReachTheInbox(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, 2)
	_, err := w.pool.Exec(ctx, `UPDATE shops SET notify_phone = '+447700900999' WHERE id = $1`, w.shop.ID)
	require.NoError(t, err)

	first := w.reply(t, "SMlate", 0, "running 10 min late, is that ok?")
	require.Equal(t, inbound.OutcomeUnrecognized, first.Outcome)
	require.Equal(t, texts.English.InboxAck(&w.shop), first.Message)
	again := w.reply(t, "SMlate", 0, "running 10 min late, is that ok?")
	require.True(t, again.Replayed)
	require.Equal(t, first.Message, again.Message)
	second := w.reply(t, "SMlate2", 0, "can I come at 4 instead?")
	require.Equal(t, inbound.OutcomeUnrecognized, second.Outcome)
	require.Empty(t, second.Message, "the rest of the thread is the owner's")
	unsure := w.reply(t, "SMmaybe", 1, "maybe")
	require.Equal(t, inbound.OutcomeClarify, unsure.Outcome)
	require.NotEmpty(t, unsure.Message)

	var status string
	var unread, messages int
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT c.status, c.unread, (SELECT count(*) FROM conversation_messages m WHERE m.conversation_id = c.id)
		FROM conversations c WHERE c.shop_id = $1 AND c.phone = $2`, w.shop.ID, w.phones[0]).Scan(&status, &unread, &messages))
	require.Equal(t, "open", status)
	require.Equal(t, 2, unread)
	require.Equal(t, 3, messages, "two texts in, one acknowledgement out")
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT c.unread FROM conversations c WHERE c.shop_id = $1 AND c.phone = $2`,
		w.shop.ID, w.phones[1]).Scan(&unread))
	require.Equal(t, 1, unread)

	var alerts int
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'sms_text' AND args->>'to' = '+447700900999'`).Scan(&alerts))
	require.Equal(t, 2, alerts, "one alert per conversation within the window")

	// YES and other keywords stay out of the inbox.
	require.Equal(t, inbound.OutcomeBooked, w.reply(t, "SMyes", 1, "yes").Outcome)
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT count(*) FROM conversation_messages m JOIN conversations c ON c.id = m.conversation_id
		WHERE c.phone = $1`, w.phones[1]).Scan(&messages))
	require.Equal(t, 2, messages, "the unsure text and its question")

	// The question did not use up the day's acknowledgement.
	asked := w.reply(t, "SMask", 1, "do you take cash?")
	require.Equal(t, inbound.OutcomeUnrecognized, asked.Outcome)
	require.Equal(t, texts.English.InboxAck(&w.shop), asked.Message)
}

// TestKeywordsFromAnyNumberAreKept: a keyword from a number the shop has no
// conversation with (a stranger's STOP, HELP) is kept in a conversation of its own with
// its answer, closed and unread 0 (nothing waits for the owner); a redelivery records
// nothing twice; a storm's replies (a YES to an offer) write nothing to the inbox.
func TestKeywordsFromAnyNumberAreKept(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, 1)
	const stranger = "+447700955501"
	texted := func(sid, from, body string) inbound.Answer {
		t.Helper()
		ans, err := w.inbound.Reply(ctx, inbound.Message{MessageSID: sid, From: from, To: w.shop.SMSNumber, Body: body})
		require.NoError(t, err)
		return ans
	}
	help := texted("SMhelp", stranger, "HELP")
	require.Equal(t, inbound.OutcomeHelp, help.Outcome)
	stop := texted("SMstop", stranger, "STOP")
	require.Equal(t, inbound.OutcomeOptedOut, stop.Outcome)
	require.True(t, texted("SMstop", stranger, "STOP").Replayed)

	type row struct{ dir, author, body string }
	var got []row
	var status string
	var unread int
	rows, err := w.pool.Query(ctx, `SELECT m.direction, m.author, m.body, c.status, c.unread FROM conversation_messages m
		JOIN conversations c ON c.id = m.conversation_id WHERE c.shop_id = $1 AND c.phone = $2 ORDER BY m.at, m.id`, w.shop.ID, stranger)
	require.NoError(t, err)
	for rows.Next() {
		var r row
		require.NoError(t, rows.Scan(&r.dir, &r.author, &r.body, &status, &unread))
		got = append(got, r)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []row{{"in", "customer", "HELP"}, {"out", "system", help.Message}, {"in", "customer", "STOP"}, {"out", "system", stop.Message}}, got)
	require.Equal(t, "closed", status)
	require.Zero(t, unread)

	require.Equal(t, inbound.OutcomeBooked, w.reply(t, "SMyes", 0, "yes").Outcome)
	var n int
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT count(*) FROM conversation_messages WHERE shop_id = $1 AND message_sid = 'SMyes'`, w.shop.ID).Scan(&n))
	require.Zero(t, n, "a YES to an offer is read from the reply path's own record")
}

// TestANumberOverItsHourlyCapIsOnlyKept: texts that need a person beyond
// NumberHourlyCap from one number in an hour are kept in the conversation (unread, for
// the owner) but raise no message.received event, no alert and no answer; another
// number is not held to the first one's count.
func TestANumberOverItsHourlyCapIsOnlyKept(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, 2)
	_, err := w.pool.Exec(ctx, `UPDATE shops SET notify_phone = '+447700900998' WHERE id = $1`, w.shop.ID)
	require.NoError(t, err)
	_, err = w.pool.Exec(ctx, `INSERT INTO webhook_endpoints (shop_id, url, enabled_events, secret, created_at, updated_at)
		VALUES ($1, 'https://hooks.example.com/in', '{message.received}', 'whsec_dGVzdHNlY3JldHRlc3RzZWNyZXR0ZXN0c2VjcmV0', now(), now())`, w.shop.ID)
	require.NoError(t, err)

	const over = 5
	for i := range inbound.NumberHourlyCap + over {
		a := w.reply(t, fmt.Sprintf("SMflood%02d", i), 0, fmt.Sprintf("hello again %d", i))
		require.Equal(t, inbound.OutcomeUnrecognized, a.Outcome, "text %d", i)
		if i >= inbound.NumberHourlyCap {
			require.Empty(t, a.Message, "text %d is over the cap: no answer", i)
		}
	}
	other := w.reply(t, "SMother", 1, "can I come at 4 instead?")
	require.Equal(t, texts.English.InboxAck(&w.shop), other.Message, "another number is answered")

	count := func(sql string, args ...any) int {
		t.Helper()
		var n int
		require.NoError(t, w.pool.QueryRow(ctx, sql, args...).Scan(&n))
		return n
	}
	require.Equal(t, inbound.NumberHourlyCap+1, count(`SELECT count(*) FROM webhook_events WHERE shop_id = $1 AND type = 'message.received'`, w.shop.ID),
		"events: the cap's from the first number, one from the other")
	require.Equal(t, inbound.NumberHourlyCap+over, count(`SELECT count(*) FROM conversation_messages m JOIN conversations c ON c.id = m.conversation_id
		WHERE c.shop_id = $1 AND c.phone = $2 AND m.direction = 'in'`, w.shop.ID, w.phones[0]), "every text kept")
	require.Equal(t, inbound.NumberHourlyCap+over, count(`SELECT unread FROM conversations WHERE shop_id = $1 AND phone = $2`, w.shop.ID, w.phones[0]))
	require.Equal(t, 2, count(`SELECT count(*) FROM river_job WHERE kind = 'sms_text' AND args->>'to' = '+447700900998'`),
		"one alert per conversation")
}
