package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// ownerReply posts the owner's reply to a conversation and returns the status, the
// error's code and the Retry-After header.
func (e *env) ownerReply(base, key, conversationID, body string) (status int, code, retryAfter string) {
	e.t.Helper()
	b, err := json.Marshal(map[string]any{"body": body})
	require.NoError(e.t, err)
	req, err := http.NewRequest(http.MethodPost, base+"/api/conversations/"+conversationID+"/messages", bytes.NewReader(b))
	require.NoError(e.t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := e.client.Do(req)
	require.NoError(e.t, err)
	defer res.Body.Close()
	var out struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out.Error.Code, res.Header.Get("Retry-After")
}

// conversationsOf opens a conversation with each of n new customers (each writes a
// text that needs the owner) and returns their ids.
func (e *env) conversationsOf(base string, shop shopInfo, n int, first int) []string {
	e.t.Helper()
	for i := range n {
		c := e.newCustomer(base, shop, fmt.Sprintf("+1555733%04d", first+i), true)
		require.Equal(e.t, "unrecognized", e.text(base, c.Phone, shop.SMSNumber, "can I come at 4 instead?").Outcome)
	}
	var list struct {
		Conversations []conversationInfo `json:"conversations"`
	}
	require.Equal(e.t, http.StatusOK, e.api(base, http.MethodGet, "/api/conversations?status=open&limit=100", shop.APIKey, nil, &list))
	require.Len(e.t, list.Conversations, n)
	ids := make([]string, n)
	for i, c := range list.Conversations {
		ids[i] = c.ID
	}
	return ids
}

// TestOwnerRepliesAreBounded: an owner's replies go out at most 5 a minute in one
// conversation and 30 a minute in the shop (API and dashboard alike); past either, 429
// too_many_replies with Retry-After, and nothing is recorded or texted.
func TestOwnerRepliesAreBounded(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(nil, fastTune)
	shop := e.newShop(base, "none", nil)
	convs := e.conversationsOf(base, shop, 7, 0)

	refused := func(status int, code, retry, what string) {
		t.Helper()
		require.Equal(t, http.StatusTooManyRequests, status, what)
		require.Equal(t, "too_many_replies", code, what)
		secs, err := strconv.Atoi(retry)
		require.NoError(t, err, "%s: Retry-After %q", what, retry)
		require.Positive(t, secs, what)
		require.LessOrEqual(t, secs, 60, what)
	}
	for i := range 5 {
		status, code, _ := e.ownerReply(base, shop.APIKey, convs[0], fmt.Sprintf("reply %d", i))
		require.Equal(t, http.StatusCreated, status, "reply %d: %s", i, code)
	}
	status, code, retry := e.ownerReply(base, shop.APIKey, convs[0], "one too many")
	refused(status, code, retry, "the conversation's sixth in a minute")

	// 25 more across five conversations fill the shop's 30; the next, anywhere, waits.
	for _, id := range convs[1:6] {
		for i := range 5 {
			status, code, _ := e.ownerReply(base, shop.APIKey, id, fmt.Sprintf("reply %d", i))
			require.Equal(t, http.StatusCreated, status, "%s reply %d: %s", id, i, code)
		}
	}
	status, code, retry = e.ownerReply(base, shop.APIKey, convs[6], "the shop's 31st")
	refused(status, code, retry, "the shop's 31st in a minute")

	var n int
	require.NoError(t, e.pool.QueryRow(context.Background(), `SELECT count(*) FROM conversation_messages m JOIN shops s ON s.id = m.shop_id
		WHERE s.sms_number = $1 AND m.author = 'owner'`, shop.SMSNumber).Scan(&n))
	require.Equal(t, 30, n, "the refused replies were not recorded")
}

// TestOwnerRepliesHonourQuietHours: in the shop's quiet hours an owner's reply goes out
// only to a customer who wrote within the last hour; to one who wrote earlier it is 422
// quiet_hours, saying when it may be sent.
func TestOwnerRepliesHonourQuietHours(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(nil, fastTune)
	now := time.Now().UTC()
	hhmm := func(t time.Time) string { return t.Format("15:04") }
	shop := e.newShop(base, "none", nil)
	require.Equal(t, http.StatusOK, e.api(base, http.MethodPatch, "/api/shop", shop.APIKey, map[string]any{
		"timezone": "UTC", "offer_policy": map[string]any{"quiet_hours": map[string]any{
			"start": hhmm(now.Add(-time.Hour)), "end": hhmm(now.Add(2 * time.Hour))}}}, nil))
	convs := e.conversationsOf(base, shop, 2, 100)

	// The first customer wrote two hours ago.
	_, err := e.pool.Exec(context.Background(), `UPDATE conversation_messages SET at = at - interval '2 hours' WHERE conversation_id = $1`, convs[0])
	require.NoError(t, err)
	status, code, _ := e.ownerReply(base, shop.APIKey, convs[0], "we open at 9")
	require.Equal(t, http.StatusUnprocessableEntity, status)
	require.Equal(t, "quiet_hours", code)
	status, code, _ = e.ownerReply(base, shop.APIKey, convs[1], "yes, 4 works")
	require.Equal(t, http.StatusCreated, status, "the second wrote just now: %s", code)
}
