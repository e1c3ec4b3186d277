package sms

import (
	"errors"
	"fmt"
)

// Error is an error answer from Twilio's API.
type Error struct {
	// Code is Twilio's error code, such as 21610 (recipient unsubscribed); see
	// https://www.twilio.com/docs/api/errors.
	Code int
	// Status is the HTTP status of the answer.
	Status int
	// Message is Twilio's description. It often quotes the recipient's full phone
	// number, so Error leaves it out: error strings end up in logs.
	Message string
}

// Error describes the error by code and status only; see the Message field for why.
func (e *Error) Error() string {
	return fmt.Sprintf("twilio error %d (http %d)", e.Code, e.Status)
}

// permanentCodes are Twilio error codes that mean the number cannot receive our texts;
// sending again cannot help. The 3000x codes usually arrive in status callbacks, not
// synchronously, but mean the same if they ever do.
var permanentCodes = map[int]bool{
	21211: true, // invalid 'To' phone number
	21408: true, // permission to send to this region not enabled
	21610: true, // recipient unsubscribed (replied STOP)
	21612: true, // 'To' number cannot be reached by SMS from this 'From'
	21614: true, // 'To' number is not a mobile number
	30003: true, // unreachable destination handset
	30005: true, // unknown destination handset
	30006: true, // landline or unreachable carrier
}

// Permanent reports whether err says the recipient cannot receive texts, so the caller
// should stop trying that customer (and, for 21610, treat them as opted out). Everything
// else (5xx answers, 429 rate limits, timeouts, network errors, bad requests caused by
// our own bugs) is not permanent for the customer and may be retried.
func Permanent(err error) bool {
	var e *Error
	return errors.As(err, &e) && permanentCodes[e.Code]
}
