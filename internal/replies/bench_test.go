package replies_test

import (
	"strings"
	"testing"

	"github.com/slotrecovery/slotrecovery/internal/replies"
)

// BenchmarkRead reads replies of the shapes that arrive most, one at a time, and the
// whole corpus in turn. Read runs on every inbound text, so it should not allocate.
func BenchmarkRead(b *testing.B) {
	for _, c := range []struct{ name, body string }{
		{"yes", "YES"},
		{"yes_please_emoji", "Yes please!! 👍🏽"},
		{"spanish_accents", "Sí, por favor 🙏"},
		{"clarify_question", "yes but can it be 4pm?"},
		{"optout_sentence", "Please stop texting me, I never signed up for this"},
		{"reaction", "Liked “Hi Sam, a 3pm slot just opened today at Bloom Salon. Reply YES to book it or NO to pass.”"},
		{"long_600_bytes", strings.Repeat("I'm running a little late today, sorry about that. ", 12)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			replies.Read(c.body, "") // compile the rules outside the timing
			for b.Loop() {
				replies.Read(c.body, "")
			}
		})
	}
	b.Run("corpus", func(b *testing.B) {
		var bodies []string
		for _, c := range loadCorpusB(b) {
			bodies = append(bodies, c.reply)
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			replies.Read(bodies[i%len(bodies)], "")
			i++
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				replies.Read("Yes please!! 👍🏽", "")
			}
		})
	})
}

// TestReadDoesNotAllocate keeps Read free of allocations once its buffers have grown.
func TestReadDoesNotAllocate(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("measures allocations, which the race detector's sync.Pool makes")
	}
	for _, body := range []string{"YES", "Sí, por favor 🙏", "Liked “Reply YES to book”", "stop texting me"} {
		replies.Read(body, "")
		if n := testing.AllocsPerRun(100, func() { replies.Read(body, "START") }); n > 0 {
			t.Errorf("Read(%q) allocates %.1f times", body, n)
		}
	}
}
