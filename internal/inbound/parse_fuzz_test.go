package inbound_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/slotrecovery/slotrecovery/internal/inbound"
)

// FuzzParse reads any reply a customer (or a carrier) can send: it never panics, always
// answers one of the keywords, ignores case and surrounding punctuation, and honours
// Twilio's OptOutType before the words. A STOP is only ever the whole message (or
// Twilio's word), so a sentence that merely contains "stop" is never an opt-out.
func FuzzParse(f *testing.F) {
	for _, seed := range []struct{ body, optOut string }{
		{"YES", ""}, {"yes please!", ""}, {"Y", ""}, {"no thanks", ""}, {"STOP", ""}, {"stop.", ""},
		{"cancel my 3pm", ""}, {"opt out", ""}, {"START", ""}, {"help", ""}, {"YES", "START"},
		{"anything", "STOP"}, {"", ""}, {"   ", "help"}, {"ＹＥＳ", ""}, {"\x00yes", ""}, {"yes\xff", ""},
		{"🙂 yes", ""}, {"don't stop", ""},
	} {
		f.Add(seed.body, seed.optOut)
	}
	f.Fuzz(func(t *testing.T, body, optOut string) {
		k := inbound.Parse(body, optOut)
		if k < inbound.KeywordUnknown || k > inbound.KeywordHelp {
			t.Fatalf("Parse(%q, %q) = %d, not a keyword", body, optOut, k)
		}
		if utf8.ValidString(body) {
			if got := inbound.Parse(strings.ToLower(body), optOut); got != k && strings.ToUpper(strings.ToLower(body)) == strings.ToUpper(body) {
				t.Fatalf("Parse is case-sensitive: %q → %d, lower-case → %d", body, k, got)
			}
			if got := inbound.Parse("  "+body+"!? ", optOut); got != k {
				t.Fatalf("punctuation around %q changed its keyword: %d → %d", body, k, got)
			}
		}
		switch strings.ToUpper(strings.TrimSpace(optOut)) {
		case "STOP":
			if k != inbound.KeywordStop {
				t.Fatalf("OptOutType STOP read as %d", k)
			}
		case "":
			if k == inbound.KeywordStop {
				words := strings.Fields(body)
				if len(words) > 2 {
					t.Fatalf("a sentence of %d words read as STOP: %q", len(words), body)
				}
			}
		}
	})
}
