package twilio

import (
	"errors"

	"github.com/twilio/twilio-go/client"

	"github.com/slotrecovery/slotrecovery/internal/sms"
)

// reasons classifies Twilio's error codes (https://www.twilio.com/docs/api/errors) by
// whose problem they are. A code that is not here is sms.ReasonOther: not the
// recipient's fault, and perhaps gone on the next attempt. The 3xxxx codes come in
// status callbacks (undelivered, failed) rather than in the API's answer, and mean the
// same wherever they arrive.
//
// The line between the recipient and us matters: a recipient-side reason stops every
// future text to that customer, an account-side one must not (the customer did nothing
// wrong, and the next opening may go out once an operator has fixed the account).
var reasons = map[int]sms.Reason{
	// The recipient opted out.
	21610: sms.ReasonOptedOut, // the recipient replied STOP (or another opt-out word) to this sender

	// The recipient's number cannot receive texts, from any sender.
	21211: sms.ReasonUnreachable, // invalid 'To' number (our numbers are E.164-checked, so the number itself is bad)
	21614: sms.ReasonUnreachable, // 'To' is not a mobile number
	21635: sms.ReasonUnreachable, // 'To' is a landline, in a country where Twilio does not try landlines
	30005: sms.ReasonUnreachable, // unknown destination handset: the number does not exist on its network
	30006: sms.ReasonUnreachable, // landline or unreachable carrier (the carrier part applies to short codes, which we do not send from)

	// Our account or sender number cannot reach this destination: not the customer's
	// fault, so they are not marked unreachable.
	//
	// 21408: the destination's country is disabled in our Messaging Geo Permissions (a
	// new account can text only its home country until others are enabled). It depends
	// on the number's country code only, so it says nothing about the customer; enabling
	// the region in the console fixes it at once.
	21408: sms.ReasonAccount,
	// 21612: Twilio cannot connect this 'To' and 'From' pair: the destination country or
	// network restricts which senders (long codes from abroad, short codes, alphanumeric
	// ids) may text it, or Twilio has no route to that carrier. The same customer is
	// reachable from a suitable sender, so it is our sender's problem, not theirs.
	21612: sms.ReasonAccount,
	21606: sms.ReasonAccount, // 'From' is not an SMS-capable number of this account (or is still porting)
	21608: sms.ReasonAccount, // trial account (or no approved compliance profile): 'To' is not a verified number
	30007: sms.ReasonAccount, // carrier filtered the text as unwanted: our content or sender's reputation
	30032: sms.ReasonAccount, // our toll-free sender is not verified
	30034: sms.ReasonAccount, // our US long code is not registered for A2P 10DLC

	// Left out on purpose (sms.ReasonOther):
	//   30003 unreachable handset: Twilio's page says the phone is usually off, out of
	//         coverage or roaming: temporary, so it must not end a customer for good.
	//   30004 message blocked: the recipient or their carrier may have blocked us, or the
	//         line may be barred; too mixed to blame either side.
	//   30008 unknown error, 30001 queue overflow, 20429 too many requests, 20500/20503
	//         Twilio's own errors: transient.
	//   20003 authentication failed: every send fails alike, and it is fixed by a
	//         deploy, after which a retry succeeds; no single destination is at fault.
}

// accountIssues says, for the account codes that tell more than "account", what an
// operator has to change (see the codes above).
var accountIssues = map[int]sms.AccountIssue{
	21408: sms.AccountIssueRegion,
	21612: sms.AccountIssueSender,
}

// AccountIssueOf says what an operator has to change about a Twilio error code of the
// account kind: sms.AccountIssueOther for a code that says no more (and any other code).
func AccountIssueOf(code int) sms.AccountIssue {
	return accountIssues[code]
}

// reasonFor classifies a Twilio error code; unknown codes (and 0) are sms.ReasonOther.
func reasonFor(code int) sms.Reason {
	return reasons[code] // the zero Reason is ReasonOther
}

// fromTwilio maps twilio-go's error types to *sms.Error; other errors pass through.
func fromTwilio(err error) error {
	var rest *client.TwilioRestError
	if errors.As(err, &rest) {
		return &sms.Error{Reason: reasonFor(rest.Code), Code: rest.Code, Status: rest.Status, Message: rest.Message}
	}
	var v1 *client.RestErrorV1
	if errors.As(err, &v1) {
		return &sms.Error{Reason: reasonFor(v1.Code), Code: v1.Code, Status: v1.HttpStatusCode, Message: v1.Message}
	}
	return err
}
