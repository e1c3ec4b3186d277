// Package sms holds what the server knows about text messages, independent of the
// provider: the Message to send, how a send can fail (Error with its Reason, Permanent,
// OptedOut, AccountProblem, ErrOutcomeUnknown), what the provider reports afterwards
// (DeliveryReport), and counting the segments a body costs. The Twilio sender, its
// error-code table and Twilio's webhook signatures (checking them, and making them for
// tests and `server simulate sms`) live in internal/sms/twilio, the only package that
// imports twilio-go; LogSender stands in for it on a developer's
// machine without credentials. Both have the same Text method, so the packages that send
// texts declare a one-method interface and take either.
//
// The package never logs (except LogSender, whose whole job is to log) and never reads
// the environment.
package sms

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// ErrInvalidMessage is returned, wrapped, when a Message is missing a field or has a
// negative ValidityPeriod. It is a bug in the caller, not a property of the recipient,
// so Permanent reports false for it.
var ErrInvalidMessage = errors.New("sms: invalid message")

// ErrOutcomeUnknown marks a send that failed after the request reached the provider
// with no answer back (a timeout, a dropped connection): the text may have gone out. A caller
// that must never text twice treats it as sent.
var ErrOutcomeUnknown = errors.New("sms: outcome unknown")

// MaxValidityPeriod is the longest ValidityPeriod Twilio accepts (36,000 s); longer
// periods are clamped to it.
const MaxValidityPeriod = 10 * time.Hour

// Message is one outbound text.
type Message struct {
	// From is the sender: a Twilio number in E.164 form, a short code or an
	// alphanumeric sender id. With MessagingServiceSID set it names the shop's number
	// (for logs and pacing) and is not sent: the service picks the number.
	From string
	// MessagingServiceSID, when set, sends the text through that Messaging Service (the
	// shop's own sender) instead of from From.
	MessagingServiceSID string
	// To is the recipient in E.164 form.
	To string
	// Body is the text itself.
	Body string
	// ValidityPeriod, when positive, tells Twilio to drop the message instead of
	// delivering it if it is still queued after that long, so a stale offer is never
	// delivered late. Zero means Twilio's default (10 h). It is sent in whole seconds:
	// rounded up (so 1 ms means 1 s), and clamped to MaxValidityPeriod. A negative value
	// is rejected with ErrInvalidMessage: the message is already stale.
	ValidityPeriod time.Duration
}

// Validate checks what Twilio would reject anyway, before spending a round trip.
func (m Message) Validate() error {
	switch {
	case m.From == "":
		return fmt.Errorf("%w: from is empty", ErrInvalidMessage)
	case m.To == "":
		return fmt.Errorf("%w: to is empty", ErrInvalidMessage)
	case m.Body == "":
		return fmt.Errorf("%w: body is empty", ErrInvalidMessage)
	case m.ValidityPeriod < 0:
		return fmt.Errorf("%w: validity period %s is negative", ErrInvalidMessage, m.ValidityPeriod)
	}
	return nil
}

// ValiditySeconds converts a positive ValidityPeriod to the whole seconds Twilio takes
// (1..36000). Rounding up keeps a sub-second period from becoming 0, which Twilio rejects.
func ValiditySeconds(d time.Duration) int {
	if d >= MaxValidityPeriod {
		return int(MaxValidityPeriod / time.Second)
	}
	return max(1, int(math.Ceil(d.Seconds())))
}
