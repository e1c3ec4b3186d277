package inbound_test

import (
	"testing"

	"github.com/slotrecovery/slotrecovery/internal/inbound"
)

func TestParse(t *testing.T) {
	t.Parallel()
	cases := []struct {
		body, optOut string
		want         inbound.Keyword
	}{
		{"YES", "", inbound.KeywordYes},
		{"yes", "", inbound.KeywordYes},
		{"Yes!", "", inbound.KeywordYes},
		{" y ", "", inbound.KeywordYes},
		{"yes please", "", inbound.KeywordYes},
		{"Yeah!!", "", inbound.KeywordYes},
		{"YES", "START", inbound.KeywordYes},
		{"no", "", inbound.KeywordNo},
		{"No thanks.", "", inbound.KeywordNo},
		{"STOP", "", inbound.KeywordStop},
		{"stop.", "", inbound.KeywordStop},
		{"Unsubscribe", "", inbound.KeywordStop},
		{"cancel", "", inbound.KeywordStop},
		{"STOPALL", "", inbound.KeywordStop},
		{"end", "", inbound.KeywordStop},
		{"quit", "", inbound.KeywordStop},
		{"opt out", "", inbound.KeywordStop},
		{"cancel my 3pm please", "", inbound.KeywordCancel}, // a cancellation request (issue 45), not an opt-out
		{"anything", "STOP", inbound.KeywordStop},
		{"start", "", inbound.KeywordStart},
		{"UNSTOP", "", inbound.KeywordStart},
		{"start", "START", inbound.KeywordStart},
		{"help", "", inbound.KeywordHelp},
		{"HELP?", "HELP", inbound.KeywordHelp},
		{"", "", inbound.KeywordUnknown},
		{"what time is it", "", inbound.KeywordUnknown},
		{"🙂", "", inbound.KeywordUnknown},
	}
	for _, c := range cases {
		if got := inbound.Parse(c.body, c.optOut); got != c.want {
			t.Errorf("Parse(%q, %q) = %v, want %v", c.body, c.optOut, got, c.want)
		}
	}
}
