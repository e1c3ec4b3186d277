package inbox

import (
	"github.com/google/uuid"

	"github.com/slotrecovery/slotrecovery/api"
)

// Event is the data of the message.received event of the text in, which RecordIn
// recorded as r, answered with outcome (api.MessageReceived: the customer by id only).
// A duplicate text gets no event: its first delivery had one.
func (r Recorded) Event(in InboundText, outcome string) api.MessageReceived {
	e := api.MessageReceived{
		ConversationID: r.ConversationID, MessageID: r.MessageID, Phone: in.Phone,
		Body: in.Body, Outcome: outcome, At: in.At.UTC(),
	}
	if in.CustomerID != uuid.Nil {
		id := in.CustomerID
		e.CustomerID = &id
	}
	return e
}
