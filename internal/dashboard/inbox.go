package dashboard

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/slotrecovery/slotrecovery/internal/inbox"
	"github.com/slotrecovery/slotrecovery/internal/phone"
	"github.com/slotrecovery/slotrecovery/internal/problem"
)

// InboxPath is the owner's inbox: the conversations, a thread, the reply form.
const InboxPath = "/dashboard/inbox"

// inboxNotices are the fixed messages a redirect may ask a thread to show.
var inboxNotices = map[string]string{
	"sent":   "Reply queued: it goes out from your shop's number in a moment.",
	"closed": "Conversation closed.",
	"open":   "Conversation reopened.",
}

// inboxFilters are the list's choices, in the order shown.
var inboxFilters = []option{
	{Value: inbox.StatusOpen, Label: "Open"},
	{Value: inbox.StatusClosed, Label: "Closed"},
	{Value: inbox.StatusAll, Label: "All"},
}

type inboxView struct {
	Status  string
	Filters []option
	Rows    []conversationRow
	Next    string // the next page's URL, "" on the last
}

type conversationRow struct {
	ID      uuid.UUID
	Who     string // the customer's name, else the number masked
	Phone   string // masked
	Status  string
	Unread  int
	Last    string // the newest text, shortened
	LastOut bool   // the newest text is the shop's
	When    string
}

type threadView struct {
	ID       uuid.UUID
	Who      string
	Phone    string // masked
	Customer uuid.UUID
	Status   string
	Messages []threadMessage
	// Older is the cursor of the page of texts before these ("" when these are the
	// first); Paged is true when these are not the newest.
	Older  string
	Paged  bool
	Notice string
	// Body is the reply as typed when it was refused, Error why.
	Body  string
	Error string
}

type threadMessage struct {
	Out    bool
	Author string // in words
	Body   string
	When   string
	Status string // of a text out, in words; "" for a text in
}

// who names a conversation's number: the customer's name, else the number masked.
func who(c inbox.Conversation) string {
	if c.CustomerName != "" {
		return c.CustomerName
	}
	return phone.Mask(c.Phone)
}

// when is a text's time as the owner reads it: the shop's local day and time.
func when(t time.Time, loc *time.Location) string {
	if loc == nil {
		loc = time.UTC
	}
	return t.In(loc).Format("Mon 2 Jan 15:04")
}

// preview shortens a text for the list.
func preview(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 80 {
		return string(r[:79]) + "…"
	}
	return s
}

func (d *Dashboard) inboxList(c echo.Context) error {
	s := current(c)
	q := inbox.Query{Status: c.QueryParam("status"), Cursor: c.QueryParam("cursor")}
	switch q.Status {
	case inbox.StatusOpen, inbox.StatusClosed, inbox.StatusAll:
	default:
		q.Status = inbox.StatusOpen
	}
	ctx := c.Request().Context()
	page, err := d.cfg.Inbox.List(ctx, s.Shop.ID, q)
	if p, ok := problem.As(err); ok && p.Kind == problem.Invalid {
		q.Cursor = "" // a stale or edited cursor: start again from the top
		page, err = d.cfg.Inbox.List(ctx, s.Shop.ID, q)
	}
	if err != nil {
		return d.internalError(c, "list conversations", err)
	}
	v := inboxView{Status: q.Status}
	for _, f := range inboxFilters {
		f.Selected = f.Value == q.Status
		v.Filters = append(v.Filters, f)
	}
	for _, cv := range page.Conversations {
		r := conversationRow{ID: cv.ID, Who: who(cv), Phone: phone.Mask(cv.Phone), Status: cv.Status, Unread: cv.Unread,
			When: when(cv.LastActivityAt, s.Shop.Location)}
		if m := cv.LastMessage; m != nil {
			r.Last, r.LastOut = preview(m.Body), m.Direction == inbox.Out
		}
		v.Rows = append(v.Rows, r)
	}
	if page.Next != "" {
		v.Next = InboxPath + "?" + url.Values{"status": {q.Status}, "cursor": {page.Next}}.Encode()
	}
	return d.render(c, http.StatusOK, "Inbox · "+s.Shop.Name, v)
}

// authorWords say who wrote a text.
var authorWords = map[string]string{
	inbox.AuthorCustomer: "Customer",
	inbox.AuthorOwner:    "You",
	inbox.AuthorSystem:   "Automatic",
}

// deliveryWords say where a text out stands.
var deliveryWords = map[string]string{
	inbox.StatusQueued:    "sending",
	inbox.StatusSent:      "sent",
	inbox.StatusDelivered: "delivered",
	inbox.StatusFailed:    "not delivered",
}

// thread shows a conversation, oldest text first, and marks it read: the owner has seen
// what waited.
func (d *Dashboard) thread(c echo.Context) error {
	s := current(c)
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return d.notFound(c)
	}
	ctx := c.Request().Context()
	if _, err := d.cfg.Inbox.MarkRead(ctx, s.Shop.ID, id); errors.Is(err, inbox.ErrNotFound) {
		return d.notFound(c)
	} else if err != nil {
		return d.internalError(c, "mark conversation read", err)
	}
	return d.renderThread(c, http.StatusOK, id, threadView{Notice: inboxNotices[c.QueryParam("notice")]})
}

// renderThread reads the conversation id and renders it with v's notice, reply and
// error.
func (d *Dashboard) renderThread(c echo.Context, status int, id uuid.UUID, v threadView) error {
	s := current(c)
	before := ""
	if c.Request().Method == http.MethodGet {
		before = c.QueryParam("before") // a page of older texts (a thread is read 200 at a time)
	}
	t, err := d.cfg.Inbox.GetBefore(c.Request().Context(), s.Shop.ID, id, before)
	if _, bad := problem.As(err); bad && before != "" {
		before = "" // a cursor not ours (an old bookmark): the newest texts
		t, err = d.cfg.Inbox.Get(c.Request().Context(), s.Shop.ID, id)
	}
	if errors.Is(err, inbox.ErrNotFound) {
		return d.notFound(c)
	}
	if err != nil {
		return d.internalError(c, "get conversation", err)
	}
	v.ID, v.Who, v.Phone, v.Customer, v.Status = t.ID, who(t.Conversation), phone.Mask(t.Phone), t.CustomerID, t.Status
	v.Older, v.Paged = t.Older, before != ""
	for _, m := range t.Messages {
		tm := threadMessage{Out: m.Direction == inbox.Out, Author: authorWords[m.Author], Body: m.Body,
			When: when(m.At, s.Shop.Location)}
		if tm.Out {
			tm.Status = deliveryWords[m.Status]
		}
		v.Messages = append(v.Messages, tm)
	}
	return d.render(c, status, v.Who+" · Inbox · "+s.Shop.Name, v)
}

// reply sends the owner's reply (inbox.Service.Reply: recorded and queued as a text in
// one transaction); a refused one (empty, too long, a number that said STOP) comes back
// with the form as typed and why.
func (d *Dashboard) reply(c echo.Context) error {
	s := current(c)
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return d.notFound(c)
	}
	body := c.FormValue("body")
	_, err = d.cfg.Inbox.Reply(c.Request().Context(), s.Shop.ID, id, body)
	p, isProblem := problem.As(err)
	switch {
	case err == nil:
		d.logger(c).Info("dashboard inbox reply", "shop_id", s.Shop.ID, "conversation_id", id)
		return c.Redirect(http.StatusSeeOther, InboxPath+"/"+id.String()+"?notice=sent")
	case errors.Is(err, inbox.ErrNotFound):
		return d.notFound(c)
	case errors.Is(err, inbox.ErrOptedOut):
		return d.renderThread(c, http.StatusUnprocessableEntity, id, threadView{Body: body,
			Error: "This number replied STOP, so it cannot be texted: nothing was sent. Only its own START, texted to your number, lets you text it again."})
	case isProblem && p.Kind == problem.Invalid:
		return d.renderThread(c, http.StatusUnprocessableEntity, id, threadView{Body: body, Error: friendlySetting(p)})
	case isProblem && p.Kind == problem.Limited:
		// The API's limits, shared: the reply is kept in the form for when it may go.
		c.Response().Header().Set("Retry-After", strconv.FormatInt(int64((p.RetryAfter+time.Second-1)/time.Second), 10))
		return d.renderThread(c, http.StatusTooManyRequests, id, threadView{Body: body, Error: "Not sent: " + p.Message + "."})
	case isProblem && p.Kind == problem.Conflict:
		return d.renderThread(c, http.StatusConflict, id, threadView{Body: body, Error: "Not sent: " + p.Message + "."})
	case isProblem && p.Kind == problem.Unavailable:
		return d.renderThread(c, http.StatusServiceUnavailable, id, threadView{Body: body, Error: "Not sent: " + p.Message + "."})
	default:
		return d.internalError(c, "reply", err)
	}
}

// setConversationStatus closes or reopens a conversation.
func (d *Dashboard) setConversationStatus(c echo.Context) error {
	s := current(c)
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return d.notFound(c)
	}
	status := c.FormValue("status")
	_, err = d.cfg.Inbox.SetStatus(c.Request().Context(), s.Shop.ID, id, status)
	p, isProblem := problem.As(err)
	switch {
	case err == nil:
		return c.Redirect(http.StatusSeeOther, InboxPath+"/"+id.String()+"?notice="+status)
	case errors.Is(err, inbox.ErrNotFound):
		return d.notFound(c)
	case isProblem && p.Kind == problem.Invalid:
		return d.errorPage(c, http.StatusUnprocessableEntity, "Open or close", "Use the conversation's buttons to open or close it.")
	default:
		return d.internalError(c, "set conversation status", err)
	}
}

// unread is the navigation's badge: how many open conversations wait unread. 0 when
// there is no inbox or the count cannot be read (logged: the page still renders).
func (d *Dashboard) unread(c echo.Context, s *signedIn) int {
	if d.cfg.Inbox == nil {
		return 0
	}
	n, err := d.cfg.Inbox.Unread(c.Request().Context(), s.Shop.ID)
	if err != nil {
		d.logger(c).Warn("dashboard unread count", "err", err)
		return 0
	}
	return n
}
