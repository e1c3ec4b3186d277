package phone_test

import (
	"testing"

	"github.com/slotrecovery/slotrecovery/internal/phone"
)

func TestCallingCode(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"+15555550100":   "1",
		"+79161234567":   "7",
		"+447700900123":  "44",
		"+33612345678":   "33",
		"+353851234567":  "353",
		"+8613812345678": "86",
		"+2348012345678": "234",
		"15555550100":    "",
		"+1555":          "",
	}
	for in, want := range cases {
		if got := phone.CallingCode(in); got != want {
			t.Errorf("CallingCode(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNormalize(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in, cc, want string
	}{
		{"e164 as it is", "+15555550100", "44", "+15555550100"},
		{"international with spaces", "+44 7700 900123", "1", "+447700900123"},
		{"00 prefix", "0044 7700 900123", "1", "+447700900123"},
		{"US national with punctuation", "(555) 555-0100", "1", "+15555550100"},
		{"US national with the leading 1", "1-555-555-0100", "1", "+15555550100"},
		{"UK national with trunk 0", "07700 900123", "44", "+447700900123"},
		{"French national with dots", "06.12.34.56.78", "33", "+33612345678"},
		{"tel URI", "tel:+1-555-555-0100", "", "+15555550100"},
		{"national without a country", "5555550100", "", ""},
		{"letters", "555-CALL-NOW", "1", ""},
		{"extension", "+15555550100 x12", "1", ""},
		{"too short", "12345", "1", ""},
		{"empty", "", "1", ""},
		{"bad default code", "5555550100", "0", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, ok := phone.Normalize(c.in, c.cc)
			if got != c.want || ok != (c.want != "") {
				t.Errorf("Normalize(%q, %q) = %q, %v; want %q", c.in, c.cc, got, ok, c.want)
			}
		})
	}
}
