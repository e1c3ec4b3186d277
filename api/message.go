package api

import (
	"time"

	"github.com/google/uuid"
)

// MessageReceived is the data of a message.received webhook event: an inbound text that
// went to the owner's inbox, as the conversation holds it. The customer is named by id
// only (a name would outlive an erasure in every stored copy): a receiver that wants
// the name reads GET /api/conversations/{conversation_id} or GET
// /api/customers/{customer_id}.
type MessageReceived struct {
	ConversationID uuid.UUID `json:"conversation_id"`
	MessageID      uuid.UUID `json:"message_id"`
	Phone          string    `json:"phone"`
	// CustomerID is null for a number that is not a customer's.
	CustomerID *uuid.UUID `json:"customer_id"`
	Body       string     `json:"body"`
	// Outcome is the inbound outcome the text was answered with (unrecognized, clarify,
	// no_offer, …): the X-Slot-Outcome of the public contract.
	Outcome string    `json:"outcome"`
	At      time.Time `json:"at"`
}
