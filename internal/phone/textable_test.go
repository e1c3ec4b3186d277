package phone_test

import (
	"testing"

	"github.com/slotrecovery/slotrecovery/internal/phone"
)

// TestTextable: the numbers whose shape says a text to them would go to a premium,
// toll-free or non-mobile range are refused, with why; the rest pass, including the
// +1555 test numbers used everywhere.
func TestTextable(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, number, reason string // reason "" means textable
	}{
		{"US test number", "+15555550100", ""},
		{"US 555-01XX fictional line kept", "+15555550123", ""},
		{"US ordinary", "+12125551234", ""},
		{"Canada", "+14165551234", ""},
		{"US area code starts with 0", "+10125551234", phone.NotTextableMalformed},
		{"US area code starts with 1", "+11234567890", phone.NotTextableMalformed},
		{"US exchange starts with 0", "+12120551234", phone.NotTextableMalformed},
		{"US exchange starts with 1", "+12121551234", phone.NotTextableMalformed},
		{"US N11 area code", "+14115551234", phone.NotTextableMalformed},
		{"US 911 area code", "+19115551234", phone.NotTextableMalformed},
		{"US N11 exchange is a number", "+12124111234", ""},
		{"US too short", "+1212555123", phone.NotTextableMalformed},
		{"US too long", "+121255512345", phone.NotTextableMalformed},
		{"US premium 900", "+19005551234", phone.NotTextablePremium},
		{"US premium 976 exchange", "+12129761234", phone.NotTextablePremium},
		{"US toll-free 800", "+18005551234", phone.NotTextableTollFree},
		{"US toll-free 833", "+18335551234", phone.NotTextableTollFree},
		{"US toll-free 844", "+18445551234", phone.NotTextableTollFree},
		{"US toll-free 855", "+18555551234", phone.NotTextableTollFree},
		{"US toll-free 866", "+18665551234", phone.NotTextableTollFree},
		{"US toll-free 877", "+18775551234", phone.NotTextableTollFree},
		{"US toll-free 888", "+18885551234", phone.NotTextableTollFree},
		{"US 822 not toll-free yet", "+18225551234", ""},
		{"UK mobile 077", "+447700900123", ""},
		{"UK mobile 071", "+447123456789", ""},
		{"UK mobile 075", "+447512345678", ""},
		{"UK mobile 079", "+447912345678", ""},
		{"UK personal 070", "+447012345678", phone.NotTextableNotMobile},
		{"UK pager 076", "+447612345678", phone.NotTextableNotMobile},
		{"UK premium 09", "+449012345678", phone.NotTextablePremium},
		{"UK London landline", "+442079460000", phone.NotTextableNotMobile},
		{"UK mobile too short", "+44770090012", phone.NotTextableNotMobile},
		{"France mobile 06", "+33612345678", ""},
		{"France mobile 07", "+33712345678", ""},
		{"France landline 01", "+33112345678", phone.NotTextableNotMobile},
		{"France premium 08", "+33899123456", phone.NotTextableNotMobile},
		{"France wrong length", "+3361234567", phone.NotTextableMalformed},
		{"Spain mobile 6", "+34612345678", ""},
		{"Spain mobile 71", "+34712345678", ""},
		{"Spain 70 refused", "+34702345678", phone.NotTextableNotMobile},
		{"Spain landline 9", "+34912345678", phone.NotTextableNotMobile},
		{"Spain premium 80", "+34803123456", phone.NotTextableNotMobile},
		{"Spain wrong length", "+346123456789", phone.NotTextableMalformed},
		{"Mexico ten digits", "+525512345678", ""},
		{"Mexico old mobile 1 prefix", "+5215512345678", phone.NotTextableMalformed},
		{"Mexico short", "+52551234567", phone.NotTextableMalformed},
		{"other country allowed", "+353851234567", ""},
		{"Germany allowed", "+4915112345678", ""},
		{"not E.164", "5555550100", phone.NotTextableMalformed},
		{"empty", "", phone.NotTextableMalformed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ok, reason := phone.Textable(c.number)
			if ok != (c.reason == "") || reason != c.reason {
				t.Errorf("Textable(%q) = %v, %q; want %v, %q", c.number, ok, reason, c.reason == "", c.reason)
			}
		})
	}
}
