package sms_test

import (
	"fmt"

	"github.com/slotrecovery/slotrecovery/internal/sms"
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
