// Package money writes and reads amounts held in a currency's minor units, the units the
// payment provider (Stripe) counts in: the one formatter behind the texts, the dashboard
// and its CSV export, so a price reads the same everywhere and means what is charged.
//
// Minor units follow ISO 4217 as Stripe applies it: most currencies have two decimals;
// the zero-decimal ones (JPY, KRW, ...) have none; the three-decimal ones (KWD, BHD, ...)
// have three. ISK and UGX are Stripe's special cases: they became zero-decimal, but the
// API still counts them in hundredths (5 ISK is 500) and refuses amounts that are not
// whole units, so they are shown and typed without decimals. HUF and TWD are zero-decimal
// at Stripe only for payouts: charges keep two decimals.
//
// A symbol stands for a currency only where it cannot mean another: "$" is USD alone
// ("CAD 12.50", not "$12.50"), "¥" is JPY, "€" EUR, "£" GBP. Each of them is in the GSM-7
// alphabet, so a text that shows one stays a 160-character segment; every other
// currency is written as its code.
package money

import (
	"errors"
	"strconv"
	"strings"
)

// MaxAmount is the largest price an opening may have, in minor units: the most Stripe
// charges in one payment (eight digits, $999,999.99). A larger price would be booked
// with a payment link Stripe refuses to make.
const MaxAmount int64 = 99_999_999

// ErrAmount is returned by Parse for text that is not an amount in the currency.
var ErrAmount = errors.New("money: not an amount")

var symbols = map[string]string{"usd": "$", "eur": "€", "gbp": "£", "jpy": "¥"}

// MinorUnits returns how many minor units make one unit of currency: 1 for a
// zero-decimal currency, 1000 for a three-decimal one, 100 for the others (ISK and UGX
// among them).
func MinorUnits(currency string) int64 {
	switch strings.ToLower(currency) {
	case "bif", "clp", "djf", "gnf", "jpy", "kmf", "krw", "mga", "pyg", "rwf", "vnd", "vuv", "xaf", "xof", "xpf":
		return 1
	case "bhd", "jod", "kwd", "omr", "tnd":
		return 1000
	}
	return 100
}

// Decimals returns how many decimals a price in currency may have: 0 for the
// zero-decimal currencies and for ISK and UGX (Stripe charges them in whole units), 3
// for the three-decimal ones, 2 for the others.
func Decimals(currency string) int {
	switch c := strings.ToLower(currency); {
	case c == "isk" || c == "ugx":
		return 0
	default:
		return len(strconv.FormatInt(MinorUnits(c), 10)) - 1
	}
}

// Format writes an amount in minor units for a person: "$1,234.50", "€45.00", "¥4,500",
// "CAD 12.50", "KWD 1.234", "ISK 45", "-$4.50".
func Format(minor int64, currency string) string {
	return label(currency, decimal(minor, currency, true))
}

// Short writes an amount for a chart label: whole units when there is no fraction
// ("$450", "$45.50" when there is), thousands as "k" from ten thousand up ("$12k").
func Short(minor int64, currency string) string {
	if minor < 0 {
		return "-" + Short(-minor, currency)
	}
	unit := MinorUnits(currency)
	whole := minor / unit
	switch {
	case whole >= 10_000:
		return label(currency, groupThousands(strconv.FormatInt((whole+500)/1000, 10))+"k")
	case minor%unit != 0:
		return Format(minor, currency)
	}
	return label(currency, groupThousands(strconv.FormatInt(whole, 10)))
}

// Plain writes an amount as a bare decimal, with neither symbol nor grouping, for a
// spreadsheet or an example to type: "1234.50", "4500" (JPY), "45" (ISK).
func Plain(minor int64, currency string) string {
	return decimal(minor, currency, false)
}

// Parse reads a price typed in currency ("45", "45.5", "45.00", or "45,00" where a comma
// is the decimal mark) into minor units. It refuses signs, symbols, thousands
// separators, exponents and more decimals than Decimals allows (trailing zeros aside).
func Parse(s, currency string) (int64, error) {
	s = strings.TrimSpace(s)
	if strings.Count(s, ",") == 1 && !strings.Contains(s, ".") {
		s = strings.Replace(s, ",", ".", 1)
	}
	whole, frac, hasDot := strings.Cut(s, ".")
	if whole == "" && (!hasDot || frac == "") {
		return 0, ErrAmount
	}
	if len(whole) > 12 || !allDigits(whole) || !allDigits(frac) {
		return 0, ErrAmount
	}
	d := Decimals(currency)
	if len(frac) > d {
		if strings.Trim(frac[d:], "0") != "" {
			return 0, ErrAmount
		}
		frac = frac[:d]
	}
	for len(frac) < d {
		frac += "0"
	}
	n, err := strconv.ParseInt(whole+frac, 10, 64)
	if whole+frac == "" || err != nil {
		return 0, ErrAmount
	}
	// ISK and UGX are typed in whole units but counted in hundredths.
	return n * (MinorUnits(currency) / pow10(d)), nil
}

// label puts the currency's symbol, or its code, before an amount.
// Symbol is how an amount's currency is written: its symbol for the few the product
// writes so ("$", "€", "£", "¥"), else its code in capitals ("CHF").
func Symbol(currency string) string {
	if sym, ok := symbols[strings.ToLower(currency)]; ok {
		return sym
	}
	return strings.ToUpper(currency)
}

func label(currency, amount string) string {
	sign := ""
	if strings.HasPrefix(amount, "-") {
		sign, amount = "-", amount[1:]
	}
	if sym, ok := symbols[strings.ToLower(currency)]; ok {
		return sign + sym + amount
	}
	return sign + strings.ToUpper(currency) + " " + amount
}

// decimal writes minor units as a decimal with the currency's decimals, grouped in
// thousands when asked. An amount with a fraction that Decimals does not show (an ISK
// amount that is not whole, from before Stripe refused them) keeps its fraction.
func decimal(minor int64, currency string, grouped bool) string {
	neg := minor < 0
	if neg {
		minor = -minor
	}
	unit := MinorUnits(currency)
	d := Decimals(currency)
	if minor%unit != 0 && d == 0 && unit > 1 {
		d = len(strconv.FormatInt(unit, 10)) - 1
	}
	whole := strconv.FormatInt(minor/unit, 10)
	if grouped {
		whole = groupThousands(whole)
	}
	s := whole
	if d > 0 {
		frac := strconv.FormatInt(minor%unit, 10)
		for len(frac) < len(strconv.FormatInt(unit, 10))-1 {
			frac = "0" + frac
		}
		s += "." + frac[:d]
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

func pow10(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}

func allDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
