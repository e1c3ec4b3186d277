package inbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/inbox"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/testkit/customertest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// t0 is the tests' clock's start.
var t0 = time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)

// scene is a fresh database with the shops and the inbox's Service on it.
type scene struct {
	t         *testing.T
	pool      *pgxpool.Pool
	url       string
	shops     *shops.Service
	customers *customers.Service
	inbox     *inbox.Service
	now       time.Time
}

func newScene(t *testing.T) *scene {
	t.Helper()
	pool, url := pgtest.New(t)
	queue, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	require.NoError(t, err)
	s := &scene{t: t, pool: pool, url: url, shops: shops.New(pool, shops.Config{}), customers: customertest.New(t, pool), now: t0}
	// The server's OptOuts: shops' own answer (a customer's opt-out, or the number's
	// suppression: a STOP, an erasure).
	s.inbox = inbox.New(pool, queue, s.customers, inbox.Config{Now: func() time.Time { return s.now }})
	return s
}

func (s *scene) shop(name, number string) shops.Shop {
	s.t.Helper()
	shop, _, err := s.shops.Create(context.Background(), shops.NewShop{Name: name, Timezone: "UTC", SMSNumber: number,
		Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(s.t, err)
	return shop
}

func (s *scene) customer(shop shops.Shop, phone, name string) customers.Customer {
	s.t.Helper()
	c, err := s.customers.Add(context.Background(), shop.ID, customers.NewCustomer{Phone: phone, Name: name, SMSOptIn: true})
	require.NoError(s.t, err)
	return c
}

// in records an inbound text in a transaction of its own.
func (s *scene) in(text inbox.InboundText) inbox.Recorded {
	s.t.Helper()
	var rec inbox.Recorded
	require.NoError(s.t, pgx.BeginFunc(context.Background(), s.pool, func(tx pgx.Tx) error {
		var err error
		rec, err = inbox.RecordIn(context.Background(), tx, text)
		return err
	}))
	return rec
}

// out records an outbound text in a transaction of its own.
func (s *scene) out(text inbox.OutboundText) inbox.Sent {
	s.t.Helper()
	var sent inbox.Sent
	require.NoError(s.t, pgx.BeginFunc(context.Background(), s.pool, func(tx pgx.Tx) error {
		var err error
		sent, err = inbox.RecordOut(context.Background(), tx, text)
		return err
	}))
	return sent
}

func (s *scene) count(sql string, args ...any) int {
	s.t.Helper()
	var n int
	require.NoError(s.t, s.pool.QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}

func requireProblem(t *testing.T, err error, kind problem.Kind, code string) {
	t.Helper()
	p, ok := problem.As(err)
	require.True(t, ok, "want a problem %s, got %v", code, err)
	require.Equal(t, kind, p.Kind)
	require.Equal(t, code, p.Code)
}

// TestRecordIn: a text that needs the owner opens the conversation, counts as unread and
// takes the windows that are free (the alert only when the shop has an alert number);
// one that does not keeps the conversation as it was; the sender's customer is linked,
// and a later text that cannot tell keeps the link.
func TestRecordIn(t *testing.T) {
	t.Parallel()
	s := newScene(t)
	ctx := context.Background()
	shop := s.shop("Cuts", "+15555550100")
	ada := s.customer(shop, "+15557310001", "Ada")

	tests := []struct {
		name       string
		phone      string
		customer   uuid.UUID
		needs      bool
		alerts     bool
		wantStatus string
		wantUnread int
		wantAlert  bool
		wantAck    bool
	}{
		{name: "needs the owner, alerts on", phone: "+15557310002", needs: true, alerts: true,
			wantStatus: inbox.StatusOpen, wantUnread: 1, wantAlert: true, wantAck: true},
		{name: "needs the owner, no alert number", phone: "+15557310003", needs: true,
			wantStatus: inbox.StatusOpen, wantUnread: 1, wantAck: true},
		{name: "a keyword the server answered", phone: "+15557310004", alerts: true,
			wantStatus: inbox.StatusClosed},
		{name: "a customer", phone: ada.Phone, customer: ada.ID, needs: true, alerts: true,
			wantStatus: inbox.StatusOpen, wantUnread: 1, wantAlert: true, wantAck: true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := s.in(inbox.InboundText{ShopID: shop.ID, Phone: tt.phone, CustomerID: tt.customer,
				MessageSID: fmt.Sprintf("SM-record-%d", i), Body: "can I come at 3?", At: t0,
				NeedsOwner: tt.needs, OwnerAlerts: tt.alerts, Acknowledges: true})
			require.False(t, rec.Duplicate)
			require.Equal(t, tt.wantAlert, rec.Alert, "alert")
			require.Equal(t, tt.wantAck, rec.Ack, "ack")
			th, err := s.inbox.Get(ctx, shop.ID, rec.ConversationID)
			require.NoError(t, err)
			require.Equal(t, tt.phone, th.Phone)
			require.Equal(t, tt.wantStatus, th.Status)
			require.Equal(t, tt.wantUnread, th.Unread)
			require.Equal(t, tt.customer, th.CustomerID)
			require.Len(t, th.Messages, 1)
			m := th.Messages[0]
			require.Equal(t, rec.MessageID, m.ID)
			require.Equal(t, inbox.Message{ID: m.ID, ConversationID: rec.ConversationID, Direction: inbox.In,
				Author: inbox.AuthorCustomer, Body: "can I come at 3?", At: t0, Status: inbox.StatusReceived}, m)
		})
	}

	// A later text from Ada that does not name her (the caller could not tell) keeps the
	// link; the conversation is the same one.
	later := s.in(inbox.InboundText{ShopID: shop.ID, Phone: ada.Phone, MessageSID: "SM-ada-2", Body: "hello?",
		At: t0.Add(time.Minute)})
	th, err := s.inbox.Get(ctx, shop.ID, later.ConversationID)
	require.NoError(t, err)
	require.Equal(t, ada.ID, th.CustomerID)
	require.Equal(t, "Ada", th.CustomerName)
	require.Len(t, th.Messages, 2)
	require.Equal(t, 1, th.Unread, "a text that does not need the owner adds no unread")

	_, err = inbox.RecordIn(ctx, s.pool, inbox.InboundText{ShopID: shop.ID, Phone: ada.Phone, Body: "no sid", At: t0})
	require.Error(t, err, "a text without its message id")
}

// TestRecordInDuplicate: a MessageSid recorded before (a redelivery, the sweeper)
// changes nothing and takes no window, and says where it was recorded.
func TestRecordInDuplicate(t *testing.T) {
	t.Parallel()
	s := newScene(t)
	shop := s.shop("Cuts", "+15555550100")
	text := inbox.InboundText{ShopID: shop.ID, Phone: "+15557310002", MessageSID: "SM-dup", Body: "hi",
		At: t0, NeedsOwner: true, Acknowledges: true, OwnerAlerts: true}
	first := s.in(text)
	require.True(t, first.Alert)
	text.At = t0.Add(time.Hour) // the windows are free again by then: a duplicate still takes none
	again := s.in(text)
	require.Equal(t, inbox.Recorded{ConversationID: first.ConversationID, MessageID: first.MessageID, Duplicate: true}, again)
	th, err := s.inbox.Get(context.Background(), shop.ID, first.ConversationID)
	require.NoError(t, err)
	require.Len(t, th.Messages, 1)
	require.Equal(t, 1, th.Unread)
	require.Equal(t, t0, th.LastActivityAt)
}

// TestRecordInWindows: the owner's alert at most once per conversation per 15 minutes,
// the acknowledgement at most once a day, each conversation on its own; a clock behind
// the one that took a window (another instance's) finds it taken.
func TestRecordInWindows(t *testing.T) {
	t.Parallel()
	s := newScene(t)
	shop := s.shop("Cuts", "+15555550100")
	const a, b = "+15557310002", "+15557310003"
	steps := []struct {
		name      string
		phone     string
		at        time.Duration // after t0
		needs     bool
		wantAlert bool
		wantAck   bool
	}{
		{name: "first text", phone: a, at: 0, needs: true, wantAlert: true, wantAck: true},
		{name: "5 minutes on", phone: a, at: 5 * time.Minute, needs: true},
		{name: "another conversation", phone: b, at: 5 * time.Minute, needs: true, wantAlert: true, wantAck: true},
		{name: "a clock 1 s behind", phone: a, at: -time.Second, needs: true},
		{name: "a keyword at 15 minutes", phone: a, at: 15 * time.Minute},
		{name: "15 minutes on", phone: a, at: 15 * time.Minute, needs: true, wantAlert: true},
		{name: "29 minutes on", phone: a, at: 29 * time.Minute, needs: true},
		{name: "23 hours on", phone: a, at: 23 * time.Hour, needs: true, wantAlert: true},
		{name: "a day on", phone: a, at: 24 * time.Hour, needs: true, wantAlert: true, wantAck: true},
		{name: "a day and 5 minutes on", phone: a, at: 24*time.Hour + 5*time.Minute, needs: true},
	}
	for i, st := range steps {
		rec := s.in(inbox.InboundText{ShopID: shop.ID, Phone: st.phone, MessageSID: fmt.Sprintf("SM-w-%d", i),
			Body: "?", At: t0.Add(st.at), NeedsOwner: st.needs, OwnerAlerts: true, Acknowledges: true})
		require.Equal(t, st.wantAlert, rec.Alert, "%s: alert", st.name)
		require.Equal(t, st.wantAck, rec.Ack, "%s: ack", st.name)
	}
}

// TestRecordInWindowRolledBack: a transaction that took a window and rolled back leaves
// it free for the next text.
func TestRecordInWindowRolledBack(t *testing.T) {
	t.Parallel()
	s := newScene(t)
	ctx := context.Background()
	shop := s.shop("Cuts", "+15555550100")
	text := inbox.InboundText{ShopID: shop.ID, Phone: "+15557310002", MessageSID: "SM-rb-1", Body: "?",
		At: t0, NeedsOwner: true, Acknowledges: true, OwnerAlerts: true}
	tx, err := s.pool.Begin(ctx)
	require.NoError(t, err)
	rec, err := inbox.RecordIn(ctx, tx, text)
	require.NoError(t, err)
	require.True(t, rec.Alert && rec.Ack)
	require.NoError(t, tx.Rollback(ctx))

	text.MessageSID = "SM-rb-2"
	rec = s.in(text)
	require.True(t, rec.Alert && rec.Ack, "the rolled-back text took no window")
	require.Zero(t, s.count(`SELECT count(*) FROM conversation_messages WHERE message_sid = 'SM-rb-1'`))
}

// TestRecordInConcurrent: 20 texts of one number at once, each in its own transaction
// on its own connection, as 20 instances would record them: the conversation is made
// once, every text is kept and counted, the owner is alerted once and the customer
// acknowledged once. Then 20 deliveries of one MessageSid at once record it once.
func TestRecordInConcurrent(t *testing.T) {
	t.Parallel()
	s := newScene(t)
	ctx := context.Background()
	shop := s.shop("Cuts", "+15555550100")
	cfg, err := pgxpool.ParseConfig(s.url)
	require.NoError(t, err)
	const n = 20
	cfg.MaxConns = n
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)

	race := func(sid func(i int) string) []inbox.Recorded {
		t.Helper()
		recs := make([]inbox.Recorded, n)
		errs := make([]error, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				<-start
				errs[i] = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
					var err error
					recs[i], err = inbox.RecordIn(ctx, tx, inbox.InboundText{ShopID: shop.ID, Phone: "+15557310002",
						MessageSID: sid(i), Body: fmt.Sprintf("text %d", i), At: t0, NeedsOwner: true, Acknowledges: true, OwnerAlerts: true})
					return err
				})
			})
		}
		close(start)
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err)
		}
		return recs
	}

	recs := race(func(i int) string { return fmt.Sprintf("SM-c-%d", i) })
	alerts, acks := 0, 0
	for _, r := range recs {
		require.False(t, r.Duplicate)
		require.Equal(t, recs[0].ConversationID, r.ConversationID)
		if r.Alert {
			alerts++
		}
		if r.Ack {
			acks++
		}
	}
	require.Equal(t, 1, alerts, "the owner is alerted once")
	require.Equal(t, 1, acks, "the customer is acknowledged once")
	th, err := s.inbox.Get(ctx, shop.ID, recs[0].ConversationID)
	require.NoError(t, err)
	require.Len(t, th.Messages, n)
	require.Equal(t, n, th.Unread)
	require.Equal(t, 1, s.count(`SELECT count(*) FROM conversations`))

	// One MessageSid delivered 20 times at once (an hour on: the windows are free again).
	t1 := t0.Add(time.Hour)
	recs = make([]inbox.Recorded, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
				var err error
				recs[i], err = inbox.RecordIn(ctx, tx, inbox.InboundText{ShopID: shop.ID, Phone: "+15557310002",
					MessageSID: "SM-same", Body: "again", At: t1, NeedsOwner: true, Acknowledges: true, OwnerAlerts: true})
				return err
			})
		})
	}
	close(start)
	wg.Wait()
	fresh, alerts := 0, 0
	for i, r := range recs {
		require.NoError(t, errs[i])
		if !r.Duplicate {
			fresh++
		}
		if r.Alert {
			alerts++
		}
	}
	require.Equal(t, 1, fresh, "one delivery records the text")
	require.Equal(t, 1, alerts, "and only it alerts")
	require.Equal(t, 1, s.count(`SELECT count(*) FROM conversation_messages WHERE message_sid = 'SM-same'`))
	require.Equal(t, n+1, s.count(`SELECT unread FROM conversations`))
}

// TestRecordOut: the shop's texts join the number's conversation (made closed when it is
// the first), once per key; their status moves on with the send and the delivery report,
// never back.
func TestRecordOut(t *testing.T) {
	t.Parallel()
	s := newScene(t)
	ctx := context.Background()
	shop := s.shop("Cuts", "+15555550100")
	ada := s.customer(shop, "+15557310001", "Ada")

	offer := inbox.OutboundText{ShopID: shop.ID, Phone: ada.Phone, CustomerID: ada.ID, Body: "A slot at 3pm: YES?",
		At: t0, Key: "offer:1", Status: inbox.StatusSent, ProviderSID: "SM-out-1"}
	sent := s.out(offer)
	require.False(t, sent.Duplicate)
	again := s.out(offer)
	require.Equal(t, inbox.Sent{ConversationID: sent.ConversationID, MessageID: sent.MessageID, Duplicate: true}, again)

	reply := s.in(inbox.InboundText{ShopID: shop.ID, Phone: ada.Phone, CustomerID: ada.ID, MessageSID: "SM-in-1",
		Body: "what is the price?", At: t0.Add(time.Minute), NeedsOwner: true, Acknowledges: true})
	require.Equal(t, sent.ConversationID, reply.ConversationID)
	ack := s.out(inbox.OutboundText{ShopID: shop.ID, Phone: ada.Phone, Body: "Thanks, the shop will answer.",
		At: t0.Add(time.Minute), Key: "ack:SM-in-1"})

	th, err := s.inbox.Get(ctx, shop.ID, sent.ConversationID)
	require.NoError(t, err)
	require.Equal(t, inbox.StatusOpen, th.Status)
	require.Equal(t, ada.ID, th.CustomerID)
	var got []string
	for _, m := range th.Messages {
		got = append(got, m.Direction+" "+m.Author+" "+m.Status+" "+m.Body)
	}
	// The acknowledgement has the text's instant: it still comes after it.
	require.Equal(t, []string{
		"out system sent A slot at 3pm: YES?",
		"in customer received what is the price?",
		"out system queued Thanks, the shop will answer.",
	}, got)
	require.Equal(t, ack.MessageID, th.Messages[2].ID)

	// The ack's life: sent, delivered; a late failure report and a late "unsent" change
	// nothing.
	status := func() string {
		t.Helper()
		var st string
		require.NoError(t, s.pool.QueryRow(ctx, `SELECT status FROM conversation_messages WHERE id = $1`, ack.MessageID).Scan(&st))
		return st
	}
	ok, err := inbox.MarkSent(ctx, s.pool, shop.ID, "ack:SM-in-1", "SM-out-2")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, inbox.StatusSent, status())
	ok, err = inbox.MarkDelivery(ctx, s.pool, "SM-out-2", true)
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = inbox.MarkDelivery(ctx, s.pool, "SM-out-2", false)
	require.NoError(t, err)
	require.False(t, ok)
	ok, err = inbox.MarkUnsent(ctx, s.pool, shop.ID, "ack:SM-in-1")
	require.NoError(t, err)
	require.False(t, ok)
	require.Equal(t, inbox.StatusDelivered, status())

	// A queued text the outbox dropped.
	dropped := s.out(inbox.OutboundText{ShopID: shop.ID, Phone: "+15557310009", Body: "x", At: t0, Key: "k:drop"})
	ok, err = inbox.MarkUnsent(ctx, s.pool, shop.ID, "k:drop")
	require.NoError(t, err)
	require.True(t, ok)
	th, err = s.inbox.Get(ctx, shop.ID, dropped.ConversationID)
	require.NoError(t, err)
	require.Equal(t, inbox.StatusFailed, th.Messages[0].Status)
	require.Equal(t, inbox.StatusClosed, th.Status, "a conversation the shop began waits for nobody")

	for _, bad := range []inbox.OutboundText{
		{ShopID: shop.ID, Phone: ada.Phone, Body: "x", At: t0},                                         // no key
		{ShopID: shop.ID, Phone: ada.Phone, Body: "x", At: t0, Key: "k", Author: inbox.AuthorCustomer}, // not an out author
		{ShopID: shop.ID, Phone: ada.Phone, Body: "x", At: t0, Key: "k", Status: inbox.StatusDelivered},
	} {
		_, err := inbox.RecordOut(ctx, s.pool, bad)
		require.Error(t, err)
	}
}

// TestList: newest activity first, by status or all, a page at a time (ties in time by
// id), every conversation once; the preview is the newest text.
func TestList(t *testing.T) {
	t.Parallel()
	s := newScene(t)
	ctx := context.Background()
	shop := s.shop("Cuts", "+15555550100")
	bea := s.customer(shop, "+15557310005", "Bea")

	// Seven conversations: open ones at 0, 2, 4, 6 minutes (two at 4: the tie), closed
	// ones at 1, 3, 5 minutes.
	want := map[string][]string{} // status → phones, newest first (ties by id, filled below)
	type conv struct {
		phone string
		at    time.Duration
		open  bool
	}
	convs := []conv{
		{"+15557310000", 0, true}, {"+15557310001", time.Minute, false}, {"+15557310002", 2 * time.Minute, true},
		{"+15557310003", 3 * time.Minute, false}, {"+15557310004", 4 * time.Minute, true},
		{bea.Phone, 4 * time.Minute, true}, {"+15557310006", 5 * time.Minute, false},
	}
	ids := map[string]uuid.UUID{}
	for i, c := range convs {
		customer := uuid.Nil
		if c.phone == bea.Phone {
			customer = bea.ID
		}
		r := s.in(inbox.InboundText{ShopID: shop.ID, Phone: c.phone, CustomerID: customer, MessageSID: fmt.Sprintf("SM-l-%d", i),
			Body: "in " + c.phone, At: t0.Add(c.at), NeedsOwner: c.open})
		ids[c.phone] = r.ConversationID
	}
	// The shop's answer to one is its newest text; to another, a later one that moves it
	// to the top.
	s.out(inbox.OutboundText{ShopID: shop.ID, Phone: "+15557310000", Body: "out +15557310000", At: t0.Add(6 * time.Minute), Key: "k0"})
	// Expected orders, newest first: +…0 (6 min), +…6 (5), the two at 4 by id desc, +…3, +…2, +…1.
	tie := []string{"+15557310004", bea.Phone}
	if ids[tie[0]].String() < ids[tie[1]].String() {
		tie[0], tie[1] = tie[1], tie[0]
	}
	want[inbox.StatusAll] = append([]string{"+15557310000", "+15557310006"}, append(tie, "+15557310003", "+15557310002", "+15557310001")...)
	want[inbox.StatusOpen] = append([]string{"+15557310000"}, append(tie, "+15557310002")...)
	want[inbox.StatusClosed] = []string{"+15557310006", "+15557310003", "+15557310001"}

	tests := []struct {
		status string
		limit  int
	}{
		{inbox.StatusAll, 3}, {inbox.StatusAll, 1}, {inbox.StatusAll, 0},
		{inbox.StatusOpen, 2}, {"", 2}, {inbox.StatusClosed, 2}, {inbox.StatusClosed, 3},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s by %d", tt.status, tt.limit), func(t *testing.T) {
			var got []string
			cursor := ""
			for pages := 0; ; pages++ {
				require.Less(t, pages, 10)
				page, err := s.inbox.List(ctx, shop.ID, inbox.Query{Status: tt.status, Limit: tt.limit, Cursor: cursor})
				require.NoError(t, err)
				if tt.limit > 0 {
					require.LessOrEqual(t, len(page.Conversations), tt.limit)
				}
				for _, c := range page.Conversations {
					got = append(got, c.Phone)
				}
				if page.Next == "" {
					break
				}
				cursor = page.Next
			}
			status := tt.status
			if status == "" {
				status = inbox.StatusOpen
			}
			require.Equal(t, want[status], got)
		})
	}

	page, err := s.inbox.List(ctx, shop.ID, inbox.Query{Status: inbox.StatusAll})
	require.NoError(t, err)
	top := page.Conversations[0]
	require.Equal(t, &inbox.Preview{Direction: inbox.Out, Body: "out +15557310000", At: t0.Add(6 * time.Minute)}, top.LastMessage)
	for _, c := range page.Conversations {
		if c.Phone == bea.Phone {
			require.Equal(t, bea.ID, c.CustomerID)
			require.Equal(t, "Bea", c.CustomerName)
			require.Equal(t, 1, c.Unread)
		}
	}

	for _, bad := range []struct {
		q    inbox.Query
		code string
	}{
		{inbox.Query{Status: "pending"}, "invalid_status"},
		{inbox.Query{Limit: -1}, "invalid_limit"},
		{inbox.Query{Limit: inbox.MaxPage + 1}, "invalid_limit"},
		{inbox.Query{Cursor: "not a cursor"}, "invalid_cursor"},
		{inbox.Query{Cursor: "MTIz"}, "invalid_cursor"}, // base64 of "123"
	} {
		_, err := s.inbox.List(ctx, shop.ID, bad.q)
		requireProblem(t, err, problem.Invalid, bad.code)
	}
}

// TestShopsAreApart: one number texting two shops has a conversation with each; a shop
// never lists, reads, marks, changes or replies in another's (not found, and nothing
// changes).
func TestShopsAreApart(t *testing.T) {
	t.Parallel()
	s := newScene(t)
	ctx := context.Background()
	a := s.shop("A", "+15555550100")
	b := s.shop("B", "+15555550200")
	const phone = "+15557310002"
	inA := s.in(inbox.InboundText{ShopID: a.ID, Phone: phone, MessageSID: "SM-a", Body: "to A", At: t0, NeedsOwner: true, Acknowledges: true})
	inB := s.in(inbox.InboundText{ShopID: b.ID, Phone: phone, MessageSID: "SM-b", Body: "to B", At: t0, NeedsOwner: true, Acknowledges: true})
	require.NotEqual(t, inA.ConversationID, inB.ConversationID)

	// The same MessageSid in two shops is two texts (the dedupe is per shop).
	dup := s.in(inbox.InboundText{ShopID: b.ID, Phone: phone, MessageSID: "SM-a", Body: "to B again", At: t0})
	require.False(t, dup.Duplicate)

	page, err := s.inbox.List(ctx, b.ID, inbox.Query{Status: inbox.StatusAll})
	require.NoError(t, err)
	require.Len(t, page.Conversations, 1)
	require.Equal(t, inB.ConversationID, page.Conversations[0].ID)

	_, err = s.inbox.Get(ctx, b.ID, inA.ConversationID)
	require.ErrorIs(t, err, inbox.ErrNotFound)
	_, err = s.inbox.MarkRead(ctx, b.ID, inA.ConversationID)
	require.ErrorIs(t, err, inbox.ErrNotFound)
	_, err = s.inbox.SetStatus(ctx, b.ID, inA.ConversationID, inbox.StatusClosed)
	require.ErrorIs(t, err, inbox.ErrNotFound)
	_, err = s.inbox.Reply(ctx, b.ID, inA.ConversationID, "hello")
	require.ErrorIs(t, err, inbox.ErrNotFound)
	_, err = s.inbox.Get(ctx, a.ID, uuid.New())
	requireProblem(t, err, problem.NotFound, "conversation_not_found")

	th, err := s.inbox.Get(ctx, a.ID, inA.ConversationID)
	require.NoError(t, err)
	require.Equal(t, inbox.StatusOpen, th.Status)
	require.Equal(t, 1, th.Unread)
	require.Len(t, th.Messages, 1)
	require.Equal(t, "to A", th.Messages[0].Body)
	require.Zero(t, s.count(`SELECT count(*) FROM river_job`))
}

// TestMarkReadAndSetStatus: reading zeroes the unread count and leaves the status; the
// owner closes and reopens; a new text that needs the owner opens a closed conversation
// again and counts from zero.
func TestMarkReadAndSetStatus(t *testing.T) {
	t.Parallel()
	s := newScene(t)
	ctx := context.Background()
	shop := s.shop("Cuts", "+15555550100")
	text := inbox.InboundText{ShopID: shop.ID, Phone: "+15557310002", Body: "?", At: t0, NeedsOwner: true, Acknowledges: true}
	for i := range 3 {
		text.MessageSID = fmt.Sprintf("SM-r-%d", i)
		text.At = t0.Add(time.Duration(i) * time.Second)
		s.in(text)
	}
	id := s.in(inbox.InboundText{ShopID: shop.ID, Phone: text.Phone, MessageSID: "SM-r-x", Body: "STOP", At: t0}).ConversationID

	c, err := s.inbox.MarkRead(ctx, shop.ID, id)
	require.NoError(t, err)
	require.Zero(t, c.Unread)
	require.Equal(t, inbox.StatusOpen, c.Status)

	c, err = s.inbox.SetStatus(ctx, shop.ID, id, inbox.StatusClosed)
	require.NoError(t, err)
	require.Equal(t, inbox.StatusClosed, c.Status)
	_, err = s.inbox.SetStatus(ctx, shop.ID, id, "archived")
	requireProblem(t, err, problem.Invalid, "invalid_status")

	text.MessageSID, text.At = "SM-r-3", t0.Add(time.Hour)
	s.in(text)
	th, err := s.inbox.Get(ctx, shop.ID, id)
	require.NoError(t, err)
	require.Equal(t, inbox.StatusOpen, th.Status)
	require.Equal(t, 1, th.Unread)

	_, err = s.inbox.SetStatus(ctx, shop.ID, id, inbox.StatusClosed)
	require.NoError(t, err)
	c, err = s.inbox.SetStatus(ctx, shop.ID, id, inbox.StatusOpen)
	require.NoError(t, err)
	require.Equal(t, inbox.StatusOpen, c.Status)
}

// TestReply: the owner's reply is recorded and its text queued (jobs.Text from the
// shop's number to the conversation's) in one transaction; a bad body is refused and
// nothing is recorded or queued; so is a reply to a number that said STOP (422
// opted_out).
func TestReply(t *testing.T) {
	t.Parallel()
	s := newScene(t)
	ctx := context.Background()
	shop := s.shop("Cuts", "+15555550100")
	ada := s.customer(shop, "+15557310001", "Ada")
	conv := s.in(inbox.InboundText{ShopID: shop.ID, Phone: ada.Phone, CustomerID: ada.ID, MessageSID: "SM-q",
		Body: "is Friday free?", At: t0, NeedsOwner: true, Acknowledges: true}).ConversationID

	tests := []struct {
		name string
		body string
		code string // "" : accepted
	}{
		{name: "a reply", body: "Yes, 4pm works."},
		{name: "640 characters, not bytes", body: strings.Repeat("é", inbox.MaxReply)},
		{name: "empty", body: "", code: "invalid_body"},
		{name: "only spaces", body: " \n\t ", code: "invalid_body"},
		{name: "641 characters", body: strings.Repeat("a", inbox.MaxReply+1), code: "invalid_body"},
		{name: "not UTF-8", body: "caf\xe9", code: "invalid_body"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s.now = t0.Add(time.Duration(i+1) * time.Minute)
			before := s.count(`SELECT count(*) FROM conversation_messages`)
			jobsBefore := s.count(`SELECT count(*) FROM river_job`)
			m, err := s.inbox.Reply(ctx, shop.ID, conv, tt.body)
			if tt.code != "" {
				requireProblem(t, err, problem.Invalid, tt.code)
				require.Equal(t, before, s.count(`SELECT count(*) FROM conversation_messages`))
				require.Equal(t, jobsBefore, s.count(`SELECT count(*) FROM river_job`))
				return
			}
			require.NoError(t, err)
			require.Equal(t, inbox.Message{ID: m.ID, ConversationID: conv, Direction: inbox.Out, Author: inbox.AuthorOwner,
				Body: tt.body, At: s.now, Status: inbox.StatusQueued}, m)
			var args []byte
			require.NoError(t, s.pool.QueryRow(ctx, `SELECT args FROM river_job WHERE kind = $1 ORDER BY id DESC LIMIT 1`,
				jobs.Text{}.Kind()).Scan(&args))
			var job jobs.Text
			require.NoError(t, json.Unmarshal(args, &job))
			require.Equal(t, shop.ID, job.ShopID)
			require.Equal(t, shop.SMSNumber, job.From)
			require.Equal(t, ada.Phone, job.To)
			require.Equal(t, tt.body, job.Body)
			require.True(t, strings.HasPrefix(job.Key, "inbox_reply:"), job.Key)
			// The outbox's send marks it by that key.
			ok, err := inbox.MarkSent(ctx, s.pool, shop.ID, job.Key, "SM-sent-"+tt.name)
			require.NoError(t, err)
			require.True(t, ok)

			th, err := s.inbox.Get(ctx, shop.ID, conv)
			require.NoError(t, err)
			require.Equal(t, s.now, th.LastActivityAt, "a reply moves the conversation up")
			require.Equal(t, &inbox.Preview{Direction: inbox.Out, Body: tt.body, At: s.now}, th.LastMessage)
		})
	}

	// Ada says STOP: the owner's reply is refused, and nothing is recorded or queued.
	require.NoError(t, s.customers.OptOutNumber(ctx, shop.ID, ada.Phone))
	before := s.count(`SELECT count(*) FROM conversation_messages`)
	jobsBefore := s.count(`SELECT count(*) FROM river_job`)
	_, err := s.inbox.Reply(ctx, shop.ID, conv, "Are you sure?")
	require.ErrorIs(t, err, inbox.ErrOptedOut)
	requireProblem(t, err, problem.Invalid, "opted_out")
	require.Equal(t, before, s.count(`SELECT count(*) FROM conversation_messages`))
	require.Equal(t, jobsBefore, s.count(`SELECT count(*) FROM river_job`))

	// An OptOuts that cannot answer refuses too (and says why, not "opted out").
	failing := inbox.New(s.pool, nil, optOutsFunc(func(context.Context, uuid.UUID, string) (bool, error) {
		return false, errors.New("postgres is down")
	}), inbox.Config{})
	_, err = failing.Reply(ctx, shop.ID, conv, "hello")
	require.ErrorContains(t, err, "postgres is down")
	require.NotErrorIs(t, err, inbox.ErrOptedOut)
}

type optOutsFunc func(ctx context.Context, shopID uuid.UUID, number string) (bool, error)

func (f optOutsFunc) OptedOut(ctx context.Context, shopID uuid.UUID, number string) (bool, error) {
	return f(ctx, shopID, number)
}

// TestForgetLeavesNoTrace: Forget, in the erasure's transaction, deletes the customer's
// conversations, found by customer (a number changed since) and by number (texts from
// before they were a customer), with every text; no column of either table holds the
// number or any of the words afterwards. Another customer's conversation, and the same
// number's at another shop, stay.
func TestForgetLeavesNoTrace(t *testing.T) {
	t.Parallel()
	s := newScene(t)
	ctx := context.Background()
	shop := s.shop("Cuts", "+15555550100")
	other := s.shop("Other", "+15555550200")
	ada := s.customer(shop, "+15557310001", "Ada")
	bea := s.customer(shop, "+15557310002", "Bea")
	const oldNumber = "+15557319999" // Ada's number before, linked to her by a text
	const words = "my secret words"

	s.in(inbox.InboundText{ShopID: shop.ID, Phone: ada.Phone, CustomerID: ada.ID, MessageSID: "SM-f1", Body: words + " 1", At: t0, NeedsOwner: true, Acknowledges: true})
	s.out(inbox.OutboundText{ShopID: shop.ID, Phone: ada.Phone, CustomerID: ada.ID, Body: words + " 2", At: t0, Key: "k-f1", ProviderSID: "SM-f2", Status: inbox.StatusSent})
	s.in(inbox.InboundText{ShopID: shop.ID, Phone: oldNumber, CustomerID: ada.ID, MessageSID: "SM-f3", Body: words + " 3", At: t0})
	s.in(inbox.InboundText{ShopID: shop.ID, Phone: bea.Phone, CustomerID: bea.ID, MessageSID: "SM-f4", Body: "Bea's words", At: t0, NeedsOwner: true, Acknowledges: true})
	keep := s.in(inbox.InboundText{ShopID: other.ID, Phone: ada.Phone, MessageSID: "SM-f5", Body: "to the other shop", At: t0})
	require.Equal(t, 4, s.count(`SELECT count(*) FROM conversations`))

	tx, err := s.pool.Begin(ctx)
	require.NoError(t, err)
	f, err := inbox.Forget(ctx, tx, shop.ID, ada.ID, ada.Phone)
	if err != nil || len(f.Conversations) != 2 {
		_ = tx.Rollback(ctx)
	}
	require.NoError(t, err)
	require.Len(t, f.Conversations, 2)
	require.NoError(t, tx.Commit(ctx))

	for _, table := range []string{"conversations", "conversation_messages"} {
		for _, needle := range []string{ada.Phone, oldNumber, words, "SM-f1", "SM-f2", "SM-f3", ada.ID.String()} {
			// Every column of every row, as text.
			found := s.count(`SELECT count(*) FROM `+table+` t WHERE t.shop_id = $1 AND position($2 IN t::text) > 0`, shop.ID, needle)
			require.Zero(t, found, "%s still holds %q", table, needle)
		}
	}
	require.Equal(t, 1, s.count(`SELECT count(*) FROM conversations WHERE shop_id = $1`, shop.ID), "Bea's stays")
	_, err = s.inbox.Get(ctx, other.ID, keep.ConversationID)
	require.NoError(t, err, "the other shop's conversation with the number stays")

	// A number alone (a stranger's erasure by number) and a customer alone.
	stranger := s.in(inbox.InboundText{ShopID: shop.ID, Phone: "+15557310077", MessageSID: "SM-f6", Body: "x", At: t0})
	f, err = inbox.Forget(ctx, s.pool, shop.ID, uuid.Nil, "+15557310077")
	require.NoError(t, err)
	require.Equal(t, []uuid.UUID{stranger.ConversationID}, f.Conversations)
	_, err = s.inbox.Get(ctx, shop.ID, stranger.ConversationID)
	require.ErrorIs(t, err, inbox.ErrNotFound)
	f, err = inbox.Forget(ctx, s.pool, shop.ID, bea.ID, "")
	require.NoError(t, err)
	require.Len(t, f.Conversations, 1)
	f, err = inbox.Forget(ctx, s.pool, shop.ID, uuid.Nil, "")
	require.NoError(t, err)
	require.Empty(t, f.Conversations, "nothing named: nothing forgotten")
	require.Zero(t, s.count(`SELECT count(*) FROM conversation_messages WHERE shop_id = $1`, shop.ID))
}

// TestReplyAfterForget: a reply to a conversation the erasure deleted is not found, and
// nothing is queued.
func TestReplyAfterForget(t *testing.T) {
	t.Parallel()
	s := newScene(t)
	ctx := context.Background()
	shop := s.shop("Cuts", "+15555550100")
	conv := s.in(inbox.InboundText{ShopID: shop.ID, Phone: "+15557310002", MessageSID: "SM-x", Body: "?", At: t0}).ConversationID
	_, err := inbox.Forget(ctx, s.pool, shop.ID, uuid.Nil, "+15557310002")
	require.NoError(t, err)
	_, err = s.inbox.Reply(ctx, shop.ID, conv, "hello")
	require.ErrorIs(t, err, inbox.ErrNotFound)
	require.Zero(t, s.count(`SELECT count(*) FROM river_job`))
}

// TestPurge: texts older than the keep period go, in batches, and conversations idle
// since then go whole; a conversation still going on keeps its conversation and its
// recent texts.
func TestPurge(t *testing.T) {
	t.Parallel()
	s := newScene(t)
	ctx := context.Background()
	shop := s.shop("Cuts", "+15555550100")
	before := t0.Add(-inbox.DefaultRetention)
	old := before.Add(-time.Hour)
	// Idle: three old texts.
	idle := s.in(inbox.InboundText{ShopID: shop.ID, Phone: "+15557310001", MessageSID: "SM-p1", Body: "a", At: old})
	s.in(inbox.InboundText{ShopID: shop.ID, Phone: "+15557310001", MessageSID: "SM-p2", Body: "b", At: old})
	s.out(inbox.OutboundText{ShopID: shop.ID, Phone: "+15557310001", Body: "c", At: old, Key: "p3"})
	// Going on: two old texts and a recent one.
	live := s.in(inbox.InboundText{ShopID: shop.ID, Phone: "+15557310002", MessageSID: "SM-p4", Body: "d", At: old})
	s.in(inbox.InboundText{ShopID: shop.ID, Phone: "+15557310002", MessageSID: "SM-p5", Body: "e", At: old})
	s.in(inbox.InboundText{ShopID: shop.ID, Phone: "+15557310002", MessageSID: "SM-p6", Body: "f", At: t0})

	var batches []int64
	for {
		n, err := inbox.Purge(ctx, s.pool, before, 2)
		require.NoError(t, err)
		batches = append(batches, n)
		if n < 2 {
			break
		}
	}
	// Five old texts (2, 2, then 1 and the idle conversation), then nothing.
	require.Equal(t, []int64{2, 2, 2, 0}, batches)
	_, err := s.inbox.Get(ctx, shop.ID, idle.ConversationID)
	require.ErrorIs(t, err, inbox.ErrNotFound)
	th, err := s.inbox.Get(ctx, shop.ID, live.ConversationID)
	require.NoError(t, err)
	require.Len(t, th.Messages, 1)
	require.Equal(t, "f", th.Messages[0].Body)
}

// TestReceivedEvent: the message.received subject's JSON, which is stored with the
// event and read by receivers: its names never change.
func TestReceivedEvent(t *testing.T) {
	t.Parallel()
	conv, msg, cust := uuid.MustParse("00000000-0000-0000-0000-00000000000a"),
		uuid.MustParse("00000000-0000-0000-0000-00000000000b"), uuid.MustParse("00000000-0000-0000-0000-00000000000c")
	in := inbox.InboundText{Phone: "+15557310002", CustomerID: cust, Body: "hi", At: t0, MessageSID: "SM1"}
	b, err := json.Marshal(inbox.Recorded{ConversationID: conv, MessageID: msg}.Event(in, "unrecognized"))
	require.NoError(t, err)
	require.JSONEq(t, `{"conversation_id":"00000000-0000-0000-0000-00000000000a","message_id":"00000000-0000-0000-0000-00000000000b",
		"phone":"+15557310002","customer_id":"00000000-0000-0000-0000-00000000000c","body":"hi","outcome":"unrecognized",
		"at":"2026-11-27T09:00:00Z"}`, string(b))
	in.CustomerID = uuid.Nil
	b, err = json.Marshal(inbox.Recorded{ConversationID: conv, MessageID: msg}.Event(in, "clarify"))
	require.NoError(t, err)
	require.Contains(t, string(b), `"customer_id":null`)
}

// TestQueriesUseTheirIndexes: the list (by status and all) reads its index in order
// with the cursor as its bound (no sort of the shop's conversations), a thread reads
// its own, and the erasure finds a customer's conversations by number and by customer
// without a scan.
func TestQueriesUseTheirIndexes(t *testing.T) {
	t.Parallel()
	s := newScene(t)
	ctx := context.Background()
	sh := s.shop("Cuts", "+15555550100")
	tx, err := s.pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	// A shop as the waves leave it: thousands of conversations the shop began (closed),
	// a few open; the planner then knows the open ones are few. And a database as it is
	// in service, with other shops' conversations beside this one's over the same
	// hours: with one shop alone, every row matches shop_id, and the planner may as
	// well walk the global activity index (the retention's) backwards and filter, as it
	// did on a fresh machine's first run.
	others := make([]uuid.UUID, 9)
	for i := range others {
		others[i] = s.shop(fmt.Sprintf("Other %d", i), fmt.Sprintf("+1555555%04d", 200+i)).ID
	}
	_, err = tx.Exec(ctx, `INSERT INTO conversations (shop_id, phone, status, last_activity_at, created_at)
		SELECT $1, '+1555' || lpad(g::text, 7, '0'), CASE WHEN g % 500 = 0 THEN 'open' ELSE 'closed' END,
		       now() - g * interval '1 minute', now() - g * interval '1 minute'
		FROM generate_series(1, 5000) g`, sh.ID)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, `INSERT INTO conversations (shop_id, phone, status, last_activity_at, created_at)
		SELECT o.id, '+1556' || lpad(g::text, 7, '0'), CASE WHEN g % 500 = 0 THEN 'open' ELSE 'closed' END,
		       now() - g * interval '1 minute', now() - g * interval '1 minute'
		FROM unnest($1::uuid[]) o(id), generate_series(1, 2000) g`, others)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, `ANALYZE conversations`)
	require.NoError(t, err)
	// Only a plan that has an index to use leaves the sequential scan.
	_, err = tx.Exec(ctx, `SET LOCAL enable_seqscan = off`)
	require.NoError(t, err)
	shop, id := "'"+sh.ID.String()+"'", `'b0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'`
	plan := func(sql string) string {
		t.Helper()
		rows, err := tx.Query(ctx, `EXPLAIN `+sql)
		require.NoError(t, err)
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		return strings.Join(lines, "\n")
	}
	for _, tt := range []struct {
		name, sql, index string
	}{
		{"list by status", `SELECT id FROM conversations c WHERE c.shop_id = ` + shop + ` AND c.status = 'open'
			AND (c.last_activity_at, c.id) < ('2026-11-27T09:00:00Z'::timestamptz, ` + id + `::uuid)
			ORDER BY c.last_activity_at DESC, c.id DESC LIMIT 51`, "conversations_list_idx"},
		{"list all", `SELECT id FROM conversations c WHERE c.shop_id = ` + shop + `
			AND (c.last_activity_at, c.id) < ('2026-11-27T09:00:00Z'::timestamptz, ` + id + `::uuid)
			ORDER BY c.last_activity_at DESC, c.id DESC LIMIT 51`, "conversations_all_idx"},
		{"thread", `SELECT * FROM conversation_messages WHERE conversation_id = ` + id + ` ORDER BY at, id`,
			"conversation_messages_thread_idx"},
		{"forget", `DELETE FROM conversations WHERE shop_id = ` + shop + `
			AND (('+15557310001' <> '' AND phone = '+15557310001') OR customer_id = ` + id + `::uuid)`, "conversations_customer_idx"},
	} {
		p := plan(tt.sql)
		require.NotContains(t, p, "Seq Scan", "%s:\n%s", tt.name, p)
		require.NotContains(t, p, "Sort", "%s:\n%s", tt.name, p)
		require.Contains(t, p, tt.index, "%s:\n%s", tt.name, p)
	}
	// A page of the thread with the replies read from the reply path's texts: the rows
	// of each side through their indexes, the newest kept (a top-N sort, the answer
	// bounded by the page).
	p := plan(`SELECT * FROM conversation_texts WHERE conversation_id = ` + id + `
		AND (at, ord, id) < ('9999-12-31T00:00:00Z'::timestamptz, 0::smallint, ` + id + `::uuid)
		ORDER BY at DESC, ord DESC, id DESC LIMIT 201`)
	require.NotContains(t, p, "Seq Scan", "thread with replies:\n%s", p)
	for _, index := range []string{"conversation_messages_thread_idx", "inbound_messages_shop_from_idx", "conversations_pkey"} {
		require.Contains(t, p, index, "thread with replies:\n%s", p)
	}
}

// TestRecordManyTakesOneLockOrder: a batch records its texts in the one order of
// conversations whatever order it was given them in. Here a transaction holds the
// first number's conversation; a batch given the second number's text first waits for
// the first number's row without holding the second's, so the holder can still record
// the second number's text and commit. (Recorded in the order given, the batch would
// hold the second row while waiting for the first, and Postgres would abort one of
// them as a deadlock.)
func TestRecordManyTakesOneLockOrder(t *testing.T) {
	t.Parallel()
	s := newScene(t)
	ctx := context.Background()
	shop := s.shop("Cuts", "+15555550100")
	const p1, p2 = "+15557310001", "+15557310002"
	text := func(phone, sid string) inbox.InboundText {
		return inbox.InboundText{ShopID: shop.ID, Phone: phone, MessageSID: sid, Body: sid, At: t0, NeedsOwner: true, Acknowledges: true}
	}
	// Both conversations exist, so the batch meets their rows (not an insert's index).
	s.in(text(p1, "SM-0a"))
	s.in(text(p2, "SM-0b"))

	holder, err := s.pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = holder.Rollback(ctx) }()
	_, err = inbox.RecordIn(ctx, holder, text(p1, "SM-h1"))
	require.NoError(t, err)

	done := pgtest.Async(func() ([]inbox.Recorded, error) {
		var recs []inbox.Recorded
		err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			var err error
			recs, err = inbox.RecordInMany(ctx, tx, []inbox.InboundText{text(p2, "SM-b2"), text(p1, "SM-b1")})
			return err
		})
		return recs, err
	})
	pgtest.WaitUntilWaiting(t, s.pool, pgtest.OnARowLock, "the batch", done)
	_, err = inbox.RecordIn(ctx, holder, text(p2, "SM-h2"))
	require.NoError(t, err, "the batch holds no row the holder needs")
	require.NoError(t, holder.Commit(ctx))
	got := <-done
	require.NoError(t, got.Err)
	require.Len(t, got.V, 2)
	var phones []string
	for _, r := range got.V {
		th, err := s.inbox.Get(ctx, shop.ID, r.ConversationID)
		require.NoError(t, err)
		phones = append(phones, th.Phone)
	}
	require.Equal(t, []string{p2, p1}, phones, "results in the order given")

	// RecordOutMany takes the same order.
	sent, err := inbox.RecordOutMany(ctx, s.pool, []inbox.OutboundText{
		{ShopID: shop.ID, Phone: p2, Body: "b", At: t0, Key: "o2"},
		{ShopID: shop.ID, Phone: p1, Body: "a", At: t0, Key: "o1"},
	})
	require.NoError(t, err)
	require.Equal(t, got.V[0].ConversationID, sent[0].ConversationID)
	require.Equal(t, got.V[1].ConversationID, sent[1].ConversationID)
}

// TestRecordOutManyLocksInOrderAndKnowsItsKeys: the batched record of outbound texts
// takes the conversations in the one order (a batch given the second number's text
// first waits for the first number's row without holding the second's), makes a
// conversation for a new number, moves each conversation's activity to its newest new
// text, and records a key once: a retried batch changes nothing and names the first
// records.
func TestRecordOutManyLocksInOrderAndKnowsItsKeys(t *testing.T) {
	t.Parallel()
	s := newScene(t)
	ctx := context.Background()
	shop := s.shop("Cuts", "+15555550100")
	const p1, p2, p3 = "+15557320001", "+15557320002", "+15557320003"
	in := func(phone, sid string) inbox.InboundText {
		return inbox.InboundText{ShopID: shop.ID, Phone: phone, MessageSID: sid, Body: sid, At: t0}
	}
	s.in(in(p1, "SM-1"))
	s.in(in(p2, "SM-2"))

	holder, err := s.pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = holder.Rollback(ctx) }()
	_, err = inbox.RecordIn(ctx, holder, in(p1, "SM-h1"))
	require.NoError(t, err)

	later := t0.Add(time.Hour)
	batch := []inbox.OutboundText{
		{ShopID: shop.ID, Phone: p2, Body: "two", At: later, Key: "k2", Status: inbox.StatusSent, ProviderSID: "SMp2"},
		{ShopID: shop.ID, Phone: p1, Body: "one", At: later, Key: "k1"},
		{ShopID: shop.ID, Phone: p3, Body: "three", At: later, Key: "k3"},
	}
	done := pgtest.Async(func() ([]inbox.Sent, error) {
		var sent []inbox.Sent
		err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			var err error
			sent, err = inbox.RecordOutMany(ctx, tx, batch)
			return err
		})
		return sent, err
	})
	pgtest.WaitUntilWaiting(t, s.pool, pgtest.OnARowLock, "the batch", done)
	_, err = inbox.RecordIn(ctx, holder, in(p2, "SM-h2"))
	require.NoError(t, err, "the batch holds no row the holder needs")
	require.NoError(t, holder.Commit(ctx))
	got := <-done
	require.NoError(t, got.Err)
	require.Len(t, got.V, 3)

	type row struct {
		phone, body, status, provider string
		activity                      time.Time
	}
	read := func(m inbox.Sent) row {
		t.Helper()
		var r row
		require.NoError(t, s.pool.QueryRow(ctx, `SELECT c.phone, m.body, m.status, COALESCE(m.provider_sid, ''), c.last_activity_at
			FROM conversation_messages m JOIN conversations c ON c.id = m.conversation_id
			WHERE m.id = $1 AND c.id = $2`, m.MessageID, m.ConversationID).Scan(&r.phone, &r.body, &r.status, &r.provider, &r.activity))
		return r
	}
	for i, want := range []row{{p2, "two", "sent", "SMp2", later}, {p1, "one", "queued", "", later}, {p3, "three", "queued", "", later}} {
		require.False(t, got.V[i].Duplicate, "text %d is new", i)
		r := read(got.V[i])
		require.Equal(t, want.phone, r.phone, "text %d", i)
		require.Equal(t, want.body, r.body, "text %d", i)
		require.Equal(t, want.status, r.status, "text %d", i)
		require.Equal(t, want.provider, r.provider, "text %d", i)
		require.True(t, want.activity.Equal(r.activity), "text %d: activity %s, want %s", i, r.activity, want.activity)
	}

	// Retried an hour later (a job run again): nothing changes, the first records are named.
	again := slices.Clone(batch)
	for i := range again {
		again[i].At, again[i].Body = later.Add(time.Hour), "again"
	}
	sent, err := inbox.RecordOutMany(ctx, s.pool, again)
	require.NoError(t, err)
	for i := range sent {
		require.True(t, sent[i].Duplicate, "text %d was recorded before", i)
		require.Equal(t, got.V[i], inbox.Sent{ConversationID: sent[i].ConversationID, MessageID: sent[i].MessageID}, "text %d", i)
		r := read(sent[i])
		require.NotEqual(t, "again", r.body, "text %d", i)
		require.True(t, later.Equal(r.activity), "text %d: a known key moved the activity to %s", i, r.activity)
	}
	var n int
	require.NoError(t, s.pool.QueryRow(ctx, `SELECT count(*) FROM conversation_messages WHERE shop_id = $1 AND direction = 'out'`, shop.ID).Scan(&n))
	require.Equal(t, 3, n)
}

// TestConcurrentRecordOutManyNeverDeadlock: many batches over the same numbers in
// different orders, at once, all commit, each key recorded once.
func TestConcurrentRecordOutManyNeverDeadlock(t *testing.T) {
	t.Parallel()
	s := newScene(t)
	ctx := context.Background()
	shop := s.shop("Cuts", "+15555550100")
	phones := make([]string, 12)
	for i := range phones {
		phones[i] = fmt.Sprintf("+155573300%02d", i)
	}
	const batches = 24
	errs := make(chan error, batches)
	for b := range batches {
		go func() {
			var texts []inbox.OutboundText
			for j := range phones {
				p := phones[(j*7+b)%len(phones)] // each batch its own order
				texts = append(texts, inbox.OutboundText{ShopID: shop.ID, Phone: p, Body: "x", At: t0, Key: fmt.Sprintf("k-%d-%s", b%6, p)})
			}
			errs <- pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
				_, err := inbox.RecordOutMany(ctx, tx, texts)
				return err
			})
		}()
	}
	for range batches {
		require.NoError(t, <-errs)
	}
	var texts, convs int
	require.NoError(t, s.pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT conversation_id) FROM conversation_messages WHERE shop_id = $1 AND direction = 'out'`, shop.ID).Scan(&texts, &convs))
	require.Equal(t, 6*len(phones), texts, "each key once")
	require.Equal(t, len(phones), convs)
}
