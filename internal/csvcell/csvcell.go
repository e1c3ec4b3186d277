// Package csvcell keeps the shop's CSV files from running as formulas in a spreadsheet
// (CSV injection): the one rule the dashboard's exports and the figures' file share.
package csvcell

import "strings"

// Safe defuses text a spreadsheet would run as a formula (=, +, -, @, a tab or a
// carriage return first) with a leading apostrophe, since names and services in these
// files are typed by other people. Anything else is returned as it is.
func Safe(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
