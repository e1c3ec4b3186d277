package phone

import "strings"

// twoDigitCodes are the country calling codes of two digits (ITU-T E.164 list). The
// codes are a prefix code: 1 and 7 have one digit, these two, every other three, so a
// number's code is read off its first digits without a numbering plan.
var twoDigitCodes = map[string]bool{
	"20": true, "27": true, "30": true, "31": true, "32": true, "33": true, "34": true, "36": true,
	"39": true, "40": true, "41": true, "43": true, "44": true, "45": true, "46": true, "47": true,
	"48": true, "49": true, "51": true, "52": true, "53": true, "54": true, "55": true, "56": true,
	"57": true, "58": true, "60": true, "61": true, "62": true, "63": true, "64": true, "65": true,
	"66": true, "81": true, "82": true, "84": true, "86": true, "90": true, "91": true, "92": true,
	"93": true, "94": true, "95": true, "98": true,
}

// CallingCode returns the country calling code of an E.164 number, without the plus
// sign: "1" for +15555550100, "44" for +447700900123, "353" for +353851234567. It
// returns "" when s is not in E.164 form.
func CallingCode(s string) string {
	if !Valid(s) {
		return ""
	}
	d := s[1:]
	switch {
	case d[0] == '1' || d[0] == '7':
		return d[:1]
	case twoDigitCodes[d[:2]]:
		return d[:2]
	default:
		return d[:3]
	}
}

// Normalize reads a phone number as people and booking systems write it and returns it
// in E.164 form, or false when it cannot. Spaces, dashes, dots, slashes, parentheses and
// a "tel:" prefix are ignored. A number that starts with "+" or "00" is international;
// any other is national to the country whose calling code is cc (as CallingCode returns
// it; "" refuses national numbers): its trunk prefix "0" is dropped, and for cc "1" a
// leading "1" of an 11-digit number, so "(555) 555-0100" with cc "1" and "07700 900123"
// with cc "44" become +15555550100 and +447700900123. The result is checked for E.164
// form only, never against a numbering plan (Valid).
func Normalize(s, cc string) (string, bool) {
	s = strings.TrimSpace(s)
	if len(s) > 40 {
		return "", false
	}
	s = strings.TrimPrefix(strings.TrimPrefix(s, "tel:"), "TEL:")
	international := false
	switch {
	case strings.HasPrefix(s, "+"):
		international, s = true, s[1:]
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case strings.ContainsRune(" -./()\u00a0", r):
		default:
			return "", false
		}
	}
	d := b.String()
	switch {
	case international:
	case strings.HasPrefix(d, "00"):
		d = d[2:]
	case cc == "" || !Valid("+"+cc+"00000000"):
		return "", false
	case cc == "1" && len(d) == 11 && d[0] == '1':
		d = cc + d[1:]
	default:
		d = cc + strings.TrimPrefix(d, "0")
	}
	if !Valid("+" + d) {
		return "", false
	}
	return "+" + d, true
}
