package phone

// Why Textable refuses a number.
const (
	// NotTextableMalformed: not in E.164 form, or not a number the country's plan has
	// (a NANP area code or exchange that starts with 0 or 1, an N11 area code, a
	// national number of the wrong length).
	NotTextableMalformed = "malformed"
	// NotTextablePremium: a premium-rate range (NANP 900 and 976, UK 09).
	NotTextablePremium = "premium"
	// NotTextableTollFree: a NANP toll-free area code (800, 833, 844, 855, 866, 877, 888).
	NotTextableTollFree = "toll_free"
	// NotTextableNotMobile: a range that is not mobile where the plan says so by shape
	// (UK, France, Spain: landlines, personal numbers, pagers).
	NotTextableNotMobile = "not_mobile"
)

// Textable reports whether an E.164 number may be sent a text the shop pays for, as far
// as its shape tells, and why not. The rules are written by hand for the countries the
// product serves, small on purpose (no numbering-plan library: its metadata costs the
// server megabytes):
//
//   - NANP (+1): ten digits; the area code and the exchange start with 2-9; no N11 area
//     code; no toll-free area code (800, 833, 844, 855, 866, 877, 888); no premium 900
//     area code or 976 exchange. The fictional 555-01XX lines are allowed: tests and
//     demos use +1555555xxxx everywhere.
//   - UK (+44): mobiles only, 7[1-57-9] and eight more digits (070 personal numbers and
//     076 pagers refused, 09 premium refused, landlines refused).
//   - France (+33): mobiles only, 6 or 7 and eight more digits.
//   - Spain (+34): mobiles only, 6 or 7[1-9], nine digits in all.
//   - Mexico (+52): any ten-digit national number (Mexico has had no mobile prefix
//     since 2019).
//
// Any other calling code is allowed when the number is in E.164 form.
func Textable(e164 string) (ok bool, reason string) {
	if !Valid(e164) {
		return false, NotTextableMalformed
	}
	cc := CallingCode(e164)
	n := e164[1+len(cc):] // the national significant number
	switch cc {
	case "1":
		return nanp(n)
	case "44":
		switch {
		case len(n) == 10 && n[0] == '7' && n[1] != '0' && n[1] != '6':
			return true, ""
		case n[0] == '9':
			return false, NotTextablePremium
		default:
			return false, NotTextableNotMobile
		}
	case "33":
		if len(n) != 9 {
			return false, NotTextableMalformed
		}
		if n[0] != '6' && n[0] != '7' {
			return false, NotTextableNotMobile
		}
	case "34":
		if len(n) != 9 {
			return false, NotTextableMalformed
		}
		if n[0] != '6' && (n[0] != '7' || n[1] == '0') {
			return false, NotTextableNotMobile
		}
	case "52":
		if len(n) != 10 {
			return false, NotTextableMalformed
		}
	}
	return true, ""
}

// nanp applies the North American Numbering Plan's shape to n, the ten digits after +1.
func nanp(n string) (bool, string) {
	if len(n) != 10 {
		return false, NotTextableMalformed
	}
	area, exchange := n[:3], n[3:6]
	switch {
	case area[0] < '2' || exchange[0] < '2':
		return false, NotTextableMalformed
	case area[1] == '1' && area[2] == '1': // N11: service codes (911, 411), no numbers
		return false, NotTextableMalformed
	case area == "900" || exchange == "976":
		return false, NotTextablePremium
	}
	switch area {
	case "800", "833", "844", "855", "866", "877", "888":
		return false, NotTextableTollFree
	}
	return true, ""
}
