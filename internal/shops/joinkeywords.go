package shops

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/replies"
)

// MaxJoinKeywords is how many join keywords of its own a shop may have (the CHECK of
// migration 0081).
const MaxJoinKeywords = 5

// CheckJoinKeywords checks a shop's own join keywords and returns them as stored: each
// trimmed and upper-cased, 2 to 20 letters or digits, each once, at most
// MaxJoinKeywords. A word that a reply already means something by (YES, NO, STOP,
// START, HELP, PAUSE, RESUME, CANCEL and their Spanish and French words: anything
// internal/replies reads as other than unknown) is refused: a text of it must keep
// meaning what it means.
func CheckJoinKeywords(words []string) ([]string, error) {
	out := []string{}
	for _, w := range words {
		w = strings.ToUpper(strings.TrimSpace(w))
		if n := utf8.RuneCountInString(w); n < 2 || n > 20 || strings.IndexFunc(w, func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsDigit(r)
		}) >= 0 {
			return nil, problem.Invalidf("join_keywords", "each join keyword must be 2 to 20 letters or digits, such as JOIN or CUTS")
		}
		if r := replies.Read(w, ""); r.Intent != replies.Unknown {
			return nil, problem.Invalidf("join_keywords", "%s already means %s in a reply: choose another join keyword", w, r.Intent)
		}
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	if len(out) > MaxJoinKeywords {
		return nil, problem.Invalidf("join_keywords", "at most %d join keywords", MaxJoinKeywords)
	}
	return out, nil
}
