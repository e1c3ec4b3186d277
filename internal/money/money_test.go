package money_test

import (
	"errors"
	"testing"

	"github.com/slotrecovery/slotrecovery/internal/money"
)

func TestFormat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		minor    int64
		currency string
		want     string
	}{
		{"zero", 0, "usd", "$0.00"},
		{"cents", 5, "usd", "$0.05"},
		{"grouped", 123456789, "usd", "$1,234,567.89"},
		{"negative", -450, "usd", "-$4.50"},
		{"upper-case code", 4500, "USD", "$45.00"},
		{"euro", 4500, "eur", "€45.00"},
		{"pound", 4500, "gbp", "£45.00"},
		{"yen is zero-decimal", 4500, "jpy", "¥4,500"},
		{"won is zero-decimal, no symbol", 4500, "krw", "KRW 4,500"},
		{"CAD is not $", 1250, "cad", "CAD 12.50"},
		{"AUD is not $", 4500, "aud", "AUD 45.00"},
		{"yuan is not ¥", 4500, "cny", "CNY 45.00"},
		{"other two-decimal", 4500, "chf", "CHF 45.00"},
		{"SEK", 4500, "sek", "SEK 45.00"},
		{"KWD has three decimals", 1234, "kwd", "KWD 1.234"},
		{"BHD has three decimals", 4500, "bhd", "BHD 4.500"},
		{"three decimals, grouped", 12345678, "jod", "JOD 12,345.678"},
		{"ISK counts hundredths, shows whole units", 4500, "isk", "ISK 45"},
		{"UGX counts hundredths, shows whole units", 500000, "ugx", "UGX 5,000"},
		{"ISK not whole keeps its fraction", 4550, "isk", "ISK 45.50"},
		{"HUF charges keep two decimals", 450000, "huf", "HUF 4,500.00"},
		{"TWD charges keep two decimals", 45050, "twd", "TWD 450.50"},
		{"INR is written as its code (₹ is not GSM-7)", 45000, "inr", "INR 450.00"},
		{"the largest price", money.MaxAmount, "usd", "$999,999.99"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := money.Format(tt.minor, tt.currency); got != tt.want {
				t.Errorf("Format(%d, %q) = %q, want %q", tt.minor, tt.currency, got, tt.want)
			}
		})
	}
}

func TestShort(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		minor    int64
		currency string
		want     string
	}{
		{"whole units", 45000, "usd", "$450"},
		{"with cents", 4550, "usd", "$45.50"},
		{"under ten thousand", 999900, "usd", "$9,999"},
		{"thousands as k", 1234567, "usd", "$12k"},
		{"zero", 0, "usd", "$0"},
		{"code", 45000, "chf", "CHF 450"},
		{"yen", 4500, "jpy", "¥4,500"},
		{"ISK", 4500, "isk", "ISK 45"},
		{"KWD", 45000, "kwd", "KWD 45"},
		{"negative", -123400, "usd", "-$1,234"},
	}
	for _, tt := range tests {
		if got := money.Short(tt.minor, tt.currency); got != tt.want {
			t.Errorf("%s: Short(%d, %q) = %q, want %q", tt.name, tt.minor, tt.currency, got, tt.want)
		}
	}
}

func TestPlain(t *testing.T) {
	t.Parallel()
	tests := []struct {
		minor    int64
		currency string
		want     string
	}{
		{123450, "usd", "1234.50"},
		{4500, "usd", "45.00"},
		{4500, "jpy", "4500"},
		{1234, "kwd", "1.234"},
		{4500, "isk", "45"},
		{-5, "eur", "-0.05"},
	}
	for _, tt := range tests {
		if got := money.Plain(tt.minor, tt.currency); got != tt.want {
			t.Errorf("Plain(%d, %q) = %q, want %q", tt.minor, tt.currency, got, tt.want)
		}
	}
}

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in       string
		currency string
		want     int64
		ok       bool
	}{
		{"45", "usd", 4500, true},
		{"45.5", "usd", 4550, true},
		{"45.00", "usd", 4500, true},
		{" 45.05 ", "usd", 4505, true},
		{"45,50", "eur", 4550, true},
		{".5", "usd", 50, true},
		{"45.", "usd", 4500, true},
		{"45.500", "usd", 4550, true},
		{"0", "usd", 0, true}, // a zero price is the domain's to refuse
		{"4500", "jpy", 4500, true},
		{"4500.00", "jpy", 4500, true},
		{"1.234", "kwd", 1234, true},
		{"45", "isk", 4500, true},    // whole krónur, counted in hundredths
		{"45.00", "isk", 4500, true}, // trailing zeros are no fraction
		{"5000", "ugx", 500000, true},
		{"45.50", "huf", 4550, true},
		{"45.5", "isk", 0, false}, // Stripe refuses fractional króna
		{"45.999", "usd", 0, false},
		{"4500.5", "jpy", 0, false},
		{"1.2345", "kwd", 0, false},
		{"", "usd", 0, false},
		{".", "usd", 0, false},
		{"-5", "usd", 0, false},
		{"+5", "usd", 0, false},
		{"1,234.50", "usd", 0, false},
		{"1,234,50", "usd", 0, false},
		{"1e3", "usd", 0, false},
		{"$45", "usd", 0, false},
		{"forty", "usd", 0, false},
		{"9999999999999", "usd", 0, false},
	}
	for _, tt := range tests {
		got, err := money.Parse(tt.in, tt.currency)
		switch {
		case !tt.ok && !errors.Is(err, money.ErrAmount):
			t.Errorf("Parse(%q, %q) = %d, %v; want ErrAmount", tt.in, tt.currency, got, err)
		case tt.ok && (err != nil || got != tt.want):
			t.Errorf("Parse(%q, %q) = %d, %v; want %d", tt.in, tt.currency, got, err, tt.want)
		}
	}
}

// TestParseReadsWhatPlainWrites: an amount shown as an example parses back to itself.
func TestParseReadsWhatPlainWrites(t *testing.T) {
	t.Parallel()
	for _, c := range []string{"usd", "jpy", "kwd", "isk", "ugx", "huf", "eur"} {
		for _, units := range []int64{0, 1, 45, 1234} {
			minor := units * money.MinorUnits(c)
			got, err := money.Parse(money.Plain(minor, c), c)
			if err != nil || got != minor {
				t.Errorf("%s: Parse(Plain(%d)) = %d, %v", c, minor, got, err)
			}
		}
	}
}

func TestDecimals(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		decimals int
		units    int64
	}{
		"usd": {2, 100}, "JPY": {0, 1}, "krw": {0, 1}, "xof": {0, 1}, "kwd": {3, 1000}, "tnd": {3, 1000},
		"isk": {0, 100}, "ugx": {0, 100}, "huf": {2, 100}, "twd": {2, 100},
	}
	for c, want := range tests {
		if got := money.Decimals(c); got != want.decimals {
			t.Errorf("Decimals(%q) = %d, want %d", c, got, want.decimals)
		}
		if got := money.MinorUnits(c); got != want.units {
			t.Errorf("MinorUnits(%q) = %d, want %d", c, got, want.units)
		}
	}
}
