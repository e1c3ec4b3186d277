package api

import (
	"time"

	"github.com/google/uuid"
)

// Conversation is a conversation as the list and a thread show it. Fields may be
// added, never renamed or removed.
type Conversation struct {
	ID    uuid.UUID `json:"id"`
	Phone string    `json:"phone"`
	// Customer is the shop's customer with the number, null when none is known.
	Customer *ConversationCustomer `json:"customer"`
	Status   string                `json:"status"`
	Unread   int                   `json:"unread"`
	// LastMessage is the newest text kept, null when none is (the retention purged them).
	LastMessage    *LastMessage `json:"last_message"`
	LastActivityAt time.Time    `json:"last_activity_at"`
	CreatedAt      time.Time    `json:"created_at"`
}

// ConversationCustomer is the shop's customer with a conversation's number.
type ConversationCustomer struct {
	ID   uuid.UUID `json:"id"`
	Name string    `json:"name"`
}

// LastMessage is the newest text of a conversation.
type LastMessage struct {
	Direction string    `json:"direction"`
	Body      string    `json:"body"`
	At        time.Time `json:"at"`
}

// Message is one text of a conversation.
type Message struct {
	ID        uuid.UUID `json:"id"`
	Direction string    `json:"direction"`
	Author    string    `json:"author"`
	Body      string    `json:"body"`
	At        time.Time `json:"at"`
	Status    string    `json:"status"`
}

// Thread is a conversation with its texts (GET /api/conversations/{id}).
type Thread struct {
	Conversation
	// Messages are oldest first: the newest ThreadPage texts, or those before the
	// request's before.
	Messages []Message `json:"messages"`
	// OlderCursor is the before of the page of older texts; nil when these are the
	// first.
	OlderCursor *string `json:"older_cursor"`
}

// ConversationList is a page of the owner's conversations.
type ConversationList struct {
	Conversations []Conversation `json:"conversations"`
	// NextCursor is null on the last page.
	NextCursor *string `json:"next_cursor"`
}
