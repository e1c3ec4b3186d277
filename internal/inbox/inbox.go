package inbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slotrecovery/slotrecovery/internal/cursor"
	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/pgcode"
	"github.com/slotrecovery/slotrecovery/internal/pgvalue"
	"github.com/slotrecovery/slotrecovery/internal/problem"
)

// Conversation statuses.
const (
	StatusOpen   = "open"   // a text in it waits for a person
	StatusClosed = "closed" // nothing waits
)

// Page sizes of the conversation list, as the customer list's.
const (
	DefaultPage = 50
	MaxPage     = 200
)

// MaxReply is the longest owner's reply, in characters (four segments of GSM-7 text).
const MaxReply = 640

// Errors the Service returns.
var (
	// ErrNotFound means the shop has no such conversation.
	ErrNotFound = problem.New(problem.NotFound, "conversation_not_found", "no such conversation")
	// ErrOptedOut refuses a reply to a number that said STOP (or whose customer the shop
	// erased): nothing is recorded or sent.
	ErrOptedOut = problem.New(problem.Invalid, "opted_out", "this number replied STOP; it can be texted again only after its own START")
)

// OptOuts tells whether a shop must not text a number: it said STOP (a customer or
// not), its carrier refused a text as opted out, or the shop erased the customer who had
// it. internal/shops keeps those (by keyed hash); the server passes its answer.
type OptOuts interface {
	OptedOut(ctx context.Context, shopID uuid.UUID, number string) (bool, error)
}

// Config configures the Service; zero fields mean the defaults.
type Config struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Rules are the shop's own rules an owner's reply must pass (nil: none).
	Rules ReplyRules
	// Logger is for what the Service handles itself; nil discards.
	Logger *slog.Logger
}

// ReplyRules are the rules of the shop's own that an owner's reply passes before it is
// queued, which inbox cannot read itself (the shop's quiet hours, its sender's
// registration and the reply limits sit above it): CheckReply returns nil, or the
// problem that refuses the reply now. lastIn is when the number last wrote (the Unix
// epoch: never).
type ReplyRules interface {
	CheckReply(ctx context.Context, shopID, conversationID uuid.UUID, lastIn, now time.Time) error
}

// Service is the owner's side of the inbox: the list, a thread, reading, opening and
// closing, and replying.
type Service struct {
	pool    *pgxpool.Pool
	queue   jobs.Inserter
	optOuts OptOuts
	cfg     Config
	log     *slog.Logger
}

// New returns a Service on pool; replies are queued through queue (the server's River
// client) after optOuts says the number may be texted.
func New(pool *pgxpool.Pool, queue jobs.Inserter, optOuts OptOuts, cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{pool: pool, queue: queue, optOuts: optOuts, cfg: cfg, log: cfg.Logger}
}

// Conversation is a shop's conversation with a number, as the owner's list shows it.
type Conversation struct {
	ID     uuid.UUID
	ShopID uuid.UUID
	Phone  string
	// CustomerID is the shop's customer with the number; uuid.Nil when none is known.
	CustomerID   uuid.UUID
	CustomerName string
	Status       string
	// Unread counts the texts waiting for a person since the owner last read it.
	Unread         int
	LastActivityAt time.Time
	// LastMessage is the newest text kept; nil when none is (the retention purged them).
	LastMessage *Preview
	CreatedAt   time.Time
}

// Preview is a conversation's newest text.
type Preview struct {
	Direction string
	Body      string
	At        time.Time
}

// Message is one text of a conversation.
type Message struct {
	ID             uuid.UUID
	ConversationID uuid.UUID
	Direction      string // In or Out
	Author         string // AuthorCustomer, AuthorOwner or AuthorSystem
	Body           string
	At             time.Time
	Status         string // StatusReceived for an inbound text; StatusQueued … StatusFailed
}

// Thread is a conversation with its texts, oldest first.
type Thread struct {
	Conversation
	// Messages are the page's texts, oldest first.
	Messages []Message
	// Older is the cursor of the page of texts before these (GetBefore); "" when these
	// are the first.
	Older string
}

// Query selects a page of a shop's conversations.
type Query struct {
	// Status is StatusOpen, StatusClosed or "all"; "" means StatusOpen.
	Status string
	// Limit is the page size, 1 to MaxPage; 0 means DefaultPage.
	Limit int
	// Cursor is the Next of the previous page; "" starts at the newest.
	Cursor string
}

// StatusAll lists conversations in every status.
const StatusAll = "all"

// Page is one page of conversations, newest activity first; Next is the cursor of the
// following page, "" on the last. A conversation with activity after the first page was
// read moves to the top: a client paging on does not see it again (nor then).
type Page struct {
	Conversations []Conversation
	Next          string
}

// List lists shopID's conversations, a page at a time.
func (s *Service) List(ctx context.Context, shopID uuid.UUID, q Query) (Page, error) {
	limit := q.Limit
	if limit == 0 {
		limit = DefaultPage
	}
	if limit < 1 || limit > MaxPage {
		return Page{}, problem.Invalidf("limit", "limit must be a whole number from 1 to %d", MaxPage)
	}
	status := q.Status
	if status == "" {
		status = StatusOpen
	}
	if status != StatusOpen && status != StatusClosed && status != StatusAll {
		return Page{}, problem.Invalidf("status", "status must be open, closed or all")
	}
	beforeAt, beforeID, err := decodeCursor(q.Cursor)
	if err != nil {
		return Page{}, err
	}
	var rows []db.ConversationGetRow
	if status == StatusAll {
		all, err := queries.ConversationListAll(ctx, s.pool, db.ConversationListAllParams{
			ShopID: shopID, BeforeActivity: beforeAt, BeforeID: beforeID, MaxRows: int32(limit + 1),
		})
		if err != nil {
			return Page{}, fmt.Errorf("list conversations: %w", err)
		}
		for _, r := range all {
			rows = append(rows, db.ConversationGetRow(r))
		}
	} else {
		some, err := queries.ConversationList(ctx, s.pool, db.ConversationListParams{
			ShopID: shopID, Status: status, BeforeActivity: beforeAt, BeforeID: beforeID, MaxRows: int32(limit + 1),
		})
		if err != nil {
			return Page{}, fmt.Errorf("list conversations: %w", err)
		}
		for _, r := range some {
			rows = append(rows, db.ConversationGetRow(r))
		}
	}
	var page Page
	if len(rows) > limit {
		rows = rows[:limit]
		last := rows[limit-1]
		page.Next = encodeCursor(last.LastActivityAt, last.ID)
	}
	page.Conversations = make([]Conversation, len(rows))
	for i, r := range rows {
		page.Conversations[i] = fromRow(r)
	}
	return page, nil
}

// ThreadPage is how many texts a thread shows at once: a number that has texted the
// shop for years is read a page at a time, never all in one answer.
const ThreadPage = 200

// Get returns shopID's conversation id with its newest texts (ThreadPage of them),
// oldest first; another shop's is ErrNotFound. Thread.Older reads the page before.
func (s *Service) Get(ctx context.Context, shopID, id uuid.UUID) (Thread, error) {
	return s.GetBefore(ctx, shopID, id, "")
}

// GetBefore is Get for the page of texts before the cursor older (a Thread.Older);
// "" is the newest page. A cursor this server did not give out is a problem.Invalid.
func (s *Service) GetBefore(ctx context.Context, shopID, id uuid.UUID, older string) (Thread, error) {
	at, ord, before := pageStart.at, int16(0), pageStart.id
	if older != "" {
		var err error
		if at, ord, before, err = cursor.DecodeRanked(older); err != nil {
			return Thread{}, errBadOlder
		}
	}
	// One snapshot for the conversation and its texts: the preview and the thread agree.
	var t Thread
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		c, err := s.conversation(ctx, tx, shopID, id)
		if err != nil {
			return err
		}
		rows, err := queries.ConversationTextPage(ctx, tx, db.ConversationTextPageParams{ConversationID: id,
			BeforeAt: at, BeforeOrd: ord, BeforeID: before, MaxRows: ThreadPage + 1})
		if err != nil {
			return fmt.Errorf("list conversation %s texts: %w", id, err)
		}
		if len(rows) > ThreadPage {
			rows = rows[:ThreadPage]
			oldest := rows[ThreadPage-1]
			t.Older = cursor.EncodeRanked(oldest.At, oldest.Ord, oldest.ID)
		}
		t.Conversation = c
		t.Messages = make([]Message, len(rows))
		for i, r := range rows {
			t.Messages[len(rows)-1-i] = messageFromRow(r) // newest first read, oldest first shown
		}
		return nil
	})
	if err != nil {
		return Thread{}, err
	}
	return t, nil
}

// conversation reads shopID's conversation id in q.
func (s *Service) conversation(ctx context.Context, q db.DBTX, shopID, id uuid.UUID) (Conversation, error) {
	row, err := queries.ConversationGet(ctx, q, db.ConversationGetParams{ID: id, ShopID: shopID})
	if errors.Is(err, pgx.ErrNoRows) {
		return Conversation{}, ErrNotFound
	}
	if err != nil {
		return Conversation{}, fmt.Errorf("get conversation %s: %w", id, err)
	}
	return fromRow(row), nil
}

// Unread counts shopID's open conversations with texts the owner has not read: what
// waits for a person (a closed conversation waits for no one, read or not).
func (s *Service) Unread(ctx context.Context, shopID uuid.UUID) (int, error) {
	n, err := queries.ConversationUnreadCount(ctx, s.pool, shopID)
	if err != nil {
		return 0, fmt.Errorf("count unread conversations: %w", err)
	}
	return int(n), nil
}

// MarkRead records that the owner read shopID's conversation id (unread 0) and returns
// it.
func (s *Service) MarkRead(ctx context.Context, shopID, id uuid.UUID) (Conversation, error) {
	n, err := queries.ConversationMarkRead(ctx, s.pool, db.ConversationMarkReadParams{ID: id, ShopID: shopID})
	if err != nil {
		return Conversation{}, fmt.Errorf("mark conversation %s read: %w", id, err)
	}
	if n == 0 {
		return Conversation{}, ErrNotFound
	}
	return s.conversation(ctx, s.pool, shopID, id)
}

// SetStatus opens or closes shopID's conversation id at the owner's word and returns it.
func (s *Service) SetStatus(ctx context.Context, shopID, id uuid.UUID, status string) (Conversation, error) {
	if status != StatusOpen && status != StatusClosed {
		return Conversation{}, problem.Invalidf("status", "status must be open or closed")
	}
	n, err := queries.ConversationSetStatus(ctx, s.pool, db.ConversationSetStatusParams{ID: id, ShopID: shopID, Status: status})
	if err != nil {
		return Conversation{}, fmt.Errorf("set conversation %s %s: %w", id, status, err)
	}
	if n == 0 {
		return Conversation{}, ErrNotFound
	}
	return s.conversation(ctx, s.pool, shopID, id)
}

// Reply records the owner's reply in shopID's conversation id and queues it as a text
// from the shop's number (jobs.Text, keyed by the message), in one transaction: the text
// goes out through the outbox, with the same sender and pacing as every transactional
// text, if and only if the reply is recorded. The body is 1 to MaxReply characters (not
// only spaces). A number that opted out is refused (ErrOptedOut) and nothing is recorded;
// the outbox checks again when it sends, so a STOP that arrives meanwhile still stops the
// text.
func (s *Service) Reply(ctx context.Context, shopID, id uuid.UUID, body string) (Message, error) {
	if err := checkReply(body); err != nil {
		return Message{}, err
	}
	to, err := queries.ConversationReplyTo(ctx, s.pool, db.ConversationReplyToParams{ID: id, ShopID: shopID})
	if errors.Is(err, pgx.ErrNoRows) {
		return Message{}, ErrNotFound
	}
	if err != nil {
		return Message{}, fmt.Errorf("get conversation %s: %w", id, err)
	}
	out, err := s.optOuts.OptedOut(ctx, shopID, to.Phone)
	if err != nil {
		return Message{}, fmt.Errorf("check the number's opt-out: %w", err)
	}
	if out {
		return Message{}, ErrOptedOut
	}
	now := s.cfg.Now().UTC()
	if s.cfg.Rules != nil {
		if err := s.cfg.Rules.CheckReply(ctx, shopID, id, to.LastInAt, now); err != nil {
			return Message{}, err
		}
	}
	mid, err := newMessageID()
	if err != nil {
		return Message{}, err
	}
	key := "inbox_reply:" + mid.String()
	var m Message
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// The conversation's row first: locked until the commit, so an erasure waits
		// for the reply (and then deletes it and its job) rather than crossing it.
		n, err := queries.ConversationTouch(ctx, tx, db.ConversationTouchParams{ID: id, ShopID: shopID, At: now})
		if err != nil {
			return fmt.Errorf("touch conversation %s: %w", id, err)
		}
		if n == 0 {
			return ErrNotFound // erased since it was read
		}
		row, err := queries.ConversationMessageInsertReply(ctx, tx, db.ConversationMessageInsertReplyParams{
			ID: mid, ConversationID: id, ShopID: shopID, Body: body, At: now, SendKey: pgvalue.TextOrNull(key),
		})
		if err != nil {
			return fmt.Errorf("record reply: %w", err)
		}
		// Recorded above as the owner's, with its own id.
		if _, err := Queue(ctx, tx, s.queue, Outgoing{Key: key, ShopID: shopID, From: to.SmsNumber, To: to.Phone, Body: body, Shown: ShownAlready, ByOwner: true}); err != nil {
			return fmt.Errorf("enqueue reply: %w", err)
		}
		m = messageFromRow(db.ConversationText{ID: row.ID, ConversationID: row.ConversationID, Direction: row.Direction,
			Author: row.Author, Body: row.Body, At: row.At, Status: row.Status})
		return nil
	})
	if err != nil {
		if pgcode.ForeignKey(err) { // the conversation went
			return Message{}, ErrNotFound
		}
		return Message{}, err
	}
	s.log.InfoContext(ctx, "owner reply queued", "shop_id", shopID, "conversation_id", id, "message_id", m.ID)
	return m, nil
}

// checkReply checks an owner's reply: UTF-8, 1 to MaxReply characters, not only spaces.
func checkReply(body string) error {
	if !utf8.ValidString(body) {
		return problem.Invalidf("body", "body must be UTF-8 text")
	}
	if strings.TrimSpace(body) == "" {
		return problem.Invalidf("body", "body must not be empty")
	}
	if n := utf8.RuneCountInString(body); n > MaxReply {
		return problem.Invalidf("body", "body must be at most %d characters (it has %d)", MaxReply, n)
	}
	return nil
}

func fromRow(r db.ConversationGetRow) Conversation {
	c := Conversation{
		ID: r.ID, ShopID: r.ShopID, Phone: r.Phone, CustomerID: r.CustomerID.UUID, CustomerName: r.CustomerName,
		Status: r.Status, Unread: int(r.Unread), LastActivityAt: r.LastActivityAt.UTC(), CreatedAt: r.CreatedAt.UTC(),
	}
	if r.HasLast {
		c.LastMessage = &Preview{Direction: r.LastDirection, Body: r.LastBody, At: r.LastAt.UTC()}
	}
	return c
}

func messageFromRow(r db.ConversationText) Message {
	return Message{
		ID: r.ID, ConversationID: r.ConversationID, Direction: r.Direction, Author: r.Author,
		Body: r.Body, At: r.At.UTC(), Status: r.Status,
	}
}

// The cursor is opaque to clients: base64 of "<unix nanoseconds>.<id>" of the last row
// of the page, as the customer list's.
func encodeCursor(t time.Time, id uuid.UUID) string { return cursor.Encode(t, id) }

var (
	errBadCursor = problem.Invalidf("cursor", "cursor is not one this server gave out; start again without it")
	errBadOlder  = problem.Invalidf("before", "before is not a cursor this server gave out; start again without it")
)

// pageStart is where the first page starts: before every row (no activity is this late,
// and no id is above the greatest).
var pageStart = struct {
	at time.Time
	id uuid.UUID
}{time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC), uuid.Max}

func decodeCursor(c string) (time.Time, uuid.UUID, error) {
	if c == "" {
		return pageStart.at, pageStart.id, nil
	}
	t, id, err := cursor.Decode(c)
	if err != nil {
		return time.Time{}, uuid.Nil, errBadCursor
	}
	return t, id, nil
}
