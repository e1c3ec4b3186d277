package loadkit

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestPaceFindsSendersOverTheirRate: texts a second apart keep to one a second, even
// with jitter inside the slack; two texts let through together do not, and are counted
// once per pair; senders not asked about are ignored.
func TestPaceFindsSendersOverTheirRate(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	sends := []Send{
		{From: "+1", At: at(0)}, {From: "+1", At: at(1000)}, {From: "+1", At: at(1950)}, // jitter within slack
		{From: "+2", At: at(0)}, {From: "+2", At: at(30)}, {From: "+2", At: at(1100)}, // two at once
		{From: "+3", At: at(500)},
		{From: "+9", At: at(0)}, {From: "+9", At: at(1)}, // not one of ours
	}
	r := Pace(sends, map[string]bool{"+1": true, "+2": true, "+3": true}, 1, 100*time.Millisecond)
	require.Equal(t, PaceReport{Senders: 3, Texts: 7, Over: 1, Gaps: 1, MinGap: 30 * time.Millisecond, Worst: "+2"}, r)

	// Unordered input is the same.
	sends[0], sends[2] = sends[2], sends[0]
	require.Equal(t, r, Pace(sends, map[string]bool{"+1": true, "+2": true, "+3": true}, 1, 100*time.Millisecond))
}

// TestFirstTexts: each sender's first text, counted from its own moment; a sender
// without a text is left out.
func TestFirstTexts(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	sends := []Send{
		{From: "+1", At: t0.Add(3 * time.Second)}, {From: "+1", At: t0.Add(1200 * time.Millisecond)},
		{From: "+2", At: t0.Add(5 * time.Second)},
	}
	since := map[string]time.Time{"+1": t0, "+2": t0.Add(4 * time.Second), "+3": t0}
	require.Equal(t, []time.Duration{1200 * time.Millisecond, time.Second}, FirstTexts(sends, since))
}
