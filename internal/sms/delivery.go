package sms

// DeliveryStatus is where an outbound text stands, as the provider reports it after the
// send. The values are the stable lower-case names below; a provider package maps its own
// words to them and anything it does not know to DeliveryUnknown.
type DeliveryStatus string

// The statuses a delivery report may carry. Queued, accepted, scheduled and sending are
// on the way; sent means handed to the carrier; delivered and read are confirmed
// deliveries; undelivered and failed are final failures; canceled means the text was
// withdrawn before it went out.
const (
	DeliveryQueued      DeliveryStatus = "queued"
	DeliveryAccepted    DeliveryStatus = "accepted"
	DeliveryScheduled   DeliveryStatus = "scheduled"
	DeliverySending     DeliveryStatus = "sending"
	DeliverySent        DeliveryStatus = "sent"
	DeliveryDelivered   DeliveryStatus = "delivered"
	DeliveryRead        DeliveryStatus = "read"
	DeliveryUndelivered DeliveryStatus = "undelivered"
	DeliveryFailed      DeliveryStatus = "failed"
	DeliveryCanceled    DeliveryStatus = "canceled"
	// DeliveryUnknown stands for a status the provider package does not know; it keeps
	// the set of values bounded (they become metric labels).
	DeliveryUnknown DeliveryStatus = "unknown"
)

// Final reports whether no later report is expected to change s: the text was
// delivered (or read), failed, or was canceled.
func (s DeliveryStatus) Final() bool {
	switch s {
	case DeliveryDelivered, DeliveryRead, DeliveryUndelivered, DeliveryFailed, DeliveryCanceled:
		return true
	}
	return false
}

// Failed reports whether s says the text did not reach the recipient and never will.
func (s DeliveryStatus) Failed() bool {
	return s == DeliveryUndelivered || s == DeliveryFailed
}

// DeliveryReport is the provider's word, after the send, on one outbound text. Reports
// may arrive more than once, out of order, and before the sender has stored the id the
// send returned: whoever records them must cope with all three.
type DeliveryReport struct {
	// MessageID is the provider's id of the text, the one the sender's Text returned.
	MessageID string
	// Status is where the text stands.
	Status DeliveryStatus
	// Reason classifies ErrorCode; ReasonOther when there is none.
	Reason Reason
	// ErrorCode is the provider's error code, 0 when it gave none. Like Error.Code it is
	// opaque detail for logs: act on Reason.
	ErrorCode int
	// To is the recipient and From the sender, as the provider reports them. They are
	// full phone numbers: mask them before logging.
	To, From string
}

// Err returns the failure the report describes as an *Error (so Permanent, OptedOut and
// AccountProblem apply to it), or nil when Status is not a failure.
func (r DeliveryReport) Err() error {
	if !r.Status.Failed() {
		return nil
	}
	return &Error{Reason: r.Reason, Code: r.ErrorCode}
}
