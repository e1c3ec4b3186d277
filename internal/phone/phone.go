// Package phone checks and masks phone numbers in E.164 form. Valid checks the form only
// ("+" and 8 to 15 digits), never a numbering plan, so test numbers such as +1555… pass;
// Textable adds the few hand-written shape rules that keep texts from premium, toll-free
// and non-mobile ranges of the countries the product serves.
package phone

import "strings"

// Valid reports whether s is in E.164 form: a plus sign, a non-zero first digit, and
// 8 to 15 digits in all.
func Valid(s string) bool {
	if len(s) < 9 || len(s) > 16 || s[0] != '+' || s[1] == '0' {
		return false
	}
	for _, c := range s[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Mask hides all but the country-code-ish first digits and the last two, so logs and
// owners' screens can tell numbers apart without revealing them: "+1555****67".
func Mask(s string) string {
	if len(s) <= 6 {
		return strings.Repeat("*", len(s))
	}
	return s[:4] + strings.Repeat("*", len(s)-6) + s[len(s)-2:]
}
