package sms

import (
	"errors"
	"fmt"
)

// Reason is why the SMS provider refused or failed to deliver a text, in terms the
// domain can act on. Each provider package maps its own error codes to a Reason; the
// zero value is ReasonOther.
type Reason uint8

const (
	// ReasonOther is a failure that says nothing about the recipient or our account: the
	// provider is down or rate limiting, the network failed, our request was malformed, or
	// the provider's code is one we do not classify. A later attempt may succeed.
	ReasonOther Reason = iota
	// ReasonOptedOut means the recipient opted out at the carrier or provider (replied
	// STOP to our sender): nothing more may be texted to them until they opt back in.
	ReasonOptedOut
	// ReasonUnreachable means the recipient's number cannot receive texts: it is not a
	// valid number, not a mobile, or unknown to its network.
	ReasonUnreachable
	// ReasonAccount means the problem is on our side: our provider account or sender
	// number is not allowed or not able to text this destination (a region not enabled,
	// a sender the destination network refuses, an unregistered sender). The recipient
	// is not at fault and must not be marked unreachable; an operator has to fix the
	// account, so retrying the same text soon does not help.
	ReasonAccount
)

// String returns the reason's stable name, fit for logs and metric labels: "other",
// "opted_out", "unreachable" or "account".
func (r Reason) String() string {
	switch r {
	case ReasonOptedOut:
		return "opted_out"
	case ReasonUnreachable:
		return "unreachable"
	case ReasonAccount:
		return "account"
	}
	return "other"
}

// ParseReason reads a reason's name as String writes it (stored with a delivery
// report); an unknown name is ReasonOther.
func ParseReason(name string) Reason {
	for _, r := range [...]Reason{ReasonOptedOut, ReasonUnreachable, ReasonAccount} {
		if r.String() == name {
			return r
		}
	}
	return ReasonOther
}

// Permanent reports whether r means the recipient cannot receive our texts (opted out or
// unreachable): sending them again cannot help.
func (r Reason) Permanent() bool {
	return r == ReasonOptedOut || r == ReasonUnreachable
}

// AccountIssue says what an operator has to change about a ReasonAccount failure, in
// words that hold for any provider. The provider package maps its own codes to it (the
// Twilio one: twilio.AccountIssueOf), and the dashboard explains each to the shop's
// owner; the zero value, AccountIssueOther, is a problem the code says no more about.
type AccountIssue uint8

const (
	// AccountIssueOther is an account problem the provider's code says no more about.
	AccountIssueOther AccountIssue = iota
	// AccountIssueRegion means the account may not text the destination's country or
	// region until an operator enables it.
	AccountIssueRegion
	// AccountIssueSender means the destination (its country or network) does not take
	// texts from this sender number.
	AccountIssueSender
)

// Error is an error answer from the SMS provider, classified. Reason is what callers
// act on; Code and Status are the provider's own detail, opaque outside the provider
// package and meant only for logs and diagnostics.
type Error struct {
	// Reason classifies the failure.
	Reason Reason
	// Code is the provider's error code (for Twilio, such as 21610); 0 when it gave none.
	Code int
	// Status is the HTTP status of the provider's answer; 0 when the error did not come
	// from an HTTP answer (a delivery report).
	Status int
	// Message is the provider's description. It often quotes the recipient's full phone
	// number, so Error leaves it out: error strings end up in logs.
	Message string
}

// Error describes the error by reason, code and status only; see the Message field for
// why.
func (e *Error) Error() string {
	if e.Status == 0 {
		return fmt.Sprintf("sms provider error %d (%s)", e.Code, e.Reason)
	}
	return fmt.Sprintf("sms provider error %d (%s, http %d)", e.Code, e.Reason, e.Status)
}

// ReasonOf returns the Reason of the *Error in err's chain, or ReasonOther when there is
// none (a timeout, a network error, ErrInvalidMessage, nil).
func ReasonOf(err error) Reason {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ReasonOther
}

// Permanent reports whether err says the recipient cannot receive texts (ReasonOptedOut
// or ReasonUnreachable), so the caller should stop trying that customer; use ReasonOf to
// tell an opt-out from an unreachable number. Everything else is not the customer's
// doing: provider outages, rate limits, timeouts, network errors, our own bad requests,
// and ReasonAccount, which an operator must fix (see AccountProblem).
func Permanent(err error) bool {
	return ReasonOf(err).Permanent()
}

// OptedOut reports whether err says the recipient opted out at the carrier or provider.
func OptedOut(err error) bool {
	return ReasonOf(err) == ReasonOptedOut
}

// AccountProblem reports whether err says our provider account or sender number cannot
// text this destination (ReasonAccount): not the customer's fault, and not something a
// quick retry fixes.
func AccountProblem(err error) bool {
	return ReasonOf(err) == ReasonAccount
}

// Refusal is what a failed send means to the one who sent it: the single reading of a
// send's error that every sender of texts (the waves of offers, the outbox) acts on.
type Refusal struct {
	// Then is what the sender does next.
	Then Then
	// Reason is what the failure says of the recipient or of our account.
	Reason Reason
	// Code is the provider's error code; 0 when it gave none.
	Code int
}

// Then is what a sender does after a failed send.
type Then uint8

const (
	// ThenRetry: nothing went out (refused for now, or the provider could not be
	// reached); sending again later may work.
	ThenRetry Then = iota
	// ThenGiveUp: nothing went out and retrying cannot help (Reason is Permanent or
	// ReasonAccount); what it says of the recipient or of the shop is recorded as every
	// failed text's is.
	ThenGiveUp
	// ThenAssumeSent: the request reached the provider and no answer came back
	// (ErrOutcomeUnknown): the text may have gone out, and a second copy is worse than
	// none.
	ThenAssumeSent
)

// Refused classifies the error of a failed send.
func Refused(err error) Refusal {
	r := Refusal{Reason: ReasonOf(err)}
	var e *Error
	if errors.As(err, &e) {
		r.Code = e.Code
	}
	switch {
	case r.Reason.Permanent(), r.Reason == ReasonAccount:
		r.Then = ThenGiveUp
	case errors.Is(err, ErrOutcomeUnknown):
		r.Then = ThenAssumeSent
	}
	return r
}
