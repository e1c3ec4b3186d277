package twilio

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"

	"github.com/slotrecovery/slotrecovery/internal/sms"
)

// ErrInvalidStatusCallback is returned, wrapped, by ParseStatusCallback for a form that
// is not a usable status callback.
var ErrInvalidStatusCallback = errors.New("twilio: invalid status callback")

// maxSIDLen bounds MessageSid. Twilio's are 34 characters; the inbound handler takes up
// to 64 as well.
const maxSIDLen = 64

// statuses maps Twilio's MessageStatus words to sms's. "receiving" and "received" are
// inbound statuses and "partially_delivered" is for group MMS: none can describe one of
// our texts, so they are sms.DeliveryUnknown like any word Twilio may add later.
var statuses = map[string]sms.DeliveryStatus{
	"queued":      sms.DeliveryQueued,
	"accepted":    sms.DeliveryAccepted,
	"scheduled":   sms.DeliveryScheduled,
	"sending":     sms.DeliverySending,
	"sent":        sms.DeliverySent,
	"delivered":   sms.DeliveryDelivered,
	"read":        sms.DeliveryRead,
	"undelivered": sms.DeliveryUndelivered,
	"failed":      sms.DeliveryFailed,
	"canceled":    sms.DeliveryCanceled,
}

// ParseStatusCallback decodes the form of a Twilio message status callback (the request
// Twilio makes to a message's StatusCallback URL) into an sms.DeliveryReport. Check the
// request's signature first: this only reads fields.
//
// MessageSid (or the older SmsSid) and MessageStatus (or SmsStatus) are required;
// ErrorCode, when present and not 0, must be a non-negative number and is classified
// with the same table as errors from the API. An unknown status is not an error: it
// becomes sms.DeliveryUnknown. Only each field's first value counts, as in the signature.
func ParseStatusCallback(form url.Values) (sms.DeliveryReport, error) {
	r := sms.DeliveryReport{
		MessageID: first(form, "MessageSid", "SmsSid"),
		To:        form.Get("To"),
		From:      form.Get("From"),
	}
	if r.MessageID == "" {
		return sms.DeliveryReport{}, fmt.Errorf("%w: MessageSid is missing", ErrInvalidStatusCallback)
	}
	if len(r.MessageID) > maxSIDLen {
		return sms.DeliveryReport{}, fmt.Errorf("%w: MessageSid is longer than %d bytes", ErrInvalidStatusCallback, maxSIDLen)
	}
	status := first(form, "MessageStatus", "SmsStatus")
	if status == "" {
		return sms.DeliveryReport{}, fmt.Errorf("%w: MessageStatus is missing", ErrInvalidStatusCallback)
	}
	r.Status = statuses[status]
	if r.Status == "" {
		r.Status = sms.DeliveryUnknown
	}
	if s := form.Get("ErrorCode"); s != "" {
		code, err := strconv.Atoi(s)
		if err != nil || code < 0 || code > 999_999 {
			return sms.DeliveryReport{}, fmt.Errorf("%w: ErrorCode is not an error code", ErrInvalidStatusCallback)
		}
		r.ErrorCode = code
		r.Reason = reasonFor(code)
	}
	return r, nil
}

// first returns the first non-empty value among the named fields.
func first(form url.Values, names ...string) string {
	for _, n := range names {
		if v := form.Get(n); v != "" {
			return v
		}
	}
	return ""
}
