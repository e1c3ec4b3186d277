package shops

import (
	"fmt"
	"strconv"
)

// ParseClock reads "HH:MM" (24-hour, 00:00 to 24:00) as minutes after midnight;
// "24:00" is only meaningful as a window's end.
func ParseClock(s string) (int, bool) {
	if len(s) != 5 || s[2] != ':' {
		return 0, false
	}
	h, err1 := strconv.Atoi(s[:2])
	m, err2 := strconv.Atoi(s[3:])
	if err1 != nil || err2 != nil || s[0] == '+' || s[0] == '-' || s[3] == '+' || s[3] == '-' {
		return 0, false
	}
	if h == 24 && m == 0 {
		return EndOfDay, true
	}
	if h < 0 || h > 23 || m < 0 || m > 59 {
		return 0, false
	}
	return h*60 + m, true
}

// EndOfDay is "24:00" in minutes: a window's end at midnight, never a time of day.
const EndOfDay = 24 * 60

// FormatClock writes minutes after midnight as "HH:MM".
func FormatClock(minutes int) string {
	return fmt.Sprintf("%02d:%02d", minutes/60, minutes%60)
}
