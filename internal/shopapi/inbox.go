package shopapi

import (
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/slotrecovery/slotrecovery/api"
	"github.com/slotrecovery/slotrecovery/internal/inbox"
	"github.com/slotrecovery/slotrecovery/internal/problem"
)

// The owner's inbox: the shop's conversations with the numbers that text it,
// a thread, the owner's reply, reading, opening and closing. internal/inbox decides;
// these handlers translate.

func newConversationJSON(c inbox.Conversation) api.Conversation {
	out := api.Conversation{ID: c.ID, Phone: c.Phone, Status: c.Status, Unread: c.Unread,
		LastActivityAt: c.LastActivityAt.UTC(), CreatedAt: c.CreatedAt.UTC()}
	if c.CustomerID != uuid.Nil {
		out.Customer = &api.ConversationCustomer{ID: c.CustomerID, Name: c.CustomerName}
	}
	if m := c.LastMessage; m != nil {
		out.LastMessage = &api.LastMessage{Direction: m.Direction, Body: m.Body, At: m.At.UTC()}
	}
	return out
}

func newMessageJSON(m inbox.Message) api.Message {
	return api.Message{ID: m.ID, Direction: m.Direction, Author: m.Author, Body: m.Body, At: m.At.UTC(), Status: m.Status}
}

// conversationID reads the :id path parameter; a malformed one names no conversation
// (404).
func conversationID(c echo.Context) (uuid.UUID, error) {
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return uuid.Nil, inbox.ErrNotFound
	}
	return id, nil
}

func (h *Handlers) listConversations(c echo.Context) error {
	q := inbox.Query{Status: c.QueryParam("status"), Cursor: c.QueryParam("cursor")}
	n, err := queryLimit(c, inbox.MaxPage)
	if err != nil {
		return err
	}
	q.Limit = n
	page, err := h.Inbox.List(c.Request().Context(), shopOf(c).ID, q)
	if err != nil {
		return err
	}
	out := api.ConversationList{Conversations: make([]api.Conversation, 0, len(page.Conversations))}
	for _, cv := range page.Conversations {
		out.Conversations = append(out.Conversations, newConversationJSON(cv))
	}
	if page.Next != "" {
		out.NextCursor = &page.Next
	}
	return c.JSON(http.StatusOK, out)
}

func (h *Handlers) getConversation(c echo.Context) error {
	id, err := conversationID(c)
	if err != nil {
		return err
	}
	t, err := h.Inbox.GetBefore(c.Request().Context(), shopOf(c).ID, id, c.QueryParam("before"))
	if err != nil {
		return err
	}
	out := api.Thread{Conversation: newConversationJSON(t.Conversation), Messages: make([]api.Message, 0, len(t.Messages))}
	for _, m := range t.Messages {
		out.Messages = append(out.Messages, newMessageJSON(m))
	}
	if t.Older != "" {
		out.OlderCursor = &t.Older
	}
	return c.JSON(http.StatusOK, out)
}

type replyRequest struct {
	Body *string `json:"body"`
}

// replyConversation records the owner's reply and queues it as a text from the shop's
// number (inbox.Service.Reply): 201 with the message, queued.
func (h *Handlers) replyConversation(c echo.Context) error {
	id, err := conversationID(c)
	if err != nil {
		return err
	}
	var req replyRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	if req.Body == nil {
		return problem.Invalidf("body", "body is required: the text to send, 1 to %d characters", inbox.MaxReply)
	}
	m, err := h.Inbox.Reply(c.Request().Context(), shopOf(c).ID, id, *req.Body)
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, "/api/conversations/"+id.String())
	return c.JSON(http.StatusCreated, newMessageJSON(m))
}

func (h *Handlers) readConversation(c echo.Context) error {
	id, err := conversationID(c)
	if err != nil {
		return err
	}
	cv, err := h.Inbox.MarkRead(c.Request().Context(), shopOf(c).ID, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newConversationJSON(cv))
}

type conversationPatchRequest struct {
	Status optional[string] `json:"status"`
}

func (h *Handlers) patchConversation(c echo.Context) error {
	id, err := conversationID(c)
	if err != nil {
		return err
	}
	var req conversationPatchRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	status, err := ptr(req.Status, "status")
	if err != nil {
		return err
	}
	ctx, shop := c.Request().Context(), shopOf(c).ID
	if status == nil { // nothing to change: the conversation as it is
		t, err := h.Inbox.Get(ctx, shop, id)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, newConversationJSON(t.Conversation))
	}
	cv, err := h.Inbox.SetStatus(ctx, shop, id, *status)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newConversationJSON(cv))
}
