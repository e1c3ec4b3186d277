package inbound_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/slotrecovery/slotrecovery/internal/inbound"
)

// FuzzParse reads any reply a customer (or a carrier) can send: it never panics, always
// answers one of the keywords, ignores case, surrounding spaces and exclamation, and
// honours Twilio's OptOutType before the words. A question mark may make a yes unsure
// (clarify), never the other way round: a yes with a question never books. (That a
// sentence asking to stop is an opt-out, and one using "stop" otherwise is not, is
// internal/replies' corpus test.)
func FuzzParse(f *testing.F) {
	for _, seed := range []struct{ body, optOut string }{
		{"YES", ""}, {"yes please!", ""}, {"Y", ""}, {"no thanks", ""}, {"STOP", ""}, {"stop.", ""},
		{"cancel my 3pm", ""}, {"opt out", ""}, {"START", ""}, {"help", ""}, {"YES", "START"},
		{"anything", "STOP"}, {"", ""}, {"   ", "help"}, {"ＹＥＳ", ""}, {"\x00yes", ""}, {"yes\xff", ""},
		{"🙂 yes", ""}, {"don't stop", ""}, {"Sí", ""}, {"Liked “Joe's: Cut Sat 15:00”", ""},
	} {
		f.Add(seed.body, seed.optOut)
	}
	f.Fuzz(func(t *testing.T, body, optOut string) {
		k := inbound.Parse(body, optOut)
		if k < inbound.KeywordUnknown || k > inbound.KeywordCancel {
			t.Fatalf("Parse(%q, %q) = %d, not a keyword", body, optOut, k)
		}
		if utf8.ValidString(body) {
			if got := inbound.Parse(strings.ToLower(body), optOut); got != k && strings.ToUpper(strings.ToLower(body)) == strings.ToUpper(body) {
				t.Fatalf("Parse is case-sensitive: %q → %d, lower-case → %d", body, k, got)
			}
			if got := inbound.Parse("  "+body+"! ", optOut); got != k {
				t.Fatalf("exclamation and spaces around %q changed its keyword: %d → %d", body, k, got)
			}
			if strings.TrimSpace(optOut) == "" {
				if got := inbound.Parse(body+"?", optOut); got == inbound.KeywordYes {
					t.Fatalf("a question books: %q read as yes", body+"?")
				}
			}
		}
		if strings.EqualFold(strings.TrimSpace(optOut), "STOP") && k != inbound.KeywordStop {
			t.Fatalf("OptOutType STOP read as %d", k)
		}
	})
}
