package webhooks_test

import (
	"testing"

	"github.com/slotrecovery/slotrecovery/internal/webhooks"
)

// BenchmarkTwiMLAction: a loser's answer with its action URL.
func BenchmarkTwiMLAction(b *testing.B) {
	const msg = "Joe's Barbers: sorry, that slot was just taken. We'll text you when another opens up."
	const action = "https://slots.example.test/webhooks/twilio/answered?for=SM0123456789abcdef0123456789abcdef&outcome=taken#rc=3&rp=all"
	b.ReportAllocs()
	for b.Loop() {
		_ = webhooks.TwiMLAction(msg, action)
	}
}
