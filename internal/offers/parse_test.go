package offers_test

import (
	"testing"

	"github.com/slotrecovery/slotrecovery/internal/offers"
)

func TestParse(t *testing.T) {
	t.Parallel()
	cases := []struct {
		body, optOut string
		want         offers.Keyword
	}{
		{"YES", "", offers.KeywordYes},
		{"yes", "", offers.KeywordYes},
		{"Yes!", "", offers.KeywordYes},
		{" y ", "", offers.KeywordYes},
		{"yes please", "", offers.KeywordYes},
		{"Yeah!!", "", offers.KeywordYes},
		{"YES", "START", offers.KeywordYes},
		{"no", "", offers.KeywordNo},
		{"No thanks.", "", offers.KeywordNo},
		{"STOP", "", offers.KeywordStop},
		{"stop.", "", offers.KeywordStop},
		{"Unsubscribe", "", offers.KeywordStop},
		{"cancel", "", offers.KeywordStop},
		{"STOPALL", "", offers.KeywordStop},
		{"end", "", offers.KeywordStop},
		{"quit", "", offers.KeywordStop},
		{"opt out", "", offers.KeywordStop},
		{"cancel my 3pm please", "", offers.KeywordUnknown},
		{"anything", "STOP", offers.KeywordStop},
		{"start", "", offers.KeywordStart},
		{"UNSTOP", "", offers.KeywordStart},
		{"start", "START", offers.KeywordStart},
		{"help", "", offers.KeywordHelp},
		{"HELP?", "HELP", offers.KeywordHelp},
		{"", "", offers.KeywordUnknown},
		{"what time is it", "", offers.KeywordUnknown},
		{"🙂", "", offers.KeywordUnknown},
	}
	for _, c := range cases {
		if got := offers.Parse(c.body, c.optOut); got != c.want {
			t.Errorf("Parse(%q, %q) = %v, want %v", c.body, c.optOut, got, c.want)
		}
	}
}

func TestMoney(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"usd": "$45.00", "gbp": "£45.00", "eur": "€45.00", "sek": "45.00 SEK", "jpy": "4500 JPY"} {
		if got := offers.Money(4500, in); got != want {
			t.Errorf("Money(4500, %s) = %q, want %q", in, got, want)
		}
	}
}
