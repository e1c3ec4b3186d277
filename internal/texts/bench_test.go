package texts_test

import (
	"testing"
	"time"

	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/texts"
)

// BenchmarkAnswers: what composing the answers of a storm costs (most are "taken"; the
// winners' carry a day and time).
func BenchmarkAnswers(b *testing.B) {
	shop := shops.Shop{Name: "Joe's Barbers", Location: time.UTC, Currency: "usd"}
	at := time.Date(2026, 11, 28, 15, 0, 0, 0, time.UTC)
	for _, l := range language.All {
		w := texts.In(l)
		b.Run("taken/"+string(l), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = w.Taken(&shop)
			}
		})
		b.Run("link/"+string(l), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = w.Link(&shop, "Haircut", at, "https://pay.example/x", 31*time.Minute)
			}
		})
	}
}
