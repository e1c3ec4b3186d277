package dashboard

import (
	"errors"
	"strconv"
	"strings"
)

// maxPriceCents mirrors the ceiling slots.Declare enforces, so the form can say what the
// limit is in the shop's currency rather than in minor units.
const maxPriceCents = 100_000_000

// minorDigits is how many decimals a currency's amounts carry. Most have two; these are
// the exceptions Stripe lists (zero-decimal and three-decimal currencies).
func minorDigits(currency string) int {
	switch strings.ToLower(currency) {
	case "bif", "clp", "djf", "gnf", "jpy", "kmf", "krw", "mga", "pyg", "rwf", "ugx", "vnd", "vuv", "xaf", "xof", "xpf":
		return 0
	case "bhd", "jod", "kwd", "omr", "tnd":
		return 3
	}
	return 2
}

var symbols = map[string]string{"usd": "$", "eur": "€", "gbp": "£", "jpy": "¥", "inr": "₹"}

// formatMoney renders minor units in the shop's currency: "$1,234.50", "€45.00",
// "CHF 45.00".
func formatMoney(cents int64, currency string) string {
	s := formatAmount(cents, currency, true)
	if sym, ok := symbols[strings.ToLower(currency)]; ok {
		if strings.HasPrefix(s, "-") {
			return "-" + sym + s[1:]
		}
		return sym + s
	}
	return strings.ToUpper(currency) + " " + s
}

// formatMoneyShort is an amount for a chart label: whole units ("$450", "$45.50" when
// there are cents), thousands as "k" from ten thousand up ("$12k").
func formatMoneyShort(cents int64, currency string) string {
	unit := int64(1)
	for range minorDigits(currency) {
		unit *= 10
	}
	var s string
	switch whole := cents / unit; {
	case whole >= 10_000:
		s = groupThousands(strconv.FormatInt((whole+500)/1000, 10)) + "k"
	case cents%unit != 0:
		return formatMoney(cents, currency)
	default:
		s = groupThousands(strconv.FormatInt(whole, 10))
	}
	if sym, ok := symbols[strings.ToLower(currency)]; ok {
		return sym + s
	}
	return strings.ToUpper(currency) + " " + s
}

// formatAmount renders minor units as a decimal ("1234.50"), with thousands separators
// when grouped is set.
func formatAmount(cents int64, currency string, grouped bool) string {
	neg := cents < 0
	if neg {
		cents = -cents
	}
	d := minorDigits(currency)
	s := strconv.FormatInt(cents, 10)
	if d > 0 {
		for len(s) <= d {
			s = "0" + s
		}
		whole, frac := s[:len(s)-d], s[len(s)-d:]
		if grouped {
			whole = groupThousands(whole)
		}
		s = whole + "." + frac
	} else if grouped {
		s = groupThousands(s)
	}
	if neg {
		s = "-" + s
	}
	return s
}

func groupThousands(s string) string {
	if len(s) <= 3 {
		return s
	}
	var b strings.Builder
	pre := len(s) % 3
	if pre > 0 {
		b.WriteString(s[:pre])
	}
	for i := pre; i < len(s); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}

var errAmount = errors.New("dashboard: not an amount")

// parseAmount reads a price typed in the shop's currency ("45", "45.5", "45.00", or
// "45,00" where a comma is the decimal mark) into minor units. It refuses signs,
// thousands separators and more decimals than the currency has.
func parseAmount(s, currency string) (int64, error) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, ",") && !strings.Contains(s, ".") && strings.Count(s, ",") == 1 {
		s = strings.Replace(s, ",", ".", 1)
	}
	whole, frac, hasDot := strings.Cut(s, ".")
	if whole == "" && (!hasDot || frac == "") {
		return 0, errAmount
	}
	if len(whole) > 12 || !allDigits(whole) || !allDigits(frac) {
		return 0, errAmount
	}
	d := minorDigits(currency)
	if len(frac) > d {
		if strings.Trim(frac[d:], "0") != "" {
			return 0, errAmount
		}
		frac = frac[:d]
	}
	for len(frac) < d {
		frac += "0"
	}
	n, err := strconv.ParseInt(whole+frac, 10, 64)
	if whole+frac == "" || err != nil {
		return 0, errAmount
	}
	return n, nil
}

func allDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
