package twilio_test

import (
	"fmt"
	"net/url"

	"github.com/slotrecovery/slotrecovery/internal/sms/twilio"
)

func ExampleSignature() {
	const token = "12345"
	const hook = "https://slots.example.com/webhooks/twilio/sms"
	form := url.Values{"From": {"+15555550167"}, "To": {"+15555550100"}, "Body": {"YES"}, "MessageSid": {"SM1"}}

	sig := twilio.Signature(token, hook, form) // what Twilio sends as X-Twilio-Signature
	v := twilio.NewValidator(token)
	fmt.Println(v.Valid(hook, form, sig))

	form.Set("Body", "NO")
	fmt.Println(v.Valid(hook, form, sig))
	// Output:
	// true
	// false
}
