package stripe_test

import (
	"fmt"
	"time"

	"github.com/slotrecovery/slotrecovery/internal/payments/stripe"
)

// A Stripe webhook handler verifies and decodes the raw body with the
// endpoint secrets (two of them while rotating), then acts on the booking.
func ExampleParseEvent() {
	now := time.Now()
	body := stripe.TestEventPayload("evt_1", stripe.EventCheckoutCompleted,
		"bk_42", "cs_test_1", "pi_test_1", stripe.PaymentPaid, now)
	header := stripe.SignedTestPayload(body, "whsec_new", now)

	ev, err := stripe.ParseEvent(body, header, []string{"whsec_old", "whsec_new"}, 5*time.Minute)
	if err != nil {
		fmt.Println("400:", err)
		return
	}
	// The ledger acts on the kind; the type is Stripe's own word, kept with the event.
	fmt.Println(ev.Kind, ev.BookingID, ev.Type)
	// Output: paid bk_42 checkout.session.completed
}
