package replies_test

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/slotrecovery/slotrecovery/internal/replies"
)

// FuzzRead reads any reply a customer (or a carrier) can send: it never panics, always
// answers one of the intents and a set of the supported languages, ignores case and
// surrounding punctuation, honours Twilio's OptOutType before the words, never reads a
// question or a condition as yes, and never lets a request to stop be lost beside other
// words.
func FuzzRead(f *testing.F) {
	for _, seed := range []struct{ body, optOut string }{
		{"YES", ""}, {"yes please!", ""}, {"Y", ""}, {"no thanks", ""}, {"STOP", ""}, {"stop.", ""},
		{"cancel my 3pm", ""}, {"opt out", ""}, {"START", ""}, {"help", ""}, {"YES", "START"},
		{"anything", "STOP"}, {"", ""}, {"   ", "help"}, {"ＹＥＳ", ""}, {"\x00yes", ""}, {"yes\xff", ""},
		{"🙂 yes", ""}, {"don't stop", ""}, {"Sí, por favor 🙏", ""}, {"d’accord", ""},
		{"Liked “A 3pm slot just opened today. Reply YES to book, STOP to opt out”", ""},
		{"👍🏽 to \"slot\"", ""}, {"yes but at 5?", ""}, {"no más", ""}, {"Arrêtez svp", ""},
		{"Stop. Who is this?", ""}, {"e\u0301\u0301\u0301", ""}, {"«»“”\"", ""}, {"take me off your texting list", ""},
	} {
		f.Add(seed.body, seed.optOut)
	}
	f.Fuzz(func(t *testing.T, body, optOut string) {
		got := replies.Read(body, optOut)
		if !slices.Contains(intents, got.Intent) {
			t.Fatalf("Read(%q, %q) = %+v, not an intent", body, optOut, got)
		}
		if got.Languages&^replies.AllLanguages != 0 {
			t.Fatalf("Read(%q, %q) = %+v, not a set of the supported languages", body, optOut, got)
		}
		if again := replies.Read(body, optOut); again != got {
			t.Fatalf("Read(%q, %q) = %+v, then %+v", body, optOut, got, again)
		}
		switch strings.ToUpper(strings.TrimSpace(optOut)) {
		case "STOP":
			if got.Intent != replies.OptOut {
				t.Fatalf("OptOutType STOP read %q as %s", body, got.Intent)
			}
			return
		case "HELP":
			if got.Intent != replies.Help {
				t.Fatalf("OptOutType HELP read %q as %s", body, got.Intent)
			}
			return
		case "START":
			if got.Intent != replies.Yes && got.Intent != replies.OptIn {
				t.Fatalf("OptOutType START read %q as %s", body, got.Intent)
			}
			return
		}
		if utf8.ValidString(body) && strings.ToUpper(strings.ToLower(body)) == strings.ToUpper(body) {
			if lower := replies.Read(strings.ToLower(body), optOut); lower != got {
				t.Fatalf("Read is case-sensitive: %q → %+v, lower-case → %+v", body, got, lower)
			}
		}
		if wrapped := replies.Read("  "+body+"!! ", optOut); wrapped != got {
			t.Fatalf("punctuation around %q changed its reading: %+v → %+v", body, got, wrapped)
		}
		for _, more := range []string{"?", " but at 5?", " ¿a las 5?"} {
			if r := replies.Read(body+more, optOut); r.Intent == replies.Yes {
				t.Fatalf("%q read as yes", body+more)
			}
		}
		if r := replies.Read("Stop texting me. "+body, optOut); r.Intent != replies.OptOut {
			t.Fatalf("%q read as %s", "Stop texting me. "+body, r.Intent)
		}
	})
}
