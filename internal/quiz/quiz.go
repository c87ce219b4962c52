// Package quiz holds the rules of Lectern's test engine: question types and
// their validation, scorers, the frozen layout of an attempt, the attempt
// state machine, deadlines, grading methods, the pass rule, what a learner
// may review and when, and the GIFT and QTI 1.2 importers. It knows nothing
// of HTTP or SQL.
//
// Marks are integer milli-points (1 point = 1000): no floats anywhere in
// grading.
package quiz

import (
	"errors"
	"strconv"
	"strings"
)

// Milli is an amount of points in thousandths of a point.
type Milli int64

// MaxPoints is the largest mark a question or slot may carry (1000 points).
const MaxPoints Milli = 1000 * 1000

// ParseMilli reads a decimal number of points with at most three decimals
// ("2", "2.5", "0.125") into milli-points. Negative numbers are refused.
func ParseMilli(s string) (Milli, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("must be a number of points such as 1 or 2.5")
	}
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" || !digits(whole) || (frac != "" && !digits(frac)) || len(frac) > 3 || len(whole) > 9 ||
		strings.HasSuffix(s, ".") {
		return 0, errors.New("must be a number of points with at most three decimals, such as 1 or 2.5")
	}
	w, _ := strconv.ParseInt(whole, 10, 64)
	f := int64(0)
	if frac != "" {
		f, _ = strconv.ParseInt((frac + "000")[:3], 10, 64)
	}
	return Milli(w*1000 + f), nil
}

// String formats m as a decimal number of points without trailing zeros.
func (m Milli) String() string {
	neg := m < 0
	if neg {
		m = -m
	}
	s := strconv.FormatInt(int64(m)/1000, 10)
	if f := int64(m) % 1000; f != 0 {
		s += "." + strings.TrimRight(strconv.FormatInt(1000+f, 10)[1:], "0")
	}
	if neg {
		s = "-" + s
	}
	return s
}

// MarshalJSON writes m as an exact JSON number of points.
func (m Milli) MarshalJSON() ([]byte, error) { return []byte(m.String()), nil }

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// fraction returns floor(total × num / den), clamped to [0, total]. den > 0.
func fraction(total Milli, num, den int64) Milli {
	if num <= 0 || den <= 0 {
		return 0
	}
	if num >= den {
		return total
	}
	return Milli(int64(total) * num / den)
}
