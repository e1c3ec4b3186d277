package stripe

import (
	"bytes"
	"encoding/json"

	stripego "github.com/stripe/stripe-go/v76"
)

// storedEvent is the payload an event is stored with: what decodeEvent read of it, and
// nothing else (an allow-list by construction). Left out, whatever it holds, is
// everything the server does not read: what Checkout collected of a customer (name,
// email, phone, address, billing details, an expanded payment intent's receipt email),
// and an account's owner (names, date of birth, home address, identity documents, bank
// accounts, the IP that accepted Stripe's terms, in data.object and in
// data.previous_attributes). A customer's erasure could not find those in a stored
// event, and stored events are kept for RETENTION_DAYS. A field decodeEvent starts to
// read is kept by adding it to its object's struct.
//
// Its JSON is stored: the tags are its names, whatever the Go fields are called.
type storedEvent struct {
	ID         string          `json:"id"`
	Object     string          `json:"object"`
	Type       string          `json:"type"`
	Created    int64           `json:"created"`
	APIVersion string          `json:"api_version"`
	Livemode   bool            `json:"livemode"`
	Account    string          `json:"account,omitempty"`
	Data       storedEventData `json:"data"`
}

// storedEventData is the event's data: its object as read (sessionObject,
// paymentIntentObject, accountObject, or otherObject for every other type), or null.
type storedEventData struct {
	Object any `json:"object"`
}

// otherObject is what an event of another type keeps of its object (account.application.*
// and the types the server ignores): its id and kind, for an operator reading the row.
type otherObject struct {
	ID     string `json:"id"`
	Object string `json:"object"`
}

// storedPayload encodes what decodeEvent read of se, with object as data.object (nil:
// none was read).
func storedPayload(se stripego.Event, object any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // data, not a page
	err := enc.Encode(storedEvent{ID: se.ID, Object: "event", Type: string(se.Type), Created: se.Created,
		APIVersion: se.APIVersion, Livemode: se.Livemode, Account: se.Account, Data: storedEventData{Object: object}})
	if err != nil {
		// Only strings and numbers decoded before: it cannot fail.
		return []byte(`{}`)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
