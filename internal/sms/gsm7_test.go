package sms_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/sms"
)

func TestSegments(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		body string
		want int
	}{
		{name: "empty", body: "", want: 0},
		{name: "short", body: "Reply YES to book.", want: 1},
		{name: "160 plain", body: strings.Repeat("a", 160), want: 1},
		{name: "161 plain", body: strings.Repeat("a", 161), want: 2},
		{name: "306 plain", body: strings.Repeat("a", 306), want: 2},
		{name: "307 plain", body: strings.Repeat("a", 307), want: 3},
		{name: "euro counts two", body: strings.Repeat("a", 158) + "€", want: 1},
		{name: "euro tips over", body: strings.Repeat("a", 159) + "€", want: 2},
		{name: "braces count two", body: strings.Repeat("{", 80), want: 1},
		{name: "braces tip over", body: strings.Repeat("{", 80) + "a", want: 2},
		{name: "escape pair not split", body: strings.Repeat("a", 152) + "€" + strings.Repeat("a", 152), want: 3},
		{name: "gsm accents stay gsm", body: strings.Repeat("é", 160), want: 1},
		{name: "emoji switches to ucs2", body: "Slot free 🎉", want: 1},
		{name: "70 ucs2", body: "ą" + strings.Repeat("a", 69), want: 1},
		{name: "71 ucs2", body: "ą" + strings.Repeat("a", 70), want: 2},
		{name: "134 ucs2", body: "ą" + strings.Repeat("a", 133), want: 2},
		{name: "135 ucs2", body: "ą" + strings.Repeat("a", 134), want: 3},
		{name: "emoji is two units", body: strings.Repeat("a", 68) + "🎉", want: 1},
		{name: "emoji tips over", body: strings.Repeat("a", 69) + "🎉", want: 2},
		{name: "surrogate pair not split", body: strings.Repeat("a", 66) + "🎉" + strings.Repeat("a", 66), want: 3},
		{name: "curly quote is ucs2", body: strings.Repeat("a", 70) + "’", want: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, sms.Segments(tc.body))
		})
	}
}

func TestIsGSM7(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		body string
		want bool
	}{
		{name: "empty", body: "", want: true},
		{name: "ascii offer", body: "Haircut today 15:00 ($25). Reply YES to book, STOP to opt out.", want: true},
		{name: "newline and cr", body: "a\nb\r", want: true},
		{name: "extension chars", body: "^{}\\[~]|€\f", want: true},
		{name: "gsm latin letters", body: "Ça va? Ñoño ¡Olé! ¿Qué? 5£ ÄÖÜäöü ß Ø å", want: true},
		{name: "u circumflex is not gsm", body: "Ça coûte 5€", want: false},
		{name: "u acute is not gsm", body: "Ñandú", want: false},
		{name: "greek capitals", body: "ΔΦΓΛΩΠΨΣΘΞ", want: true},
		{name: "greek small", body: "α", want: false},
		{name: "backtick", body: "`", want: false},
		{name: "emoji", body: "See you 👋", want: false},
		{name: "curly apostrophe", body: "It’s yours", want: false},
		{name: "tab", body: "a\tb", want: false},
		{name: "invalid utf8", body: "\xff", want: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, sms.IsGSM7(tc.body))
		})
	}
}
