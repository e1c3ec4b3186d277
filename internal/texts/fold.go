package texts

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/sms"
)

// fit applies the shop's GSM-7 setting to a rendered text: with shops.GSM7Prefer (the
// default), a text that needs UCS-2 only for letters outside GSM-7 (á, í, ó, ú, ç, â, ê,
// œ, a curly quote) is sent with them folded to their GSM-7 base when that makes it fewer
// segments; the letters GSM-7 has (é, è, à, ñ, ü, Ç...) are kept. A text whose folding
// saves nothing (it fits one UCS-2 segment anyway, or holds an emoji) keeps its accents.
func fit(shop *shops.Shop, body string) string {
	if shop.GSM7 == shops.GSM7Exact || sms.IsGSM7(body) {
		return body
	}
	folded := FoldGSM7(body)
	if sms.Segments(folded) < sms.Segments(body) {
		return folded
	}
	return body
}

// folds are the characters outside GSM-7 whose base is not found by taking their accent
// off: punctuation typed by phones and word processors, and ligatures.
var folds = map[rune]string{
	'’': "'", '‘': "'", '‚': "'", '′': "'", '“': `"`, '”': `"`, '„': `"`, '«': `"`, '»': `"`,
	'–': "-", '—': "-", '‐': "-", '‑': "-", '…': "...", '\u00a0': " ", '\u202f': " ", '\u2009': " ",
	'œ': "oe", 'Œ': "OE", 'ç': "c", 'ı': "i", 'ł': "l", 'Ł': "L", 'đ': "d", 'Đ': "D", 'ð': "d", 'þ': "th",
	'•': "*",
}

// FoldGSM7 writes each character of s that GSM-7 lacks as its GSM-7 base where it has
// one (á as a, ô as o, ’ as ', œ as oe) and leaves the rest as they are: letters GSM-7
// has (é, ñ, ü, à) stay, and so do characters with no base (emoji, other scripts).
func FoldGSM7(s string) string {
	var b strings.Builder
	for _, r := range s {
		if sms.IsGSM7(string(r)) {
			b.WriteRune(r)
			continue
		}
		if f, ok := folds[r]; ok {
			b.WriteString(f)
			continue
		}
		b.WriteString(base(r))
	}
	return b.String()
}

// base is r without its accents when what is left is GSM-7 (á → a, Ô → O), else r.
func base(r rune) string {
	d := norm.NFD.String(string(r))
	var b strings.Builder
	for _, c := range d {
		if !unicode.Is(unicode.Mn, c) {
			b.WriteRune(c)
		}
	}
	if out := b.String(); out != "" && sms.IsGSM7(out) {
		return out
	}
	return string(r)
}
