package schedule

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseClock reads a time of day and returns minutes after midnight. It
// accepts the 12-hour forms clients send ("09:30AM", "09:30 AM", "9:30am",
// "09:30:00 am", "9 PM") and 24-hour forms ("21", "21:30", "21:30:00").
// Seconds, when given, must be 00: classes start on a minute. Any white
// space may stand before the meridiem (unicode.IsSpace): a time copied
// from a page may hold a no-break space.
func ParseClock(s string) (int, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "" {
		return 0, fmt.Errorf("is required")
	}
	meridiem := ""
	for _, m := range []string{"am", "pm", "a.m.", "p.m."} {
		if strings.HasSuffix(t, m) {
			meridiem = m[:1]
			t = strings.TrimSpace(strings.TrimSuffix(t, m))
			break
		}
	}
	// The error is made only when it is needed: formatting it for every
	// class scheduled was 1.4 % of a /v2/schedule profile.
	bad := func() error { return fmt.Errorf("%q is not a time of day such as 09:30 AM or 21:30", s) }
	var nums [3]int
	for i := 0; ; i++ {
		p, rest, more := strings.Cut(t, ":")
		if i == len(nums) || p == "" || len(p) > 2 || !digits(p) || (i > 0 && len(p) != 2) {
			return 0, bad()
		}
		nums[i], _ = strconv.Atoi(p)
		if !more {
			break
		}
		t = rest
	}
	h, m, sec := nums[0], nums[1], nums[2]
	if m > 59 || sec > 59 {
		return 0, bad()
	}
	if sec != 0 {
		return 0, fmt.Errorf("%q: classes start and end on a whole minute (seconds must be 00)", s)
	}
	switch meridiem {
	case "":
		if h > 23 {
			return 0, bad()
		}
	default:
		if h < 1 || h > 12 {
			return 0, fmt.Errorf("%q: a 12-hour time needs an hour from 1 to 12", s)
		}
		h %= 12
		if meridiem == "p" {
			h += 12
		}
	}
	return h*60 + m, nil
}

// FormatClock writes minutes after midnight as the classroom API does:
// "05:15 PM". The 1,440 answers are made once: every class record of a
// listing holds two (36 KB in all, where a page of ten records made twenty
// strings).
func FormatClock(min int) string {
	return clocks[((min%1440)+1440)%1440]
}

// clocks are FormatClock's answers, by minute after midnight.
var clocks = func() (t [1440]string) {
	for min := range t {
		h, m := min/60, min%60
		suffix := "AM"
		if h >= 12 {
			suffix = "PM"
		}
		h %= 12
		if h == 0 {
			h = 12
		}
		t[min] = string(append(appendHM(make([]byte, 0, 8), h, m), ' ', suffix[0], 'M'))
	}
	return t
}()

// Format24 writes minutes after midnight as "17:15".
func Format24(min int) string {
	min = ((min % 1440) + 1440) % 1440
	return string(appendHM(make([]byte, 0, 5), min/60, min%60))
}

// appendHM appends "hh:mm" (each 0-99, two digits). FormatClock and
// DiffTime run for every class of a listclass page; fmt.Sprintf was a
// fifth of the cost of rendering one.
func appendHM(b []byte, h, m int) []byte {
	return append(b, byte('0'+h/10), byte('0'+h%10), ':', byte('0'+m/10), byte('0'+m%10))
}

// digits reports whether s is one or more ASCII digits (no sign, no space).
func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Dates are bounded on input so that every instant derived from one (the
// next day, a sitting ending after midnight, a year of monthly sittings)
// stays within the four-digit years every store and format can hold.
var (
	MinDate = time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)
	MaxDate = time.Date(9000, 12, 31, 0, 0, 0, 0, time.UTC)
)

// ParseDate reads a calendar date YYYY-MM-DD (a real date: 2023-02-29 is
// refused) from MinDate to MaxDate.
func ParseDate(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, fmt.Errorf("is required")
	}
	d, err := time.Parse("2006-01-02", s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not a calendar date YYYY-MM-DD", s)
	}
	if d.Before(MinDate) || d.After(MaxDate) {
		return time.Time{}, fmt.Errorf("%q is out of range: dates run from %s to %s", s, MinDate.Format(time.DateOnly), MaxDate.Format(time.DateOnly))
	}
	return d, nil
}

// MaxHMSHours bounds the hours of ParseHMS (over 11 years).
const MaxHMSHours = 99999

// ParseHMS reads a duration written HH:MM:SS: digits only, hours from 00 to
// MaxHMSHours (may exceed 23), minutes and seconds 00-59.
func ParseHMS(s string) (time.Duration, error) {
	parts := strings.Split(strings.TrimSpace(s), ":")
	bad := fmt.Errorf("%q is not a duration HH:MM:SS (hours at most %d)", s, MaxHMSHours)
	if len(parts) != 3 {
		return 0, bad
	}
	var n [3]int
	for i, p := range parts {
		if !digits(p) || len(p) < 2 || len(p) > 5 || (i > 0 && len(p) != 2) {
			return 0, bad
		}
		v, _ := strconv.Atoi(p)
		if (i > 0 && v > 59) || v > MaxHMSHours {
			return 0, bad
		}
		n[i] = v
	}
	return time.Duration(n[0])*time.Hour + time.Duration(n[1])*time.Minute + time.Duration(n[2])*time.Second, nil
}
