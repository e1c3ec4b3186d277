package phone_test

import (
	"testing"

	"github.com/slotrecovery/slotrecovery/internal/phone"
)

func TestValid(t *testing.T) {
	t.Parallel()
	cases := map[string]bool{
		"+15555550100":      true,
		"+447700900123":     true,
		"+12345678":         true,
		"+123456789012345":  true,
		"+1234567":          false,
		"+1234567890123456": false,
		"15555550100":       false,
		"+05555550100":      false,
		"+1555 555 0100":    false,
		"":                  false,
		"+":                 false,
	}
	for in, want := range cases {
		if got := phone.Valid(in); got != want {
			t.Errorf("Valid(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestMask(t *testing.T) {
	t.Parallel()
	if got := phone.Mask("+15555550167"); got != "+155******67" {
		t.Errorf("Mask = %q", got)
	}
	if got := phone.Mask("+1234"); got != "*****" {
		t.Errorf("Mask short = %q", got)
	}
}
