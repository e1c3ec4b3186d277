package csvcell_test

import (
	"testing"

	"github.com/slotrecovery/slotrecovery/internal/csvcell"
)

func TestSafe(t *testing.T) {
	for in, want := range map[string]string{
		"": "", "Cut": "Cut", "=HYPERLINK(\"x\")": "'=HYPERLINK(\"x\")", "+1+1": "'+1+1", "-2": "'-2",
		"@SUM(A1)": "'@SUM(A1)", "\tx": "'\tx", "\rx": "'\rx", "a=b": "a=b", "O'Neil": "O'Neil",
	} {
		if got := csvcell.Safe(in); got != want {
			t.Errorf("Safe(%q) = %q, want %q", in, got, want)
		}
	}
}
