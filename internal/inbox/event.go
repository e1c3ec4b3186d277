package inbox

import (
	"time"

	"github.com/google/uuid"
)

// Received is the subject of a message.received webhook event: an inbound text that
// went to the owner, as the conversation holds it. Its JSON is stored with the event
// (hooks.Record) and outlives the process: rename a Go field freely, never a tag. The
// customer is named by id only (a name would outlive an erasure in every stored copy),
// and the renderer reads no database (hooks.Renderer): a receiver that wants the name
// reads the conversation or the customer through the API.
type Received struct {
	ConversationID uuid.UUID  `json:"conversation_id"`
	MessageID      uuid.UUID  `json:"message_id"`
	Phone          string     `json:"phone"`
	CustomerID     *uuid.UUID `json:"customer_id"`
	Body           string     `json:"body"`
	// Outcome is the inbound outcome the text was answered with (unrecognized, clarify,
	// no_offer, …): the X-Slot-Outcome of the public contract.
	Outcome string    `json:"outcome"`
	At      time.Time `json:"at"`
}

// Event is the subject of the message.received event of the text in, which RecordIn
// recorded as r, answered with outcome. A duplicate text gets no event: its first
// delivery had one.
func (r Recorded) Event(in InboundText, outcome string) Received {
	e := Received{
		ConversationID: r.ConversationID, MessageID: r.MessageID, Phone: in.Phone,
		Body: in.Body, Outcome: outcome, At: in.At.UTC(),
	}
	if in.CustomerID != uuid.Nil {
		id := in.CustomerID
		e.CustomerID = &id
	}
	return e
}
