package twilio

import (
	"errors"

	"github.com/twilio/twilio-go/client"

	"github.com/slotrecovery/slotrecovery/internal/sms"
)

// fromTwilio maps twilio-go's error types to *sms.Error; other errors pass through.
func fromTwilio(err error) error {
	var rest *client.TwilioRestError
	if errors.As(err, &rest) {
		return &sms.Error{Code: rest.Code, Status: rest.Status, Message: rest.Message}
	}
	var v1 *client.RestErrorV1
	if errors.As(err, &v1) {
		return &sms.Error{Code: v1.Code, Status: v1.HttpStatusCode, Message: v1.Message}
	}
	return err
}
