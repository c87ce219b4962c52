package lms

import (
	"strconv"
	"unicode/utf8"
)

// Field limits shared by both APIs: one limit per field, whichever API
// writes it (docs/api/conventions.md lists them).
const (
	// MaxSchemeDays is the longest access a price scheme may give, in days
	// (100 years).
	MaxSchemeDays = 36500
	// MaxDiscountLimit is the most uses a discount may be limited to.
	MaxDiscountLimit = 1_000_000_000
	// MaxNumberTimes is the most sittings a price scheme may be limited to.
	MaxNumberTimes = 1_000_000
)

// TooLong reports whether s has more than max characters (runes, not
// bytes: "é" is one character).
func TooLong(s string, max int) bool { return utf8.RuneCountInString(s) > max }

// CheckLen records field in v when s has more than max characters.
func CheckLen(v *Validator, field, s string, max int) {
	if TooLong(s, max) {
		v.Add(field, "must be at most "+strconv.Itoa(max)+" characters")
	}
}
