package inbox_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/inbox"
	"github.com/slotrecovery/slotrecovery/internal/problem"
)

// TestThreadHoldsEveryReply: a conversation's thread holds, besides what it recorded
// (the offer, a text that needed the owner and its answer), every other text the number
// sent the shop with the answer it got, as the reply path stored them (YES, STOP), each
// once and in order; a stored answer without its words is left out until it has them;
// another number's and another shop's texts are not there; a text comes before its
// answer of the same instant; ids stay the same from read to read; the list's preview
// is the newest text, a reply included.
func TestThreadHoldsEveryReply(t *testing.T) {
	t.Parallel()
	s := newScene(t)
	ctx := context.Background()
	shop := s.shop("Cuts", "+15555550100")
	other := s.shop("Trims", "+15555550101")
	ada := s.customer(shop, "+15557310001", "Ada")
	at := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }

	sent := s.out(inbox.OutboundText{ShopID: shop.ID, Phone: ada.Phone, CustomerID: ada.ID, Body: "Cuts: Haircut free Fri 10:00, $45. Reply YES",
		At: at(0), Key: "offer:1", Status: inbox.StatusSent, ProviderSID: "SMoffer1"})
	// What inbound stores for every reply (InboundStoreMany, InboundSetOutcomes).
	store := func(shopID any, sid, from, body string, received time.Time, handled *time.Time, reply *string) {
		t.Helper()
		_, err := s.pool.Exec(ctx, `INSERT INTO inbound_messages (message_sid, shop_id, from_phone, to_phone, body, received_at, outcome, reply, handled_at)
			VALUES ($1, $2, $3, '+15555550100', $4, $5, CASE WHEN $6::timestamptz IS NULL THEN NULL ELSE 'x' END, $7, $6)`,
			sid, shopID, from, body, received, handled, reply)
		require.NoError(t, err)
	}
	ptr := func(v string) *string { return &v }
	tm := func(v time.Time) *time.Time { return &v }
	store(shop.ID, "SMmaybe", ada.Phone, "can I bring my son?", at(1), tm(at(1)), ptr("Cuts: thanks, the team has your message"))
	s.in(inbox.InboundText{ShopID: shop.ID, Phone: ada.Phone, CustomerID: ada.ID, MessageSID: "SMmaybe", Body: "can I bring my son?", At: at(1), NeedsOwner: true})
	s.out(inbox.OutboundText{ShopID: shop.ID, Phone: ada.Phone, CustomerID: ada.ID, Body: "Cuts: thanks, the team has your message", At: at(1), Key: "answer:SMmaybe", Status: inbox.StatusSent})
	store(shop.ID, "SMyes", ada.Phone, "Sí", at(2), tm(at(2)), ptr("Cuts: ¡Haircut es tuyo!"))
	store(shop.ID, "SMlate", ada.Phone, "yes", at(3), tm(at(3)), nil) // a late YES, its words not stored yet
	store(shop.ID, "SMnew", ada.Phone, "STOP", at(4), nil, nil)       // not answered yet
	store(other.ID, "SMother", ada.Phone, "YES", at(5), tm(at(5)), ptr("Trims: booked"))
	store(shop.ID, "SMben", "+15557310002", "YES", at(6), tm(at(6)), ptr("Cuts: booked"))

	read := func() inbox.Thread {
		t.Helper()
		th, err := s.inbox.Get(ctx, shop.ID, sent.ConversationID)
		require.NoError(t, err)
		return th
	}
	lines := func(th inbox.Thread) []string {
		var out []string
		for _, m := range th.Messages {
			out = append(out, m.Direction+" "+m.Author+" "+m.Status+": "+m.Body)
		}
		return out
	}
	th := read()
	require.Equal(t, []string{
		"out system sent: Cuts: Haircut free Fri 10:00, $45. Reply YES",
		"in customer received: can I bring my son?",
		"out system sent: Cuts: thanks, the team has your message",
		"in customer received: Sí",
		"out system sent: Cuts: ¡Haircut es tuyo!",
		"in customer received: yes",
		"in customer received: STOP",
	}, lines(th))
	again := read()
	for i := range th.Messages {
		require.Equal(t, th.Messages[i].ID, again.Messages[i].ID, "message %d's id changed between reads", i)
	}

	// The late YES's words, once heard (InboundMarkAnswered fills them).
	_, err := s.pool.Exec(ctx, `UPDATE inbound_messages SET reply = 'Cuts: sorry, it was taken' WHERE message_sid = 'SMlate'`)
	require.NoError(t, err)
	// A text and its answer of one instant (SMyes, SMlate): the text comes first.
	th = read()
	require.Equal(t, []string{
		"out system sent: Cuts: Haircut free Fri 10:00, $45. Reply YES",
		"in customer received: can I bring my son?",
		"out system sent: Cuts: thanks, the team has your message",
		"in customer received: Sí",
		"out system sent: Cuts: ¡Haircut es tuyo!",
		"in customer received: yes",
		"out system sent: Cuts: sorry, it was taken",
		"in customer received: STOP",
	}, lines(th))

	page, err := s.inbox.List(ctx, shop.ID, inbox.Query{Status: "all"})
	require.NoError(t, err)
	require.Len(t, page.Conversations, 1, "Ben has no conversation: nothing was recorded with him")
	last := page.Conversations[0].LastMessage
	require.NotNil(t, last)
	require.Equal(t, "STOP", last.Body, "the preview is the newest text, a reply included")
	require.Equal(t, inbox.In, last.Direction)
}

// TestThreadPages: a long thread is read ThreadPage texts at a time, newest page first,
// each page oldest first; the pages together are the whole thread once each, in order,
// also where a page ends between a reply and its answer of the same instant; a cursor
// this server did not make is refused, and another shop's conversation is not found.
func TestThreadPages(t *testing.T) {
	t.Parallel()
	s := newScene(t)
	ctx := context.Background()
	shop := s.shop("Cuts", "+15555550100")
	other := s.shop("Trims", "+15555550101")
	ada := s.customer(shop, "+15557310001", "Ada")
	at := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }
	first := s.out(inbox.OutboundText{ShopID: shop.ID, Phone: ada.Phone, CustomerID: ada.ID, Body: "offer 0", At: at(0), Key: "offer:0",
		Status: inbox.StatusSent})
	// 225 replies, each answered at the instant it came (the answer after it), then one
	// more offer: the first page ends between reply 126 and its answer.
	const pairs = 225
	_, err := s.pool.Exec(ctx, `INSERT INTO inbound_messages (message_sid, shop_id, from_phone, to_phone, body, received_at, outcome, reply, handled_at)
		SELECT 'SM' || g, $1, $2, '+15555550100', 'reply ' || g, $3::timestamptz + g * interval '1 minute', 'x', 'answer ' || g,
		       $3::timestamptz + g * interval '1 minute'
		FROM generate_series(1, $4::int) g`, shop.ID, ada.Phone, t0, pairs)
	require.NoError(t, err)
	s.out(inbox.OutboundText{ShopID: shop.ID, Phone: ada.Phone, CustomerID: ada.ID, Body: "offer 1", At: at(1000), Key: "offer:1",
		Status: inbox.StatusSent})
	want := []string{"offer 0"}
	for g := 1; g <= pairs; g++ {
		want = append(want, fmt.Sprint("reply ", g), fmt.Sprint("answer ", g))
	}
	want = append(want, "offer 1")

	var got []string
	var sizes []int
	older := ""
	for range 10 {
		th, err := s.inbox.GetBefore(ctx, shop.ID, first.ConversationID, older)
		require.NoError(t, err)
		var page []string
		for _, m := range th.Messages {
			page = append(page, m.Body)
		}
		got = append(page, got...)
		sizes = append(sizes, len(page))
		if older = th.Older; older == "" {
			break
		}
	}
	require.Equal(t, []int{inbox.ThreadPage, inbox.ThreadPage, len(want) - 2*inbox.ThreadPage}, sizes)
	require.Equal(t, want, got, "the pages, put together, are the thread")

	newest, err := s.inbox.Get(ctx, shop.ID, first.ConversationID)
	require.NoError(t, err)
	require.Len(t, newest.Messages, inbox.ThreadPage, "Get is the newest page")
	require.Equal(t, "offer 1", newest.Messages[len(newest.Messages)-1].Body)
	require.Equal(t, "answer 126", newest.Messages[0].Body, "the page ends between a reply and its answer")

	_, err = s.inbox.GetBefore(ctx, shop.ID, first.ConversationID, "not-a-cursor")
	requireProblem(t, err, problem.Invalid, "invalid_before")
	_, err = s.inbox.GetBefore(ctx, other.ID, first.ConversationID, newest.Older)
	require.ErrorIs(t, err, inbox.ErrNotFound)
}
