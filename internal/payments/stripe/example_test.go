package stripe_test

import (
	"fmt"
	"time"

	"github.com/slotrecovery/slotrecovery/internal/payments"
	"github.com/slotrecovery/slotrecovery/internal/payments/stripe"
)

// A Stripe webhook handler verifies and decodes the raw body with the
// endpoint secrets (two of them while rotating), then acts on the booking.
func ExampleParseEvent() {
	now := time.Now()
	body := stripe.TestEventPayload("evt_1", payments.EventCheckoutCompleted,
		"bk_42", "cs_test_1", "pi_test_1", payments.PaymentPaid, now)
	header := stripe.SignedTestPayload(body, "whsec_new", now)

	ev, err := stripe.ParseEvent(body, header, []string{"whsec_old", "whsec_new"}, 5*time.Minute)
	if err != nil {
		fmt.Println("400:", err)
		return
	}
	fmt.Println(ev.Type, ev.BookingID, ev.PaymentStatus)
	// Output: checkout.session.completed bk_42 paid
}
