package shops

import (
	"strings"

	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/problem"
)

// LanguageField is the name of a shop's or a customer's language wherever owners set it:
// the API's field, the CSV import's column, the dashboard's input. Errors about it name
// it (problem.Error.Field).
const LanguageField = "language"

// LanguageCodes lists the supported codes as messages show them: "en, es, fr".
func LanguageCodes() string {
	codes := make([]string, len(language.All))
	for i, c := range language.All {
		codes[i] = string(c)
	}
	return strings.Join(codes, ", ")
}

// ParseLanguage reads a language as an owner sends it (a JSON string, a CSV cell, a
// form's value): one of the supported codes, in any case and with spaces around it
// ("ES", " fr "), returned in its stored, lower-case form. Anything else, the empty
// string included, is an Invalid problem on the field language that lists the codes: a
// client says "the default" or "the shop's" by leaving the field out (or null), never
// with "".
func ParseLanguage(s string) (language.Code, error) {
	if c, ok := language.Parse(s); ok {
		return c, nil
	}
	return "", problem.Invalidf(LanguageField, "language must be one of %s", LanguageCodes())
}

// CheckLanguage is ParseLanguage for a code a Go caller set, where "" means the default
// (a shop's: language.Default; a customer's: the shop's) and stays "".
func CheckLanguage(c language.Code) (language.Code, error) {
	if c == "" {
		return "", nil
	}
	return ParseLanguage(string(c))
}
