package loadkit

import (
	"cmp"
	"slices"
	"time"
)

// Send is one text the SMS provider's stand-in accepted: its sender, its recipient and
// when it arrived.
type Send struct {
	From, To string
	At       time.Time
}

// PaceReport is how a set of senders' texts kept to their rate.
type PaceReport struct {
	// Senders is how many senders were looked at; Texts how many of their texts.
	Senders, Texts int
	// Over is how many senders sent two texts closer together than their rate allows
	// (less one slack); Gaps how many such pairs there were.
	Over, Gaps int
	// MinGap is the shortest time between two texts of one sender (0 when no sender
	// sent two).
	MinGap time.Duration
	// Worst is the sender of MinGap.
	Worst string
}

// Pace checks that each sender in senders sent its texts at most perSecond a second: the
// time between two consecutive texts of a sender, as the provider saw them arrive, is
// at least 1/perSecond less slack (the scheduling and network jitter between the
// sender's pacer and the provider; a pacer that let two texts through at once shows as
// a gap of about zero). Sends from other senders are ignored.
func Pace(sends []Send, senders map[string]bool, perSecond int, slack time.Duration) PaceReport {
	by := map[string][]time.Time{}
	for _, s := range sends {
		if senders[s.From] {
			by[s.From] = append(by[s.From], s.At)
		}
	}
	interval := time.Second / time.Duration(max(perSecond, 1))
	r := PaceReport{Senders: len(by)}
	for from, ats := range by {
		slices.SortFunc(ats, func(a, b time.Time) int { return a.Compare(b) })
		r.Texts += len(ats)
		over := false
		for i := 1; i < len(ats); i++ {
			gap := ats[i].Sub(ats[i-1])
			if r.Worst == "" || gap < r.MinGap {
				r.MinGap, r.Worst = gap, from
			}
			if gap < interval-slack {
				r.Gaps++
				over = true
			}
		}
		if over {
			r.Over++
		}
	}
	return r
}

// FirstTexts returns, for each sender in since, how long after its moment (the
// declaration of its opening) its first text arrived, in the order of the senders'
// names; a sender with no text is left out (the caller counts the missing).
func FirstTexts(sends []Send, since map[string]time.Time) []time.Duration {
	first := map[string]time.Time{}
	for _, s := range sends {
		if _, ok := since[s.From]; !ok {
			continue
		}
		if at, seen := first[s.From]; !seen || s.At.Before(at) {
			first[s.From] = s.At
		}
	}
	keys := make([]string, 0, len(first))
	for k := range first {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, cmp.Compare[string])
	out := make([]time.Duration, 0, len(keys))
	for _, k := range keys {
		out = append(out, first[k].Sub(since[k]))
	}
	return out
}
