// Package money reads and writes exact decimal amounts. Amounts are
// integers of hundredths: minor units (cents) for money, hundredths of a
// percent for percentages. Nothing here goes through a float.
package money

import (
	"strconv"
	"strings"
)

// Money is an amount in minor units (cents). It is read from decimal text
// exactly (never through a float) and written with two decimals: as a JSON
// number by MarshalJSON (19.99) and as text by String ("19.99").
type Money int64

// Max is the largest amount accepted: 999999999999.99.
const Max Money = 99999999999999

// Parse reads a non-negative amount with at most two decimals, as sent in
// a form or as a JSON number's literal text: "19.99", "19.9", "20", "0.5".
// Signs, exponents, a bare or leading point, and more than two decimals are
// refused. The error text completes a sentence starting with the field name
// ("price must not be negative").
func Parse(s string) (Money, error) {
	n, err := parseHundredths(s, "an amount such as 19.99")
	if err != nil {
		return 0, err
	}
	return Money(n), nil
}

// String formats m with two decimals: "19.99", "20.00", "0.05".
func (m Money) String() string { return formatHundredths(int64(m)) }

// MarshalJSON writes m as a JSON number with two decimals (19.99).
func (m Money) MarshalJSON() ([]byte, error) { return []byte(m.String()), nil }

// Percent is a percentage in hundredths of a percent: 1250 is 12.5%.
type Percent int64

// Hundred is 100%.
const Hundred Percent = 10000

// ParsePercent reads a percentage exactly, with at most two decimals and
// at most 100: "12.5" is 1250, "100" is 10000, "0.01" is 1.
func ParsePercent(s string) (Percent, error) {
	n, err := parseHundredths(s, "a percentage such as 12.5")
	if err != nil {
		return 0, err
	}
	if n > int64(Hundred) {
		return 0, Error("must be at most 100 for a percentage")
	}
	return Percent(n), nil
}

// String formats p with two decimals and no sign: "12.50".
func (p Percent) String() string { return formatHundredths(int64(p)) }

// MarshalJSON writes p as a JSON number with two decimals (12.50).
func (p Percent) MarshalJSON() ([]byte, error) { return []byte(p.String()), nil }

// Error is a parse error. Its text completes a sentence starting with the
// field name.
type Error string

func (e Error) Error() string { return string(e) }

// parseHundredths reads non-negative decimal text with at most two
// decimals into hundredths, up to Max.
func parseHundredths(s, example string) (int64, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "-") {
		if _, err := parseHundredths(s[1:], example); err == nil {
			return 0, Error("must not be negative")
		}
	}
	if strings.ContainsAny(s, "eE") {
		if _, err := strconv.ParseFloat(s, 64); err == nil {
			return 0, Error("must be a plain decimal such as 19.99, not in exponent notation")
		}
	}
	whole, frac, hasPoint := strings.Cut(s, ".")
	if whole == "" || !digits(whole) || (hasPoint && (frac == "" || !digits(frac))) {
		return 0, Error("must be " + example)
	}
	if len(frac) > 2 {
		return 0, Error("must have at most two decimals")
	}
	whole = strings.TrimLeft(whole, "0")
	if len(whole) > 12 {
		return 0, Error("must be at most " + Max.String())
	}
	var n int64
	for _, d := range whole + (frac + "00")[:2] {
		n = n*10 + int64(d-'0')
	}
	return n, nil
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func formatHundredths(n int64) string {
	sign := ""
	u := uint64(n)
	if n < 0 {
		sign, u = "-", uint64(-n) // -MinInt64 wraps to itself, read as unsigned it is right
	}
	cents := strconv.FormatUint(u%100, 10)
	if len(cents) == 1 {
		cents = "0" + cents
	}
	return sign + strconv.FormatUint(u/100, 10) + "." + cents
}
