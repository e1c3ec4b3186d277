package inbound

import (
	"strings"
	"unicode"
)

// Keyword is what a reply asks for.
type Keyword int

// Keywords a reply can carry.
const (
	KeywordUnknown Keyword = iota
	KeywordYes
	KeywordNo
	KeywordStop
	KeywordStart
	KeywordHelp
)

var (
	yesWords = set("YES", "Y", "YEP", "YEAH", "YEA", "YA", "YUP")
	noWords  = set("NO", "N", "NOPE", "NAH", "PASS")
	// Carrier and Twilio opt-out words; they count only as the whole message, as Twilio
	// matches them, so "cancel my 3pm" is not an opt-out.
	stopWords  = set("STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT", "REVOKE", "OPTOUT")
	startWords = set("START", "UNSTOP")
	helpWords  = set("HELP", "INFO")
)

// Parse reads a reply's keyword, case- and punctuation-insensitively ("yes", "Yes!",
// "Y", "yes please"). optOutType is Twilio's OptOutType field (STOP, START, HELP), sent
// by Messaging Services with Advanced Opt-Out; a YES that Twilio counted as an opt-in
// (START) is still a claim.
func Parse(body, optOutType string) Keyword {
	words := strings.FieldsFunc(strings.ToUpper(body), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	whole := strings.Join(words, "")
	switch strings.ToUpper(strings.TrimSpace(optOutType)) {
	case "STOP":
		return KeywordStop
	case "HELP":
		return KeywordHelp
	case "START":
		if len(words) > 0 && yesWords[words[0]] {
			return KeywordYes
		}
		return KeywordStart
	}
	if len(words) == 0 {
		return KeywordUnknown
	}
	switch {
	case stopWords[whole] || (len(words) == 2 && whole == "OPTOUT"):
		return KeywordStop
	case startWords[whole]:
		return KeywordStart
	case helpWords[whole]:
		return KeywordHelp
	case yesWords[words[0]]:
		return KeywordYes
	case noWords[words[0]]:
		return KeywordNo
	}
	return KeywordUnknown
}

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}
