package inbox

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/pgvalue"
)

// queries is this package's one way to its SQL: sqlc's Queries holds no state, and
// each call is given the pool or the transaction it runs on.
var queries = db.New()

// The windows of what a text that needs the owner sets off.
const (
	// AlertEvery is the shortest time between two alerts to the owner's phone about one
	// conversation.
	AlertEvery = 15 * time.Minute
	// AckEvery is the shortest time between two automatic acknowledgements to one
	// conversation's number: after the first, the thread is the owner's.
	AckEvery = 24 * time.Hour
)

// DefaultRetention is how long conversations and their texts are kept when
// INBOX_RETENTION_DAYS is not set: a conversation idle for longer goes, and so does
// every text older than that in a conversation still going on.
const DefaultRetention = 365 * 24 * time.Hour

// Authors of a message.
const (
	AuthorCustomer = "customer" // the number's texts (every inbound one)
	AuthorOwner    = "owner"    // the owner's replies (Service.Reply)
	AuthorSystem   = "system"   // what the server texted: offers, answers, confirmations, acknowledgements
)

// Directions of a message.
const (
	In  = "in"
	Out = "out"
)

// Statuses of a message: an inbound one is received; an outbound one is queued, then
// sent (the provider took it), then delivered or failed.
const (
	StatusReceived  = "received"
	StatusQueued    = "queued"
	StatusSent      = "sent"
	StatusDelivered = "delivered"
	StatusFailed    = "failed"
)

// InboundText is a text a number sent a shop, as the inbound path recorded it.
type InboundText struct {
	ShopID uuid.UUID
	// Phone is the sender's number (E.164).
	Phone string
	// CustomerID is the shop's customer with that number; uuid.Nil when there is none.
	CustomerID uuid.UUID
	// MessageSID is the provider's id of the text: a text is recorded once per id.
	MessageSID string
	Body       string
	At         time.Time
	// NeedsOwner says the text waits for a person: it opens the conversation, counts as
	// unread, and may set off the owner's alert and the acknowledgement.
	NeedsOwner bool
	// OwnerAlerts says the shop has an alert number (notify_phone): only then is the
	// alert's window taken.
	OwnerAlerts bool
	// Acknowledges says the caller acknowledges the text when the day's window is free
	// (a text it could not act on); false for a text it answers otherwise (an unsure
	// reply's question), which leaves the window free.
	Acknowledges bool
}

// Recorded is what RecordIn did. Alert and Ack are decisions taken with the caller's
// transaction: when it commits, the caller texts them (as jobs in that transaction);
// when it rolls back, the windows are as they were.
type Recorded struct {
	ConversationID uuid.UUID
	MessageID      uuid.UUID
	// Duplicate says the MessageSID was recorded before: nothing changed, nothing is due.
	Duplicate bool
	// Alert says to text the owner's alert now: the conversation's alert window was free
	// and this text took it.
	Alert bool
	// Ack says to text the automatic acknowledgement now: the conversation's daily window
	// was free and this text took it.
	Ack bool
}

// RecordIn records an inbound text in its shop's conversation with the number, inside
// the caller's transaction q (the one that stores the text and its outcome), making the
// conversation on its first text. A MessageSID recorded before changes nothing
// (Duplicate). A text that NeedsOwner opens the conversation, counts as unread, and
// takes the windows that are free (see Recorded).
//
// It locks the conversation's row until q's transaction ends: a caller recording
// several texts in one transaction uses RecordInMany, which takes the rows in one order,
// so that two such transactions cannot deadlock.
func RecordIn(ctx context.Context, q db.DBTX, in InboundText) (Recorded, error) {
	if in.Phone == "" || in.MessageSID == "" {
		return Recorded{}, errors.New("inbox: an inbound text needs a phone and a message id")
	}
	at := in.At.UTC()
	conv, err := queries.ConversationUpsert(ctx, q, db.ConversationUpsertParams{
		ShopID: in.ShopID, Phone: in.Phone, CustomerID: pgvalue.UUIDOrNull(in.CustomerID), At: at,
	})
	if err != nil {
		return Recorded{}, fmt.Errorf("record inbound text: conversation: %w", err)
	}
	rec := Recorded{ConversationID: conv.ID}
	if in.NeedsOwner {
		rec.Alert = in.OwnerAlerts && windowFree(conv.LastAlertAt, at, AlertEvery)
		rec.Ack = in.Acknowledges && windowFree(conv.LastAckAt, at, AckEvery)
	}
	mid, err := newMessageID()
	if err != nil {
		return Recorded{}, err
	}
	id, err := queries.ConversationMessageRecordIn(ctx, q, db.ConversationMessageRecordInParams{
		ID: mid, ConversationID: conv.ID, ShopID: in.ShopID, Body: in.Body, At: at, MessageSid: pgvalue.TextOrNull(in.MessageSID),
		NeedsOwner: in.NeedsOwner, TakeAlert: rec.Alert, TakeAck: rec.Ack,
	})
	if errors.Is(err, pgx.ErrNoRows) {
		m, err := queries.ConversationMessageBySid(ctx, q, db.ConversationMessageBySidParams{ShopID: in.ShopID, MessageSid: pgvalue.TextOrNull(in.MessageSID)})
		if err != nil {
			return Recorded{}, fmt.Errorf("record inbound text: find the earlier record: %w", err)
		}
		return Recorded{ConversationID: m.ConversationID, MessageID: m.ID, Duplicate: true}, nil
	}
	if err != nil {
		return Recorded{}, fmt.Errorf("record inbound text: %w", err)
	}
	rec.MessageID = id
	return rec, nil
}

// RecordInMany records several inbound texts in q's transaction (a batch of concurrent
// requests' texts) as RecordIn does, in the one order every caller locks conversations
// in (shop, phone, then message id), so that two such batches never deadlock on each
// other's rows. The results are in the order of texts.
func RecordInMany(ctx context.Context, q db.DBTX, texts []InboundText) ([]Recorded, error) {
	out := make([]Recorded, len(texts))
	for _, i := range lockOrder(len(texts), func(i int) (uuid.UUID, string, string) {
		return texts[i].ShopID, texts[i].Phone, texts[i].MessageSID
	}) {
		r, err := RecordIn(ctx, q, texts[i])
		if err != nil {
			return nil, err
		}
		out[i] = r
	}
	return out, nil
}

// lockOrder returns the indexes 0..n-1 sorted by the conversation each names (shop, then
// phone) and then by tie: the order in which a transaction that records several texts
// takes the conversations' row locks.
func lockOrder(n int, key func(i int) (shop uuid.UUID, phone, tie string)) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		sa, pa, ta := key(a)
		sb, pb, tb := key(b)
		return cmp.Or(bytes.Compare(sa[:], sb[:]), strings.Compare(pa, pb), strings.Compare(ta, tb))
	})
	return idx
}

// windowFree reports whether a window last taken at last (nil: never) is free again at
// at. A last time after at (another instance's clock ahead of this one's) keeps it
// taken.
func windowFree(last *time.Time, at time.Time, every time.Duration) bool {
	return last == nil || !at.Before(last.Add(every))
}

// OutboundText is a text a shop sent (or queued) to a number, as its sender records it.
type OutboundText struct {
	ShopID     uuid.UUID
	Phone      string
	CustomerID uuid.UUID // uuid.Nil: not a customer, or not known to the caller
	// Author is AuthorSystem for what the server texts; AuthorOwner is the owner's
	// replies, which Service.Reply records itself.
	Author string
	Body   string
	At     time.Time
	// Key identifies the text for its sender (the jobs.Text key, or the offer's id): a
	// text is recorded once per key and shop, so a retried job records it once.
	Key string
	// Status is StatusQueued (the default: a job will send it) or StatusSent (it went
	// out already, ProviderSID its id).
	Status      string
	ProviderSID string
}

// Sent is what RecordOut did.
type Sent struct {
	ConversationID uuid.UUID
	MessageID      uuid.UUID
	// Duplicate says the key was recorded before: nothing changed.
	Duplicate bool
}

// RecordOut records a text the shop sent or queued to a number in the shop's
// conversation with it, inside the caller's transaction q (the one that queues or marks
// the text), making the conversation on the first text (closed: nothing waits for the
// owner). A key recorded before changes nothing (Duplicate). Like RecordIn it locks the
// conversation's row until q's transaction ends (several texts: RecordOutMany).
func RecordOut(ctx context.Context, q db.DBTX, out OutboundText) (Sent, error) {
	author, status, err := out.check()
	if err != nil {
		return Sent{}, err
	}
	at := out.At.UTC()
	conv, err := queries.ConversationUpsert(ctx, q, db.ConversationUpsertParams{
		ShopID: out.ShopID, Phone: out.Phone, CustomerID: pgvalue.UUIDOrNull(out.CustomerID), At: at,
	})
	if err != nil {
		return Sent{}, fmt.Errorf("record outbound text: conversation: %w", err)
	}
	mid, err := newMessageID()
	if err != nil {
		return Sent{}, err
	}
	id, err := queries.ConversationMessageRecordOut(ctx, q, db.ConversationMessageRecordOutParams{
		ID: mid, ConversationID: conv.ID, ShopID: out.ShopID, Author: author, Body: out.Body, At: at,
		Status: status, SendKey: pgvalue.TextOrNull(out.Key), ProviderSid: pgvalue.TextOrNull(out.ProviderSID),
	})
	if errors.Is(err, pgx.ErrNoRows) {
		m, err := queries.ConversationMessageByKey(ctx, q, db.ConversationMessageByKeyParams{ShopID: out.ShopID, SendKey: pgvalue.TextOrNull(out.Key)})
		if err != nil {
			return Sent{}, fmt.Errorf("record outbound text: find the earlier record: %w", err)
		}
		return Sent{ConversationID: m.ConversationID, MessageID: m.ID, Duplicate: true}, nil
	}
	if err != nil {
		return Sent{}, fmt.Errorf("record outbound text: %w", err)
	}
	return Sent{ConversationID: conv.ID, MessageID: id}, nil
}

// check says what is wrong with an outbound text, or gives its author and status.
func (out OutboundText) check() (author, status string, err error) {
	if out.Phone == "" || out.Key == "" {
		return "", "", errors.New("inbox: an outbound text needs a phone and a key")
	}
	author = cmp.Or(out.Author, AuthorSystem)
	if author != AuthorSystem && author != AuthorOwner {
		return "", "", fmt.Errorf("inbox: %q is not the author of an outbound text", author)
	}
	status = cmp.Or(out.Status, StatusQueued)
	if status != StatusQueued && status != StatusSent {
		return "", "", fmt.Errorf("inbox: an outbound text is recorded queued or sent, not %q", status)
	}
	return author, status, nil
}

// RecordOutMany records several outbound texts in q's transaction (a chunk of a wave's
// offers, say) as RecordOut does, in one statement that locks the conversations in the
// order RecordInMany locks them in (lockOrder), so that it never deadlocks with another
// batch. The results are in the order of texts.
func RecordOutMany(ctx context.Context, q db.DBTX, texts []OutboundText) ([]Sent, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	p := db.ConversationRecordOutManyParams{}
	for _, t := range texts {
		author, status, err := t.check()
		if err != nil {
			return nil, err
		}
		mid, err := newMessageID()
		if err != nil {
			return nil, err
		}
		p.Ids, p.ShopIds, p.Phones, p.CustomerIds = append(p.Ids, mid), append(p.ShopIds, t.ShopID), append(p.Phones, t.Phone), append(p.CustomerIds, t.CustomerID)
		p.Authors, p.Bodies, p.Ats, p.Statuses = append(p.Authors, author), append(p.Bodies, t.Body), append(p.Ats, t.At.UTC()), append(p.Statuses, status)
		p.SendKeys, p.ProviderSids = append(p.SendKeys, t.Key), append(p.ProviderSids, t.ProviderSID)
	}
	rows, err := queries.ConversationRecordOutMany(ctx, q, p)
	if err != nil {
		return nil, fmt.Errorf("record outbound texts: %w", err)
	}
	if len(rows) != len(texts) {
		return nil, fmt.Errorf("record outbound texts: %d results for %d texts", len(rows), len(texts))
	}
	out := make([]Sent, len(texts))
	for _, r := range rows {
		i := int(r.Ord) - 1
		if r.Unknown {
			// Recorded by a transaction that committed while this one ran.
			m, err := queries.ConversationMessageByKey(ctx, q, db.ConversationMessageByKeyParams{ShopID: texts[i].ShopID, SendKey: pgvalue.TextOrNull(texts[i].Key)})
			if err != nil {
				return nil, fmt.Errorf("record outbound text: find the earlier record: %w", err)
			}
			out[i] = Sent{ConversationID: m.ConversationID, MessageID: m.ID, Duplicate: true}
			continue
		}
		out[i] = Sent{ConversationID: r.ConversationID, MessageID: r.ID, Duplicate: r.Duplicate}
	}
	return out, nil
}

// MarkSent records that the provider took the shop's text keyed key (its id
// providerSID, which delivery reports name), in q. It reports whether a queued text was
// marked (false: no such text, or one marked before).
func MarkSent(ctx context.Context, q db.DBTX, shopID uuid.UUID, key, providerSID string) (bool, error) {
	n, err := queries.ConversationMessageMarkSent(ctx, q, db.ConversationMessageMarkSentParams{
		ShopID: shopID, SendKey: pgvalue.TextOrNull(key), ProviderSid: pgvalue.TextOrNull(providerSID),
	})
	if err != nil {
		return false, fmt.Errorf("mark conversation text sent: %w", err)
	}
	return n > 0, nil
}

// MarkUnsent records that the shop's queued text keyed key was not sent and will not be
// (the provider refused it, or the outbox dropped it: the number opted out or was
// erased), in q. It reports whether a queued text was marked.
func MarkUnsent(ctx context.Context, q db.DBTX, shopID uuid.UUID, key string) (bool, error) {
	n, err := queries.ConversationMessageMarkUnsent(ctx, q, db.ConversationMessageMarkUnsentParams{ShopID: shopID, SendKey: pgvalue.TextOrNull(key)})
	if err != nil {
		return false, fmt.Errorf("mark conversation text unsent: %w", err)
	}
	return n > 0, nil
}

// MarkDelivery applies a delivery report to the text the provider knows as providerSID:
// delivered true makes it delivered, false failed. A text reported before keeps its
// first report. It reports whether a text was marked.
func MarkDelivery(ctx context.Context, q db.DBTX, providerSID string, delivered bool) (bool, error) {
	status := StatusFailed
	if delivered {
		status = StatusDelivered
	}
	n, err := queries.ConversationMessageMarkDelivery(ctx, q, db.ConversationMessageMarkDeliveryParams{
		ProviderSid: pgvalue.TextOrNull(providerSID), Status: status,
	})
	if err != nil {
		return false, fmt.Errorf("mark conversation text delivery: %w", err)
	}
	return n > 0, nil
}

// Forgotten is what Forget deleted that is quoted elsewhere: the conversations (the
// owner's alerts of their texts name them) and the owner's replies in them (their
// stored API answers carry the reply's id).
type Forgotten struct {
	Conversations []uuid.UUID
	Replies       []uuid.UUID
}

// Forget deletes, inside the caller's transaction q (the customer's erasure), shopID's
// conversations with the customer customerID or with the number phone (either may be
// empty), with all their texts, and says what went that others may quote.
func Forget(ctx context.Context, q db.DBTX, shopID, customerID uuid.UUID, phone string) (Forgotten, error) {
	var f Forgotten
	var err error
	f.Replies, err = queries.ConversationRepliesOf(ctx, q, db.ConversationRepliesOfParams{
		ShopID: shopID, Phone: phone, CustomerID: pgvalue.UUIDOrNull(customerID),
	})
	if err != nil {
		return f, fmt.Errorf("find the owner's replies to forget: %w", err)
	}
	f.Conversations, err = queries.ConversationsForget(ctx, q, db.ConversationsForgetParams{
		ShopID: shopID, Phone: phone, CustomerID: pgvalue.UUIDOrNull(customerID),
	})
	if err != nil {
		return f, fmt.Errorf("forget conversations: %w", err)
	}
	return f, nil
}

// Purge deletes up to limit rows kept past the inbox's keep period: texts older than
// before, then conversations idle since before (their texts went with the first step),
// and returns how many it deleted of both (internal/retention runs it until a batch is
// short).
func Purge(ctx context.Context, conn db.DBTX, before time.Time, limit int32) (int64, error) {
	n, err := queries.ConversationMessagesPurge(ctx, conn, db.ConversationMessagesPurgeParams{Before: before.UTC(), MaxRows: limit})
	if err != nil {
		return 0, fmt.Errorf("purge conversation messages: %w", err)
	}
	if n >= int64(limit) {
		return n, nil
	}
	m, err := queries.ConversationsPurge(ctx, conn, db.ConversationsPurgeParams{Before: before.UTC(), MaxRows: limit - int32(n)})
	if err != nil {
		return n, fmt.Errorf("purge conversations: %w", err)
	}
	return n + m, nil
}

// newMessageID makes a message's id: a UUIDv7, ordered by time (and, within one
// process, by call), so that a thread's texts of one instant (a text and its
// acknowledgement) sort in the order they were recorded.
func newMessageID() (uuid.UUID, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.Nil, fmt.Errorf("inbox: message id: %w", err)
	}
	return id, nil
}

// TextsInSince is how many texts the conversation received at or after since, in q.
func TextsInSince(ctx context.Context, q db.DBTX, conversationID uuid.UUID, since time.Time) (int, error) {
	n, err := queries.ConversationTextsInSince(ctx, q, db.ConversationTextsInSinceParams{ConversationID: conversationID, Since: since.UTC()})
	if err != nil {
		return 0, fmt.Errorf("count a conversation's texts: %w", err)
	}
	return int(n), nil
}
