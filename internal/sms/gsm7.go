package sms

import "strings"

// gsm7Basic is the GSM 03.38 default alphabet (one septet each). The escape character
// (0x1B) is left out: it only introduces extension characters.
const gsm7Basic = "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?" +
	"¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"

// gsm7Extension is the GSM 03.38 extension table: each costs two septets (escape + char).
const gsm7Extension = "\f^{}\\[~]|€"

// Segment sizes: a single message holds 160 septets or 70 UCS-2 units; once split, each
// part loses room to its concatenation header.
const (
	gsm7Single = 160
	gsm7Multi  = 153
	ucs2Single = 70
	ucs2Multi  = 67
)

// IsGSM7 reports whether body can be sent in the GSM-7 alphabet (with its extension
// table). Any other character, an emoji or a curly quote, makes the whole message UCS-2,
// which fits 70 characters per segment instead of 160.
func IsGSM7(body string) bool {
	for _, r := range body {
		if gsm7Cost(r) == 0 {
			return false
		}
	}
	return true
}

// Segments returns how many SMS segments body is sent as (and billed for): GSM-7 fits 160
// septets in one segment and 153 per segment beyond, extension characters such as '€'
// or '{' counting two; otherwise UCS-2 fits 70 UTF-16 units, then 67 per segment, a
// character outside the BMP (most emoji) counting two. A two-unit character is never
// split across segments. An empty body is 0 segments.
func Segments(body string) int {
	if body == "" {
		return 0
	}
	gsm := IsGSM7(body)
	single, multi := ucs2Single, ucs2Multi
	if gsm {
		single, multi = gsm7Single, gsm7Multi
	}
	units := make([]int, 0, len(body))
	total := 0
	for _, r := range body {
		n := utf16Units(r)
		if gsm {
			n = gsm7Cost(r)
		}
		units = append(units, n)
		total += n
	}
	if total <= single {
		return 1
	}
	segments, used := 1, 0
	for _, n := range units {
		if used+n > multi {
			segments++
			used = 0
		}
		used += n
	}
	return segments
}

// gsm7Cost returns the septets r costs in GSM-7, or 0 if r is not in the alphabet.
func gsm7Cost(r rune) int {
	switch {
	case strings.ContainsRune(gsm7Basic, r):
		return 1
	case strings.ContainsRune(gsm7Extension, r):
		return 2
	}
	return 0
}

// utf16Units returns how many UTF-16 code units r takes in UCS-2 (UTF-16) encoding.
func utf16Units(r rune) int {
	if r >= 0x10000 {
		return 2
	}
	return 1
}
