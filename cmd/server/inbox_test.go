package main

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/payments/stripe"
)

type conversationInfo struct {
	ID       string `json:"id"`
	Phone    string `json:"phone"`
	Status   string `json:"status"`
	Unread   int    `json:"unread"`
	Customer *struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"customer"`
	Messages []struct {
		ID        string `json:"id"`
		Direction string `json:"direction"`
		Author    string `json:"author"`
		Body      string `json:"body"`
		Status    string `json:"status"`
	} `json:"messages"`
}

// TestInboxEndToEnd drives the real server: a customer texts "can I come at 4
// instead?" (signed as Twilio signs it; no offer is live, so the server cannot act on
// it); the conversation appears open with 1 unread; the owner reads it and replies
// through the API; the reply reaches Twilio from the shop's number; the thread shows the
// text, the automatic acknowledgement and the reply, oldest first.
func TestInboxEndToEnd(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(nil, fastTune)
	shop := e.newShop(base, "none", nil)
	cust := e.newCustomer(base, shop, "+15557320001", true)

	ans := e.text(base, cust.Phone, shop.SMSNumber, "can I come at 4 instead?")
	require.Equal(t, http.StatusOK, ans.Status)
	require.Equal(t, "unrecognized", ans.Outcome)

	var list struct {
		Conversations []conversationInfo `json:"conversations"`
		NextCursor    *string            `json:"next_cursor"`
	}
	require.Equal(t, http.StatusOK, e.api(base, http.MethodGet, "/api/conversations?status=open", shop.APIKey, nil, &list))
	require.Len(t, list.Conversations, 1)
	conv := list.Conversations[0]
	require.Equal(t, "open", conv.Status)
	require.Equal(t, 1, conv.Unread)
	require.Equal(t, cust.Phone, conv.Phone)
	require.NotNil(t, conv.Customer)
	require.Equal(t, cust.ID, conv.Customer.ID)
	require.Nil(t, list.NextCursor)

	// The owner reads it.
	var read conversationInfo
	require.Equal(t, http.StatusOK, e.api(base, http.MethodPost, "/api/conversations/"+conv.ID+"/read", shop.APIKey, nil, &read))
	require.Equal(t, 0, read.Unread)

	// And replies: queued, then texted through the outbox from the shop's number.
	const reply = "Yes, 4pm works. See you then!"
	var msg struct {
		ID, Direction, Author, Body, Status string
	}
	require.Equal(t, http.StatusCreated, e.api(base, http.MethodPost, "/api/conversations/"+conv.ID+"/messages", shop.APIKey,
		map[string]any{"body": reply}, &msg))
	require.Equal(t, "owner", msg.Author)
	require.Equal(t, "queued", msg.Status)
	deadline := time.Now().Add(20 * time.Second)
	for {
		sent := e.twilio.MessagesTo(cust.Phone)
		if len(sent) == 1 {
			require.Equal(t, reply, sent[0].Body)
			require.Equal(t, shop.SMSNumber, sent[0].From)
			break
		}
		require.Less(t, len(sent), 2, "one text")
		require.True(t, time.Now().Before(deadline), "the reply did not reach Twilio")
		time.Sleep(50 * time.Millisecond)
	}

	var thread conversationInfo
	require.Equal(t, http.StatusOK, e.api(base, http.MethodGet, "/api/conversations/"+conv.ID, shop.APIKey, nil, &thread))
	require.Equal(t, 0, thread.Unread)
	require.Len(t, thread.Messages, 3)
	in, ack, out := thread.Messages[0], thread.Messages[1], thread.Messages[2]
	require.Equal(t, "in", in.Direction)
	require.Equal(t, "customer", in.Author)
	require.Equal(t, "can I come at 4 instead?", in.Body)
	require.Equal(t, "out", ack.Direction)
	require.Equal(t, "system", ack.Author, "the automatic acknowledgement, answered in the TwiML")
	require.NotEmpty(t, ack.Body)
	require.Equal(t, "out", out.Direction)
	require.Equal(t, "owner", out.Author)
	require.Equal(t, reply, out.Body)
	require.Equal(t, msg.ID, out.ID)

	// Closed, it leaves the open list.
	require.Equal(t, http.StatusOK, e.api(base, http.MethodPatch, "/api/conversations/"+conv.ID, shop.APIKey,
		map[string]any{"status": "closed"}, nil))
	require.Equal(t, http.StatusOK, e.api(base, http.MethodGet, "/api/conversations", shop.APIKey, nil, &list))
	require.Empty(t, list.Conversations)
}

// TestThreadIsTheWholeConversation: the owner reads each customer's conversation as the
// customer lived it: the offer, their YES, the answer with the payment link, and the
// confirmation once paid; the customer who was too late sees the offer, their YES and
// "taken" (a late YES's answer, whose words are stored once heard). Keyword replies do
// not open a conversation or count as unread: nothing waits for the owner.
func TestThreadIsTheWholeConversation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(nil, fastTune)
	shop, cs, got := e.booked(base, "+15557330001", "+15557330002")
	alice, bob := cs[0], cs[1]
	require.Equal(t, "taken", e.text(base, bob.Phone, shop.SMSNumber, "yes").Outcome)
	r := e.send(base, event{id: evtID(), typ: stripe.EventCheckoutCompleted, booking: got.Booking.ID, session: got.Booking.SessionID, intent: "pi_thread"})
	require.Equal(t, "confirmed", r.Result, r.Body)
	e.eventually("confirmation text", func() bool { return len(e.twilio.MessagesTo(alice.Phone)) == 2 })

	var list struct {
		Conversations []conversationInfo `json:"conversations"`
	}
	require.Equal(t, http.StatusOK, e.api(base, http.MethodGet, "/api/conversations?status=all", shop.APIKey, nil, &list))
	require.Len(t, list.Conversations, 2, "one conversation per customer offered")
	thread := func(phone string) []string {
		t.Helper()
		for _, c := range list.Conversations {
			if c.Phone != phone {
				continue
			}
			require.Equal(t, "closed", c.Status, "nothing waits for the owner")
			require.Zero(t, c.Unread)
			var th conversationInfo
			require.Equal(t, http.StatusOK, e.api(base, http.MethodGet, "/api/conversations/"+c.ID, shop.APIKey, nil, &th))
			var lines []string
			for _, m := range th.Messages {
				lines = append(lines, m.Direction+" "+m.Author+": "+m.Body)
			}
			return lines
		}
		t.Fatalf("no conversation with %s in %+v", phone, list.Conversations)
		return nil
	}
	offerTo := func(phone string) string { return "out system: " + e.textsTo(phone)[0] }
	var aliceLines []string
	e.eventually("the confirmation in Alice's thread", func() bool {
		aliceLines = thread(alice.Phone)
		return len(aliceLines) == 4
	})
	require.Equal(t, offerTo(alice.Phone), aliceLines[0])
	require.Equal(t, "in customer: YES", aliceLines[1])
	require.Contains(t, aliceLines[2], "out system: Joe's Barbers: Haircut ")
	require.Contains(t, aliceLines[2], "https://", "the answer with the payment link")
	require.Equal(t, "out system: "+e.textsTo(alice.Phone)[1], aliceLines[3], "the confirmation")

	var bobLines []string
	e.eventually("the taken answer in Bob's thread", func() bool {
		bobLines = thread(bob.Phone)
		return len(bobLines) == 3
	})
	require.Equal(t, offerTo(bob.Phone), bobLines[0])
	require.Equal(t, "in customer: yes", bobLines[1])
	require.Contains(t, bobLines[2], "out system: Joe's Barbers: sorry")
}
