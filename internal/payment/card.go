package payment

import (
	"strconv"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/internal/lms"
)

// ReadCard checks and normalises the card fields of a payment: the number
// (spaces and dashes allowed, 12 to 19 digits, passing the Luhn check),
// the expiry month (1-12) and year (two or four digits), the CVC (3 or 4
// digits). Errors name the field and never repeat the number.
func ReadCard(number, month, year, cvc, holder string) (Card, error) {
	var v lms.Validator
	var c Card
	c.Number = strings.NewReplacer(" ", "", "-", "").Replace(strings.TrimSpace(number))
	switch {
	case c.Number == "":
		v.Add("card_number", "is required")
	case !allDigits(c.Number) || len(c.Number) < 12 || len(c.Number) > 19:
		v.Add("card_number", "must be 12 to 19 digits")
	case !luhn(c.Number):
		v.Add("card_number", "is not a valid card number (check the digits)")
	}
	m, err := strconv.Atoi(strings.TrimSpace(month))
	switch {
	case strings.TrimSpace(month) == "":
		v.Add("card_exp_month", "is required")
	case err != nil || m < 1 || m > 12:
		v.Add("card_exp_month", "must be a month from 1 to 12")
	}
	ys := strings.TrimSpace(year)
	y, err := strconv.Atoi(ys)
	switch {
	case ys == "":
		v.Add("card_exp_year", "is required")
	case err != nil || (len(ys) != 2 && len(ys) != 4):
		v.Add("card_exp_year", "must be a year of two or four digits")
	case len(ys) == 2:
		y += 2000
	}
	c.CVC = strings.TrimSpace(cvc)
	switch {
	case c.CVC == "":
		v.Add("card_cvc", "is required")
	case !allDigits(c.CVC) || len(c.CVC) < 3 || len(c.CVC) > 4:
		v.Add("card_cvc", "must be 3 or 4 digits")
	}
	c.ExpMonth, c.ExpYear, c.Holder = m, y, strings.TrimSpace(holder)
	if err := v.Err(); err != nil {
		return Card{}, err
	}
	return c, nil
}

// ExpiryPassed reports whether a card expiring at the end of month/year
// has expired at instant now (UTC).
func ExpiryPassed(month, year int, now time.Time) bool {
	end := time.Date(year, time.Month(month)+1, 1, 0, 0, 0, 0, time.UTC)
	return !now.Before(end)
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func luhn(s string) bool {
	sum, double := 0, false
	for i := len(s) - 1; i >= 0; i-- {
		d := int(s[i] - '0')
		if double {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}
