package sms_test

import (
	"fmt"
	"net/url"

	"github.com/slotrecovery/slotrecovery/internal/sms"
	"github.com/slotrecovery/slotrecovery/internal/sms/twilio"
)

func ExampleSegments() {
	fmt.Println(sms.Segments("Haircut today 15:00. Reply YES to book."))
	fmt.Println(sms.IsGSM7("Price: 25€"), sms.Segments("Price: 25€"))
	fmt.Println(sms.IsGSM7("See you 👋"))
	// Output:
	// 1
	// true 1
	// false
}

func ExampleSignature() {
	const token = "12345"
	const hook = "https://slots.example.com/webhooks/twilio/sms"
	form := url.Values{"From": {"+15555550167"}, "To": {"+15555550100"}, "Body": {"YES"}, "MessageSid": {"SM1"}}

	sig := sms.Signature(token, hook, form) // what Twilio sends as X-Twilio-Signature
	v := twilio.NewValidator(token)
	fmt.Println(v.Valid(hook, form, sig))

	form.Set("Body", "NO")
	fmt.Println(v.Valid(hook, form, sig))
	// Output:
	// true
	// false
}
