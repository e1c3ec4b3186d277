// Package language names the languages the product texts customers in: a shop's (its
// default) and a customer's own. It is a leaf: the texts, the shops and their
// customers, and the reading of replies all speak of a language through Code.
package language

import "strings"

// Code is a supported language's ISO 639-1 code, as stored and as the API shows it.
type Code string

// The supported languages.
const (
	English Code = "en"
	Spanish Code = "es"
	French  Code = "fr"
)

// Default is the language of a shop that names none.
const Default = English

// All lists the supported languages, in the order forms and documents show them.
var All = []Code{English, Spanish, French}

// Parse reads a code as a client sends it ("es", " FR "), and reports whether it is a
// supported language.
func Parse(s string) (Code, bool) {
	c := Code(strings.ToLower(strings.TrimSpace(s)))
	for _, l := range All {
		if c == l {
			return c, true
		}
	}
	return "", false
}

// Or is c, or fallback when c is empty (a customer whose language is the shop's).
func (c Code) Or(fallback Code) Code {
	if c == "" {
		return fallback
	}
	return c
}
