package phone_test

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/slotrecovery/slotrecovery/internal/phone"
)

// e164 is the definition Valid implements (the API's phone rule, README): "+", a
// non-zero digit, 8 to 15 digits in all.
var e164 = regexp.MustCompile(`^\+[1-9][0-9]{7,14}$`)

// FuzzPhone: Valid agrees with the E.164 pattern on any input; Textable passes only
// valid numbers and gives a reason for every refusal; Mask never panics, keeps
// the length, and for a valid number reveals only its first four characters and last
// two.
func FuzzPhone(f *testing.F) {
	for _, s := range []string{
		"+15555550100", "+447700900123", "+12345678", "+123456789012345", "+1234567890123456",
		"+05555550100", "15555550100", "+1555 555 0100", "", "+", "+1", "++15555550100",
		"+１５５５５５５０１００", "+1555555010\x00", "+15555550100\n", "+٣٣٣٣٣٣٣٣٣", "\xff\xfe",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := phone.Valid(s), e164.MatchString(s); got != want {
			t.Fatalf("Valid(%q) = %v, the E.164 pattern says %v", s, got, want)
		}
		if ok, reason := phone.Textable(s); ok != (reason == "") || (ok && !phone.Valid(s)) {
			t.Fatalf("Textable(%q) = %v, %q", s, ok, reason)
		}
		m := phone.Mask(s)
		if len(m) != len(s) {
			t.Fatalf("Mask(%q) = %q: length changed", s, m)
		}
		if !phone.Valid(s) {
			return
		}
		if !utf8.ValidString(m) || m[:4] != s[:4] || m[len(m)-2:] != s[len(s)-2:] ||
			m[4:len(m)-2] != strings.Repeat("*", len(s)-6) {
			t.Fatalf("Mask(%q) = %q", s, m)
		}
	})
}

// FuzzNormalize: whatever it reads, Normalize answers an E.164 number or false, and an
// E.164 number comes back as it is.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"+15555550100", "(555) 555-0100", "07700 900123", "0044 7700 900123", "tel:+1-555", "", "+", "00"} {
		f.Add(s, "1")
		f.Add(s, "44")
	}
	f.Fuzz(func(t *testing.T, s, cc string) {
		got, ok := phone.Normalize(s, cc)
		if ok != phone.Valid(got) || (!ok && got != "") {
			t.Fatalf("Normalize(%q, %q) = %q, %v", s, cc, got, ok)
		}
		if phone.Valid(s) {
			if got != s {
				t.Fatalf("Normalize(%q, %q) = %q: an E.164 number changed", s, cc, got)
			}
		}
	})
}
